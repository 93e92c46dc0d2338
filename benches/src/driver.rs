//! `wave-jit bench`: run the workloads on every engine and print the comparison side by side.

use crate::kernels::GemmKernel;
use crate::native;
use crate::workloads::{self, GemmProblem, Repeat, RunOptions, Stream, Timing};
use crate::BenchError;
use std::fmt::Write as _;
use std::time::{Duration, Instant};
use wave_jit_codegen::Tiers;
use wave_runtime::{Engine, Interpreter};

/// What to run and how.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// GEMM: N values; streams: element counts.
    pub sizes: Vec<u32>,
    pub jit: bool,
    pub interp: bool,
    pub native: bool,
    pub run: RunOptions,
    /// Also measure the JIT without bounds checks.
    pub unchecked_too: bool,
    /// The interpreter runs a size only if its estimated time is below this.
    pub interp_limit: Duration,
    /// Time spent repeating one measurement.
    pub budget: Duration,
}

impl Default for BenchOptions {
    fn default() -> BenchOptions {
        BenchOptions {
            sizes: Vec::new(),
            jit: true,
            interp: true,
            native: true,
            run: RunOptions::default(),
            unchecked_too: false,
            interp_limit: Duration::from_secs(4),
            budget: Duration::from_millis(500),
        }
    }
}

