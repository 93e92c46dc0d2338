//! Runs the whole suite at every width on the interpreter and on the JIT (with and without
//! `--stats` code) and compares what they counted, run by run.

use std::cell::RefCell;
use wave_conformance::{programs, run_program, WidthPolicy};
use wave_isa::ValidKernel;
use wave_runtime::{Device, Dispatch, Engine, Interpreter, RunError, RunReport, Stats};

/// How one run ended, as far as the engines must agree: the counters, or where and why it
/// failed (the JIT may name another pc for an exceeded instruction limit).
#[derive(Clone, Debug, PartialEq)]
enum Ran {
    Counted(Stats),
    Failed { kind: String, workgroup: [u32; 3], wave: u32 },
}

/// An engine that keeps what each of its runs returned, labelled with the program.
struct Recording<'e> {
    engine: &'e dyn Engine,
    program: RefCell<&'static str>,
    runs: RefCell<Vec<(String, Ran)>>,
}

impl Engine for Recording<'_> {
    fn name(&self) -> &'static str {
        self.engine.name()
    }

    fn run(
        &self,
        kernel: &ValidKernel,
        dispatch: &Dispatch,
        device: &mut Device,
    ) -> Result<RunReport, RunError> {
        let result = self.engine.run(kernel, dispatch, device);
        let ran = match &result {
            Ok(report) => Ran::Counted(report.stats.clone()),
            Err(e) => Ran::Failed {
                kind: format!("{:?}", std::mem::discriminant(&e.kind)),
                workgroup: e.workgroup,
                wave: e.wave,
            },
        };
        let what = format!("{} at W={}", self.program.borrow(), dispatch.wave_width);
        self.runs.borrow_mut().push((what, ran));
        result
    }
}

fn record(engine: &dyn Engine) -> Vec<(String, Ran)> {
    let recording = Recording { engine, program: RefCell::new(""), runs: RefCell::new(Vec::new()) };
    for program in programs() {
        *recording.program.borrow_mut() = program.path;
        run_program(&recording, program, &WidthPolicy::All);
    }
    recording.runs.into_inner()
}

/// The counters where two runs differ, in words.
fn difference(want: &Ran, have: &Ran) -> String {
    let (Ran::Counted(a), Ran::Counted(b)) = (want, have) else {
        return format!("interpreter {want:?}, JIT {have:?}");
    };
    let mut out = Vec::new();
    macro_rules! fields {
        ($($f:ident),*) => {$(
            if a.$f != b.$f {
                out.push(format!("{}: interpreter {}, JIT {}", stringify!($f), a.$f, b.$f));
            }
        )*};
    }
    fields!(
        instructions,
        integer_ops,
        float_ops,
        memory_ops,
        control_ops,
        wave_ops,
        atomic_ops,
        mma_ops,
        device_loads,
        device_load_bytes,
        device_stores,
        device_store_bytes,
        local_loads,
        local_load_bytes,
        local_stores,
        local_store_bytes,
        barriers,
        divergent_branches,
        workgroups,
        waves
    );
    out.join(", ")
}

/// Keep only what a JIT without `--stats` code counts.
fn instructions_only(ran: &Ran) -> Ran {
    match ran {
        Ran::Counted(s) => Ran::Counted(Stats {
            instructions: s.instructions,
            workgroups: s.workgroups,
            waves: s.waves,
            ..Stats::default()
        }),
        failed => failed.clone(),
    }
}

/// The JIT (in the tier the test binary chose) against the interpreter on the whole suite at
/// every width: the instruction count without `--stats` code, every counter with it.
pub fn jit_counts_match_the_interpreter() {
    let expected = record(&Interpreter::new());
    assert!(expected.len() > 1000, "only {} runs", expected.len());
    let failed = expected.iter().filter(|(_, r)| matches!(r, Ran::Failed { .. })).count();
    eprintln!("{} runs, {failed} expected to fail", expected.len());
    let plain = wave_jit_codegen::JitEngine::strict();
    let counting = wave_jit_codegen::JitEngine::strict().with_stats(true);
    for (engine, keep) in [(plain, instructions_only as fn(&Ran) -> Ran), (counting, Ran::clone)] {
        let got = record(&engine);
        assert_eq!(got.len(), expected.len(), "both engines ran the same programs");
        let wrong: Vec<String> = expected
            .iter()
            .zip(&got)
            .filter(|((_, want), (_, have))| keep(want) != *have)
            .map(|((what, want), (_, have))| format!("{what}: {}", difference(&keep(want), have)))
            .collect();
        assert!(
            wrong.is_empty(),
            "stats code {}: {} of {} runs differ:\n{}",
            engine.counts_stats(),
            wrong.len(),
            got.len(),
            wrong.join("\n")
        );
    }
}
