//! Every bundled kernel computes the right result on the interpreter at small sizes (checked
//! against plain Rust inside the workloads), at several wave widths, and on the JIT.

use wave_benches::kernels::GemmKernel;
use wave_benches::native;
use wave_benches::streams::{run_stream, run_stream_output, Stream};
use wave_benches::workloads::{
    run_gemm, run_gemm_f16, time_launch, GemmF16Problem, GemmProblem, Repeat, RunOptions,
};
use wave_runtime::Interpreter;

#[test]
fn gemm_kernels_match_the_f64_reference() {
    let interp = Interpreter::new();
    for (which, n) in [
        (GemmKernel::Naive, 32),
        (GemmKernel::Naive, 48),
        (GemmKernel::Tiled, 64),
        (GemmKernel::Tiled, 128),
        (GemmKernel::Gpu, 128),
    ] {
        for wave_width in [8, 32] {
            let problem = GemmProblem::random(n, n as u64);
            let run = RunOptions { wave_width, ..RunOptions::default() };
            let (c, timing) = run_gemm(&interp, which, &problem, &run, Repeat::ONCE).unwrap();
            assert_eq!(timing.runs, 1);
            let err = native::max_relative_error(&c, &problem.reference());
            assert!(err < 1e-5, "{} N={n} W={wave_width}: error {err}", which.name());
        }
    }
}

#[test]
fn gemm_rejects_sizes_off_the_tile() {
    let interp = Interpreter::new();
    let run = RunOptions::default();
    let e = run_gemm(&interp, GemmKernel::Tiled, &GemmProblem::random(48, 1), &run, Repeat::ONCE);
    assert!(e.is_err());
    let e = run_gemm(&interp, GemmKernel::Gpu, &GemmProblem::random(64, 1), &run, Repeat::ONCE);
    assert!(e.is_err());
    assert!(run_gemm_f16(&interp, &GemmF16Problem::random(32, 1), &run, Repeat::ONCE).is_err());
}

/// gemm_f16 equals the step-by-step f16 reference bit for bit (two K tiles, four workgroups).
#[test]
fn gemm_f16_is_exact_on_the_interpreter() {
    let problem = GemmF16Problem::random(128, 7);
    let want = problem.stepwise_f16();
    for wave_width in [8, 32] {
        let run = RunOptions { wave_width, ..RunOptions::default() };
        let (c, _) = run_gemm_f16(&Interpreter::new(), &problem, &run, Repeat::ONCE).unwrap();
        let differ = c.iter().zip(&want).filter(|(a, b)| a != b).count();
        assert_eq!(differ, 0, "W={wave_width}: {differ} values differ");
    }
    // And it is a product: close to A·B in f64 (f16 sums of 128 terms).
    let c: Vec<f32> = want.iter().map(|&h| half::f16::from_bits(h).to_f32()).collect();
    let err = native::max_relative_error(&c, &problem.reference());
    assert!(err < 2e-2, "error {err}");
}

/// Sizes of a stream workload that are not multiples of the workgroup or the row (squares for
/// transpose: 17² and 65², not multiples of its 32×32 tile).
fn odd_sizes(which: Stream) -> [u32; 3] {
    match which {
        Stream::Transpose => [1, 17 * 17, 65 * 65],
        _ => [1, 300, 4099],
    }
}

#[test]
fn stream_kernels_match_rust() {
    let interp = Interpreter::new();
    for which in Stream::ALL {
        for n in odd_sizes(which) {
            for wave_width in [4, 16, 64] {
                let run = RunOptions { wave_width, ..RunOptions::default() };
                run_stream(&interp, which, n, &run, Repeat::ONCE)
                    .unwrap_or_else(|e| panic!("{} n={n} W={wave_width}: {e}", which.name()));
            }
        }
    }
    // More blocks than one scan_sums chunk (256 blocks).
    run_stream(&interp, Stream::PrefixSum, 256 * 300 + 5, &RunOptions::default(), Repeat::ONCE).unwrap();
}

