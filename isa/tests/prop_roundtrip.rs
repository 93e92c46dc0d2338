//! Property tests: encoding round trips, `.wbin` round trips, disassembly that re-assembles
//! to the same bytes, and no panic on arbitrary input anywhere in the loading path.

use proptest::prelude::*;
use wave_isa::disasm::{disassemble, format_instruction, DisasmOptions};
use wave_isa::instr::{Instruction, PredRef, STRUCT_PRED_NEGATE};
use wave_isa::ir::{build_kernel, build_kernel_in, decode_code, KernelMeta};
use wave_isa::module::{load_bytes, Module};
use wave_isa::opcodes::{Kind, Op, OPS};
use wave_isa::validate::validate;
use wave_isa::wbin::{self, WbinFile, WbinKernel};
use wave_isa::Encoding;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

/// A guard, with the predicate-enable bit written explicitly or not (`@p0` always has it).
fn set_guard(inst: &mut Instruction, guard: Option<(u8, bool, bool)>) {
    inst.guard = guard.map(|(index, negated, _)| PredRef { index, negated });
    inst.explicit_enable =
        guard.is_some_and(|(index, negated, enable)| enable && (index, negated) != (0, false));
}

/// Any op with arbitrary values in the slots its operands use.
fn any_instruction() -> impl Strategy<Value = Instruction> {
    (0..OPS.len(), any::<[u32; 6]>(), proptest::option::of((0u8..4, any::<bool>(), any::<bool>()))).prop_map(
        |(index, values, guard)| {
            let info = &OPS[index];
            let mut inst = Instruction::new(info.op);
            for (spec, value) in info.operands.iter().zip(values) {
                inst.set_slot(spec.slot, value);
            }
            set_guard(&mut inst, guard);
            inst
        },
    )
}

/// An instruction that the assembler can write: operands within their written ranges.
fn assemblable_instruction() -> impl Strategy<Value = Instruction> {
    (0..OPS.len(), any::<[u32; 6]>(), proptest::option::of((0u8..4, any::<bool>(), any::<bool>())))
        .prop_filter("calls need labels", |(index, _, _)| OPS[*index].op != Op::Call)
        .prop_map(|(index, values, guard)| {
            let info = &OPS[index];
            let mut inst = Instruction::new(info.op);
            let structural = matches!(info.op, Op::If | Op::Break | Op::Continue);
            for (spec, value) in info.operands.iter().zip(values) {
                let v = match spec.kind {
                    Kind::Reg | Kind::Fragment(_) => value % 256,
                    Kind::Pair => value % 255,
                    Kind::Quad => value % 253,
                    Kind::Pred if structural => (value % 4) | (value & STRUCT_PRED_NEGATE as u32),
                    Kind::Pred => value % 4,
                    Kind::Special => value % 20,
                    _ => value,
                };
                inst.set_slot(spec.slot, v);
            }
            // The assembler rejects guards on structured control flow, as the validator does.
            if !info.op.is_structural() {
                set_guard(&mut inst, guard);
            }
            inst
        })
}

fn encode(insts: &[Instruction]) -> Vec<u8> {
    let mut code = Vec::new();
    for i in insts {
        i.encode_into(&mut code);
    }
    code
}

/// The instructions in a structure the builder accepts (the assembler rejects any other): all
/// inside `loop`/`endloop`, so `break`/`continue` are in a loop, each `if`/`loop` closed right
/// after it, each `else`/`endif`/`endloop` given its opener.
fn well_nested(insts: &[Instruction]) -> Vec<Instruction> {
    let (open_if, endif) = (Instruction::new(Op::If), Instruction::new(Op::Endif));
    let (open_loop, endloop) = (Instruction::new(Op::Loop), Instruction::new(Op::Endloop));
    let mut out = vec![open_loop];
    for &inst in insts {
        match inst.op {
            Op::If => out.extend([inst, endif]),
            Op::Else => out.extend([open_if, inst, endif]),
            Op::Endif => out.extend([open_if, inst]),
            Op::Loop => out.extend([inst, endloop]),
            Op::Endloop => out.extend([open_loop, inst]),
            _ => out.push(inst),
        }
    }
    out.push(endloop);
    out
}

fn any_kernel() -> impl Strategy<Value = WbinKernel> {
    (
        "[^\u{0}]{0,12}",
        any::<u32>(),
        any::<u32>(),
        any::<[u32; 3]>(),
        proptest::collection::vec(any::<[u8; 4]>(), 0..16),
    )
        .prop_map(|(name, registers, local_memory, workgroup_size, words)| WbinKernel {
            meta: KernelMeta { name, registers, local_memory, workgroup_size },
            code: words.concat(),
        })
}

