//! How the subcommands treat their terminal: a closed stdout (`wave-jit conformance | head -1`)
//! ends the program quietly with exit 0, and progress lines appear only on a terminal.

mod support;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use support::{scratch, wave_jit};

/// Run wave-jit with a stdout pipe whose reader has gone before anything was written.
fn with_closed_stdout(args: &[&str]) -> Output {
    let mut child = Command::new(wave_jit())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("wave-jit starts");
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

fn kernel_file(test: &str) -> (PathBuf, PathBuf) {
    let dir = scratch("cli-output", test);
    let path = dir.join("k.wave");
    let source = "
.kernel ids
    mov r0, sr_thread_id_x
    mov_imm r2, 2
    shl r1, r0, r2
    device_store_u32 r1, r0
    halt
.end
";
    std::fs::write(&path, source).unwrap();
    (dir, path)
}

#[test]
fn a_closed_stdout_ends_every_subcommand_quietly() {
    let (dir, k) = kernel_file("closed_stdout");
    let k = k.to_str().unwrap();
    let commands: &[&[&str]] = &[
        &["conformance", "--engine", "interp", "--filter", "integer"],
        &["fuzz-diff", "--count", "3", "--wave-width", "4"],
        &["bench", "launch", "--n", "1", "--engine", "interp", "--budget", "0"],
        &["run", k, "--dump-u32", "0:4096", "--dump-memory", "0:0x4000", "--stats"],
        &["dis", k],
        &["check", k],
        &["emit", "--target", "ptx", k],
        &["info"],
    ];
    for args in commands {
        let out = with_closed_stdout(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?} wrote to stderr: {stderr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn progress_lines_only_on_a_terminal() {
    // stderr is a pipe here, as in a CI log.
    for args in [
        &["fuzz-diff", "--count", "30", "--wave-width", "4"][..],
        &["bench", "launch", "--n", "1", "--engine", "interp", "--budget", "0"],
    ] {
        let out = Command::new(wave_jit()).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains('\r') && !stderr.contains('\x1b'),
            "{args:?} wrote progress to a pipe: {stderr:?}"
        );
        assert!(!out.stdout.is_empty(), "{args:?} printed its result");
    }
}
