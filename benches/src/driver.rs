//! `wave-jit bench`: run the workloads on every engine and as native Rust, and print the
//! comparison side by side (every ratio is measured in the same run).

use crate::compile_times;
use crate::kernels::{self, GemmKernel};
use crate::native::{self, gemm4x8, NativeThreads};
use crate::streams::{self, Stream};
use crate::workloads::{self, GemmF16Problem, GemmProblem, Repeat, RunOptions, Timing};
use crate::BenchError;
use std::fmt::Write as _;
use std::time::Duration;
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

impl Row {
    fn new(engine: &str, kernel: &str, time: Result<Duration, String>, note: String) -> Row {
        Row { engine: engine.into(), kernel: kernel.into(), time, note }
    }
}

/// A result table: rows, one rate column, ratio columns (baseline time / row time: above 1 is
/// faster than the baseline), and a note column.
struct Table<'a> {
    rate_header: &'a str,
    /// Rate (per second) of a row's time.
    rate: &'a dyn Fn(Duration) -> f64,
    /// Header and baseline time of each ratio column after "× interp".
    baselines: Vec<(String, Option<Duration>)>,
    note_header: &'a str,
}

impl Table<'_> {
    fn print(&self, out: &mut String, rows: &[Row]) {
        let mut head = format!(
            "  {:<14} {:<15} {:>11} {:>9} {:>9}",
            "engine", "kernel", "best time", self.rate_header, "× interp"
        );
        for (name, _) in &self.baselines {
            let _ = write!(head, " {name:>16}");
        }
        let _ = writeln!(out, "{}", format!("{head}  {}", self.note_header).trim_end());
        let time_of = |engine: &str, kernel: &str| {
            rows.iter().find(|r| r.engine == engine && r.kernel == kernel).and_then(|r| r.time.clone().ok())
        };
        for r in rows {
            let t = match &r.time {
                Ok(t) => *t,
                Err(why) => {
                    let _ = writeln!(out, "  {:<14} {:<15} {why}", r.engine, r.kernel);
                    continue;
                }
            };
            let ratio = |base: Option<Duration>| {
                base.map_or("-".to_string(), |b| format!("{:.2}", b.as_secs_f64() / t.as_secs_f64()))
            };
            let vs_interp = match r.engine.as_str() {
                "interp" => "1.00".to_string(),
                e if e.starts_with("jit") => ratio(time_of("interp", &r.kernel)),
                _ => "-".to_string(),
            };
            let mut line = format!(
                "  {:<14} {:<15} {:>11} {:>9.3} {:>9}",
                r.engine,
                r.kernel,
                secs(t),
                (self.rate)(t) / 1e9,
                vs_interp
            );
            for (_, base) in &self.baselines {
                let _ = write!(line, " {:>16}", ratio(*base));
            }
            let _ = writeln!(out, "{}", format!("{line}  {}", r.note).trim_end());
        }
    }
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
pub fn jit_compile_time(
    kernel: &wave_isa::ValidKernel,
    run: &RunOptions,
) -> Result<(Duration, Tiers), String> {
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

/// "jit compile time: NAME …" with both tiers' times.
fn compile_time_line(
    out: &mut String,
    name: &str,
    kernel: Result<wave_isa::ValidKernel, BenchError>,
    run: &RunOptions,
) {
    let text = match kernel.map_err(|e| e.to_string()).and_then(|k| jit_compile_time(&k, run)) {
        Ok((t, Tiers::One | Tiers::Pending)) => format!("{} (one tier: optimized)", secs(t)),
        Ok((t, Tiers::OptimizedAfter(optimized))) => format!(
            "quick tier {} (single-pass register allocation), optimized tier took over after {} (compiled in the background)",
            secs(t),
            secs(optimized)
        ),
        Ok((t, Tiers::QuickOnly(why))) => format!("quick tier {} only: {why}", secs(t)),
        Err(e) => format!("error: {e}"),
    };
    let _ = writeln!(out, "jit compile time: {name}: {text}");
}

fn native_threads(opts: &BenchOptions) -> Result<NativeThreads, BenchError> {
    NativeThreads::new(opts.run.threads)
}

/// `wave-jit bench gemm` (every GEMM kernel) and `wave-jit bench gemm-gpu` (`which` only).
pub fn bench_gemm(
    opts: &BenchOptions,
    which_kernels: &[GemmKernel],
    progress: &mut dyn FnMut(&str),
) -> Result<String, BenchError> {
    let jit = wave_jit_codegen::JitEngine::strict();
    let interp = Interpreter::new();
    let threads = native_threads(opts)?;
    let sizes = if opts.sizes.is_empty() { vec![256, 512, 1024] } else { opts.sizes.clone() };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "GEMM C = A·B, f32, row-major N×N; GFLOP/s = 2·N³ / best time; W = {}, JIT threads = {}",
        opts.run.wave_width,
        threads_text(&opts.run)
    );
    for which in which_kernels {
        let _ = writeln!(out, "kernel {}: {}", which.name(), which.describe());
    }
    let _ = writeln!(
        out,
        "native 4x8: Rust, 4×8 register-blocked micro-kernel, {}, packed A and B, {} threads (rayon)",
        gemm4x8::MicroKernel::detect().describe(),
        threads.count()
    );
    let _ = writeln!(
        out,
        "native matrixmultiply: the matrixmultiply crate's sgemm ({}), one band of rows per thread, {} threads (rayon)",
        native::sgemm_instruction_set(),
        threads.count()
    );
    if opts.jit {
        for which in which_kernels {
            compile_time_line(&mut out, which.name(), which.kernel(), &opts.run);
        }
    }
    // Interpreter speed, from a small run, to decide which sizes it can do in time.
    let mut interp_small: Vec<(GemmKernel, Option<f64>)> = Vec::new();
    if opts.interp {
        for &which in which_kernels {
            let n = which.tile().max(64);
            progress(&format!("gemm: interpreter calibration ({}, N = {n})", which.name()));
            let p = GemmProblem::random(n, 1);
            let secs_at_n = workloads::run_gemm(&interp, which, &p, &opts.run, Repeat::ONCE)
                .ok()
                .map(|(_, t)| t.best.as_secs_f64() / (n as f64).powi(3));
            interp_small.push((which, secs_at_n));
        }
    }
    let repeat = Repeat { budget: opts.budget, max_runs: 20 };
    for &n in &sizes {
        let problem = GemmProblem::random(n, 0x6E33 + n as u64);
        progress(&format!("gemm N = {n}: f64 reference"));
        let reference = problem.reference();
        let accuracy = |c: &[f32]| {
            let err = native::max_relative_error(c, &reference);
            format!("{err:.1e}{}", if err > 1e-4 { "  WRONG" } else { "" })
        };
        let mut rows: Vec<Row> = Vec::new();
        let mut engine_rows = |engine: &dyn Engine,
                               label: &str,
                               run: RunOptions,
                               rows: &mut Vec<Row>,
                               repeat: Repeat,
                               skip: &dyn Fn(GemmKernel) -> Option<String>| {
            for &which in which_kernels {
                let kernel = which.name().trim_start_matches("gemm_");
                if let Some(why) = skip(which) {
                    rows.push(Row::new(label, kernel, Err(why), String::new()));
                    continue;
                }
                progress(&format!("gemm N = {n}: {label} {}", which.name()));
                rows.push(match workloads::run_gemm(engine, which, &problem, &run, repeat) {
                    Ok((c, t)) => Row::new(label, kernel, Ok(t.best), accuracy(&c)),
                    Err(e) => Row::new(label, kernel, Err(e.to_string()), String::new()),
                });
            }
        };
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
            let skip = |which: GemmKernel| {
                let per_flop = interp_small.iter().find(|(w, _)| *w == which).and_then(|(_, s)| *s);
                tile_skip(which).or_else(|| match per_flop.map(|s| s * (n as f64).powi(3)) {
                    None => Some("calibration run failed".to_string()),
                    Some(e) if e > opts.interp_limit.as_secs_f64() => {
                        Some(format!("skipped: estimated {e:.0} s (limit {} s)", opts.interp_limit.as_secs()))
                    }
                    Some(_) => None,
                })
            };
            engine_rows(&interp, "interp", opts.run, &mut rows, Repeat::ONCE, &skip);
        }
        if opts.native {
            let nn = n as usize;
            let mut c = vec![0f32; nn * nn];
            progress(&format!("gemm N = {n}: native 4x8"));
            let t = workloads::time_native(repeat, || {
                gemm4x8::gemm_4x8(nn, &problem.a, &problem.b, &mut c, &threads)
            });
            rows.push(Row::new("native", "4x8", Ok(t.best), accuracy(&c)));
            progress(&format!("gemm N = {n}: native matrixmultiply"));
            c.fill(f32::NAN);
            let t = workloads::time_native(repeat, || {
                native::sgemm_rows(nn, &problem.a, &problem.b, &mut c, &threads)
            });
            rows.push(Row::new("native", "matrixmultiply", Ok(t.best), accuracy(&c)));
        }
        let _ = writeln!(out, "\nN = {n}");
        let time_of = |kernel: &str| {
            rows.iter().find(|r| r.engine == "native" && r.kernel == kernel).and_then(|r| r.time.clone().ok())
        };
        let flops = problem.flops();
        let table = Table {
            rate_header: "GFLOP/s",
            rate: &|t| flops / t.as_secs_f64(),
            baselines: vec![
                ("× native 4x8".into(), time_of("4x8")),
                ("× matrixmultiply".into(), time_of("matrixmultiply")),
            ],
            note_header: "max rel. error",
        };
        table.print(&mut out, &rows);
    }
    let _ = writeln!(
        out,
        "\n× interp: speed-up over the interpreter on the same kernel; × native 4x8, × matrixmultiply: speed relative to that native GEMM (higher is faster, 1.00 = as fast)"
    );
    Ok(out)
}

