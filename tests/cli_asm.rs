//! The `asm`, `dis` and `check` subcommands, run as a user would.

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
    let dir = std::env::temp_dir().join(format!("wave-jit-cli-asm-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const KERNELS: &str = "\
.kernel first
.registers 8
.workgroup_size 64, 1, 1
    mov r0, sr_thread_id_x
    icmp_lt p1, r0, r1
    if p1
        loop
            break !p1
        endloop
    endif
    atomic_add r0, r1, .device
    barrier
    halt
.end
.kernel second
    dadd r2, r4, r6
    call f
    halt
f:  wave_reduce_add r1, r0
    return
.end
";

fn write(dir: &Path, name: &str, contents: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, contents).unwrap();
    p
}

#[test]
fn asm_writes_wbin_next_to_the_source_and_dis_reads_it() {
    let dir = scratch("asm_dis");
    let src = write(&dir, "k.wave", KERNELS);
    let out = wave_jit(&["asm", src.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let wbin = dir.join("k.wbin");
    let bytes = std::fs::read(&wbin).expect("k.wbin written");
    assert_eq!(&bytes[..4], b"WAVE");

    let dis = wave_jit(&["dis", wbin.to_str().unwrap()]);
    assert!(dis.status.success(), "{}", text(&dis.stderr));
    let listing = text(&dis.stdout);
    assert!(listing.contains(".kernel first") && listing.contains(".kernel second"), "{listing}");
    assert!(listing.contains("break !p1"), "{listing}");

    // The listing re-assembles to the same binary.
    let again = write(&dir, "again.wave", &listing);
    let out2 = dir.join("again.wbin");
    let r = wave_jit(&["asm", again.to_str().unwrap(), "-o", out2.to_str().unwrap()]);
    assert!(r.status.success(), "{}", text(&r.stderr));
    assert_eq!(std::fs::read(out2).unwrap(), bytes);

    // `dis` also takes source, and --offsets adds offset comments.
    let from_src = wave_jit(&["dis", "--offsets", src.to_str().unwrap()]);
    assert!(from_src.status.success());
    assert!(text(&from_src.stdout).contains("; 0x0008"), "{}", text(&from_src.stdout));
}

#[test]
fn asm_strip_removes_names() {
    let dir = scratch("strip");
    let src = write(&dir, "k.wave", KERNELS);
    let (named, stripped) = (dir.join("named.wbin"), dir.join("stripped.wbin"));
    assert!(wave_jit(&["asm", src.to_str().unwrap(), "-o", named.to_str().unwrap()]).status.success());
    assert!(wave_jit(&["asm", src.to_str().unwrap(), "-o", stripped.to_str().unwrap(), "--strip"])
        .status
        .success());
    let (a, b) = (std::fs::read(named).unwrap(), std::fs::read(stripped).unwrap());
    assert!(a.windows(6).any(|w| w == b"second"));
    assert!(!b.windows(6).any(|w| w == b"second"));
    assert_eq!(b.len(), a.len() - "first\0second\0".len());
}

#[test]
fn asm_errors_are_listed_with_locations_and_exit_1() {
    let dir = scratch("errors");
    let src = write(&dir, "bad.wave", ".kernel k\n  iadd r1, r2\n  icmp_lz p1, r2, r3\n.end\n");
    let out = wave_jit(&["asm", src.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("bad.wave:2:8"), "{err}");
    assert!(err.contains("bad.wave:3:3"), "{err}");
    assert!(err.contains("did you mean `icmp_lt`?"), "{err}");
    assert!(err.contains("could not assemble"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(!dir.join("bad.wbin").exists());
}

#[test]
fn check_prints_a_table_per_kernel() {
    let dir = scratch("check");
    let src = write(&dir, "k.wave", KERNELS);
    for input in [src.clone(), {
        let wbin = dir.join("k.wbin");
        assert!(wave_jit(&["asm", src.to_str().unwrap()]).status.success());
        wbin
    }] {
        let out = wave_jit(&["check", input.to_str().unwrap()]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let table = text(&out.stdout);
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[0].starts_with("kernel") && lines[0].contains("depth"), "{table}");
        let first: Vec<&str> = lines[1].split_whitespace().collect();
        // name, registers, local mem, workgroup, instrs, depth, barriers, atomics, wave, f16, f64, mma,
        // calls, instructions with calls inlined (second: dadd, call, halt and a copy of f)
        assert_eq!(
            first,
            ["first", "8", "0", "64x1x1", "10", "2", "yes", "yes", "-", "-", "-", "-", "-", "10"],
            "{table}"
        );
        let second: Vec<&str> = lines[2].split_whitespace().collect();
        assert_eq!(
            second,
            ["second", "32", "0", "runtime", "5", "0", "-", "-", "yes", "-", "yes", "-", "yes", "5"],
            "{table}"
        );
        assert!(table.contains("ok, 2 kernels"), "{table}");
    }
}

#[test]
fn check_reports_invalid_programs() {
    let dir = scratch("invalid");
    // Assembles, but the if is never closed: the tree builder rejects it.
    let src = write(&dir, "open_if.wave", ".kernel k\n  if p1\n  nop\n.end\n");
    let out = wave_jit(&["check", src.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("never closed by `endif`"), "{err}");
}

#[test]
fn user_errors_exit_1_without_panicking() {
    let dir = scratch("user");
    let missing = dir.join("missing.wave");
    for args in [
        vec!["asm", missing.to_str().unwrap()],
        vec!["dis", missing.to_str().unwrap()],
        vec!["check", missing.to_str().unwrap()],
    ] {
        let out = wave_jit(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.contains("cannot read") && !err.contains("panicked"), "{err}");
    }
    let garbage = dir.join("garbage.wbin");
    std::fs::write(&garbage, b"WAVE\x01\x00").unwrap();
    let out = wave_jit(&["dis", garbage.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!text(&out.stderr).contains("panicked"));
    let binary = dir.join("bin.wave");
    std::fs::write(&binary, [0xffu8, 0xfe, 0x00]).unwrap();
    let out = wave_jit(&["asm", binary.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("not UTF-8"), "{}", text(&out.stderr));
}

#[test]
fn help_describes_every_flag() {
    for (cmd, flags) in
        [("asm", &["--output", "--strip"][..]), ("dis", &["--offsets"][..]), ("check", &[][..])]
    {
        let out = wave_jit(&[cmd, "--help"]);
        assert!(out.status.success());
        let help = text(&out.stdout);
        for f in flags {
            assert!(help.contains(f), "{cmd} --help lacks {f}:\n{help}");
        }
    }
}

#[test]
fn bundled_examples_check_cleanly() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("examples/ exists") {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "wave") {
            let out = wave_jit(&["check", path.to_str().unwrap()]);
            assert!(out.status.success(), "{}: {}", path.display(), text(&out.stderr));
            assert!(text(&out.stderr).is_empty(), "{}: warnings: {}", path.display(), text(&out.stderr));
            let source = std::fs::read_to_string(&path).unwrap();
            assert!(
                source.contains("wave-jit run examples/"),
                "{}: no run command in the header",
                path.display()
            );
            n += 1;
        }
    }
    assert!(n >= 4);
}

/// Structure the loader would reject is an assembly error at its line and column, and no
/// binary is written (it used to be written, and `check` rejected it at "byte 0x8").
#[test]
fn asm_rejects_broken_structure_at_its_line() {
    let dir = scratch("structure");
    for (name, source, at, message) in [
        (
            "open_if",
            ".kernel k\n  if p1\n  nop\n.end\n",
            "open_if.wave:2:3",
            "`if` is never closed by `endif`",
        ),
        (
            "stray_endif",
            ".kernel k\n  nop\n  endif\n.end\n",
            "stray_endif.wave:3:3",
            "`endif` without an open `if`",
        ),
        (
            "break_outside",
            ".kernel k\n  icmp_eq p1, r0, r0\n  break p1\n.end\n",
            "break_outside.wave:3:3",
            "`break` is not inside a `loop` of the same function",
        ),
        (
            "recursion",
            ".kernel k\n  call f\n  halt\nf: call f\n  return\n.end\n",
            "recursion.wave:4:4",
            "recursive call",
        ),
    ] {
        let src = write(&dir, &format!("{name}.wave"), source);
        let out = wave_jit(&["asm", src.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{name}");
        let err = text(&out.stderr);
        assert!(err.contains(at) && err.contains(message), "{name}: {err}");
        assert!(!dir.join(format!("{name}.wbin")).exists(), "{name}: a binary was written");
        // `check` of the source says the same, through the assembler.
        let err = text(&wave_jit(&["check", src.to_str().unwrap()]).stderr);
        assert!(err.contains(at) && err.contains(message), "{name}: {err}");
    }
}

#[test]
fn a_file_without_kernels_does_not_assemble() {
    let dir = scratch("empty");
    for (name, contents) in [("empty.wave", ""), ("comments.wave", "; nothing here\n")] {
        let src = write(&dir, name, contents);
        let out = wave_jit(&["asm", src.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{name}");
        assert!(text(&out.stderr).contains("no kernels in this file"), "{}", text(&out.stderr));
        assert!(!src.with_extension("wbin").exists(), "{name}: a 0-kernel binary was written");
    }
}

#[test]
fn dis_of_a_file_that_is_not_wave_says_so() {
    let dir = scratch("not_wave");
    let elf = dir.join("program.o");
    std::fs::write(&elf, b"\x7fELF\x02\x01\x01\x00\xff\xfe\x00\x00").unwrap();
    for cmd in ["dis", "check", "run"] {
        let out = wave_jit(&[cmd, elf.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{cmd}");
        let err = text(&out.stderr);
        assert!(err.contains(": not a WAVE file: a .wbin binary starts with `WAVE`"), "{cmd}: {err}");
        assert!(err.contains("this one with 7f 45 4c 46"), "{cmd}: {err}");
        assert!(!err.contains("is not UTF-8 text") && !err.contains("panicked"), "{cmd}: {err}");
    }
}

/// Assembler diagnostics start with `error:`; no command wraps them in a message that `main`
/// prints with a second `error: ` prefix.
#[test]
fn error_prefix_is_never_doubled() {
    let dir = scratch("prefix");
    let src = write(&dir, "bad.wave", ".kernel k\n  bogus r1\n.end\n");
    let src = src.to_str().unwrap();
    let out_file = dir.join("out.ptx");
    for args in [
        vec!["asm", src],
        vec!["dis", src],
        vec!["check", src],
        vec!["run", src],
        vec!["emit", "--target", "ptx", src, "-o", out_file.to_str().unwrap()],
    ] {
        let out = wave_jit(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = text(&out.stderr);
        let error_lines: Vec<&str> = err.lines().filter(|l| l.contains("error:")).collect();
        assert_eq!(
            error_lines,
            [
                "error: unknown instruction `bogus`",
                "error: could not assemble `{src}` (1 error)".replace("{src}", src).as_str()
            ],
            "{args:?}:\n{err}"
        );
    }
}
