//! `wave-jit bench …` (benchmarks of the bundled kernels) and `wave-jit fuzz-diff …`
//! (differential testing of the JIT against the interpreter).

use super::output::{self, Progress};
use super::CliResult;
use clap::{Args, ValueEnum};
use std::process::ExitCode;
use std::time::Duration;
use wave_benches::driver::{self, BenchOptions};
use wave_benches::kernels::GemmKernel;
use wave_benches::streams::Stream;
use wave_benches::workloads::RunOptions;
use wave_difftest::gen::GenConfig;
use wave_difftest::{self as difftest, FuzzOptions};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Workload {
    /// f32 GEMM: naive, tiled and GPU-style WAVE kernels vs native Rust (GFLOP/s)
    Gemm,
    /// f32 GEMM, the GPU-style kernel only: 8×8 outputs per thread, double-buffered tiles
    GemmGpu,
    /// f16 GEMM (hma2) vs native Rust through f32 (GFLOP/s)
    GemmF16,
    /// c = a + b over f32 (GB/s)
    Vecadd,
    /// sum of u32 values: wave reduction + atomics (GB/s)
    Reduction,
    /// 256-bin histogram with local atomics (GB/s)
    Histogram,
    /// exclusive prefix sum of u32 values, three kernels (GB/s)
    PrefixSum,
    /// y = max(x, 0) over f32 (GB/s)
    Relu,
    /// y = x + bias[column] over rows of 1000 f32 (GB/s)
    BiasAdd,
    /// softmax of rows of 1024 f32 (GB/s)
    Softmax,
    /// transpose of an N×N f32 matrix through local memory, n = N² (GB/s)
    Transpose,
    /// µs per dispatch of an empty kernel
    Launch,
    /// JIT compile times over every bundled and conformance kernel, W = 32 and 64 (p50, max)
    Compile,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EngineChoice {
    /// JIT, interpreter and native Rust side by side
    All,
    Jit,
    Interp,
    Native,
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// What to measure
    #[arg(value_enum)]
    workload: Workload,
    /// Sizes, comma-separated: N for the GEMMs (default 256,512,1024), elements for the
    /// others (default 1048576,16777216; a square for transpose), workgroups for launch
    /// (default 1,1024)
    #[arg(long, value_delimiter = ',')]
    n: Vec<u32>,
    /// Which engines to run
    #[arg(long, value_enum, default_value = "all")]
    engine: EngineChoice,
    /// JIT worker threads (0 = all cores)
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// JIT: pin each worker thread to a core of its own
    #[arg(long)]
    pin_threads: bool,
    /// Also measure the JIT without bounds checks
    #[arg(long)]
    unchecked: bool,
    /// Wave width
    #[arg(long, default_value_t = 32)]
    wave_width: u32,
    /// Seconds the interpreter may take per measurement (larger sizes are skipped)
    #[arg(long, default_value_t = 4.0)]
    interp_limit: f64,
    /// Seconds spent repeating each measurement (the best run counts); longer is steadier on
    /// a machine whose speed varies
    #[arg(long, default_value_t = 0.5)]
    budget: f64,
}

pub fn bench(args: BenchArgs) -> CliResult {
    if !matches!(args.wave_width, 4 | 8 | 16 | 32 | 64) {
        return Err(format!("wave width {} is not one of 4, 8, 16, 32, 64", args.wave_width));
    }
    for (flag, seconds) in [("--interp-limit", args.interp_limit), ("--budget", args.budget)] {
        if !(seconds.is_finite() && (0.0..=3600.0).contains(&seconds)) {
            return Err(format!("{flag} must be a number of seconds between 0 and 3600"));
        }
    }
    let all = args.engine == EngineChoice::All;
    let options = BenchOptions {
        sizes: args.n.clone(),
        jit: all || args.engine == EngineChoice::Jit,
        interp: all || args.engine == EngineChoice::Interp,
        native: all || args.engine == EngineChoice::Native,
        run: RunOptions {
            wave_width: args.wave_width,
            threads: args.threads,
            pin_workers: args.pin_threads,
            unchecked: false,
        },
        unchecked_too: args.unchecked,
        interp_limit: Duration::from_secs_f64(args.interp_limit),
        budget: Duration::from_secs_f64(args.budget),
    };
    let mut line = Progress::new();
    let mut progress = |m: &str| line.show(m);
    let result = match args.workload {
        Workload::Gemm => driver::bench_gemm(&options, &GemmKernel::ALL, &mut progress),
        Workload::GemmGpu => driver::bench_gemm(&options, &[GemmKernel::Gpu], &mut progress),
        Workload::GemmF16 => driver::bench_gemm_f16(&options, &mut progress),
        Workload::Vecadd => driver::bench_stream(Stream::Vecadd, &options, &mut progress),
        Workload::Reduction => driver::bench_stream(Stream::Reduction, &options, &mut progress),
        Workload::Histogram => driver::bench_stream(Stream::Histogram, &options, &mut progress),
        Workload::PrefixSum => driver::bench_stream(Stream::PrefixSum, &options, &mut progress),
        Workload::Relu => driver::bench_stream(Stream::Relu, &options, &mut progress),
        Workload::BiasAdd => driver::bench_stream(Stream::BiasAdd, &options, &mut progress),
        Workload::Softmax => driver::bench_stream(Stream::Softmax, &options, &mut progress),
        Workload::Transpose => driver::bench_stream(Stream::Transpose, &options, &mut progress),
        Workload::Launch => driver::bench_launch(&options, &mut progress),
        Workload::Compile => driver::bench_compile(&mut progress),
    };
    line.clear();
    let text = result.map_err(|e| e.to_string())?;
    output::print(&text)?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Args, Debug)]