/// One line of a result table.
struct Row {
    engine: String,
    kernel: String,
    /// Best time, or why there is none.
    time: Result<Duration, String>,
    note: String,
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

fn threads_text(run: &RunOptions) -> String {
    if run.threads == 0 {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        format!("all ({cores})")
    } else {
        run.threads.to_string()
    }
}

/// Compile time of `kernel` in the JIT for `run`'s wave width (from the JIT's own clock; a
/// cached compilation reports the time it took when it was made): until the first runnable
/// code, and, for a kernel compiled in two tiers, until the optimized code took over (this
/// waits for it, so what runs next is the optimized code).
pub fn jit_compile_time(kernel: &wave_isa::Kernel, run: &RunOptions) -> Result<(Duration, Tiers), String> {
    let flags = wave_jit_codegen::Flags {
        width: run.wave_width,
        checked: !run.unchecked,
        fuel: false,
        stats: false,
        workgroup: kernel.meta.workgroup_size,
        window_wraps: false,
    };
    let code = wave_jit_codegen::compile(kernel, flags).map_err(|e| e.to_string())?;
    // An error only says why there is no optimized tier: `tiers` reports it.
    let _ = code.wait_optimized();
    Ok((code.compile_time, code.tiers()))
}

/// `wave-jit bench gemm`.
pub fn bench_gemm(opts: &BenchOptions, progress: &mut dyn FnMut(&str)) -> Result<String, BenchError> {
    let jit = wave_jit_codegen::JitEngine::strict();
    let interp = Interpreter::new();
    let sizes = if opts.sizes.is_empty() { vec![256, 512, 1024] } else { opts.sizes.clone() };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "GEMM C = A·B, f32, row-major N×N; GFLOP/s = 2·N³ / best time; W = {}, JIT threads = {}",
        opts.run.wave_width,
        threads_text(&opts.run)
    );
    let _ = writeln!(out, "kernels: gemm_naive (one output per thread), gemm_tiled (64×64 tiles, K in local memory by 16, 4×4 outputs per thread)");
    if opts.jit {
        for which in GemmKernel::ALL {
            let compiled =
                which.kernel().map_err(|e| e.to_string()).and_then(|k| jit_compile_time(&k, &opts.run));
            let text = match compiled {
                Ok((t, Tiers::One | Tiers::Pending)) => secs(t),
                Ok((t, Tiers::OptimizedAfter(optimized))) => format!(
                    "{} (quick tier, single-pass register allocation; the optimized code took over after {}, compiled in the background)",
                    secs(t),
                    secs(optimized)
                ),
                Ok((t, Tiers::QuickOnly(why))) => format!("{} (quick tier only: {why})", secs(t)),
                Err(e) => format!("error: {e}"),
            };
            let _ = writeln!(out, "jit compile time: {} {text}", which.name());
        }
    } else {
        let _ = writeln!(out, "jit: not selected");
    }
    // Interpreter speed, from a small run, to decide which sizes it can do in time.
    let mut interp_small: Vec<(GemmKernel, Option<f64>)> = Vec::new();
    if opts.interp {
        for which in GemmKernel::ALL {
            progress(&format!("gemm: interpreter calibration ({}, N = 64)", which.name()));
            let p = GemmProblem::random(64, 1);
            let secs_at_64 = workloads::run_gemm(&interp, which, &p, &opts.run, Repeat::ONCE)
                .ok()
                .map(|(_, t)| t.best.as_secs_f64());
            interp_small.push((which, secs_at_64));
        }
    }
    for &n in &sizes {
        let problem = GemmProblem::random(n, 0x6E33 + n as u64);
        progress(&format!("gemm N = {n}: f64 reference"));
        let reference = problem.reference();
        let flops = problem.flops();
        let mut rows: Vec<Row> = Vec::new();
        let mut engine_rows = |engine: &dyn Engine,
                               label: &str,
                               run: RunOptions,
                               rows: &mut Vec<Row>,
                               repeat: Repeat,
                               skip: &dyn Fn(GemmKernel) -> Option<String>| {
            for which in GemmKernel::ALL {
                let kernel = which.name().trim_start_matches("gemm_").to_string();
                if let Some(why) = skip(which) {
                    rows.push(Row { engine: label.into(), kernel, time: Err(why), note: String::new() });
                    continue;
                }
                progress(&format!("gemm N = {n}: {label} {}", which.name()));
                match workloads::run_gemm(engine, which, &problem, &run, repeat) {
                    Ok((c, t)) => {
                        let err = native::max_relative_error(&c, &reference);
                        let note = format!("{err:.1e}{}", if err > 1e-4 { "  WRONG" } else { "" });
                        rows.push(Row { engine: label.into(), kernel, time: Ok(t.best), note });
                    }
                    Err(e) => rows.push(Row {
                        engine: label.into(),
                        kernel,
                        time: Err(e.to_string()),
                        note: String::new(),
                    }),
                }
            }
        };
        let repeat = Repeat { budget: opts.budget, max_runs: 20 };
        let tile_skip = |which: GemmKernel| {
            (n % which.tile() != 0).then(|| format!("N is not a multiple of {}", which.tile()))
        };
        if opts.jit {
            engine_rows(&jit, "jit", opts.run, &mut rows, repeat, &tile_skip);
            if opts.unchecked_too && !opts.run.unchecked {
                let run = RunOptions { unchecked: true, ..opts.run };
                engine_rows(&jit, "jit unchecked", run, &mut rows, repeat, &tile_skip);
            }
        }
        if opts.interp {
            let estimate = |which: GemmKernel| {
                interp_small
                    .iter()
                    .find(|(w, _)| *w == which)
                    .and_then(|(_, s)| *s)
                    .map(|s| s * (n as f64 / 64.0).powi(3))
            };
            let skip = |which: GemmKernel| {
                tile_skip(which).or_else(|| match estimate(which) {
                    None => Some("calibration run failed".to_string()),
                    Some(e) if e > opts.interp_limit.as_secs_f64() => {
                        Some(format!("skipped: estimated {e:.0} s (limit {} s)", opts.interp_limit.as_secs()))
                    }
                    Some(_) => None,
                })
            };
            engine_rows(
                &interp,
                "interp",
                opts.run,
                &mut rows,
                Repeat { budget: Duration::ZERO, max_runs: 1 },
                &skip,
            );
        }
        if opts.native {
            let nn = n as usize;
            for (kernel, f) in [
                ("naive", native::gemm_naive as fn(usize, &[f32], &[f32], &mut [f32])),
                ("blocked", native::gemm_blocked),
            ] {
                progress(&format!("gemm N = {n}: native {kernel}"));
                let mut c = vec![0f32; nn * nn];
                let mut best = Duration::MAX;
                let start = Instant::now();
                let mut runs = 0;
                while runs == 0 || (start.elapsed() < opts.budget && runs < 20) {
                    let t = Instant::now();
                    f(nn, &problem.a, &problem.b, &mut c);
                    best = best.min(t.elapsed());
                    runs += 1;
                }
                let err = native::max_relative_error(&c, &reference);
                rows.push(Row {
                    engine: "native".into(),
                    kernel: kernel.into(),
                    time: Ok(best),
                    note: format!("{err:.1e}"),
                });
            }
        }
        let _ = writeln!(out, "\nN = {n}");
        let _ = writeln!(
            out,
            "  {:<14} {:<8} {:>11} {:>9} {:>10} {:>12}  max rel. error",
            "engine", "kernel", "best time", "GFLOP/s", "× interp", "× native-blk"
        );
        let time_of = |engine: &str, kernel: &str| {
            rows.iter().find(|r| r.engine == engine && r.kernel == kernel).and_then(|r| r.time.clone().ok())
        };
        let native_blocked = time_of("native", "blocked");
        for r in &rows {
            match &r.time {
                Ok(t) => {
                    let ratio = |base: Option<Duration>| {
                        base.map_or("-".to_string(), |b| format!("{:.2}", b.as_secs_f64() / t.as_secs_f64()))
                    };
                    let vs_interp = if r.engine == "interp" {
                        "1.00".to_string()
                    } else {
                        ratio(time_of("interp", &r.kernel))
                    };
                    let _ = writeln!(
                        out,
                        "  {:<14} {:<8} {:>11} {:>9.3} {:>10} {:>12}  {}",
                        r.engine,
                        r.kernel,
                        secs(*t),
                        flops / t.as_secs_f64() / 1e9,
                        if r.engine == "native" { "-".to_string() } else { vs_interp },
                        ratio(native_blocked),
                        r.note
                    );
                }
                Err(why) => {
                    let _ = writeln!(out, "  {:<14} {:<8} {why}", r.engine, r.kernel);
                }
            }
        }
    }
    let _ = writeln!(out, "\n× interp: speed-up over the interpreter on the same kernel; × native-blk: speed relative to the cache-blocked Rust loop (higher is faster)");
    Ok(out)
}

