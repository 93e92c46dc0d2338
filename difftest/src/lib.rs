//! wave-jit-difftest: differential testing of WAVE engines. Random structured WAVE programs
//! run on any two engines (`&dyn wave_runtime::Engine`), compared bit for bit (all of device
//! memory, including a dump of every register and predicate of every lane).
//!
//! The crate knows no engine: what the generator must know of the engine under test (the most
//! instructions it compiles, the ops its lane-local loops should be made of) comes in through
//! [`gen::GenConfig::instruction_limit`] and [`gen::GenConfig::favoured_ops`], filled in by the
//! callers that test the JIT (`wave-jit fuzz-diff`, the JIT's tests).
//!
//! - [`gen`] writes valid programs: nested divergent if/else and loops (each with a uniform
//!   trip counter, so they terminate), break/continue, calls, return/halt, corner-case values
//!   (NaN, ±0, ±Inf, denormals, INT_MIN), masked in-bounds local and device accesses, atomics,
//!   wave ops, MMA, and barriers only at the top level of the entry; and a share of programs
//!   of special kinds ([`program::ProgramKind`]): deep divergent nesting, call fans, a 4 GiB
//!   device, inactive lanes with out-of-range addresses, shared counters.
//! - With several worker threads ([`FuzzOptions::threads`]) the programs are order
//!   independent ([`gen::GenConfig::order_independent`]).
//! - [`run`] runs one on an engine and compares outcomes.
//! - [`minimize`] shrinks a failing program while it keeps failing; [`text`] prints it.
//!
//! Entry point: [`fuzz_diff`].

pub mod gen;
pub mod minimize;
pub mod program;
pub mod rng;
pub mod run;
pub mod text;

use program::Program;
use std::fmt;
use std::time::{Duration, Instant};
use wave_runtime::Engine;

/// Everything that steers a fuzzing session.
#[derive(Clone, Debug)]
pub struct FuzzOptions {
    /// Programs to run.
    pub count: u64,
    /// Session seed; case `i` uses `rng::mix(seed ^ i)`.
    pub seed: u64,
    /// Wave widths, used in turn (case `i` runs at `widths[i % len]`).
    pub widths: Vec<u32>,
    pub gen: gen::GenConfig,
    /// Runs of both engines the minimiser may spend on a failure.
    pub minimize_budget: usize,
    /// Compare every counter of the engines' `Stats` (both count everything `--stats`
    /// prints); otherwise only the instruction count (and workgroups and waves).
    pub every_counter: bool,
    /// Worker threads of the dispatches (0 = all cores; only the JIT uses them). Other than 1,
    /// workgroups run in any order, so only order-independent programs are generated.
    pub threads: usize,
    /// Run a program that both engines finish under the limit again without one (the JIT's
    /// code without instruction counting), comparing results and memory (not counters).
    pub rerun_without_limit: bool,
}

impl FuzzOptions {
    /// The generator's configuration: `gen`, order independent unless one thread runs.
    pub fn gen_config(&self) -> gen::GenConfig {
        gen::GenConfig {
            order_independent: self.gen.order_independent || self.threads != 1,
            ..self.gen.clone()
        }
    }
}

impl Default for FuzzOptions {
    fn default() -> FuzzOptions {
        FuzzOptions {
            count: 1000,
            seed: 1,
            widths: vec![4, 8, 16, 32, 64],
            gen: gen::GenConfig::default(),
            minimize_budget: 2000,
            every_counter: false,
            threads: 1,
            rerun_without_limit: true,
        }
    }
}

/// Where a session is, for a progress line.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub done: u64,
    pub total: u64,
    pub wave_width: u32,
    pub elapsed: Duration,
}

/// A session in which the engines agreed on every program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    pub programs: u64,
    /// Programs per wave width, `(W, count)`.
    pub per_width: Vec<(u32, u64)>,
    /// Programs that both engines rejected with the same error (generated programs should
    /// never fail, so a non-zero count points at a harness or engine problem).
    pub both_failed: u64,
    /// Statements generated in all programs.
    pub statements: u64,
    /// Programs per kind, `(kind, count)`, in the order of [`program::ProgramKind::ALL`].
    pub per_kind: Vec<(program::ProgramKind, u64)>,
    /// Wall time of the session.
    pub elapsed: Duration,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let widths: Vec<String> = self.per_width.iter().map(|(w, n)| format!("W={w}: {n}")).collect();
        let kinds: Vec<String> = self.per_kind.iter().map(|(k, n)| format!("{}: {n}", k.name())).collect();
        write!(
            f,
            "{} programs agreed ({}; {}), {} statements, {} failed identically on both engines, {:.1} s",
            self.programs,
            widths.join(", "),
            kinds.join(", "),
            self.statements,
            self.both_failed,
            self.elapsed.as_secs_f64()
        )
    }
}

