//! An independent transcription of wave-format.md §2.2 (typed by hand from the document, not
//! derived from `OPS`), compared with the opcode table in both directions.

use wave_isa::opcodes::{Op, OPS};

/// (mnemonic, opcode, modifier, size in bytes), in the order of the document's table.
const DOC: &[(&str, u8, u8, u8)] = &[
    ("iadd", 0x00, 0, 8),
    ("isub", 0x01, 0, 8),
    ("imul", 0x02, 0, 8),
    ("imul_hi", 0x03, 0, 8),
    ("imad", 0x04, 0, 8),
    ("idiv", 0x05, 0, 8),
    ("imod", 0x06, 0, 8),
    ("ineg", 0x07, 0, 4),
    ("iabs", 0x08, 0, 4),
    ("imin", 0x09, 0, 8),
    ("imax", 0x0A, 0, 8),
    ("iclamp", 0x0B, 0, 8),
    ("fadd", 0x10, 0, 8),
    ("fsub", 0x11, 0, 8),
    ("fmul", 0x12, 0, 8),
    ("fma", 0x13, 0, 8),
    ("fdiv", 0x14, 0, 8),
    ("fneg", 0x15, 0, 4),
    ("fabs", 0x16, 0, 4),
    ("fmin", 0x17, 0, 8),
    ("fmax", 0x18, 0, 8),
    ("fclamp", 0x19, 0, 8),
    ("fsqrt", 0x1A, 0, 4),
    ("frsqrt", 0x1B, 0, 4),
    ("frcp", 0x1B, 1, 4),
    ("ffloor", 0x1B, 2, 4),
    ("fceil", 0x1B, 3, 4),
    ("fround", 0x1B, 4, 4),
    ("ftrunc", 0x1B, 5, 4),
    ("ffract", 0x1B, 6, 4),
    ("fsat", 0x1B, 7, 4),
    ("fsin", 0x1B, 8, 4),
    ("fcos", 0x1B, 9, 4),
    ("fexp2", 0x1B, 10, 4),
    ("flog2", 0x1B, 11, 4),
    ("hadd", 0x1C, 0, 8),
    ("hsub", 0x1C, 1, 8),
    ("hmul", 0x1C, 2, 8),
    ("hma", 0x1C, 3, 8),
    ("hadd2", 0x1D, 0, 8),
    ("hmul2", 0x1D, 1, 8),
    ("hma2", 0x1D, 2, 8),
    ("dadd", 0x1E, 0, 8),
    ("dsub", 0x1E, 1, 8),
    ("dmul", 0x1E, 2, 8),
    ("dma", 0x1E, 3, 8),
    ("ddiv", 0x1F, 0, 8),
    ("dsqrt", 0x1F, 1, 4),
    ("and", 0x20, 0, 8),
    ("or", 0x21, 0, 8),
    ("xor", 0x22, 0, 8),
    ("not", 0x23, 0, 4),
    ("shl", 0x24, 0, 8),
    ("shr", 0x25, 0, 8),
    ("sar", 0x26, 0, 8),
    ("bitcount", 0x27, 0, 4),
    ("bitfind", 0x27, 1, 4),
    ("bitrev", 0x27, 2, 4),
    ("bfe", 0x27, 3, 8),
    ("bfi", 0x27, 4, 8),
    ("icmp_eq", 0x28, 0, 8),
    ("icmp_ne", 0x28, 1, 8),
    ("icmp_lt", 0x28, 2, 8),
    ("icmp_le", 0x28, 3, 8),
    ("icmp_gt", 0x28, 4, 8),
    ("icmp_ge", 0x28, 5, 8),
    ("ucmp_lt", 0x29, 2, 8),
    ("ucmp_le", 0x29, 3, 8),
    ("fcmp_eq", 0x2A, 0, 8),
    ("fcmp_ne", 0x2A, 1, 8),
    ("fcmp_lt", 0x2A, 2, 8),
    ("fcmp_le", 0x2A, 3, 8),
    ("fcmp_gt", 0x2A, 4, 8),
    ("fcmp_ord", 0x2A, 6, 8),
    ("fcmp_unord", 0x2A, 7, 8),
    ("select", 0x2B, 0, 8),
    ("cvt_f32_i32", 0x2C, 0, 4),
    ("cvt_f32_u32", 0x2C, 1, 4),
    ("cvt_i32_f32", 0x2C, 2, 4),
    ("cvt_u32_f32", 0x2C, 3, 4),
    ("cvt_f32_f16", 0x2C, 4, 4),
    ("cvt_f16_f32", 0x2C, 5, 4),
    ("cvt_f32_f64", 0x2C, 6, 4),
    ("cvt_f64_f32", 0x2C, 7, 4),
    ("cvt_f32_bf16", 0x2C, 8, 4),
    ("cvt_bf16_f32", 0x2C, 9, 4),
    ("badd", 0x2D, 0, 8),
    ("bsub", 0x2D, 1, 8),
    ("bmul", 0x2D, 2, 8),
    ("bma", 0x2D, 3, 8),
    ("badd2", 0x2E, 0, 8),
    ("bmul2", 0x2E, 1, 8),
    ("bma2", 0x2E, 2, 8),
    ("local_load_u8", 0x30, 0, 4),
    ("local_load_u16", 0x30, 1, 4),
    ("local_load_u32", 0x30, 2, 4),
    ("local_load_u64", 0x30, 3, 4),
    ("local_store_u8", 0x31, 0, 8),
    ("local_store_u16", 0x31, 1, 8),
    ("local_store_u32", 0x31, 2, 8),
    ("local_store_u64", 0x31, 3, 8),
    ("device_load_u8", 0x38, 0, 4),
    ("device_load_u16", 0x38, 1, 4),
    ("device_load_u32", 0x38, 2, 4),
    ("device_load_u64", 0x38, 3, 4),
    ("device_load_u128", 0x38, 4, 4),
    ("device_store_u8", 0x39, 0, 8),
    ("device_store_u16", 0x39, 1, 8),
    ("device_store_u32", 0x39, 2, 8),
    ("device_store_u64", 0x39, 3, 8),
    ("device_store_u128", 0x39, 4, 8),
    ("local_atomic_add", 0x3C, 0, 8),
    ("local_atomic_sub", 0x3C, 1, 8),
    ("local_atomic_min", 0x3C, 2, 8),
    ("local_atomic_max", 0x3C, 3, 8),
    ("local_atomic_and", 0x3C, 4, 8),
    ("local_atomic_or", 0x3C, 5, 8),
    ("local_atomic_xor", 0x3C, 6, 8),
    ("local_atomic_exchange", 0x3C, 7, 8),
    ("local_atomic_cas", 0x3C, 8, 8),
    ("atomic_add", 0x3D, 0, 8),
    ("atomic_sub", 0x3D, 1, 8),
    ("atomic_min", 0x3D, 2, 8),
    ("atomic_max", 0x3D, 3, 8),
    ("atomic_and", 0x3D, 4, 8),
    ("atomic_or", 0x3D, 5, 8),
    ("atomic_xor", 0x3D, 6, 8),
    ("atomic_exchange", 0x3D, 7, 8),
    ("atomic_cas", 0x3D, 8, 8),
    ("wave_shuffle", 0x3E, 0, 8),
    ("wave_shuffle_up", 0x3E, 1, 8),
    ("wave_shuffle_down", 0x3E, 2, 8),
    ("wave_shuffle_xor", 0x3E, 3, 8),
    ("wave_broadcast", 0x3E, 4, 8),
    ("wave_ballot", 0x3E, 5, 4),
    ("wave_any", 0x3E, 6, 4),
    ("wave_all", 0x3E, 7, 4),
    ("wave_prefix_sum", 0x3E, 8, 4),
    ("wave_reduce_add", 0x3E, 9, 4),
    ("wave_reduce_min", 0x3E, 10, 4),
    ("wave_reduce_max", 0x3E, 11, 4),
    ("if", 0x3F, 0, 4),
    ("else", 0x3F, 1, 4),
    ("endif", 0x3F, 2, 4),
    ("loop", 0x3F, 3, 4),
    ("break", 0x3F, 4, 4),
    ("continue", 0x3F, 5, 4),
    ("endloop", 0x3F, 6, 4),
    ("call", 0x3F, 7, 8),
    ("return", 0x3F, 8, 4),
    ("halt", 0x3F, 9, 4),
    ("barrier", 0x3F, 10, 4),
    ("fence_acquire", 0x3F, 11, 8),
    ("fence_release", 0x3F, 12, 8),
    ("fence_acq_rel", 0x3F, 13, 8),
    ("wait", 0x3F, 14, 4),
    ("nop", 0x3F, 15, 4),
    ("mma_load_a", 0x40, 0, 8),
    ("mma_load_b", 0x40, 1, 8),
    ("mma_store_c", 0x40, 2, 8),
    ("mma_compute", 0x40, 3, 8),
    ("mov", 0x41, 0, 4),
    ("mov_imm", 0x41, 1, 8),
    ("mov_sr", 0x41, 2, 4),
];

