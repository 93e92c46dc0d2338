//! `wave-jit fuzz-diff --threads N`, and the `wave-jit run` line it prints to reproduce a
//! mismatch (worker threads and a 4 GiB device included, the JIT's code even for a small
//! dispatch: `--no-fallback`).

mod support;

use std::process::Command;
use support::{has_code_dumps, scratch, wave_jit};
use wave_difftest::gen::GenConfig;
use wave_difftest::program::ProgramKind;
use wave_difftest::{case_program, Mismatch};

#[test]
fn fuzz_diff_runs_with_worker_threads() {
    let out = Command::new(wave_jit())
        .args(["fuzz-diff", "--count", "20", "--wave-width", "4,8", "--threads", "2", "--seed", "9"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("20 programs agreed (W=4: 10, W=8: 10;"), "{stdout}");
}

#[test]
fn fuzz_diff_refuses_more_threads_than_a_dispatch_takes() {
    let out = Command::new(wave_jit())
        .args(["fuzz-diff", "--count", "1", "--threads", "100000000"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--threads 100000000 is more than"), "{stderr}");
}

/// The printed flags run the program as the fuzzer did: the same memory on both engines
/// through `wave-jit run`, on a 4 GiB device with two worker threads.
#[test]
fn the_reproduce_line_runs_the_program_as_the_fuzzer_did() {
    let dir = scratch("cli-fuzz-diff", "reproduce_line");
    // The JIT's facts, as `fuzz-diff` generates programs.
    let config = wave_jit::jit_fuzz_config(GenConfig::only(ProgramKind::FullDevice));
    let (case_seed, mut program) = case_program(5, 0, &[8], &config);
    assert!(program.shape.full_device);
    // One workgroup: the program was not generated order independent.
    program.shape.grid = [1, 1];
    let mismatch = Mismatch {
        engines: ("jit", "interp"),
        case: 0,
        case_seed,
        wave_width: 8,
        threads: 2,
        max_instructions: wave_difftest::run::MAX_INSTRUCTIONS,
        original: program.clone(),
        minimized: program.clone(),
        difference: String::new(),
    };
    let flags = mismatch.dispatch_flags();
    assert!(flags.contains("--device-memory 4294967296"), "{flags}");
    assert!(flags.contains("--threads 2"), "{flags}");
    let wave = dir.join("p.wave");
    let data = dir.join("p.bin");
    std::fs::write(&wave, mismatch.program_text()).unwrap();
    std::fs::write(&data, mismatch.data()).unwrap();
    // The dump area of thread 0 and the top word: what both engines leave there.
    let dump = format!("0x{:x}:8", program.shape.dump_base());
    // The JIT's run must compile (the dispatch is small enough that `run` would otherwise
    // interpret it): its code dumps say it did.
    let dumps = dir.join("dumps");
    let run = |engine: &[&str]| {
        let mut command = Command::new(wave_jit());
        command.arg("run").arg(&wave).args(flags.split_whitespace());
        command.arg("--arg").arg(format!("0:{}", data.display()));
        command.args(engine).args(["--dump-u32", &dump]).env("WAVE_JIT_DUMP", &dumps);
        let out = command.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{engine:?}: {stderr}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let interp = run(&["--engine", "interp"]);
    assert!(!dumps.exists(), "the interpreter compiled code");
    let jit = run(&["--no-fallback"]);
    assert!(has_code_dumps(&dumps), "the JIT did not compile");
    assert_eq!(jit.lines().count(), 8, "{jit}");
    assert_eq!(jit, interp);
    let _ = std::fs::remove_dir_all(&dir);
}