/// `wave-jit bench vecadd|reduction|histogram|prefix-sum`.
pub fn bench_stream(
    which: Stream,
    opts: &BenchOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<String, BenchError> {
    let jit = wave_jit_codegen::JitEngine::strict();
    let interp = Interpreter::new();
    let sizes = if opts.sizes.is_empty() { vec![1 << 20] } else { opts.sizes.clone() };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: GB/s = {} bytes per element / best time; W = {}, JIT threads = {}; every result checked against Rust",
        which.name(),
        which.bytes(1),
        opts.run.wave_width,
        threads_text(&opts.run)
    );
    let interp_per_element = if opts.interp {
        progress(&format!("{}: interpreter calibration", which.name()));
        workloads::run_stream(&interp, which, 1 << 14, &opts.run, Repeat::ONCE)
            .ok()
            .map(|t| t.best.as_secs_f64() / (1 << 14) as f64)
    } else {
        None
    };
    for &n in &sizes {
        let _ = writeln!(out, "\nn = {n}");
        let _ = writeln!(out, "  {:<14} {:>11} {:>9} {:>10}", "engine", "best time", "GB/s", "× interp");
        let mut rows: Vec<(String, Result<Duration, String>)> = Vec::new();
        let repeat = Repeat { budget: opts.budget, max_runs: 50 };
        if opts.jit {
            progress(&format!("{} n = {n}: jit", which.name()));
            rows.push((
                "jit".into(),
                workloads::run_stream(&jit, which, n, &opts.run, repeat)
                    .map(|t| t.best)
                    .map_err(|e| e.to_string()),
            ));
            if opts.unchecked_too && !opts.run.unchecked {
                let run = RunOptions { unchecked: true, ..opts.run };
                rows.push((
                    "jit unchecked".into(),
                    workloads::run_stream(&jit, which, n, &run, repeat)
                        .map(|t| t.best)
                        .map_err(|e| e.to_string()),
                ));
            }
        }
        if opts.interp {
            let time = match interp_per_element.map(|s| s * n as f64) {
                None => Err("calibration run failed".to_string()),
                Some(e) if e > opts.interp_limit.as_secs_f64() => Err(format!("skipped: estimated {e:.0} s")),
                Some(_) => {
                    progress(&format!("{} n = {n}: interpreter", which.name()));
                    workloads::run_stream(&interp, which, n, &opts.run, Repeat::ONCE)
                        .map(|t| t.best)
                        .map_err(|e| e.to_string())
                }
            };
            rows.push(("interp".into(), time));
        }
        let interp_time = rows.iter().find(|(e, _)| e == "interp").and_then(|(_, t)| t.clone().ok());
        for (engine, time) in rows {
            match time {
                Ok(t) => {
                    let gbs = which.bytes(n) as f64 / t.as_secs_f64() / 1e9;
                    let x = interp_time
                        .map_or("-".into(), |b| format!("{:.1}", b.as_secs_f64() / t.as_secs_f64()));
                    let _ = writeln!(out, "  {engine:<14} {:>11} {gbs:>9.3} {x:>10}", secs(t));
                }
                Err(why) => {
                    let _ = writeln!(out, "  {engine:<14} {why}");
                }
            }
        }
    }
    Ok(out)
}

/// `wave-jit bench launch`: µs per dispatch of an empty kernel, 1 and many workgroups.
pub fn bench_launch(opts: &BenchOptions, progress: &mut dyn FnMut(&str)) -> Result<String, BenchError> {
    let jit = wave_jit_codegen::JitEngine::strict();
    let interp = Interpreter::new();
    let groups = if opts.sizes.is_empty() { vec![1, 1024] } else { opts.sizes.clone() };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "launch: time per dispatch of an empty kernel (64 threads per workgroup), best of the runs; W = {}",
        opts.run.wave_width
    );
    let _ = writeln!(
        out,
        "  {:<10} {:>12} {:>14} {:>16}",
        "engine", "workgroups", "µs / dispatch", "ns / workgroup"
    );
    let repeat = Repeat { budget: opts.budget, max_runs: 10_000 };
    let mut engines: Vec<(&str, &dyn Engine)> = Vec::new();
    if opts.jit {
        engines.push(("jit", &jit));
    }
    if opts.interp {
        engines.push(("interp", &interp));
    }
    for (name, engine) in engines {
        for &g in &groups {
            progress(&format!("launch: {name}, {g} workgroups"));
            match workloads::time_launch(engine, g, &opts.run, repeat) {
                Ok(Timing { best, .. }) => {
                    let us = best.as_secs_f64() * 1e6;
                    let _ = writeln!(out, "  {name:<10} {g:>12} {us:>14.2} {:>16.1}", us * 1e3 / g as f64);
                }
                Err(e) => {
                    let _ = writeln!(out, "  {name:<10} {g:>12} error: {e}");
                }
            }
        }
    }
    Ok(out)
}
