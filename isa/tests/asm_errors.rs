//! Every assembler error, from a failing input: its message, its line:column, its hint.

use wave_isa::asm::{assemble, Diagnostic, Severity};

/// Wrap instruction lines into a kernel (line 1 is `.kernel k`, the body starts at line 2).
fn kernel(body: &str) -> String {
    format!(".kernel k\n{body}\n.end\n")
}

/// The only error of `src`, as (line:column, message, hint).
fn only_error(src: &str) -> (String, String, Option<String>) {
    let d = assemble(src, "e.wave").expect_err("must not assemble");
    let errors: Vec<&Diagnostic> = d.errors().collect();
    assert_eq!(errors.len(), 1, "expected one error, got:\n{d}");
    let e = errors[0];
    (format!("{}:{}", e.line, e.column), e.message.clone(), e.hint.clone())
}

#[track_caller]
fn check(src: &str, at: &str, message: &str, hint: Option<&str>) {
    let (pos, msg, h) = only_error(src);
    assert_eq!((pos.as_str(), msg.as_str()), (at, message), "source:\n{src}");
    if let Some(hint) = hint {
        let h = h.unwrap_or_default();
        assert!(h.contains(hint), "hint {h:?} lacks {hint:?}\nsource:\n{src}");
    }
}

#[test]
fn lexical_and_operand_syntax() {
    check(&kernel("  r1: nop"), "2:3", "`r1` is a register name and cannot be a label", None);
    check(
        &kernel("  @q1 iadd r1, r2, r3"),
        "2:4",
        "expected a predicate register, found `q1`",
        Some("`@` must be followed"),
    );
    check(&kernel("  @p4 nop"), "2:4", "predicate register `p4` does not exist", Some("p0 to p3"));
    check(&kernel("  , iadd"), "2:3", "expected an instruction, found `,`", None);
    check(&kernel("  @p1"), "2:6", "expected an instruction after the predicate", None);
    check(&kernel("  iadd r1, r2,"), "2:15", "expected an operand after `,`", None);
    check(&kernel("  iadd r1, r2 r3"), "2:15", "expected `,` or end of line, found `r3`", Some("commas"));
    check(&kernel("  fence_acquire .galaxy"), "2:17", "unknown scope `.galaxy`", Some(".wave, .workgroup"));
    check(
        &kernel("  fence_acquire .devic"),
        "2:17",
        "unknown scope `.devic`",
        Some("did you mean `.device`?"),
    );
    check(&kernel("  mov_imm r1, -x"), "2:15", "`-` must be followed by a number", None);
    check(&kernel("  iadd r1, $, r2"), "2:12", "expected an operand, found `$`", None);
    check(
        &kernel("  hadd r0.lo, r1, r2"),
        "2:8",
        "register halves (`.lo`) are not supported",
        Some("silently drops"),
    );
    check(&kernel("  iadd r0.x, r1, r2"), "2:10", "unexpected `.x` after a register", None);
    check(&kernel("  iadd r256, r1, r2"), "2:8", "register `r256` does not exist", Some("r0 to r255"));
    check(&kernel("  mov r1, sr_lane"), "2:11", "unknown special register `sr_lane`", Some("`sr_lane_id`"));
    check(&kernel("  mov_imm r1, 12abc"), "2:15", "invalid number `12abc`", None);
    check(&kernel("  mov_imm r1, 0x1_0000_0000"), "2:15", "`0x1_0000_0000` does not fit in 32 bits", None);
    check(&kernel("  mov_imm r1, 1e39"), "2:15", "`1e39` is too large for an f32", None);
    check(&kernel("  if !q1"), "2:7", "expected a predicate register, found `q1`", None);
}

#[test]
fn directive_syntax() {
    check(".kernel\n", "1:8", "expected a kernel name after `.kernel`", None);
    check(".kernel 5\n", "1:9", "expected a kernel name, found `5`", None);
    check(
        ".kernel k\n.registres 8\n.end\n",
        "2:1",
        "unknown directive `.registres`",
        Some("did you mean `.registers`?"),
    );
    check(
        ".kernel k\n.cached\n.end\n",
        "2:1",
        "unknown directive `.cached`",
        Some("belongs after a mnemonic"),
    );
    check(".kernel k\n.workgroup_size 8 1 1\n.end\n", "2:19", "expected `,`, found `1`", Some("X, Y, Z"));
    check(".kernel k\n.workgroup_size 8, 1\n.end\n", "2:21", "expected `,`", None);
    check(".kernel k\n.registers 1.5\n.end\n", "2:12", ".registers needs an integer, found `1.5`", None);
    check(".kernel k\n.registers -4\n.end\n", "2:12", ".registers needs a non-negative integer", None);
    check(".kernel k\n.local_memory\n.end\n", "2:14", ".local_memory needs an integer", None);
    check(
        ".kernel k\n.local_memory 99999999999\n.end\n",
        "2:15",
        "`99999999999` does not fit in 32 bits",
        None,
    );
    check(".kernel k\n.registers r8\n.end\n", "2:12", ".registers needs an integer, found `r8`", None);
    check(".kernel k extra\n.end\n", "1:11", "unexpected `extra` after `.kernel`", None);
    check(".kernel k\n.registers 0\nnop\n.end\n", "2:1", "`.registers 0` is out of range", Some("1 to 256"));
    check(".kernel k\n.registers 300\nnop\n.end\n", "2:1", "`.registers 300` is out of range", None);
}

