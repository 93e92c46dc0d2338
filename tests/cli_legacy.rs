//! Binaries of the 0.1.2 toolchain on crates.io (older instruction encoding, README): wave-jit
//! recognises them, runs them as wave-emu 0.1.2 runs them, and disassembles them into today's
//! dialect. The programs and binaries are in `tests/legacy-0.1.2/` (its README says how each
//! binary was made).
//!
//! The reference tools come from `tests/support` (found or installed there); the tests on
//! checked-in binaries and their pinned wave-emu output need no tool.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::{reference_tools, ReferenceTools};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/legacy-0.1.2").join(name)
}

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wave-jit-cli-legacy-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(program: &Path, args: &[&str]) -> Output {
    Command::new(program).args(args).output().unwrap()
}

fn wave_jit(args: &[&str]) -> Output {
    run(Path::new(env!("CARGO_BIN_EXE_wave-jit")), args)
}

fn stdout_of(program: &Path, args: &[&str]) -> String {
    let out = run(program, args);
    assert!(
        out.status.success(),
        "{} {args:?} failed: {}",
        program.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn stderr_of_failure(args: &[&str]) -> String {
    let out = wave_jit(args);
    assert_eq!(out.status.code(), Some(1), "{args:?} should fail: {}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8(out.stderr).unwrap()
}

/// Checked-in binaries, with the flags their `.expected` wave-emu output was made with.
const CHECKED_IN: &[(&str, &[&str])] = &[
    (
        "control",
        &["--grid", "2,2,1", "--wave-width", "8", "--device-memory", "8192", "--dump-memory", "0:0x800"],
    ),
    (
        "float_ops",
        &[
            "--workgroup",
            "32,1,1",
            "--wave-width",
            "16",
            "--device-memory",
            "8192",
            "--fill-iota",
            "0:f32:32:0.375",
            "--dump-memory",
            "0:0xd00",
            "--dump-f32",
            "0xc00:64",
        ],
    ),
    (
        "relu_scale",
        &[
            "--device-memory",
            "4096",
            "--fill-iota",
            "0:f32:64:0.125",
            "--set-reg",
            "0:0",
            "--set-reg",
            "1:512",
            "--set-reg",
            "2:40",
            "--dump-f32",
            "512:48",
        ],
    ),
];

fn expected(name: &str) -> String {
    std::fs::read_to_string(data(&format!("{name}.expected"))).unwrap()
}

#[test]
fn checked_in_binaries_run_as_wave_emu_ran_them() {
    for (name, flags) in CHECKED_IN {
        let binary = data(&format!("{name}.wbin"));
        let binary = binary.to_str().unwrap();
        for engine in ["jit", "interp"] {
            let ours = stdout_of(
                Path::new(env!("CARGO_BIN_EXE_wave-jit")),
                &[&["run", binary, "--engine", engine, "--threads", "1"], *flags].concat(),
            );
            assert_eq!(ours, expected(name), "{name} on {engine}");
        }
        let check = stdout_of(Path::new(env!("CARGO_BIN_EXE_wave-jit")), &["check", binary]);
        assert!(
            check.contains("ok, 1 kernel (code in the instruction encoding of wave-asm/wave-compiler 0.1.2"),
            "{check}"
        );
    }
}

/// `dis` prints an old binary in today's dialect: the listing assembles (to the current
/// encoding) and that binary runs to the same output.
#[test]
fn checked_in_binaries_disassemble_to_todays_dialect() {
    let dir = scratch("dis");
    for (name, flags) in CHECKED_IN {
        let binary = data(&format!("{name}.wbin"));
        let listing =
            stdout_of(Path::new(env!("CARGO_BIN_EXE_wave-jit")), &["dis", binary.to_str().unwrap()]);
        assert!(
            listing.starts_with("; Decoded from the instruction encoding of wave-asm/wave-compiler 0.1.2"),
            "{listing}"
        );
        let source = dir.join(format!("{name}.wave"));
        std::fs::write(&source, &listing).unwrap();
        let current = dir.join(format!("{name}.wbin"));
        let out = wave_jit(&["asm", source.to_str().unwrap(), "-o", current.to_str().unwrap()]);
        assert!(out.status.success(), "{name}: {}\n{listing}", String::from_utf8_lossy(&out.stderr));
        let check =
            stdout_of(Path::new(env!("CARGO_BIN_EXE_wave-jit")), &["check", current.to_str().unwrap()]);
        assert!(!check.contains("0.1.2"), "re-assembled in the current encoding: {check}");
        let ours = stdout_of(
            Path::new(env!("CARGO_BIN_EXE_wave-jit")),
            &[&["run", current.to_str().unwrap(), "--threads", "1"], *flags].concat(),
        );
        assert_eq!(ours, expected(name), "{name}: the re-assembled listing runs differently\n{listing}");
    }
    // wave-emu 0.1.2 runs `cvt_f32_i32` as f32 -> i32: the listing says what it does.
    let listing = stdout_of(
        Path::new(env!("CARGO_BIN_EXE_wave-jit")),
        &["dis", data("float_ops.wbin").to_str().unwrap()],
    );
    assert!(listing.contains("cvt_i32_f32 r25, r3") && listing.contains("cvt_f32_i32 r26, r0"), "{listing}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn encoding_flag() {
    let dir = scratch("flag");
    let old = data("control.wbin");
    let old = old.to_str().unwrap();
    // Forced to the current encoding, the old binary does not decode.
    let err = stderr_of_failure(&["run", old, "--encoding", "current"]);
    assert!(
        err.contains("unknown opcode") && err.contains("read in the current instruction encoding"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    let err = stderr_of_failure(&["dis", old, "--encoding", "current"]);
    assert!(err.contains("unknown opcode"), "{err}");
    let forced =
        stdout_of(Path::new(env!("CARGO_BIN_EXE_wave-jit")), &["check", old, "--encoding", "legacy-0.1.2"]);
    assert!(forced.contains("control"), "{forced}");
    // Assembly source is always in the current encoding.
    let source = dir.join("k.wave");
    std::fs::write(&source, ".kernel k\n    iadd r0, r0, r0\n.end\n").unwrap();
    let err = stderr_of_failure(&["dis", source.to_str().unwrap(), "--encoding", "legacy-0.1.2"]);
    assert!(err.contains("applies only to .wbin binaries"), "{err}");
    // `iadd r0, r0, r0` is 8 zero bytes: one instruction now, two `iadd`s in 0.1.2. The rule
    // reads it as current unless told otherwise.
    let binary = dir.join("k.wbin");
    assert!(wave_jit(&["asm", source.to_str().unwrap()]).status.success());
    let binary = binary.to_str().unwrap();
    let iadds = |listing: &str| listing.lines().filter(|l| l.trim() == "iadd r0, r0, r0").count();
    let auto = stdout_of(Path::new(env!("CARGO_BIN_EXE_wave-jit")), &["dis", binary]);
    assert_eq!(iadds(&auto), 1, "{auto}");
    let legacy =
        stdout_of(Path::new(env!("CARGO_BIN_EXE_wave-jit")), &["dis", binary, "--encoding", "legacy-0.1.2"]);
    assert_eq!(iadds(&legacy), 2, "{legacy}");
    for cmd in ["run", "dis", "check", "emit"] {
        let help = stdout_of(Path::new(env!("CARGO_BIN_EXE_wave-jit")), &[cmd, "--help"]);
        assert!(help.contains("--encoding") && help.contains("legacy-0.1.2"), "{cmd} --help:\n{help}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The checked-in files are what the reference tools make from the checked-in sources.
#[test]
fn pinned_files_are_what_the_reference_tools_make() {
    let Some(ReferenceTools { wave_asm, wave_emu }) =
        reference_tools("pinned_files_are_what_the_reference_tools_make")
    else {
        return;
    };
    let dir = scratch("pinned");
    for name in ["control", "float_ops"] {
        let made = dir.join(format!("{name}.wbin"));
        let source = data(&format!("{name}.wave"));
        stdout_of(&wave_asm, &[source.to_str().unwrap(), "-o", made.to_str().unwrap()]);
        assert_eq!(
            std::fs::read(made).unwrap(),
            std::fs::read(data(&format!("{name}.wbin"))).unwrap(),
            "{name}"
        );
    }
    for (name, flags) in CHECKED_IN {
        let binary = data(&format!("{name}.wbin"));
        let reference = stdout_of(&wave_emu, &[&[binary.to_str().unwrap()], *flags].concat());
        assert_eq!(reference, expected(name), "{name}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Each program assembled by the reference wave-asm 0.1.2; wave-emu 0.1.2 and `wave-jit run`
/// (both engines) on that same binary print the same bytes.
#[test]
fn same_output_as_wave_emu_on_its_own_binaries() {
    let Some(ReferenceTools { wave_asm, wave_emu }) =
        reference_tools("same_output_as_wave_emu_on_its_own_binaries")
    else {
        return;
    };
    let dir = scratch("differential");
    // Inputs for `predication`: f32 values -2, -1, ... with a NaN, an 8.0 and a -0.0.
    let mut values: Vec<f32> = (0..32).map(|i| i as f32 - 2.0).collect();
    (values[3], values[10], values[12]) = (f32::NAN, 8.0, -0.0);
    let inputs = dir.join("inputs.bin");
    std::fs::write(&inputs, values.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
    let arg = format!("0:{}", inputs.display());
    let programs: &[(&str, &[&str])] = &[
        (
            "int_ops",
            &[
                "--workgroup",
                "32,1,1",
                "--wave-width",
                "8",
                "--device-memory",
                "4096",
                "--dump-memory",
                "0:2816",
            ],
        ),
        (
            "float_ops",
            &[
                "--workgroup",
                "32,1,1",
                "--wave-width",
                "16",
                "--device-memory",
                "8192",
                "--fill-iota",
                "0:f32:32:0.375",
                "--dump-memory",
                "0:0xd00",
            ],
        ),
        (
            "memory_atomics",
            &[
                "--grid",
                "2,1,1",
                "--workgroup",
                "32,1,1",
                "--wave-width",
                "8",
                "--device-memory",
                "16384",
                "--fill-iota",
                "0:f32:512:1.5",
                "--dump-memory",
                "0:0x2400",
            ],
        ),
        (
            "wave_ops",
            &[
                "--workgroup",
                "32,1,1",
                "--wave-width",
                "16",
                "--device-memory",
                "8192",
                "--dump-memory",
                "0:0x1100",
            ],
        ),
        (
            "control",
            &["--grid", "2,2,1", "--wave-width", "8", "--device-memory", "8192", "--dump-memory", "0:0x800"],
        ),
        (
            "predication",
            &[
                "--workgroup",
                "32,1,1",
                "--wave-width",
                "8",
                "--device-memory",
                "4096",
                "--arg",
                &arg,
                "--dump-memory",
                "0:0xb00",
            ],
        ),
    ];
    for (name, flags) in programs {
        let binary = dir.join(format!("{name}.wbin"));
        let source = data(&format!("{name}.wave"));
        stdout_of(&wave_asm, &[source.to_str().unwrap(), "-o", binary.to_str().unwrap()]);
        let binary = binary.to_str().unwrap();
        let reference = stdout_of(&wave_emu, &[&[binary], *flags].concat());
        assert!(reference.lines().count() > 8, "{name}: {reference}");
        for engine in ["jit", "interp"] {
            let ours = stdout_of(
                Path::new(env!("CARGO_BIN_EXE_wave-jit")),
                &[&["run", binary, "--engine", engine, "--threads", "1"], *flags].concat(),
            );
            assert_eq!(ours, reference, "{name}: wave-jit run --engine {engine} and wave-emu disagree");
        }
        // The interpreter's counters too (old `mov`s count as control ops in both), except
        // where wave-emu leaves a predicated `halt` uncounted.
        if *name != "predication" {
            let with_stats = [*flags, &["--stats"]].concat();
            let reference = stdout_of(&wave_emu, &[&[binary], &with_stats[..]].concat());
            let ours = stdout_of(
                Path::new(env!("CARGO_BIN_EXE_wave-jit")),
                &[&["run", binary, "--engine", "interp"], &with_stats[..]].concat(),
            );
            assert_eq!(ours, reference, "{name}: --stats");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
