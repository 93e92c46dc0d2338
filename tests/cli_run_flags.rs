//! `wave-jit run`'s command line on its own (the comparisons with the reference wave-emu are in
//! cli_run.rs): dump order, exit codes, what wave-emu accepts with a warning, `--memory-file`,
//! `--reg`, and the binary started under the name `wave-emu`.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::{has_code_dumps, scratch, wave_jit};

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

/// Adds r3 to the word at `r5 + 4 * thread id`.
const BUMP: &str = "
.kernel bump
.registers 8
    mov r0, sr_thread_id_x
    mov_imm r2, 2
    shl r1, r0, r2
    iadd r1, r1, r5
    device_load_u32 r4, r1
    iadd r4, r4, r3
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
        &["--reg", "5=x"],
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
        // clap names `--reg` by the flag it is an alias of.
        let flag = if flags[0] == "--reg" { "--set-reg" } else { flags[0] };
        assert!(stderr.contains(flag) && !stderr.contains("panicked"), "{flags:?}: {stderr}");
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
        &[k, "--memory-file", missing],
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

#[test]
fn reg_is_set_reg_written_with_equals() {
    let dir = scratch("cli-run-flags", "reg");
    let k = write_kernel(&dir, STORE_IDS);
    let k = k.to_str().unwrap();
    let with_set_reg = ok_stdout(&[k, "--set-reg", "3:0x10", "--dump-u32", "0:4"]);
    assert_eq!(with_set_reg, "16\n17\n18\n19\n");
    assert_eq!(ok_stdout(&[k, "--reg", "3=16", "--dump-u32", "0:4"]), with_set_reg);
    // Python ints may be negative: two's complement.
    assert_eq!(ok_stdout(&[k, "--reg", "3=-2", "--dump-u32", "0:3"]), "4294967294\n4294967295\n0\n");
    let _ = std::fs::remove_dir_all(&dir);
}

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks(4).map(|w| u32::from_le_bytes(w.try_into().unwrap())).collect()
}

