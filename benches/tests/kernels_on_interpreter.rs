//! Every bundled kernel computes the right result on the interpreter at small sizes (checked
//! against plain Rust inside the workloads), at several wave widths.

use wave_benches::kernels::GemmKernel;
use wave_benches::native;
use wave_benches::workloads::{run_gemm, run_stream, time_launch, GemmProblem, Repeat, RunOptions, Stream};
use wave_runtime::Interpreter;

#[test]
fn gemm_kernels_match_the_f64_reference() {
    let interp = Interpreter::new();
    for (which, n) in
        [(GemmKernel::Naive, 32), (GemmKernel::Naive, 48), (GemmKernel::Tiled, 64), (GemmKernel::Tiled, 128)]
    {
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
    let problem = GemmProblem::random(48, 1);
    let e = run_gemm(&Interpreter::new(), GemmKernel::Tiled, &problem, &RunOptions::default(), Repeat::ONCE);
    assert!(e.is_err());
}

#[test]
fn stream_kernels_match_rust() {
    let interp = Interpreter::new();
    // Sizes that are not multiples of the workgroup, and one with several scan chunks.
    for which in Stream::ALL {
        for n in [1, 300, 4099] {
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
        let problem = GemmProblem::random(128, 5);
        let (c, _) = run_gemm(&jit, which, &problem, &run, Repeat::ONCE).unwrap();
        let err = native::max_relative_error(&c, &problem.reference());
        assert!(err < 1e-5, "{}: error {err}", which.name());
    }
    for which in Stream::ALL {
        run_stream(&jit, which, 70_001, &run, Repeat::ONCE)
            .unwrap_or_else(|e| panic!("{}: {e}", which.name()));
    }
}