pub struct FuzzDiffArgs {
    /// Number of random programs
    #[arg(long, default_value_t = 1000)]
    count: u64,
    /// Session seed (the same seed generates the same programs)
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Wave widths, used in turn (default: 4,8,16,32,64)
    #[arg(long, value_delimiter = ',')]
    wave_width: Vec<u32>,
    /// Where to write the failing program and its device data (`.wave` and `.bin`)
    #[arg(long, default_value = "fuzz-diff-failure")]
    out: String,
    /// Compare every `--stats` counter (the JIT compiled to count them), not only the
    /// instruction count
    #[arg(long)]
    stats: bool,
    /// JIT worker threads (0 = all cores; the interpreter is single-threaded). Other than 1,
    /// workgroups run in any order, so only programs whose results do not depend on it are
    /// generated
    #[arg(long, default_value_t = 1)]
    threads: usize,
}

pub fn fuzz_diff(args: FuzzDiffArgs) -> CliResult {
    let widths = if args.wave_width.is_empty() { vec![4, 8, 16, 32, 64] } else { args.wave_width.clone() };
    if let Some(w) = widths.iter().find(|w| !matches!(w, 4 | 8 | 16 | 32 | 64)) {
        return Err(format!("wave width {w} is not one of 4, 8, 16, 32, 64"));
    }
    // Checked here, or every program would fail alike on both engines with the dispatch error.
    let most_threads = wave_runtime::dispatch::MAX_THREADS_PER_CORE * wave_runtime::host_cores();
    if args.threads > most_threads {
        return Err(format!("--threads {} is more than {most_threads} (16 per core)", args.threads));
    }
    let jit = wave_jit_codegen::JitEngine::strict().with_stats(args.stats);
    let interp = wave_runtime::Interpreter::new();
    let options = FuzzOptions {
        count: args.count,
        seed: args.seed,
        widths,
        every_counter: args.stats,
        threads: args.threads,
        gen: wave_jit::jit_fuzz_config(GenConfig::default()),
        ..FuzzOptions::default()
    };
    let mut last_shown = 0u64;
    let mut line = Progress::new();
    let mut progress = |p: &difftest::Progress| {
        if p.done == p.total || p.done == 0 || p.done - last_shown >= 25 {
            last_shown = p.done;
            // Programs cycle through the widths, so the width of one case says little here.
            line.show(&format!(
                "fuzz-diff: {}/{} programs agree, {:.1} s",
                p.done,
                p.total,
                p.elapsed.as_secs_f64()
            ));
        }
    };
    let result = difftest::fuzz_diff_with(&jit, &interp, &options, &mut progress);
    line.clear();
    match result {
        Ok(report) => {
            output::print(&format!("fuzz-diff: {report}\n"))?;
            Ok(ExitCode::SUCCESS)
        }
        Err(mismatch) => {
            // The files first: a closed stdout ends the program at the first print.
            let wave = format!("{}.wave", args.out);
            let data = format!("{}.bin", args.out);
            std::fs::write(&wave, mismatch.program_text()).map_err(|e| format!("{wave}: {e}"))?;
            std::fs::write(&data, mismatch.data()).map_err(|e| format!("{data}: {e}"))?;
            output::print(&format!(
                "{mismatch}\nwritten: {wave}, {data}; reproduce with: wave-jit run {wave} {} --arg 0:{data} \
                 --no-fallback (the JIT; --engine interp for the interpreter)\n",
                mismatch.dispatch_flags()
            ))?;
            Ok(ExitCode::from(1))
        }
    }
}
