//! One GEMM kernel's fastest of a fixed number of runs, on one JIT worker, optimized tier only:
//! for comparing two builds side by side (`bench` repeats for a time budget, so two builds
//! make different numbers of runs in a noisy sitting).
//!
//! `KERNEL=tiled|gpu|naive N=512 REPS=20 cargo run --release -p wave-jit-benches --example gemm_reps`
use wave_benches::kernels::GemmKernel;
use wave_benches::workloads::{run_gemm, GemmProblem, Repeat, RunOptions};

fn main() {
    let var = |k: &str, d: &str| std::env::var(k).unwrap_or_else(|_| d.to_string());
    let n: u32 = var("N", "512").parse().unwrap();
    let reps: u32 = var("REPS", "20").parse().unwrap();
    let which = match var("KERNEL", "tiled").as_str() {
        "gpu" => GemmKernel::Gpu,
        "naive" => GemmKernel::Naive,
        _ => GemmKernel::Tiled,
    };
    wave_jit_codegen::set_tiering(wave_jit_codegen::Tiering::OptimizedOnly);
    let engine = wave_jit_codegen::engine::JitEngine::strict();
    let problem = GemmProblem::random(n, 7);
    let options = RunOptions { threads: 1, ..RunOptions::default() };
    let (_, t) = run_gemm(
        &engine,
        which,
        &problem,
        &options,
        Repeat { budget: std::time::Duration::from_secs(1000), max_runs: reps },
    )
    .unwrap();
    println!("{} runs, best {:?}", t.runs, t.best);
}