/// `wave-jit bench gemm-f16`.
pub fn bench_gemm_f16(opts: &BenchOptions, progress: &mut dyn FnMut(&str)) -> Result<String, BenchError> {
    let jit = wave_jit_codegen::JitEngine::strict();
    let interp = Interpreter::new();
    let threads = native_threads(opts)?;
    let sizes = if opts.sizes.is_empty() { vec![256, 512, 1024] } else { opts.sizes.clone() };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "GEMM C = A·B, f16 (A, B and C f16), row-major N×N; GFLOP/s = 2·N³ / best time; W = {}, JIT threads = {}",
        opts.run.wave_width,
        threads_text(&opts.run)
    );
    let _ = writeln!(
        out,
        "kernel gemm_f16: f16 products and sums (hma2, two columns per register), 64×64 tiles, K in local memory by 16, 4×4 outputs per thread"
    );
    let _ = writeln!(
        out,
        "native f16 via f32: A and B converted to f32, the 4x8 GEMM ({}), C rounded to f16 — all timed; {} threads",
        gemm4x8::MicroKernel::detect().describe(),
        threads.count()
    );
    let _ = writeln!(
        out,
        "check: the kernel must equal, bit for bit, a Rust HGEMM that rounds to f16 after every step in k order; error: max |C − A·B| / max |A·B| in f64"
    );
    let kernel = || kernels::load(kernels::GEMM_F16, "gemm_f16.wave", "gemm_f16");
    if opts.jit {
        compile_time_line(&mut out, "gemm_f16", kernel(), &opts.run);
    }
    let interp_per_flop = if opts.interp {
        progress("gemm-f16: interpreter calibration (N = 64)");
        workloads::run_gemm_f16(&interp, &GemmF16Problem::random(64, 1), &opts.run, Repeat::ONCE)
            .ok()
            .map(|(_, t)| t.best.as_secs_f64() / 64f64.powi(3))
    } else {
        None
    };
    let repeat = Repeat { budget: opts.budget, max_runs: 20 };
    for &n in &sizes {
        let problem = GemmF16Problem::random(n, 0xF16 + n as u64);
        progress(&format!("gemm-f16 N = {n}: references"));
        let reference = problem.reference();
        let stepwise = problem.stepwise_f16();
        let error = |c: &[u16]| {
            let c: Vec<f32> = c.iter().map(|&h| half::f16::from_bits(h).to_f32()).collect();
            native::max_relative_error(&c, &reference)
        };
        let engine_note = |c: &[u16]| {
            let differ = c.iter().zip(&stepwise).filter(|(a, b)| a != b).count();
            let check =
                if differ == 0 { "exact".to_string() } else { format!("WRONG: {differ} values differ") };
            format!("{check}; error {:.1e}", error(c))
        };
        let mut rows = Vec::new();
        let mut engine_row = |engine: &dyn Engine, label: &str, run: RunOptions, repeat: Repeat| {
            progress(&format!("gemm-f16 N = {n}: {label}"));
            match workloads::run_gemm_f16(engine, &problem, &run, repeat) {
                Ok((c, t)) => Row::new(label, "f16", Ok(t.best), engine_note(&c)),
                Err(e) => Row::new(label, "f16", Err(e.to_string()), String::new()),
            }
        };
        if opts.jit {
            rows.push(engine_row(&jit, "jit", opts.run, repeat));
            if opts.unchecked_too && !opts.run.unchecked {
                rows.push(engine_row(
                    &jit,
                    "jit unchecked",
                    RunOptions { unchecked: true, ..opts.run },
                    repeat,
                ));
            }
        }
        if opts.interp {
            rows.push(match interp_per_flop.map(|s| s * (n as f64).powi(3)) {
                None => Row::new("interp", "f16", Err("calibration run failed".into()), String::new()),
                Some(e) if e > opts.interp_limit.as_secs_f64() => {
                    Row::new("interp", "f16", Err(format!("skipped: estimated {e:.0} s")), String::new())
                }
                Some(_) => engine_row(&interp, "interp", opts.run, Repeat::ONCE),
            });
        }
        if opts.native {
            progress(&format!("gemm-f16 N = {n}: native"));
            let nn = n as usize;
            let mut c16 = vec![0u16; nn * nn];
            let t = workloads::time_native(repeat, || {
                c16 = native::gemm_f16_via_f32(nn, &problem.a, &problem.b, &threads);
            });
            rows.push(Row::new("native", "f16 via f32", Ok(t.best), format!("error {:.1e}", error(&c16))));
        }
        let native_time = rows.iter().find(|r| r.engine == "native").and_then(|r| r.time.clone().ok());
        let _ = writeln!(out, "\nN = {n}");
        let flops = problem.flops();
        let table = Table {
            rate_header: "GFLOP/s",
            rate: &|t| flops / t.as_secs_f64(),
            baselines: vec![("× native".into(), native_time)],
            note_header: "check",
        };
        table.print(&mut out, &rows);
    }
    let _ = writeln!(out, "\n× native: speed relative to the native f16-via-f32 GEMM (higher is faster)");
    Ok(out)
}