#[test]
fn instruction_matching() {
    check(
        &kernel("  icmp_lz p1, r2, r3"),
        "2:3",
        "unknown instruction `icmp_lz`",
        Some("did you mean `icmp_lt`?"),
    );
    check(
        &kernel("  icmp.lz p1, r2, r3"),
        "2:3",
        "unknown instruction `icmp.lz`",
        Some("did you mean `icmp_lt`?"),
    );
    check(
        &kernel("  fcmp_ge p1, r2, r3"),
        "2:3",
        "unknown instruction `fcmp_ge`",
        Some("fcmp_le pD, rB, rA"),
    );
    check(
        &kernel("  atomic_add.device r1, r2, r3, .wave"),
        "2:13",
        "scope given twice (as a suffix and as an operand)",
        None,
    );
    check(&kernel("  atomic_add.device.wave r1, r2, r3"), "2:20", "scope given twice", None);
    check(&kernel("  iadd.fast r1, r2, r3"), "2:7", "unknown suffix `.fast` on `iadd`", Some("cache hints"));
    check(&kernel("  iadd.device r1, r2, r3"), "2:7", "`iadd` takes no scope", None);
    check(&kernel("  iadd r1, r2, r3, .device"), "2:20", "`iadd` takes no scope", None);
    check(
        &kernel("  atomic_add r1, .device, r2"),
        "2:18",
        "scope must be the last operand",
        Some("usage: atomic_add"),
    );
    check(
        &kernel("  iadd r1, r2"),
        "2:8",
        "`iadd` takes 3 operands, found 2",
        Some("usage: iadd rN, rN, rN"),
    );
    check(
        &kernel("  atomic_add r1, r2"),
        "2:14",
        "`atomic_add` takes 3 or 4 operands, found 2",
        Some("[rN]"),
    );
    check(&kernel("  halt r1"), "2:8", "`halt` takes 0 operands, found 1", None);
    check(&kernel("  @p1 if p2"), "2:3", "`if` cannot be predicated", Some("wrap a call in `if`"));
    check(&kernel("  @p1 call f\nf: return"), "2:3", "`call` cannot be predicated", None);
    check(&kernel("  iadd r1, x, r2"), "2:12", "expected register, found `x`", Some("not a register"));
    check(&kernel("  iadd r1, p1, r2"), "2:12", "expected register, found `p1`", Some("predicate register"));
    check(&kernel("  mov r1, 5"), "2:11", "expected register, found `5`", Some("mov_imm"));
    check(&kernel("  if r1"), "2:6", "expected predicate register, found `r1`", Some("p0 to p3"));
    check(&kernel("  mov_sr r1, r2"), "2:14", "expected special register, found `r2`", None);
    check(&kernel("  mov_imm r1, r2"), "2:15", "expected immediate, found `r2`", None);
    check(&kernel("  fence_acquire r1"), "2:17", "expected scope, found `r1`", Some(".device"));
    check(&kernel("  call r1"), "2:8", "expected label, found `r1`", None);
    check(
        &kernel("  select r1, !p1, r2, r3"),
        "2:14",
        "`select` cannot take a negated predicate",
        Some("only `if`, `break` and `continue`"),
    );
    check(&kernel("  mov_imm r1, 4294967296"), "2:15", "immediate 4294967296 does not fit in 32 bits", None);
    check(
        &kernel("  mov_imm r1, -2147483649"),
        "2:15",
        "immediate -2147483649 does not fit in 32 bits",
        None,
    );
}

