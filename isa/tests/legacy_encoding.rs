//! Binaries of the 0.1.2 toolchain on crates.io, whose instruction encoding is older than the
//! documented one (README, compatibility note): decoded by `wave_isa::legacy` into the same
//! instructions our assembler writes in the current encoding, and told apart from current
//! binaries by the rule of `wave_isa::module::load_wbin`.

use wave_isa::asm::assemble;
use wave_isa::ir::{decode_code, decode_code_in, KernelMeta};
use wave_isa::module::{load_wbin, LoadErrorKind};
use wave_isa::opcodes::{Class, Kind, Op, OPS, SPECIAL_REGISTERS};
use wave_isa::wbin::{self, WbinFile, WbinKernel};
use wave_isa::{Encoding, EncodingChoice, Instruction};

/// The op wave-emu 0.1.2 executes for a mnemonic its assembler accepts: the `cvt` names
/// 0..3 run with source and destination swapped (README, differences).
fn as_emulated(op: Op) -> Op {
    match op {
        Op::CvtF32I32 => Op::CvtI32F32,
        Op::CvtF32U32 => Op::CvtU32F32,
        Op::CvtI32F32 => Op::CvtF32I32,
        Op::CvtU32F32 => Op::CvtF32U32,
        other => other,
    }
}

/// Assemble `source` with the reference wave-asm 0.1.2 (old encoding) and with ours (current
/// encoding); decoding each in its own encoding gives the same instructions, kernel by kernel,
/// and our legacy decoder sizes every instruction as wave-decode 0.1.2 does.
fn check_same_instructions(source: &str, name: &str) {
    let reference = wave_asm::assemble(source, name).unwrap_or_else(|e| panic!("{name}: {e:?}")).binary;
    let ours = assemble(source, name).unwrap_or_else(|d| panic!("{name}:\n{d}")).file;
    let theirs = wbin::parse(&reference).unwrap();
    let sizes = wave_decode::WbinFile::parse(&reference).unwrap();
    assert_eq!(theirs.kernels.len(), ours.kernels.len());
    for (k, (t, o)) in theirs.kernels.iter().zip(&ours.kernels).enumerate() {
        let legacy = decode_code_in(&t.meta.name, &t.code, Encoding::Legacy012)
            .unwrap_or_else(|e| panic!("{name}: kernel {k}: {e}"));
        let current = decode_code(&o.meta.name, &o.code).unwrap();
        assert_eq!(legacy.len(), current.len(), "{name}: kernel {k} instruction count");
        for (j, ((_, l), (_, c))) in legacy.iter().zip(&current).enumerate() {
            let expected = Instruction { op: as_emulated(c.op), ..*c };
            assert_eq!(*l, expected, "{name}: kernel {k} instruction {j}");
        }
        let reference_sizes: Vec<u32> = wave_decode::decode_all(sizes.kernel_code(k).unwrap())
            .unwrap()
            .iter()
            .map(|d| u32::from(d.size))
            .collect();
        let our_sizes: Vec<u32> = legacy
            .iter()
            .map(|(offset, _)| *offset)
            .chain([t.code.len() as u32])
            .collect::<Vec<_>>()
            .windows(2)
            .map(|w| w[1] - w[0])
            .collect();
        assert_eq!(our_sizes, reference_sizes, "{name}: kernel {k} sizes");
    }
}

#[test]
fn reference_dialect_kernel() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/reference/dialect.wave");
    check_same_instructions(&std::fs::read_to_string(path).unwrap(), "dialect.wave");
}

/// One line per op the 0.1.2 assembler encodes as we do (not CAS, which it writes as an add
/// with a stray word; not `call`, whose label offsets depend on the encoding's sizes; not bf16
/// or MMA, which it lacks), each operand a different register below r32, guards varied.
#[test]
fn every_op_of_the_old_assembler() {
    let mut src = String::from(".kernel every_op\n");
    let mut n = 0;
    for (i, info) in OPS.iter().enumerate() {
        let op = info.op;
        if matches!(op.class(), Class::BFloat | Class::Mma)
            || matches!(op, Op::CvtF32Bf16 | Op::CvtBf16F32 | Op::Call | Op::AtomicCas | Op::LocalAtomicCas)
        {
            continue;
        }
        let operands: Vec<String> = info
            .operands
            .iter()
            .enumerate()
            .map(|(k, spec)| {
                let reg = (i * 7 + k * 5 + 1) % 30;
                match spec.kind {
                    Kind::Pred => format!("p{}", 1 + (i + k) % 3),
                    Kind::Special => SPECIAL_REGISTERS[i % 16].to_string(),
                    Kind::Imm => format!("0x{:x}", i * 0x1111),
                    Kind::Scope => [".wave", ".workgroup", ".device", ".system"][i % 4].to_string(),
                    _ => format!("r{reg}"),
                }
            })
            .collect();
        let guard = if op.is_structural() { "" } else { ["", "@p1 ", "@!p2 ", "@p3 ", "@!p0 "][i % 5] };
        src.push_str(&format!("    {guard}{} {}\n", info.mnemonic, operands.join(", ")));
        n += 1;
    }
    src.push_str(".end\n");
    assert!(n > 120, "{src}");
    check_same_instructions(&src, "every_op.wave");
}