/// `wave-jit bench vecadd|reduction|histogram|prefix-sum|relu|bias-add|softmax|transpose`.
pub fn bench_stream(
    which: Stream,
    opts: &BenchOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<String, BenchError> {
    let jit = wave_jit_codegen::JitEngine::strict();
    let interp = Interpreter::new();
    let threads = native_threads(opts)?;
    let sizes = if opts.sizes.is_empty() { vec![1 << 20, 1 << 24] } else { opts.sizes.clone() };
    let mut out = String::new();
    let _ = writeln!(out, "{}: {}", which.name(), which.describe());
    let _ = writeln!(
        out,
        "GB/s = {} bytes per element / best time; W = {}, JIT threads = {}; every result checked against Rust",
        which.bytes(1),
        opts.run.wave_width,
        threads_text(&opts.run)
    );
    let _ = writeln!(out, "native: {}, {} threads", which.native_yardstick(), threads.count());
    if opts.jit {
        for (source, file, name) in which.kernels() {
            compile_time_line(&mut out, name, kernels::load(source, file, name), &opts.run);
        }
    }
    let calibration_n = match which {
        Stream::Transpose => 128 * 128,
        _ => 1 << 14,
    };
    let interp_per_element = if opts.interp {
        progress(&format!("{}: interpreter calibration", which.name()));
        streams::run_stream(&interp, which, calibration_n, &opts.run, Repeat::ONCE)
            .ok()
            .map(|t| t.best.as_secs_f64() / calibration_n as f64)
    } else {
        None
    };
    let repeat = Repeat { budget: opts.budget, max_runs: 50 };
    let kernel = which.name();
    for &n in &sizes {
        let mut rows: Vec<Row> = Vec::new();
        let time = |r: Result<Timing, BenchError>| r.map(|t| t.best).map_err(|e| e.to_string());
        if opts.jit {
            progress(&format!("{kernel} n = {n}: jit"));
            rows.push(Row::new(
                "jit",
                kernel,
                time(streams::run_stream(&jit, which, n, &opts.run, repeat)),
                String::new(),
            ));
            if opts.unchecked_too && !opts.run.unchecked {
                let run = RunOptions { unchecked: true, ..opts.run };
                let t = time(streams::run_stream(&jit, which, n, &run, repeat));
                rows.push(Row::new("jit unchecked", kernel, t, String::new()));
            }
        }
        if opts.interp {
            let t = match interp_per_element.map(|s| s * n as f64) {
                None => Err("calibration run failed".to_string()),
                Some(e) if e > opts.interp_limit.as_secs_f64() => Err(format!("skipped: estimated {e:.0} s")),
                Some(_) => {
                    progress(&format!("{kernel} n = {n}: interpreter"));
                    time(streams::run_stream(&interp, which, n, &opts.run, Repeat::ONCE))
                }
            };
            rows.push(Row::new("interp", kernel, t, String::new()));
        }
        if opts.native {
            progress(&format!("{kernel} n = {n}: native"));
            let t = time(streams::run_stream_native(which, n, &threads, repeat));
            rows.push(Row::new("native", kernel, t, String::new()));
        }
        let native_time = rows.iter().find(|r| r.engine == "native").and_then(|r| r.time.clone().ok());
        let _ = writeln!(out, "\nn = {n}");
        let bytes = which.bytes(n) as f64;
        let table = Table {
            rate_header: "GB/s",
            rate: &|t| bytes / t.as_secs_f64(),
            baselines: vec![("× native".into(), native_time)],
            note_header: "",
        };
        table.print(&mut out, &rows);
    }
    let _ = writeln!(out, "\n× native: speed relative to the native Rust code (higher is faster)");
    Ok(out)
}

/// `wave-jit bench compile`: compile times over every bundled and conformance kernel at W = 32
/// and W = 64 (p50, max and the slowest kernel, for the first code and the optimized code).
pub fn bench_compile(progress: &mut dyn FnMut(&str)) -> Result<String, BenchError> {
    use compile_times::CompileTime;
    let subjects = compile_times::subjects();
    let bundled = subjects.iter().filter(|s| s.label.starts_with("bench/")).count();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "compile: {} kernels ({bundled} bundled, {} conformance), each compiled afresh (cache bypassed), checked, one at a time",
        subjects.len(),
        subjects.len() - bundled
    );
    let _ = writeln!(
        out,
        "first: until the first code runs (the quick tier of a kernel compiled in two); optimized: until the optimized code runs"
    );
    let _ = writeln!(
        out,
        "\n  {:>3}  {:<10} {:>8} {:>6} {:>10} {:>10} {:>8}  slowest",
        "W",
        "code",
        "kernels",
        "failed",
        "p50",
        "max",
        format!(">{}", secs(compile_times::TARGET))
    );
    let first = |t: &CompileTime| Some(t.first);
    let optimized = |t: &CompileTime| t.optimized;
    let mut notes = Vec::new();
    for width in [32, 64] {
        let survey = compile_times::survey(&subjects, width, progress);
        for (code, pick) in
            [("first", &first as &dyn Fn(&CompileTime) -> Option<Duration>), ("optimized", &optimized)]
        {
            let picked: Vec<(String, Duration)> =
                survey.times.iter().filter_map(|(l, t)| pick(t).map(|d| (l.clone(), d))).collect();
            let (p50, max, slowest, over) = match compile_times::spread(&picked) {
                Some(s) => (secs(s.p50), secs(s.max), s.slowest, s.over_target),
                None => ("-".into(), "-".into(), String::new(), Vec::new()),
            };
            let _ = writeln!(
                out,
                "  {width:>3}  {code:<10} {:>8} {:>6} {p50:>10} {max:>10} {:>8}  {slowest}",
                picked.len(),
                survey.failed.len(),
                over.len()
            );
            if !over.is_empty() {
                let named: Vec<String> = over.iter().map(|(l, t)| format!("{l} {}", secs(*t))).collect();
                notes.push(format!(
                    "W = {width}, {code}: over {}: {}",
                    secs(compile_times::TARGET),
                    named.join(", ")
                ));
            }
        }
        for (label, t) in survey.times.iter().filter(|(_, t)| t.optimized.is_none()) {
            let why = if t.first > compile_times::OUTLIER {
                format!("optimized tier not measured (first code over {})", secs(compile_times::OUTLIER))
            } else {
                format!("optimized tier not ready {} later", secs(compile_times::OPTIMIZED_WAIT_LIMIT))
            };
            notes.push(format!("W = {width}: {label}: first code {}, {why}", secs(t.first)));
        }
        notes.extend(
            survey
                .failed
                .into_iter()
                .map(|(label, why)| format!("W = {width}: {label}: not compiled: {why}")),
        );
    }
    for note in notes {
        let _ = writeln!(out, "  {note}");
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
