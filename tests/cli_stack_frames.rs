//! Kernels whose compiled code has deep stack frames (`tests/stack-frames/`, see its README)
//! run on the JIT as on the interpreter, run as a user would: a wave that ran out of its
//! stack, or wrote into another's, ends the process with a signal, which fails the test.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Output};

fn wave_jit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wave-jit")).args(args).output().expect("wave-jit runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The error line without its pc where it is the instruction limit's: there the JIT may name
/// another pc than the interpreter (see `jit/tests/instruction_limit.rs`).
fn comparable(stderr: &[u8]) -> String {
    let err = text(stderr);
    match (err.contains("instruction limit"), err.find(", pc 0x")) {
        (true, Some(at)) => format!("{}{}", &err[..at], &err[at + ", pc 0x0000".len()..]),
        _ => err,
    }
}

/// `wave-jit run` of the kernel `file` with `args` exits as with `--engine interp`, printing
/// the same first 64 words of device memory (or the same error).
fn runs_as_interpreted(file: &str, args: &[&str]) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/stack-frames").join(file);
    let path = path.to_str().unwrap();
    let run = |engine: &str| {
        let mut all = vec!["run", path, "--dump-u32", "0:64", "--engine", engine];
        all.extend_from_slice(args);
        wave_jit(&all)
    };
    let (jit, interp) = (run("jit"), run("interp"));
    if let Some(signal) = jit.status.signal() {
        panic!("{file}: the JIT was killed by signal {signal}: {}", text(&jit.stderr));
    }
    assert_eq!(jit.status.code(), interp.status.code(), "{file}: {}", text(&jit.stderr));
    assert_eq!(text(&jit.stdout), text(&interp.stdout), "{file}");
    assert_eq!(comparable(&jit.stderr), comparable(&interp.stderr), "{file}");
}

/// Barriers: each wave runs on a fiber, whose stack must hold the 1 MiB quick-tier frame.
#[test]
fn fibers_get_stacks_for_their_frames() {
    runs_as_interpreted("fiber_frame_123.wave", &["--workgroup", "64,1,1"]);
}

/// Two workgroups on the rayon workers (2 MiB stacks of their own), a 2.2 MiB frame.
#[test]
fn workers_run_code_on_stacks_for_its_frames() {
    runs_as_interpreted(
        "nestcd_128.wave",
        &["--wave-width", "64", "--grid", "2,1,1", "--workgroup", "64,1,1"],
    );
}

/// One worker, the caller's thread (the main thread's 8 MiB stack), an 8.4 MiB frame.
#[test]
fn the_callers_thread_runs_code_on_a_stack_for_its_frame() {
    runs_as_interpreted("nest_loop_256.wave", &["--wave-width", "64", "--threads", "1"]);
}

#[test]
fn a_deep_kernel_that_faults_reports_the_fault() {
    runs_as_interpreted("lazynest_loop_254.wave", &["--wave-width", "64", "--threads", "1"]);
}