#[test]
fn kernel_structure() {
    check(".kernel k\nnop\n", "1:1", "kernel `k` is never closed", Some("add `.end`"));
    check("nop\n", "1:1", "instruction outside a kernel", Some(".kernel NAME"));
    check("top:\n.kernel k\nnop\n.end\n", "1:1", "label `top` outside a kernel", None);
    check(&kernel("a: nop\na: nop"), "3:1", "label `a` is already defined in kernel `k` (line 2)", None);
    check(
        ".kernel a\nnop\n.kernel b\nnop\n.end\n",
        "3:1",
        "`.kernel b` inside kernel `a` (opened at line 1)",
        Some("`.end` first"),
    );
    check(".end\n", "1:1", "`.end` without a matching `.kernel`", None);
    check(".registers 8\n.kernel k\nnop\n.end\n", "1:1", "directive outside a kernel", None);
}

#[test]
fn kernel_level_checks() {
    check(
        &kernel("  iadd r32, r1, r2"),
        "2:8",
        "register r32 is beyond the 32 registers of kernel `k`",
        Some("unless it declares `.registers N`"),
    );
    check(
        ".kernel k\n.registers 8\n  dadd r6, r7, r0\n.end\n",
        "3:12",
        "register r7 (covering r7 to r8) is beyond the 8 registers of kernel `k`",
        Some("raise"),
    );
    check(
        ".kernel k\n.registers 8\n  device_load_u128 r5, r0\n.end\n",
        "3:20",
        "register r5 (covering r5 to r8) is beyond the 8 registers of kernel `k`",
        None,
    );
    // `.registers` given after the code still bounds it.
    check(
        ".kernel k\n  iadd r9, r1, r2\n.registers 8\n.end\n",
        "2:8",
        "register r9 is beyond the 8 registers of kernel `k`",
        None,
    );
    check(
        &kernel("  call f\nf:"),
        "2:8",
        "label `f` is at the end of kernel `k`: no instruction follows it",
        None,
    );
    check(
        &kernel("  call helpr\nhelper: return"),
        "2:8",
        "undefined label `helpr` in kernel `k`",
        Some("did you mean `helper`?"),
    );
    check(
        ".kernel a\nf: return\n.end\n.kernel b\n  call f\n.end\n",
        "5:8",
        "undefined label `f` in kernel `b`",
        Some("a label of kernel `a`"),
    );
}

#[test]
fn all_errors_are_reported_in_order() {
    let src =
        ".kernel k\n  iadd r1, r2\n  nop\n  bogus\n  mov r1, sr_nope\n  iadd r40, r0, r0\n  call nowhere\n";
    let d = assemble(src, "many.wave").unwrap_err();
    let at: Vec<(u32, u32)> = d.errors().map(|e| (e.line, e.column)).collect();
    assert_eq!(at, vec![(1, 1), (2, 8), (4, 3), (5, 11), (6, 8), (7, 8)], "{d}");
    let text = d.to_string();
    assert!(text.contains("--> many.wave:4:3"), "{text}");
    assert!(text.contains("4 |   bogus\n  |   ^^^^^"), "{text}");
    assert!(text.ends_with("aborting due to 6 errors"), "{text}");
}

#[test]
fn warnings() {
    let warned = |src: &str| {
        let a = assemble(src, "w.wave").unwrap_or_else(|d| panic!("{d}"));
        a.warnings
            .iter()
            .map(|w| (w.severity, format!("{}:{} {}", w.line, w.column, w.message)))
            .collect::<Vec<_>>()
    };
    let w = Severity::Warning;
    assert_eq!(
        warned(".kernel a\nnop\n.end\n.kernel a\nnop\n.end\n"),
        vec![(w, "4:1 a kernel named `a` is already defined at line 1".to_string())]
    );
    assert_eq!(
        warned(".kernel a\n.registers 8\n.registers 16\nnop\n.end\n"),
        vec![(w, "3:1 `.registers` overrides the value given at line 2".to_string())]
    );
    assert_eq!(warned(".kernel a\n.end\n"), vec![(w, "1:1 kernel `a` has no instructions".to_string())]);
}

#[test]
fn a_file_without_kernels_is_an_error() {
    check("; nothing\n", "1:1", "no kernels in this file", Some("`.kernel NAME`"));
    check("", "1:1", "no kernels in this file", None);
}