#[test]
fn memory_file_is_device_memory_before_and_after_the_run() {
    let dir = scratch("cli-run-flags", "memory_file");
    let k = write_kernel(&dir, BUMP);
    // Larger than the default 1 MiB of device memory: the device grows to hold it.
    let size = (2 << 20) + 64;
    let base = size - 128;
    let initial: Vec<u8> = (0..size as u32 / 4).flat_map(|i| (i * 3).to_le_bytes()).collect();
    let file = dir.join("memory.bin");
    std::fs::write(&file, &initial).unwrap();
    // Through a symlink, which stays one.
    let link = dir.join("link.bin");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    let base_reg = format!("5={base}");
    let out = run(&[
        k.to_str().unwrap(),
        "--memory-file",
        link.to_str().unwrap(),
        "--reg",
        &base_reg,
        "--reg",
        "3=1000",
        "--workgroup",
        "16,1,1",
        "--dump-u32",
        &format!("{base}:2"),
    ]);
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    let first = (base / 4) as u32;
    assert_eq!(text(&out.stdout), format!("{}\n{}\n", first * 3 + 1000, first * 3 + 1003));
    let after = std::fs::read(&file).unwrap();
    assert_eq!(after.len(), initial.len());
    let mut expected = words(&initial);
    for word in &mut expected[base / 4..base / 4 + 16] {
        *word += 1000;
    }
    assert!(words(&after) == expected, "the file is not the device memory after the run");
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn memory_file_is_unchanged_after_a_failed_run() {
    let dir = scratch("cli-run-flags", "memory_file_error");
    let k = write_kernel(&dir, BUMP);
    let initial: Vec<u8> = (0..4096u32).flat_map(|i| i.to_le_bytes()).collect();
    let file = dir.join("memory.bin");
    std::fs::write(&file, &initial).unwrap();
    let file = file.to_str().unwrap();
    // Half the threads store beyond the device memory (here the file's 16 KiB).
    let failing = run(&[
        k.to_str().unwrap(),
        "--memory-file",
        file,
        "--device-memory",
        "0",
        "--reg",
        "5=16320",
        "--reg",
        "3=1",
    ]);
    assert_eq!(code(&failing), 1, "{}", text(&failing.stderr));
    assert!(text(&failing.stderr).contains("out of bounds"), "{}", text(&failing.stderr));
    // So does a run whose dump fails after the kernel ran.
    let dump_fails =
        run(&[k.to_str().unwrap(), "--memory-file", file, "--reg", "3=1", "--dump-u32", "0x100000:1"]);
    assert_eq!(code(&dump_fails), 1, "{}", text(&dump_fails.stderr));
    assert!(std::fs::read(file).unwrap() == initial, "the memory file changed");
    let entries: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(entries.len(), 2, "no temporary file left behind: {entries:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn started_as_wave_emu_it_is_run() {
    let dir = scratch("cli-run-flags", "as_wave_emu");
    let k = write_kernel(&dir, STORE_IDS);
    let k = k.to_str().unwrap();
    let wave_emu = dir.join("wave-emu");
    std::os::unix::fs::symlink(wave_jit(), &wave_emu).unwrap();
    let as_emu = |args: &[&str]| Command::new(&wave_emu).args(args).output().unwrap();

    let out = as_emu(&[k, "--reg", "3=5", "--dump-u32", "0:3"]);
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), ok_stdout(&[k, "--set-reg", "3:5", "--dump-u32", "0:3"]));
    assert_eq!(text(&out.stdout), "5\n6\n7\n");

    let help = as_emu(&["--help"]);
    let help_text = text(&help.stdout);
    assert_eq!(code(&help), 0);
    assert!(help_text.contains("Usage: wave-emu [OPTIONS] <FILE"), "{help_text}");
    assert!(help_text.contains("--memory-file") && help_text.contains("--dump-u32"), "{help_text}");
    assert!(text(&as_emu(&["--version"]).stdout).contains("wave-jit"));
    let usage = as_emu(&[k, "--bogus"]);
    assert_eq!(code(&usage), 2);
    assert!(text(&usage.stderr).contains("Usage: wave-emu"), "{}", text(&usage.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Stores at `4 * thread id` how many trips its loop made (`thread id & 3`: divergent).
const DIVERGENT_LOOP: &str = "
.kernel trips
.registers 8
    mov r0, sr_thread_id_x
    mov_imm r1, 0
    mov_imm r2, 1
    mov_imm r6, 3
    and r3, r0, r6
    loop
        icmp_ge p1, r1, r3
        break p1
        iadd r1, r1, r2
    endloop
    mov_imm r2, 2
    shl r4, r0, r2
    device_store_u32 r4, r1
    halt
.end
";

/// `--stats` from the JIT prints the interpreter's counters (issue 15 item 14: they were all
/// zero). A kernel with a loop, so the JIT compiles it however small the dispatch.
#[test]
fn stats_from_the_jit_are_the_interpreters() {
    let dir = scratch("cli-run-flags", "jit_stats");
    let k = write_kernel(&dir, DIVERGENT_LOOP);
    let k = k.to_str().unwrap();
    for width in ["4", "16", "32"] {
        let on = |engine: &str| {
            ok_stdout(&[
                k,
                "--grid",
                "3,1,1",
                "--workgroup",
                "64,1,1",
                "--wave-width",
                width,
                "--dump-u32",
                "0:8",
                "--stats",
                "--engine",
                engine,
            ])
        };
        let (jit, interp) = (on("jit"), on("interp"));
        assert_eq!(jit, interp, "W={width}");
        assert!(jit.starts_with("0\n1\n2\n3\n0\n1\n2\n3\n"), "W={width}: {jit}");
        let count = jit
            .lines()
            .find_map(|l| l.trim().strip_prefix("Instructions executed:"))
            .map(|n| n.trim().parse::<u64>().unwrap())
            .expect("a count of instructions");
        assert!(count > 0, "W={width}: {count} instructions");
        assert!(jit.contains("Stores: 192 (768 bytes)"), "W={width}: {jit}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--pin-threads` (issue 16 item 7) runs the JIT's workers pinned to cores: the same results
/// and counters as without, on several workgroups and two threads.
#[test]
fn pinned_worker_threads_give_the_same_results() {
    let dir = scratch("cli-run-flags", "pin_threads");
    let k = write_kernel(&dir, DIVERGENT_LOOP);
    let k = k.to_str().unwrap();
    let on = |flags: &[&str]| {
        let base = [k, "--grid", "64,1,1", "--workgroup", "64,1,1", "--dump-u32", "0:256", "--stats"];
        ok_stdout(&[&base[..], flags].concat())
    };
    let interp = on(&["--engine", "interp"]);
    assert_eq!(on(&["--engine", "jit", "--threads", "2", "--pin-threads"]), interp);
    assert_eq!(on(&["--engine", "jit", "--threads", "2"]), interp);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--no-fallback` runs the JIT's code even for a dispatch too small to be worth a compile
/// (without it `run` interprets that one): the code dumps of `WAVE_JIT_DUMP` appear only
/// with it, and the output is the same. With the interpreter it is refused.
#[test]
fn no_fallback_compiles_a_small_dispatch() {
    let dir = scratch("cli-run-flags", "no_fallback");
    let k = write_kernel(&dir, STORE_IDS);
    let k = k.to_str().unwrap();
    let dumps = dir.join("dumps");
    let on = |extra: &[&str]| {
        let args = [&[k, "--set-reg", "3:7", "--dump-u32", "0:4"][..], extra].concat();
        let out =
            Command::new(wave_jit()).arg("run").args(&args).env("WAVE_JIT_DUMP", &dumps).output().unwrap();
        assert_eq!(code(&out), 0, "run {args:?}: {}", text(&out.stderr));
        text(&out.stdout)
    };
    let compiled = || has_code_dumps(&dumps);
    let plain = on(&[]);
    assert!(!compiled(), "a 32-thread dispatch without --no-fallback was compiled");
    assert_eq!(on(&["--no-fallback"]), plain);
    assert!(compiled(), "--no-fallback did not compile");
    assert_eq!(plain, "7\n8\n9\n10\n");
    let refused = run(&[k, "--engine", "interp", "--no-fallback"]);
    assert_eq!(code(&refused), 1);
    assert!(text(&refused.stderr).contains("unsupported: --no-fallback"), "{}", text(&refused.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}