#[test]
fn every_documented_instruction_is_in_the_table() {
    for &(mnemonic, opcode, modifier, size) in DOC {
        let op = Op::from_mnemonic(mnemonic).unwrap_or_else(|| panic!("`{mnemonic}` missing from OPS"));
        let info = op.info();
        assert_eq!(
            (info.opcode, info.modifier, info.size),
            (opcode, modifier, size),
            "`{mnemonic}`: table says opcode/modifier/size {:#04x}/{}/{}, the document {:#04x}/{}/{}",
            info.opcode,
            info.modifier,
            info.size,
            opcode,
            modifier,
            size
        );
        assert_eq!(Op::from_encoding(opcode, modifier), Some(op), "`{mnemonic}` does not decode back");
    }
}

#[test]
fn every_table_entry_is_documented() {
    for info in OPS {
        assert!(
            DOC.iter()
                .any(|&(m, o, md, s)| m == info.mnemonic
                    && (o, md, s) == (info.opcode, info.modifier, info.size)),
            "`{}` ({:#04x}/{}) is in OPS but not in wave-format.md §2.2",
            info.mnemonic,
            info.opcode,
            info.modifier
        );
    }
    assert_eq!(DOC.len(), OPS.len());
}

#[test]
fn undocumented_encodings_do_not_decode() {
    for opcode in 0..=255u8 {
        for modifier in 0..16u8 {
            let documented = DOC.iter().any(|&(_, o, m, _)| (o, m) == (opcode, modifier));
            assert_eq!(
                Op::from_encoding(opcode, modifier).is_some(),
                documented,
                "encoding {opcode:#04x}/{modifier}"
            );
        }
    }
}