/// Structure the tree builder and the validator reject is reported by the assembler, at the
/// instruction's line and column, instead of producing a binary that does not load.
#[test]
fn structure_errors_at_assembly_time() {
    check(&kernel("  nop\n  endif"), "3:3", "`endif` without an open `if`", Some("`if pN` before it"));
    check(&kernel("  else"), "2:3", "`else` without an open `if`", None);
    check(&kernel("  endloop"), "2:3", "`endloop` without an open `loop`", None);
    check(&kernel("  loop\n    nop"), "2:3", "`loop` is never closed by `endloop`", Some("add `endloop`"));
    check(&kernel("  if p1\n    nop"), "2:3", "`if` is never closed by `endif`", Some("add `endif`"));
    check(
        &kernel("  if p1\n  else\n  else\n  endif"),
        "4:3",
        "second `else` for the same `if`",
        Some("at most one `else`"),
    );
    check(
        &kernel("  if p1\n    break p2\n  endif"),
        "3:5",
        "`break` is not inside a `loop` of the same function",
        Some("between `loop` and `endloop`"),
    );
    check(&kernel("  continue !p2"), "2:3", "`continue` is not inside a `loop` of the same function", None);
    // A `break` in a function called from inside a loop is still outside any loop.
    check(
        &kernel("  loop\n    call f\n  endloop\n  halt\nf: break p1\n  return"),
        "6:4",
        "`break` is not inside a `loop` of the same function",
        None,
    );
    for (guarded, column) in [("@p1 loop", "2:3"), ("@!p0 break p2", "2:3"), ("@p3 continue p1", "2:3")] {
        let op = guarded.split_whitespace().nth(1).unwrap();
        check(&kernel(&format!("  {guarded}")), column, &format!("`{op}` cannot be predicated"), None);
    }
}

#[test]
fn recursion_and_call_depth_at_assembly_time() {
    let (at, message, hint) = only_error(&kernel("  call f\n  halt\nf: nop\n  call f\n  return"));
    assert_eq!(at, "5:3");
    assert!(message.starts_with("recursive call: 0xc -> 0xc"), "{message}");
    assert!(hint.unwrap().contains("no recursion"));
    // Nine nested calls: f1 calls f2 ... calls f9.
    let mut body = String::from("  call f1\n  halt\n");
    for i in 1..=9 {
        body.push_str(&format!("f{i}: call f{}\n  return\n", i + 1));
    }
    body.push_str("f10: return");
    let (at, message, _) = only_error(&kernel(&body));
    assert_eq!(at, "2:3", "the chain starts at the entry's call");
    assert!(message.contains("is 10 calls deep; the limit is 8"), "{message}");
}

#[test]
fn stray_characters_are_reported_where_they_are() {
    check(
        &kernel("  iadd r1, é, r2 ; ünïcode in comments is fine"),
        "2:12",
        "expected an operand, found `é`",
        None,
    );
    check(&kernel("\tbogus r1"), "2:2", "unknown instruction `bogus`", None);
}

mod never_panics {
    use proptest::prelude::*;
    use wave_isa::asm::assemble;

    const VOCABULARY: &[&str] = &[
        ".kernel",
        "k",
        ".end",
        ".registers",
        "8",
        "300",
        ".local_memory",
        ".workgroup_size",
        "iadd",
        "atomic_add",
        "atomic_cas",
        "local_atomic_cas",
        "mov",
        "mov_imm",
        "mov_sr",
        "call",
        "f",
        "f:",
        "if",
        "break",
        "loop",
        "endloop",
        "fence_acquire",
        "icmp.lt",
        "device_load.u32",
        "dadd",
        "device_load_u128",
        "r0",
        "r1",
        "r31",
        "r255",
        "r256",
        "p0",
        "p3",
        "p9",
        "!p1",
        "@p1",
        "@!p0",
        "@",
        "!",
        "-",
        ",",
        ":",
        ".",
        ".device",
        "device",
        ".cached",
        ".lo",
        ".x",
        "sr_lane_id",
        "sr_bogus",
        "0x10",
        "-5",
        "1.5",
        "1e99",
        "inf",
        "-inf",
        "nan",
        "0x",
        "1_0",
        "é",
        "$",
        ";",
        "#",
        "\t",
    ];

    fn line() -> impl Strategy<Value = String> {
        prop::collection::vec(
            (prop::sample::select(VOCABULARY), prop::sample::select(&[" ", "", ", "][..])),
            0..8,
        )
        .prop_map(|parts| parts.into_iter().map(|(w, sep)| format!("{w}{sep}")).collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn on_token_soup(lines in prop::collection::vec(line(), 0..12)) {
            let src = lines.join("\n");
            if let Err(d) = assemble(&src, "soup.wave") {
                // Every error points into the file.
                for e in d.errors() {
                    prop_assert!(e.line as usize <= lines.len().max(1));
                    prop_assert!(e.column >= 1 && e.width >= 1);
                }
                let _ = d.to_string();
            }
        }

        #[test]
        fn on_arbitrary_text(src in "[ -~\t\n\u{e9}\u{a0}]{0,200}") {
            let _ = assemble(&src, "text.wave").map_err(|d| d.to_string());
        }
    }
}
