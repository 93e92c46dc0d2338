//! Differential test: random structured programs on the JIT and on the interpreter must leave
//! bit-identical device memory (which includes every register and predicate of every lane),
//! and count the same instructions (with `--stats` code: the same counters).

mod common;

use common::for_jit;
use wave_difftest::gen::GenConfig;
use wave_difftest::program::ProgramKind;
use wave_difftest::{fuzz_diff_with, FuzzOptions};
use wave_runtime::{Engine, Interpreter};

/// The engine under test. Switch to `Interpreter::new()` to exercise the harness alone.
fn engine_under_test() -> Box<dyn Engine> {
    Box::new(wave_jit_codegen::JitEngine::strict())
}

/// Ops the engine under test does not support yet (empty: everything is generated).
const NOT_YET_SUPPORTED: &[wave_isa::Op] = &[];

/// Programs per run of `cargo test`, spread evenly over W = 4, 8, 16, 32, 64.
const PROGRAMS: u64 = 2000;

#[test]
fn jit_matches_interpreter_on_random_programs() {
    let reference = Interpreter::new();
    let engine = engine_under_test();
    let options = FuzzOptions {
        count: PROGRAMS,
        seed: 0x5EED_2026,
        widths: vec![4, 8, 16, 32, 64],
        gen: for_jit(GenConfig {
            max_statements: 24,
            excluded_ops: NOT_YET_SUPPORTED.to_vec(),
            ..GenConfig::default()
        }),
        minimize_budget: 1500,
        every_counter: false,
        threads: 1,
        rerun_without_limit: true,
    };
    match fuzz_diff_with(engine.as_ref(), &reference, &options, &mut |_| {}) {
        Ok(report) => {
            assert_eq!(report.programs, PROGRAMS);
            assert_eq!(report.per_width.len(), 5, "{report}");
            assert_eq!(report.both_failed, 0, "generated programs must run to the end: {report}");
        }
        Err(mismatch) => panic!("{mismatch}"),
    }
}

/// With `--stats` code the JIT counts what the interpreter counts, counter for counter.
#[test]
fn jit_stats_match_interpreter_on_random_programs() {
    let programs = 500;
    let options = FuzzOptions {
        count: programs,
        seed: 0x57A7_2026,
        widths: vec![4, 8, 16, 32, 64],
        gen: for_jit(GenConfig { max_statements: 24, ..GenConfig::default() }),
        minimize_budget: 1500,
        every_counter: true,
        threads: 1,
        // The counters are what this compares, and code without a limit counts nothing.
        rerun_without_limit: false,
    };
    let jit = wave_jit_codegen::JitEngine::strict().with_stats(true);
    match fuzz_diff_with(&jit, &Interpreter::new(), &options, &mut |_| {}) {
        Ok(report) => assert_eq!(report.programs, programs),
        Err(mismatch) => panic!("{mismatch}"),
    }
}

/// Each special kind of program on its own (issue 15: deep divergent nesting, call fans, a
/// 4 GiB device with lanes wrapping past 2^32, inactive lanes whose implied addresses are out
/// of range, shared counters).
#[test]
fn jit_matches_interpreter_on_each_special_kind() {
    let programs = 50;
    for kind in &ProgramKind::ALL[1..] {
        let options = FuzzOptions {
            count: programs,
            seed: 0x4B1D_2026,
            widths: vec![4, 8, 16, 32, 64],
            // Guarded inactive lanes: an open JIT bug (tests/fuzz_findings.rs).
            gen: for_jit(GenConfig { max_statements: 32, ..GenConfig::only(*kind) }),
            minimize_budget: 1500,
            ..FuzzOptions::default()
        };
        let jit = wave_jit_codegen::JitEngine::strict();
        match fuzz_diff_with(&jit, &Interpreter::new(), &options, &mut |_| {}) {
            Ok(report) => {
                let of_kind = report.per_kind.iter().find(|(k, _)| k == kind).map_or(0, |(_, n)| *n);
                assert!(of_kind >= programs * 4 / 5, "{kind:?}: {report}");
                assert_eq!(report.both_failed, 0, "{kind:?}: {report}");
            }
            Err(mismatch) => panic!("{kind:?}: {mismatch}"),
        }
    }
}

/// With two JIT worker threads the workgroups run in any order; the generated programs do not
/// depend on it (a data copy per workgroup, commutative atomics on the shared counters), so
/// the JIT still leaves the interpreter's memory, also with unaligned atomics from several
/// workgroups at once.
#[test]
fn jit_with_two_worker_threads_matches_interpreter() {
    let programs = 150;
    let options = FuzzOptions {
        count: programs,
        seed: 0x7EAD_2026,
        widths: vec![4, 8, 16, 32, 64],
        gen: for_jit(GenConfig { max_statements: 32, shared_counters_percent: 40, ..GenConfig::default() }),
        minimize_budget: 1500,
        threads: 2,
        ..FuzzOptions::default()
    };
    let jit = wave_jit_codegen::JitEngine::strict();
    match fuzz_diff_with(&jit, &Interpreter::new(), &options, &mut |_| {}) {
        Ok(report) => {
            assert_eq!(report.programs, programs);
            assert_eq!(report.both_failed, 0, "{report}");
        }
        Err(mismatch) => panic!("{mismatch}"),
    }
}

/// On a 4 GiB device only the bottom and the top window are read back and compared.
#[test]
fn a_4_gib_run_reads_back_only_what_programs_write() {
    let config = for_jit(GenConfig::only(ProgramKind::FullDevice));
    let (_, program) = wave_difftest::case_program(3, 0, &[8], &config);
    assert_eq!(program.shape.device_bytes(), 1 << 32);
    let outcome = wave_difftest::run::run_program(&Interpreter::new(), &program, 1);
    assert_eq!(outcome.result, Ok(()));
    let compared: u64 = program.shape.compared_ranges().iter().map(|r| r.end - r.start).sum();
    assert_eq!(outcome.memory.len() as u64, compared);
    assert!(compared < 1 << 20);
}

/// The printed form of a program re-assembles to exactly the code that ran.
#[test]
fn printed_programs_reassemble() {
    for case in 0..200 {
        let (_, program) = wave_difftest::case_program(7, case, &[8, 32], &for_jit(GenConfig::default()));
        let text = wave_difftest::text::program_text(&program);
        let assembled = wave_isa::asm::assemble(&text, "fuzz.wave")
            .unwrap_or_else(|e| panic!("case {case} does not assemble: {e:?}\n{text}"));
        assert_eq!(assembled.file.kernels[0].code, program.code(), "case {case}\n{text}");
    }
}

/// Programs generated for the JIT stay under its size limit at every width, call fans (the
/// largest) included: the JIT compiles them (the tests above run it strict).
#[test]
fn generated_programs_fit_the_jits_size_limit() {
    for config in [GenConfig::default(), GenConfig::only(ProgramKind::CallFan)] {
        let config = for_jit(config);
        for case in 0..300 {
            let (_, program) = wave_difftest::case_program(0xC0DE, case, &common::WIDTHS, &config);
            let kernel = wave_difftest::run::kernel_of(&program).expect("generated programs build");
            let fits = wave_jit_codegen::compiler::check_size(&kernel, program.shape.wave_width);
            assert!(fits.is_ok(), "case {case}: {fits:?}");
        }
    }
}