/// Word0's low nibble for a guard, as wave-format.md §2.1 lays it out (bit 2 negate, bits 1..0
/// predicate, 0,0 = unpredicated) plus the predicate-enable bit 3 of semantics.md B.1 #1, set
/// only where the reference's bits cannot express the guard: `@p0`.
fn documented_guard_bits(guard: Option<(u8, bool)>) -> u32 {
    match guard {
        None => 0,
        Some((0, false)) => 0b1000,
        Some((index, negated)) => (u32::from(negated) << 2) | index as u32,
    }
}

/// Every predicable instruction, with all operands zero and each guard, assembles to the
/// words the document gives: opcode and modifier from the transcription above, the guard
/// bits from the layout, everything else zero.
#[test]
fn predicated_instructions_assemble_to_the_documented_words() {
    use wave_isa::opcodes::Kind;
    let guards: Vec<Option<(u8, bool)>> =
        std::iter::once(None).chain((0..4).flat_map(|i| [Some((i, false)), Some((i, true))])).collect();
    let mut checked = 0;
    for &(mnemonic, opcode, modifier, size) in DOC {
        let op = Op::from_mnemonic(mnemonic).unwrap();
        if op.is_structural() || op == Op::Call {
            continue; // not predicable
        }
        let operands: Vec<&str> = op
            .operands()
            .iter()
            .map(|spec| match spec.kind {
                Kind::Pred => "p0",
                Kind::Special => "sr_thread_id_x",
                Kind::Imm => "0",
                Kind::Scope => ".wave",
                Kind::Target => unreachable!("call is skipped"),
                _ => "r0",
            })
            .collect();
        for &guard in &guards {
            let prefix = guard.map_or(String::new(), |(i, n)| format!("@{}p{i} ", if n { "!" } else { "" }));
            let src = format!(".kernel k\n    {prefix}{mnemonic} {}\n.end\n", operands.join(", "));
            let file = wave_isa::asm::assemble(&src, "k.wave").unwrap_or_else(|d| panic!("{d}")).file;
            let mut expected =
                ((opcode as u32) << 24 | (modifier as u32) << 4 | documented_guard_bits(guard))
                    .to_le_bytes()
                    .to_vec();
            if size == 8 {
                expected.extend_from_slice(&[0; 4]);
            }
            assert_eq!(file.kernels[0].code, expected, "{}", src.lines().nth(1).unwrap());
            checked += 1;
        }
    }
    assert!(checked > 1000, "{checked}");
}
