//! `wave-jit run` against the reference `wave-emu` binary: the same program and flags must
//! give byte-identical stdout (dumps and `--stats`). wave-emu runs the reference wave-asm's
//! .wbin; wave-jit runs the .wave source (assembled by our assembler), so the comparison is
//! of execution and output formatting.
//!
//! The reference tools come from `support::reference_tools` (fetched with `cargo install` when
//! they are not at hand; where that fails the tests say loudly that they did not run).

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::{reference_tools, wave_jit, ReferenceTools};

/// Assemble with the reference wave-asm.
fn assemble(tools: &ReferenceTools, dir: &Path, source: &str) -> PathBuf {
    let src = dir.join("k.wave");
    let bin = dir.join("k.wbin");
    std::fs::write(&src, source).unwrap();
    let out = Command::new(&tools.wave_asm).arg(&src).arg("-o").arg(&bin).output().unwrap();
    assert!(out.status.success(), "wave-asm failed: {}", String::from_utf8_lossy(&out.stderr));
    bin
}

fn stdout_of(program: &Path, args: &[&str]) -> String {
    let out = Command::new(program).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{} {args:?} failed: {}",
        program.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn same_output(test: &str, source: &str, flags: &[&str]) {
    let Some(tools) = reference_tools(test) else { return };
    let dir = support::scratch("cli-run", test);
    let bin = assemble(&tools, &dir, source);
    let src = dir.join("k.wave");
    let (bin, src) = (bin.to_str().unwrap(), src.to_str().unwrap());
    let reference = stdout_of(&tools.wave_emu, &[&[bin], flags].concat());
    let ours = stdout_of(wave_jit(), &[&["run", src], flags].concat());
    assert!(!reference.is_empty());
    assert_eq!(ours, reference, "{test}: wave-jit run and wave-emu disagree");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn vector_add_dumps_and_stats() {
    let source = "
.kernel vadd
    mov r0, sr_thread_id_x
    mov r5, sr_workgroup_id_x
    mov r6, sr_workgroup_size_x
    imad r0, r5, r6, r0
    mov_imm r2, 2
    shl r1, r0, r2
    iadd r3, r1, r10
    device_load_u32 r4, r1
    device_load_u32 r7, r3
    fadd r4, r4, r7
    iadd r3, r1, r11
    device_store_u32 r3, r4
    halt
.end
";
    same_output(
        "vector_add_dumps_and_stats",
        source,
        &[
            "--grid",
            "2,1,1",
            "--workgroup",
            "64,1,1",
            "--wave-width",
            "16",
            "--device-memory",
            "4096",
            "--fill-iota",
            "0:f32:128:0.5",
            "--fill-iota",
            "512:f32:128:3",
            "--fill-zero",
            "1024:f32:128",
            "--set-reg",
            "10:512",
            "--set-reg",
            "11:0x400",
            "--dump-f32",
            "1024:128",
            "--dump-memory",
            "0x400:0x428",
            "--stats",
        ],
    );
}

#[test]
fn loop_divergence_barrier_and_local_memory() {
    // Lane-dependent trip counts (break directly in the loop body, where the reference has
    // GPU semantics), an if/else, a barrier across 4 waves and local memory.
    let source = "
.kernel mix
    mov r0, sr_thread_id_x
    mov_imm r2, 2
    shl r1, r0, r2
    mov_imm r3, 0
    mov_imm r4, 0x3f800000
    mov_imm r8, 1
    mov_imm r9, 7
    and r9, r0, r9
    loop
        icmp_ge p1, r3, r9
        break p1
        fadd r4, r4, r4
        iadd r3, r3, r8
    endloop
    mov_imm r10, 3
    and r11, r0, r10
    icmp_eq p2, r11, r8
    if p2
        fneg r4, r4
    else
        iadd r3, r3, r10
    endif
    local_store_u32 r1, r4
    barrier
    mov_imm r12, 124
    isub r13, r12, r1
    local_load_u32 r14, r13
    device_store_u32 r1, r14
    mov_imm r15, 0x100
    iadd r15, r15, r1
    device_store_u32 r15, r3
    halt
.end
";
    same_output(
        "loop_divergence_barrier_and_local_memory",
        source,
        &[
            "--workgroup",
            "32,1,1",
            "--wave-width",
            "8",
            "--device-memory",
            "1024",
            "--dump-f32",
            "0:32",
            "--dump-memory",
            "0x100:0x180",
            "--stats",
        ],
    );
}

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

fn code(out: &Output) -> i32 {
    out.status.code().expect("the process exited (no signal)")
}

/// Each class of bad or odd input gets wave-emu's exit code, and where both succeed, the same
/// stdout (README: "Exit codes").
#[test]
fn exit_codes_match_wave_emu_by_class() {
    let test = "exit_codes_match_wave_emu_by_class";
    let Some(tools) = reference_tools(test) else { return };
    let dir = support::scratch("cli-run", test);
    let bin = assemble(&tools, &dir, STORE_IDS);
    let src = dir.join("k.wave");
    let missing = dir.join("missing.bin").to_str().unwrap().to_string();
    let missing_arg = format!("0:{missing}");
    let dump = ["--dump-memory", "0:0x20"];
    let cases: &[(&str, Vec<&str>, i32)] = &[
        ("unknown flag", vec!["--bogus"], 2),
        ("non-numeric value of a numeric flag", vec!["--registers", "abc"], 2),
        ("a dump flag given twice", vec!["--dump-f32", "0:1", "--dump-f32", "0:2"], 2),
        ("missing --arg file", vec!["--arg", &missing_arg], 1),
        ("out-of-bounds store", vec!["--device-memory", "4"], 1),
        ("out-of-bounds dump", vec!["--dump-f32", "0x100000:1"], 1),
        ("grid with a zero", [&["--grid", "0,1,1", "--stats"], &dump[..]].concat(), 0),
        (
            "workgroup with a zero",
            [&["--grid", "3,1,1", "--workgroup", "4,0,1", "--stats"], &dump[..]].concat(),
            0,
        ),
        ("register beyond the kernel's count", [&["--set-reg", "20:5"], &dump[..]].concat(), 0),
        ("value above 32 bits", [&["--set-reg", "3:0x100000007"], &dump[..]].concat(), 0),
    ];
    for (class, flags, expected) in cases {
        let reference = Command::new(&tools.wave_emu).arg(&bin).args(flags).output().unwrap();
        let ours = Command::new(wave_jit()).arg("run").arg(&src).args(flags).output().unwrap();
        assert_eq!(code(&reference), *expected, "{class}: wave-emu {flags:?}");
        assert_eq!(
            code(&ours),
            *expected,
            "{class}: wave-jit run {flags:?}: {}",
            String::from_utf8_lossy(&ours.stderr)
        );
        if *expected == 0 {
            assert_eq!(ours.stdout, reference.stdout, "{class}: stdout differs");
        }
    }
    // Files that are not there: the kernel, and no kernel at all (a usage error).
    let no_kernel = [
        Command::new(&tools.wave_emu).arg(&missing).output().unwrap(),
        Command::new(wave_jit()).args(["run", &missing]).output().unwrap(),
    ];
    assert_eq!(no_kernel.each_ref().map(code), [1, 1], "missing kernel file");
    let no_file = [
        Command::new(&tools.wave_emu).output().unwrap(),
        Command::new(wave_jit()).arg("run").output().unwrap(),
    ];
    assert_eq!(no_file.each_ref().map(code), [2, 2], "no kernel file given");

    // The one deliberate difference: a malformed value of a text flag is a usage error (2) for
    // wave-jit, as for numeric flags; wave-emu exits 1 ("invalid WBIN file: invalid --grid").
    for flags in [["--grid", "1,1"], ["--set-reg", "5"], ["--arg", "0"], ["--dump-memory", "8:4"]] {
        let reference = Command::new(&tools.wave_emu).arg(&bin).args(flags).output().unwrap();
        let ours = Command::new(wave_jit()).arg("run").arg(&src).args(flags).output().unwrap();
        assert_eq!((code(&reference), code(&ours)), (1, 2), "{flags:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