/// Two engines disagreed. Holds the original and the minimised program.
#[derive(Clone, Debug)]
pub struct Mismatch {
    pub engines: (&'static str, &'static str),
    /// Index of the case in the session, and the seed that generates it.
    pub case: u64,
    pub case_seed: u64,
    pub wave_width: u32,
    /// Worker threads the dispatches ran with.
    pub threads: usize,
    /// The instruction limit per workgroup the engines disagreed under (0: none).
    pub max_instructions: u64,
    pub original: Program,
    pub minimized: Program,
    /// The first difference of the minimised program, in words.
    pub difference: String,
}

impl Mismatch {
    /// The minimised program as `.wave` text.
    pub fn program_text(&self) -> String {
        text::program_text(&self.minimized)
    }

    /// The initial contents of device memory (the data area and the counters; the rest is
    /// zero).
    pub fn data(&self) -> &[u8] {
        &self.minimized.data
    }

    /// The dispatch as `wave-jit run` flags (the data area goes in with `--arg 0:FILE`).
    pub fn dispatch_flags(&self) -> String {
        let s = &self.minimized.shape;
        let mut flags = format!(
            "--grid {},{},1 --workgroup {},{},1 --wave-width {} --registers {} --device-memory {} \
             --max-instructions {} --threads {}",
            s.grid[0],
            s.grid[1],
            s.workgroup[0],
            s.workgroup[1],
            s.wave_width,
            program::REGISTERS,
            s.device_bytes(),
            self.max_instructions,
            self.threads
        );
        for (r, v) in &s.initial_registers {
            flags.push_str(&format!(" --set-reg {r}:0x{v:x}"));
        }
        flags
    }
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "engines `{}` and `{}` disagree on case {} (case seed 0x{:016x}, wave width {}, {} program, \
             {} worker threads)",
            self.engines.0,
            self.engines.1,
            self.case,
            self.case_seed,
            self.wave_width,
            self.original.kind.name(),
            self.threads
        )?;
        writeln!(f, "difference: {}", self.difference)?;
        writeln!(
            f,
            "minimised from {} to {} statements:",
            self.original.statement_count(),
            self.minimized.statement_count()
        )?;
        write!(f, "{}", self.program_text())?;
        writeln!(f, "dispatch: {}", self.dispatch_flags())?;
        let nonzero = self.data().iter().any(|&b| b != 0);
        let s = &self.minimized.shape;
        write!(
            f,
            "device memory: {} bytes of data and counters at 0 ({}), the rest zero; registers and \
             p0..p3 of thread t are stored at 0x{:x} + t*{}",
            s.initialized_bytes(),
            if nonzero { "random words, see Mismatch::data" } else { "all zero" },
            s.dump_base(),
            program::DUMP_WORDS_PER_THREAD * 4
        )
    }
}