#[test]
fn transpose_rejects_a_size_that_is_not_a_square() {
    let e = run_stream(&Interpreter::new(), Stream::Transpose, 300, &RunOptions::default(), Repeat::ONCE);
    assert!(e.is_err());
}

#[test]
fn empty_kernel_launches() {
    let t = time_launch(
        &Interpreter::new(),
        3,
        &RunOptions::default(),
        Repeat { budget: std::time::Duration::from_secs(5), max_runs: 2 },
    )
    .unwrap();
    assert_eq!(t.runs, 2);
}

/// The same checks on the JIT (the bench reports its numbers only when they are right).
#[test]
fn kernels_are_right_on_the_jit() {
    let jit = wave_jit_codegen::JitEngine::strict();
    let run = RunOptions::default();
    for which in GemmKernel::ALL {
        let problem = GemmProblem::random(256, 5);
        let (c, _) = run_gemm(&jit, which, &problem, &run, Repeat::ONCE).unwrap();
        let err = native::max_relative_error(&c, &problem.reference());
        assert!(err < 1e-5, "{}: error {err}", which.name());
    }
    let problem = GemmF16Problem::random(128, 9);
    let (c, _) = run_gemm_f16(&jit, &problem, &run, Repeat::ONCE).unwrap();
    assert!(c == problem.stepwise_f16(), "gemm_f16 on the JIT differs from the step-by-step reference");
    for which in Stream::ALL {
        let n = if which == Stream::Transpose { 265 * 265 } else { 70_001 };
        run_stream(&jit, which, n, &run, Repeat::ONCE).unwrap_or_else(|e| panic!("{}: {e}", which.name()));
    }
}

/// Softmax is checked against f64 within a tolerance; the two engines must also agree bit for
/// bit (the same operations in the same order).
#[test]
fn softmax_is_the_same_on_both_engines() {
    let jit = wave_jit_codegen::JitEngine::strict();
    for wave_width in [8, 32] {
        let run = RunOptions { wave_width, ..RunOptions::default() };
        let (on_jit, _) = run_stream_output(&jit, Stream::Softmax, 3000, &run, Repeat::ONCE).unwrap();
        let (on_interp, _) =
            run_stream_output(&Interpreter::new(), Stream::Softmax, 3000, &run, Repeat::ONCE).unwrap();
        assert!(on_jit == on_interp, "W={wave_width}: the engines differ");
    }
}

/// The GEMMs agree bit for bit on both engines, also with NaN inputs. The GPU-style GEMM's
/// 64 accumulators are resident registers of the JIT's entry function (kept in a memory home,
/// changed in place by its chunk loop); a NaN entering them sends the chunk loop to its
/// wave-major bail-out after earlier chunks have run, which must start from the loop's entry.
#[test]
fn gemms_are_the_same_on_both_engines() {
    let jit = wave_jit_codegen::JitEngine::strict();
    let interp = Interpreter::new();
    for wave_width in [16, 32, 64] {
        let run = RunOptions { wave_width, ..RunOptions::default() };
        for nans in [false, true] {
            let mut problem = GemmProblem::random(128, 11);
            if nans {
                // Rows 70 and 100 of A: some outputs of a later chunk and wave become NaN.
                problem.a[70 * 128 + 3] = f32::NAN;
                problem.a[100 * 128 + 90] = f32::from_bits(0x7fa0_0001);
            }
            for which in [GemmKernel::Tiled, GemmKernel::Gpu] {
                let (on_jit, _) = run_gemm(&jit, which, &problem, &run, Repeat::ONCE).unwrap();
                let (on_interp, _) = run_gemm(&interp, which, &problem, &run, Repeat::ONCE).unwrap();
                let bits = |c: &[f32]| c.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
                assert!(
                    bits(&on_jit) == bits(&on_interp),
                    "{} at W={wave_width}, NaN inputs {nans}: the engines differ",
                    which.name()
                );
                assert_eq!(on_jit.iter().any(|x| x.is_nan()), nans, "{}", which.name());
            }
        }
    }
}
