//! Snapshot tests of lowering decisions: for a few kernels, the counts of what the translator
//! emits (`wave_jit_codegen::snapshot::lowering_summary`: masked writes, helper calls, vector
//! and scalar accesses, NaN tests, native float ops, in hot and cold blocks) are pinned in
//! `jit/tests/lowering/*.txt`. A change that loses a fast path (the coherent copy of a guarded
//! body, whole-vector loads, native `fadd`, chunk-major loops) fails here with a diff.
//!
//! After an intended change, rewrite the files with `WAVE_JIT_BLESS=1 cargo test -p
//! wave-jit-codegen --test lowering` and review the diff.

use std::path::PathBuf;
use wave_jit_codegen::snapshot::lowering_summary;
use wave_jit_codegen::Flags;

fn kernel(source: &str, name: &str) -> wave_isa::ValidKernel {
    let (module, _) = wave_isa::module::load_bytes(source.as_bytes(), name).unwrap_or_else(|e| panic!("{e}"));
    module.kernels[0].clone()
}

fn flags(kernel: &wave_isa::ValidKernel, width: u32, checked: bool) -> Flags {
    let workgroup = match kernel.meta.workgroup_size {
        [0, _, _] => [256, 1, 1],
        size => size,
    };
    Flags { width, checked, fuel: false, stats: false, workgroup, window_wraps: false }
}

/// Compare `kernel`'s summaries at the given (width, checked) with `lowering/<file>.txt`.
fn pin(file: &str, kernel: &wave_isa::ValidKernel, cases: &[(u32, bool)]) {
    let mut got = String::new();
    for &(width, checked) in cases {
        got += &lowering_summary(kernel, flags(kernel, width, checked)).unwrap_or_else(|e| panic!("{e}"));
    }
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/lowering").join(format!("{file}.txt"));
    if std::env::var_os("WAVE_JIT_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (make it with WAVE_JIT_BLESS=1)", path.display()));
    if got != want {
        let diff: Vec<String> = want
            .lines()
            .zip(got.lines())
            .filter(|(w, g)| w != g)
            .map(|(w, g)| format!("  pinned: {w}\n  now:    {g}"))
            .collect();
        panic!(
            "the lowering of {file} changed ({} pinned lines, {} now):\n{}\nIf intended, rerun with WAVE_JIT_BLESS=1 and review the diff.",
            want.lines().count(),
            got.lines().count(),
            diff.join("\n")
        );
    }
}

/// `if (i < n)` around two loads, an `fadd` and a store: the coherent copy runs unmasked
/// (no blends, vector loads and stores), the masked path keeps them.
#[test]
fn vector_add() {
    let k = kernel(include_str!("../../benches/kernels/vecadd.wave"), "vecadd.wave");
    pin("vecadd", &k, &[(4, true), (32, true), (32, false)]);
}

/// The tiled GEMM: chunk-major inner loops with native FMAs and scalar shadows, their
/// wave-major copies as loop functions. At W = 64 too: a block sealed only at the end of the
/// function got a parameter for every vector read through it (the most a block had went
/// from 301 to 153 at W = 32 and from 597 to 305 at W = 64 when blocks were sealed as soon
/// as their predecessors were in).
#[test]
fn tiled_gemm() {
    let k = kernel(include_str!("../../benches/kernels/gemm_tiled.wave"), "gemm_tiled.wave");
    pin("gemm_tiled", &k, &[(32, true), (64, true)]);
}

/// Wave reductions and atomics.
#[test]
fn reduction() {
    let k = kernel(include_str!("../../benches/kernels/reduction.wave"), "reduction.wave");
    pin("reduction", &k, &[(32, true)]);
}

/// Loads of `a[t - 1]` in divergent code: the vector's implied lane-0 address may wrap, so
/// a wrap test and a cold lane-by-lane path come with each vector load.
#[test]
fn divergent_neighbour_loads() {
    let source = include_str!("kernels/stencil_left.wave");
    pin("neighbour", &kernel(source, "left.wave"), &[(32, true), (32, false)]);
}

/// `fmax` under a guard (ReLU): native compares and a blend, no lane helper call.
#[test]
fn relu() {
    let k = kernel(include_str!("../../benches/kernels/relu.wave"), "relu.wave");
    pin("relu", &k, &[(32, true)]);
}

/// The hot instruction count of a summary.
fn hot_instructions(summary: &str) -> u64 {
    summary
        .lines()
        .find_map(|l| l.strip_prefix("hot  instructions: "))
        .map(|n| n.parse().unwrap())
        .expect("a hot instruction count")
}

/// Counting every `--stats` counter costs code only when asked for: without it the code is
/// the pinned one (above), with it the same kernel has more.
#[test]
fn counting_code_only_with_stats() {
    let k = kernel(include_str!("../../benches/kernels/vecadd.wave"), "vecadd.wave");
    let plain = flags(&k, 32, true);
    let counting = Flags { stats: true, ..plain };
    let (plain, counting) = (lowering_summary(&k, plain).unwrap(), lowering_summary(&k, counting).unwrap());
    assert!(hot_instructions(&counting) > hot_instructions(&plain), "{plain}\n{counting}");
}

/// Two nested bounds guards (`col < cols`, then `i < n`): a coherent copy at both levels.
#[test]
fn bias_add() {
    let k = kernel(include_str!("../../benches/kernels/bias_add.wave"), "bias_add.wave");
    pin("bias_add", &k, &[(32, true)]);
}

/// The GPU-style GEMM: its inner loop is too large to unroll once per chunk, so one copy runs
/// in a run-time loop over the chunks: its 64 FMAs appear once at any W (unrolled, they were
/// 64 per chunk: 512 at W = 32, 1024 at W = 64).
#[test]
fn gpu_gemm_chunks_at_run_time() {
    let k = kernel(include_str!("../../benches/kernels/gemm_gpu.wave"), "gemm_gpu.wave");
    pin("gemm_gpu", &k, &[(32, true)]);
    let float_ops = |w| {
        let summary = lowering_summary(&k, flags(&k, w, true)).unwrap();
        let count = summary.lines().find_map(|l| l.strip_prefix("hot  native f32x4 arithmetic: "));
        count.map(|n| n.parse::<u64>().unwrap()).expect("a native float op count")
    };
    assert_eq!((float_ops(32), float_ops(64)), (64, 64));
}

/// 32 nested loops whose lanes break out at different depths: a loop with loops inside
/// keeps its gathered masks in stack slots, so no block carries every enclosing loop's
/// masks (W/4 vectors each) as parameters.
#[test]
fn nested_loops() {
    let k = kernel(include_str!("../../conformance/programs/control/nest_loop_32.wave"), "nest_loop_32.wave");
    pin("nest_loop_32", &k, &[(32, true)]);
}

/// 32 nested divergent `if`s of integer ops: too large for a coherent copy, the nest runs
/// one vector at a time.
#[test]
fn nested_ifs() {
    let k = kernel(include_str!("../../conformance/programs/control/nest_if_32.wave"), "nest_if_32.wave");
    pin("nest_if_32", &k, &[(32, true)]);
}

/// The prefix sum's block scan: its walk over the wave totals is a loop over values uniform
/// across the wave, run chunk-major on the whole wave at once with scalar shadows (one copy
/// of the loop, not one per vector, each redoing the scalar work).
#[test]
fn prefix_sum_blocks() {
    let k = kernel(include_str!("../../benches/kernels/prefix_sum.wave"), "prefix_sum.wave");
    pin("scan_blocks", &k, &[(32, true)]);
}