proptest! {
    #![proptest_config(config(2000))]

    #[test]
    fn instructions_round_trip(inst in any_instruction()) {
        let mut bytes = Vec::new();
        inst.encode_into(&mut bytes);
        prop_assert_eq!(bytes.len() as u32, inst.size());
        prop_assert_eq!(Instruction::decode(&bytes), Ok(inst));
    }

    #[test]
    fn random_code_never_panics(words in proptest::collection::vec(any::<u32>(), 0..64), tail in 0usize..4) {
        let mut code: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        code.extend(std::iter::repeat_n(0x3F, tail));
        let meta = KernelMeta { name: "k".into(), registers: 32, ..Default::default() };
        let _ = decode_code("k", &code);
        for encoding in [Encoding::Current, Encoding::Legacy012] {
            if let Ok(kernel) = build_kernel_in(meta.clone(), &code, encoding) {
                let _ = validate(&kernel);
                let _ = wave_isa::analysis::uniformity(&kernel);
            }
            let file = WbinFile { kernels: vec![WbinKernel { meta: meta.clone(), code: code.clone() }], encoding };
            let _ = disassemble(&file, DisasmOptions { offsets: true });
        }
    }

    /// Mostly-valid code: random instructions from the table, so trees actually get built.
    #[test]
    fn random_instruction_streams_never_panic(insts in proptest::collection::vec(any_instruction(), 0..48)) {
        let code = encode(&insts);
        let meta = KernelMeta { name: "k".into(), registers: 32, ..Default::default() };
        prop_assert!(decode_code("k", &code).is_ok());
        if let Ok(kernel) = build_kernel(meta.clone(), &code) {
            let _ = validate(&kernel);
            let _ = wave_isa::analysis::uniformity(&kernel);
        }
        let file = WbinFile { kernels: vec![WbinKernel { meta, code }], ..Default::default() };
        let text = disassemble(&file, DisasmOptions { offsets: true });
        prop_assert!(text.is_ok());
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = wbin::parse(&bytes);
        let _ = Module::from_bytes(&bytes);
        let mut with_magic = b"WAVE".to_vec();
        with_magic.extend_from_slice(&bytes);
        let _ = wbin::parse(&with_magic);
        let _ = Module::from_bytes(&with_magic);
    }
}

proptest! {
    #![proptest_config(config(500))]

    #[test]
    fn mutated_files_never_panic(
        file in proptest::collection::vec(any_kernel(), 0..4),
        strip in any::<bool>(),
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8),
        cut in any::<usize>(),
    ) {
        let mut bytes = wbin::write(&WbinFile { kernels: file, ..Default::default() }, strip);
        for (at, value) in edits {
            let len = bytes.len();
            bytes[at % len] = value;
        }
        let _ = wbin::parse(&bytes);
        let _ = Module::from_bytes(&bytes);
        bytes.truncate(cut % (bytes.len() + 1));
        let _ = wbin::parse(&bytes);
        let _ = Module::from_bytes(&bytes);
    }

    #[test]
    fn wbin_write_parse_round_trips(kernels in proptest::collection::vec(any_kernel(), 0..5)) {
        let file = WbinFile { kernels, ..Default::default() };
        let bytes = wbin::write(&file, false);
        let parsed = wbin::parse(&bytes).unwrap();
        prop_assert_eq!(&parsed, &file);
        prop_assert_eq!(wbin::write(&parsed, false), bytes);

        let stripped = wbin::parse(&wbin::write(&file, true)).unwrap();
        prop_assert_eq!(stripped.kernels.len(), file.kernels.len());
        for (i, (s, k)) in stripped.kernels.iter().zip(&file.kernels).enumerate() {
            prop_assert_eq!(&s.meta.name, &format!("kernel_{i}"));
            prop_assert_eq!((&s.code, s.meta.registers), (&k.code, k.meta.registers));
        }
    }

    /// Every instruction our disassembler prints assembles back to the same bytes.
    #[test]
    fn disassembly_reassembles(insts in proptest::collection::vec(assemblable_instruction(), 1..24)) {
        let code = encode(&well_nested(&insts));
        let meta = KernelMeta { name: "k".into(), registers: 256, ..Default::default() };
        let file = WbinFile { kernels: vec![WbinKernel { meta, code }], ..Default::default() };
        let text = disassemble(&file, DisasmOptions::default()).unwrap();
        let (_, back) = load_bytes(text.as_bytes(), "prop.wave").map_err(|e| TestCaseError::fail(format!("{text}\n{e}")))?;
        prop_assert_eq!(&back, &file, "{}", text);
        for inst in &insts {
            prop_assert!(!format_instruction(inst).is_empty());
        }
    }
}
