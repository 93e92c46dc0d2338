//! Limits on what the tools take in, run as a user would: kernels too large once calls are
//! inlined, grids and thread counts the engines cannot serve, input files too large to read.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn wave_jit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wave-jit")).args(args).output().expect("wave-jit runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A fresh scratch directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wave-jit-cli-limits-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, name: &str, contents: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, contents).unwrap();
    p.to_str().unwrap().to_string()
}

/// Exit status 1 and one `error:` line, no panic.
fn fails_with(out: &Output, message: &str) {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err, format!("error: {message}\n"));
}

/// Thread `t` stores at `4 t` how many copies of the last of `levels` functions ran, each
/// function calling the next `fan` times.
fn fan_source(levels: usize, fan: usize) -> String {
    let mut s = String::from(
        ".kernel fan\n    mov_sr r1, sr_thread_id_x\n    mov_imm r6, 0\n    call f1\n    mov_imm r2, 2\n    shl r3, r1, r2\n    device_store_u32 r3, r6\n    halt\n",
    );
    for level in 1..=levels {
        s += &format!("f{level}:\n");
        if level < levels {
            s += &format!("    call f{}\n", level + 1).repeat(fan);
        } else {
            s += "    mov_imm r10, 1\n    iadd r6, r6, r10\n";
        }
        s += "    return\n";
    }
    s + ".end\n"
}

/// Every workgroup adds 1 at address 0.
const WGCOUNT: &str = "
.kernel wgc
    mov_imm r1, 0
    mov_imm r2, 1
    mov_sr r3, sr_thread_id_x
    icmp_eq p1, r3, r1
    @p1 atomic_add r1, r2, .device
.end
";

#[test]
fn run_interprets_a_kernel_too_large_for_the_jit_and_says_so() {
    let dir = scratch("fan");
    // 19,120 instructions once inlined; the JIT takes 13,107 at W = 32, 43,690 at W = 4.
    let fan = write(&dir, "fan.wave", &fan_source(7, 4));
    let out = wave_jit(&["run", &fan, "--dump-u32", "0:2"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "4096\n4096\n");
    assert_eq!(
        text(&out.stderr),
        "note: kernel `fan` is too large for the JIT (19120 instructions after inlining calls, limit 13107 at \
         wave width 32): running it on the interpreter\n"
    );
    // At W = 4 the JIT takes it: no note.
    let out = wave_jit(&["run", &fan, "--wave-width", "4", "--workgroup", "4,1,1", "--dump-u32", "0:1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!((text(&out.stdout), text(&out.stderr)), ("4096\n".to_string(), String::new()));
}

#[test]
fn emit_refuses_kernels_too_large_once_inlined() {
    let dir = scratch("emit");
    let fan = write(&dir, "fan.wave", &fan_source(8, 5));
    let ptx = dir.join("fan.ptx");
    let out = wave_jit(&["emit", "--target", "ptx", &fan, "-o", ptx.to_str().unwrap()]);
    fails_with(
        &out,
        "kernel `fan` is too large for ptx: 351568 instructions after inlining calls, limit 262144 \
         (every writer inlines calls)",
    );
    assert!(!ptx.exists());
}

#[test]
fn grids_of_more_workgroups_than_a_64_bit_count_are_rejected() {
    let dir = scratch("grid");
    let k = write(&dir, "wgcount.wave", WGCOUNT);
    for engine in ["jit", "interp"] {
        let out = wave_jit(&[
            "run",
            &k,
            "--engine",
            engine,
            "--grid",
            "2147483648,2147483648,4",
            "--workgroup",
            "1,1,1",
            "--dump-u32",
            "0:1",
        ]);
        fails_with(
            &out,
            "kernel `wgc`: dispatch rejected: grid 2147483648,2147483648,4 has 18446744073709551616 workgroups \
             of 1 wave, 18446744073709551616 waves: more than the 18446744073709551615 a dispatch can count",
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn thread_counts_are_capped() {
    let dir = scratch("threads");
    let k = write(&dir, "wgcount.wave", WGCOUNT);
    let out = wave_jit(&["run", &k, "--threads", "1000000"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.starts_with(
        "error: kernel `wgc`: dispatch rejected: 1000000 worker threads is more than 16 per core ("
    ));
}

#[test]
fn kernel_files_are_read_up_to_a_limit() {
    // Streams: refused once 64 MiB came (they used to grow without limit).
    let stream =
        "not a regular file, and more than the 67108864 bytes (64 MiB) a .wave or .wbin file may have";
    fails_with(&wave_jit(&["dis", "/dev/zero"]), &format!("/dev/zero: {stream}"));
    let dir = scratch("inputs");
    let out = dir.join("u.wbin");
    fails_with(
        &wave_jit(&["asm", "/dev/urandom", "-o", out.to_str().unwrap()]),
        &format!("/dev/urandom: {stream}"),
    );
    assert!(!out.exists());
    fails_with(&wave_jit(&["run", "/dev/zero"]), &format!("/dev/zero: {stream}"));
    // Regular files: refused by their size, unread (a sparse file takes no disk).
    let big = dir.join("big.wave");
    std::fs::File::create(&big).unwrap().set_len((64 << 20) + 1).unwrap();
    let big = big.to_str().unwrap();
    let too_big = format!(
        "{big}: 67108865 bytes is more than the 67108864 bytes (64 MiB) a .wave or .wbin file may have"
    );
    for command in ["check", "dis", "asm"] {
        fails_with(&wave_jit(&[command, big]), &too_big);
    }
    fails_with(&wave_jit(&["emit", "--target", "hip", big]), &too_big);
}

#[test]
fn arg_files_must_fit_in_device_memory() {
    let dir = scratch("arg");
    let k = write(&dir, "wgcount.wave", WGCOUNT);
    // 2 GiB, sparse: refused by its size against the 1 MiB of device memory, unread.
    let big = dir.join("big.bin");
    std::fs::File::create(&big).unwrap().set_len(2 << 30).unwrap();
    let arg = format!("0x100:{}", big.display());
    fails_with(
        &wave_jit(&["run", &k, "--arg", &arg]),
        &format!(
            "--arg {}: 2147483648 bytes do not fit at offset 0x100 of device memory (1048320 bytes from there \
             to its end; --device-memory sets its size)",
            big.display()
        ),
    );
    fails_with(
        &wave_jit(&["run", &k, "--arg", "16:/dev/zero"]),
        "--arg /dev/zero: not a regular file, and more than the 1048560 bytes from offset 0x10 to the end of \
         device memory",
    );
    // A file that fits exactly is copied.
    let fits = dir.join("fits.bin");
    std::fs::write(&fits, 7u32.to_le_bytes()).unwrap();
    let arg = format!("0xffffc:{}", fits.display());
    let out = wave_jit(&["run", &k, "--arg", &arg, "--dump-u32", "0xffffc:1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "7\n");
}
