//! Differential test: random structured programs on the JIT and on the interpreter must leave
//! bit-identical device memory (which includes every register and predicate of every lane),
//! and count the same instructions (with `--stats` code: the same counters).

use wave_jit_codegen::difftest::gen::GenConfig;
use wave_jit_codegen::difftest::{self, fuzz_diff_with, FuzzOptions};
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
        gen: GenConfig {
            max_statements: 24,
            excluded_ops: NOT_YET_SUPPORTED.to_vec(),
            ..GenConfig::default()
        },
        minimize_budget: 1500,
        every_counter: false,
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
        gen: GenConfig { max_statements: 24, ..GenConfig::default() },
        minimize_budget: 1500,
        every_counter: true,
    };
    let jit = wave_jit_codegen::JitEngine::strict().with_stats(true);
    match fuzz_diff_with(&jit, &Interpreter::new(), &options, &mut |_| {}) {
        Ok(report) => assert_eq!(report.programs, programs),
        Err(mismatch) => panic!("{mismatch}"),
    }
}

/// The printed form of a program re-assembles to exactly the code that ran.
#[test]
fn printed_programs_reassemble() {
    for case in 0..200 {
        let (_, program) = difftest::case_program(7, case, &[8, 32], &GenConfig::default());
        let text = difftest::text::program_text(&program);
        let assembled = wave_isa::asm::assemble(&text, "fuzz.wave")
            .unwrap_or_else(|e| panic!("case {case} does not assemble: {e:?}\n{text}"));
        assert_eq!(assembled.file.kernels[0].code, program.code(), "case {case}\n{text}");
    }
}