fn file_of(code: &[u8], registers: u32) -> WbinFile {
    let meta = KernelMeta { name: "k".into(), registers, ..Default::default() };
    WbinFile { kernels: vec![WbinKernel { meta, code: code.to_vec() }], ..Default::default() }
}

fn words(ws: &[u32]) -> Vec<u8> {
    ws.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// The rule: read as current unless that fails to decode, build or validate and the old
/// encoding loads. Eight zero bytes are `iadd r0, r0, r0` in both: one 8-byte instruction
/// now, two 4-byte ones in 0.1.2.
#[test]
fn a_binary_valid_in_both_encodings_is_read_as_current() {
    let file = file_of(&[0; 8], 32);
    let (module, loaded) = load_wbin(file.clone(), EncodingChoice::Auto).unwrap();
    assert_eq!(loaded.encoding, Encoding::Current);
    let count = |m: &wave_isa::Module| m.kernels[0].funcs[0].body.len();
    assert_eq!(count(&module), 2, "one iadd and the implicit halt");
    let (forced, loaded) = load_wbin(file, EncodingChoice::Force(Encoding::Legacy012)).unwrap();
    assert_eq!(loaded.encoding, Encoding::Legacy012);
    assert_eq!(count(&forced), 3, "two iadds and the implicit halt");
}

#[test]
fn a_binary_invalid_as_current_but_valid_as_old_is_read_as_old() {
    // Old `iadd r1, r2, r3` twice: as current words, `iadd r2, r2, ...` with rd = 0x22 = r34,
    // beyond the 32 registers: decodes, but does not validate.
    let old_iadd = 1 << 21 | 2 << 16 | 3 << 11;
    let file = file_of(&words(&[old_iadd, old_iadd]), 32);
    let as_current = load_wbin(file.clone(), EncodingChoice::Force(Encoding::Current)).unwrap_err();
    assert!(matches!(as_current.kind, LoadErrorKind::Invalid(_)), "{as_current}");
    let (module, loaded) = load_wbin(file, EncodingChoice::Auto).unwrap();
    assert_eq!(loaded.encoding, Encoding::Legacy012);
    let wave_isa::StmtKind::Op(first) = &module.kernels[0].funcs[0].body[0].kind else { panic!() };
    assert_eq!((first.op, first.rd, first.rs1, first.rs2), (Op::Iadd, 1, 2, 3));
}

#[test]
fn a_binary_in_neither_encoding_names_both() {
    // Opcode 0xFF now, 0x3F with an unknown sync modifier (15) in 0.1.2.
    let file = file_of(&words(&[0xFF00_0781]), 32);
    let e = load_wbin(file.clone(), EncodingChoice::Auto).unwrap_err().to_string();
    assert!(e.starts_with("kernel `k` at byte 0x0: unknown opcode 0xff"), "{e}");
    assert!(e.contains("note: it does not load in the instruction encoding of wave-asm/wave-compiler 0.1.2 from crates.io either: kernel `k` at byte 0x0: unknown modifier 15 for opcode 0x3f"), "{e}");
    let e = load_wbin(file, EncodingChoice::Force(Encoding::Legacy012)).unwrap_err().to_string();
    assert!(
        e.ends_with(
            "note: the code was read in the instruction encoding of wave-asm/wave-compiler 0.1.2 from crates.io"
        ),
        "{e}"
    );
    // A current binary that decodes but is invalid keeps its own error, without a note.
    let mut break_outside = Instruction::new(Op::Break);
    break_outside.rs1 = 1;
    let mut code = Vec::new();
    break_outside.encode_into(&mut code);
    let e = load_wbin(file_of(&code, 32), EncodingChoice::Auto).unwrap_err().to_string();
    assert!(e.contains("[break-outside-loop]") && !e.contains("note:"), "{e}");
}

#[test]
fn guards_on_block_ends_are_rejected() {
    // Old `@p1 endif` after `if p1`: control opcode, modifier 2, predicate bits 4..3 = 1.
    let code = words(&[0x3F << 26 | 1 << 16, 0x3F << 26 | 2 << 7 | 1 << 3]);
    let e = load_wbin(file_of(&code, 32), EncodingChoice::Force(Encoding::Legacy012)).unwrap_err();
    assert!(e.to_string().contains("unsupported: predicated `endif` (guard @p1)"), "{e}");
}