/// Generate one case of a session (same seed, same program).
pub fn case_program(seed: u64, case: u64, widths: &[u32], config: &gen::GenConfig) -> (u64, Program) {
    let case_seed = rng::mix(seed ^ case.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let width = if widths.is_empty() { 32 } else { widths[(case % widths.len() as u64) as usize] };
    let program = gen::generate(&mut rng::SplitMix64::new(case_seed), width, config);
    (case_seed, program)
}

/// Run `count` random programs on `a` and `b` and compare them; on the first mismatch,
/// minimise the program and return it.
pub fn fuzz_diff(
    a: &dyn Engine,
    b: &dyn Engine,
    count: u64,
    seed: u64,
    widths: &[u32],
    progress: &mut dyn FnMut(&Progress),
) -> Result<Report, Box<Mismatch>> {
    let options = FuzzOptions { count, seed, widths: widths.to_vec(), ..FuzzOptions::default() };
    fuzz_diff_with(a, b, &options, progress)
}

/// [`fuzz_diff`] with every option.
pub fn fuzz_diff_with(
    a: &dyn Engine,
    b: &dyn Engine,
    options: &FuzzOptions,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Report, Box<Mismatch>> {
    let start = Instant::now();
    let mut report = Report::default();
    let names = (a.name(), b.name());
    let gen_config = options.gen_config();
    for case in 0..options.count {
        let (case_seed, program) = case_program(options.seed, case, &options.widths, &gen_config);
        let width = program.shape.wave_width;
        progress(&Progress { done: case, total: options.count, wave_width: width, elapsed: start.elapsed() });
        let run_both = |p: &Program, limit: u64| {
            let (mut x, mut y) = (
                run::run_program_with_limit(a, p, options.threads, limit),
                run::run_program_with_limit(b, p, options.threads, limit),
            );
            if limit == 0 {
                (x.stats, y.stats) = (None, None);
            } else if !options.every_counter {
                x.keep_instruction_count();
                y.keep_instruction_count();
            }
            (x, y)
        };
        // Under the limit; then, where both engines finished, without one.
        let differs = |p: &Program, limit: u64| {
            if limit == 0 {
                let (x, y) = run_both(p, run::MAX_INSTRUCTIONS);
                if x.result.is_err() || y.result.is_err() {
                    return None;
                }
            }
            let (x, y) = run_both(p, limit);
            run::difference(&p.shape, &x, &y, names)
        };
        let (out_a, out_b) = run_both(&program, run::MAX_INSTRUCTIONS);
        let mut found =
            run::difference(&program.shape, &out_a, &out_b, names).map(|d| (d, run::MAX_INSTRUCTIONS));
        if found.is_none() && options.rerun_without_limit && out_a.result.is_ok() && out_b.result.is_ok() {
            let (x, y) = run_both(&program, 0);
            found = run::difference(&program.shape, &x, &y, names).map(|d| (d, 0));
        }
        if let Some((difference, limit)) = found {
            let mut fails = |p: &Program| differs(p, limit).is_some();
            let minimized = minimize::minimize(&program, options.minimize_budget, &mut fails);
            let difference = differs(&minimized, limit).unwrap_or(difference);
            return Err(Box::new(Mismatch {
                engines: names,
                case,
                case_seed,
                wave_width: width,
                threads: options.threads,
                max_instructions: limit,
                original: program,
                minimized,
                difference,
            }));
        }
        if out_a.result.is_err() {
            report.both_failed += 1;
        }
        report.programs += 1;
        report.statements += program.statement_count() as u64;
        match report.per_width.iter_mut().find(|(w, _)| *w == width) {
            Some((_, n)) => *n += 1,
            None => report.per_width.push((width, 1)),
        }
        match report.per_kind.iter_mut().find(|(k, _)| *k == program.kind) {
            Some((_, n)) => *n += 1,
            None => report.per_kind.push((program.kind, 1)),
        }
    }
    report.per_kind.sort();
    report.elapsed = start.elapsed();
    progress(&Progress { done: options.count, total: options.count, wave_width: 0, elapsed: report.elapsed });
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::{fuzz_diff_with, FuzzOptions};
    use wave_isa::ValidKernel;
    use wave_runtime::{Device, Dispatch, Engine, Interpreter, RunError, RunReport};

    /// The interpreter, but a run without an instruction limit flips a bit of the data area
    /// afterwards: wrong only where nothing counts instructions.
    struct WrongWithoutLimit(Interpreter);

    impl Engine for WrongWithoutLimit {
        fn name(&self) -> &'static str {
            "wrong-without-limit"
        }
        fn run(
            &self,
            kernel: &ValidKernel,
            dispatch: &Dispatch,
            device: &mut Device,
        ) -> Result<RunReport, RunError> {
            let report = self.0.run(kernel, dispatch, device)?;
            if dispatch.max_instructions == 0 {
                device.bytes_mut()[0] ^= 1;
            }
            Ok(report)
        }
    }

    fn options(rerun_without_limit: bool) -> FuzzOptions {
        FuzzOptions { count: 20, seed: 3, minimize_budget: 50, rerun_without_limit, ..FuzzOptions::default() }
    }

    #[test]
    fn programs_that_finish_run_again_without_a_limit() {
        let (wrong, reference) = (WrongWithoutLimit(Interpreter::new()), Interpreter::new());
        let report = fuzz_diff_with(&wrong, &reference, &options(false), &mut |_| {});
        assert!(report.is_ok(), "under the limit the engines agree");
        let mismatch =
            fuzz_diff_with(&wrong, &reference, &options(true), &mut |_| {}).expect_err("a mismatch");
        assert_eq!(mismatch.max_instructions, 0);
        assert!(mismatch.dispatch_flags().contains("--max-instructions 0"), "{}", mismatch.dispatch_flags());
        assert!(mismatch.difference.contains("data word at 0x0"), "{}", mismatch.difference);
    }
}
