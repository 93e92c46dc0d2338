//! `wave-jit run`'s command line on its own (the comparisons with the reference wave-emu are in
//! cli_run.rs): dump order, exit codes, what wave-emu accepts with a warning.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::{scratch, wave_jit};

/// Stores `thread id + r3` at `4 * thread id`.
const STORE_IDS: &str = "
.kernel ids
.registers 8
    mov r0, sr_thread_id_x
    mov_imm r2, 2
    shl r1, r0, r2
    iadd r4, r0, r3
    device_store_u32 r1, r4
    halt
.end
";

fn write_kernel(dir: &Path, source: &str) -> PathBuf {
    let path = dir.join("k.wave");
    std::fs::write(&path, source).unwrap();
    path
}

fn run(args: &[&str]) -> Output {
    Command::new(wave_jit()).arg("run").args(args).output().unwrap()
}

fn code(out: &Output) -> i32 {
    out.status.code().expect("the process exited (no signal)")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn ok_stdout(args: &[&str]) -> String {
    let out = run(args);
    assert_eq!(code(&out), 0, "run {args:?}: {}", text(&out.stderr));
    text(&out.stdout)
}

#[test]
fn dumps_print_in_wave_emu_order_whatever_the_flag_order() {
    let dir = scratch("cli-run-flags", "dump_order");
    let k = write_kernel(&dir, STORE_IDS);
    let k = k.to_str().unwrap();
    let base = [k, "--set-reg", "3:0x3f800000", "--engine", "interp"];
    let alone = |flags: &[&str]| ok_stdout(&[&base[..], flags].concat());
    // wave-format.md §4.1: memory, u32, f32, f16, bf16, then the statistics.
    let expected = [
        alone(&["--dump-memory", "0:0x18"]),
        alone(&["--dump-u32", "0:3"]),
        alone(&["--dump-f32", "4:2"]),
        alone(&["--dump-f16", "8:3"]),
        alone(&["--dump-bf16", "0x10:4"]),
        alone(&["--stats"]),
    ]
    .concat();
    let orders: [&[&str]; 2] = [
        &[
            "--stats",
            "--dump-bf16",
            "0x10:4",
            "--dump-f16",
            "8:3",
            "--dump-f32",
            "4:2",
            "--dump-u32",
            "0:3",
            "--dump-memory",
            "0:0x18",
        ],
        &[
            "--dump-f32",
            "4:2",
            "--dump-u32",
            "0:3",
            "--stats",
            "--dump-memory",
            "0:0x18",
            "--dump-bf16",
            "0x10:4",
            "--dump-f16",
            "8:3",
        ],
    ];
    for flags in orders {
        assert_eq!(alone(flags), expected, "flags {flags:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn malformed_flag_values_are_usage_errors() {
    let dir = scratch("cli-run-flags", "usage");
    let k = write_kernel(&dir, STORE_IDS);
    let k = k.to_str().unwrap();
    let cases: &[&[&str]] = &[
        &["--bogus"],
        &["--grid", "1,1"],
        &["--workgroup", "x,1,1"],
        &["--set-reg", "5"],
        &["--set-reg", "300:1"],
        &["--arg", "0"],
        &["--arg", "zz:file"],
        &["--fill-zero", "0:f32"],
        &["--fill-iota", "0:f32:4:x"],
        &["--dump-u32", "0"],
        &["--dump-f32", "0:x"],
        &["--dump-memory", "8:4"],
        &["--out", "0:4"],
        &["--engine", "fast"],
        &["--registers", "abc"],
    ];
    for flags in cases {
        let out = run(&[&[k], *flags].concat());
        let stderr = text(&out.stderr);
        assert_eq!(code(&out), 2, "{flags:?}: {stderr}");
        assert!(stderr.contains(flags[0]) && !stderr.contains("panicked"), "{flags:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{flags:?}");
    }
    let no_file = run(&[]);
    assert_eq!(code(&no_file), 2, "{}", text(&no_file.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn missing_files_bad_kernels_and_failed_runs_exit_1() {
    let dir = scratch("cli-run-flags", "errors");
    let k = write_kernel(&dir, STORE_IDS);
    let k = k.to_str().unwrap();
    let bad = dir.join("bad.wave");
    std::fs::write(&bad, "garbage\n").unwrap();
    let missing = dir.join("missing.bin");
    let missing = missing.to_str().unwrap();
    let missing_arg = format!("0:{missing}");
    let cases: &[&[&str]] = &[
        &[missing],
        &[bad.to_str().unwrap()],
        &[k, "--arg", &missing_arg],
        &[k, "--device-memory", "16"],
        &[k, "--dump-u32", "0x100000:1"],
        &[k, "--wave-width", "3"],
        &[k, "--kernel", "nope"],
    ];
    for args in cases {
        let out = run(args);
        let stderr = text(&out.stderr);
        assert_eq!(code(&out), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: ") && !stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_empty_grid_or_workgroup_runs_nothing_and_succeeds() {
    let dir = scratch("cli-run-flags", "empty");
    let k = write_kernel(&dir, STORE_IDS);
    let k = k.to_str().unwrap();
    for (flags, workgroups) in [(["--grid", "0,1,1"], 0), (["--workgroup", "8,0,1"], 1)] {
        let out =
            run(&[&[k, "--fill-iota", "0:f32:2:2", "--dump-f32", "0:3", "--stats"], &flags[..]].concat());
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert_eq!(code(&out), 0, "{flags:?}: {stderr}");
        // Memory as initialised: the kernel did not run.
        assert!(stdout.starts_with("0.0\n2.0\n0.0\nExecution Statistics:\n"), "{flags:?}: {stdout}");
        assert!(stdout.contains("Instructions executed: 0\n"), "{stdout}");
        assert!(stdout.contains(&format!("Workgroups executed: {workgroups}\n")), "{stdout}");
        assert!(stderr.contains("warning: ") && stderr.contains("runs nothing"), "{flags:?}: {stderr}");
    }
    // The rest of the dispatch is still checked.
    let out = run(&[k, "--grid", "0,1,1", "--wave-width", "3"]);
    assert_eq!(code(&out), 1, "{}", text(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn initial_registers_beyond_the_kernel_are_ignored_with_a_warning() {
    let dir = scratch("cli-run-flags", "set_reg");
    let k = write_kernel(&dir, STORE_IDS);
    let k = k.to_str().unwrap();
    let out = run(&[k, "--set-reg", "20:5", "--set-reg", "3:7", "--dump-u32", "0:3"]);
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "7\n8\n9\n");
    let stderr = text(&out.stderr);
    assert!(stderr.contains("warning: --set-reg r20 ignored") && stderr.contains("8 registers"), "{stderr}");
    // A value above 32 bits keeps its low 32 bits, as in wave-emu, with a warning.
    let out = run(&[k, "--set-reg", "3:0x100000007", "--dump-u32", "0:1"]);
    assert_eq!((code(&out), text(&out.stdout)), (0, "7\n".to_string()), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("does not fit 32 bits"), "{}", text(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}
