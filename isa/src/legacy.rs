//! The instruction encoding of the 0.1.2 toolchain published on crates.io (`wave-asm`,
//! `wave-compiler`, read by `wave-emu` 0.1.2 and used by the `wave-gpu` 0.1.2 SDK), decoded to
//! the same [`Instruction`]s as the current encoding ([`Instruction::decode`]), so that
//! nothing after the decoder knows which encoding a kernel came from.
//!
//! Layout (from the sources of `wave-decode` 0.1.2, which `wave-emu` 0.1.2 decodes with):
//! `word0 = opcode[31:26] rd[25:21] rs1[20:16] rs2[15:11] modifier[10:7] scope[6:5]
//! predicate[4:3] negate[2] flags[1:0]`; an optional word1 holds `rs3[31:27] rs4[26:22]`, an
//! immediate or a call target. Opcode numbers are those of the current encoding's first 64
//! opcodes (no bf16, no MMA); `mov`/`mov_imm`/`mov_sr` share opcode 0x3F with control flow,
//! told apart by the flags (1 = sync op, 2 = misc op, else control op). Which instructions
//! have a word1 is decided by opcode and modifier, as `wave-decode` decides it.
//!
//! Each old instruction becomes the op whose behaviour wave-emu 0.1.2 gives it, which is not
//! always the op its name says:
//! - `cvt` modifiers 0..3 execute with source and destination types swapped relative to their
//!   names: modifier 0 (`cvt_f32_i32`) converts f32 → i32, so it becomes
//!   [`Op::CvtI32F32`]; 1 → [`Op::CvtU32F32`], 2 → [`Op::CvtF32I32`], 3 → [`Op::CvtF32U32`];
//! - a compare whose modifier the emulator decodes but does not implement (`icmp` 6/7,
//!   `ucmp` other than 2/3, `fcmp` 5) writes false: it becomes `icmp_ne pD, rA, rA`;
//! - a compare-and-swap (modifier 8, word1 = rs3) compares memory with rs3 and stores rs2:
//!   it becomes CAS with expected = rs3 and desired = rs2;
//! - `local_load`/`local_store` with the 128-bit modifier (4) access 32 bits;
//! - `select` keeps its predicate in the rs1 field and its second source in the modifier
//!   field;
//! - `mov_sr` of an index above 15 reads 0: it becomes `mov_imm rD, 0`.
//!
//! Fields an instruction does not use, cache hints (flags of non-control words) and the scope
//! of ops without one are dropped. Register fields are 5 bits, so registers are r0..r31 and
//! predicate fields may name p4..p31, which the validator rejects.

use crate::instr::{DecodeError, Instruction, PredRef};
use crate::opcodes::{Op, Scope};

/// Word0 flags of opcode 0x3F: a sync op (`return`, `halt`, `barrier`, fences, `wait`, `nop`).
const SYNC_FLAG: u32 = 1;
/// Word0 flags of opcode 0x3F: a misc op (`mov`, `mov_imm`, `mov_sr`).
const MISC_FLAG: u32 = 2;
/// Highest special-register index wave-emu 0.1.2 knows; above it `mov_sr` reads 0.
const LAST_SPECIAL: u8 = 15;

/// The fields of an old word0.
#[derive(Clone, Copy)]
struct Word0 {
    opcode: u8,
    rd: u8,
    rs1: u8,
    rs2: u8,
    modifier: u8,
    scope: u32,
    flags: u32,
}

impl Word0 {
    fn new(w0: u32) -> Word0 {
        let field = |shift: u32| ((w0 >> shift) & 0x1F) as u8;
        Word0 {
            opcode: (w0 >> 26) as u8,
            rd: field(21),
            rs1: field(16),
            rs2: field(11),
            modifier: ((w0 >> 7) & 0xF) as u8,
            scope: (w0 >> 5) & 3,
            flags: w0 & 3,
        }
    }
}

/// Where an old instruction keeps its operands, i.e. which fields of [`Instruction`] to fill.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    /// Nothing (`else`, `halt`, ...).
    Plain,
    /// rd, rs1.
    Two,
    /// rd, rs1, rs2 (a compare's rd is its destination predicate).
    Three,
    /// rd, rs1, rs2 in word0, rs3 in word1.
    Four,
    /// rd, rs1, rs2 in word0, rs3 and rs4 in word1 (`bfi`).
    Five,
    /// rs1 (address), rs2 (value); the rd field is ignored.
    Store,
    /// rd (0 = no return), rs1, rs2, and the word0 scope for device atomics.
    Atomic,
    /// Compare-and-swap: rd, rs1, rs2 (desired) in word0, rs3 (expected) in word1.
    Cas,
    /// A compare the emulator does not implement: always false.
    CompareFalse,
    /// rd, predicate in rs1, sources in rs2 and the modifier field.
    PredicatedSelect,
    /// Predicate in rs1 (`if`, `break`, `continue`).
    PredicateOperand,
    /// Scope from word0 (fences).
    Fence,
    /// Target in word1.
    Target,
    /// rd, immediate in word1.
    Immediate,
    /// rd, special register in rs1.
    Special,
}

/// The op and operand form of an old (opcode, modifier, flags), and whether a word1 follows.
fn classify(w: Word0, has_next_word: bool) -> Option<(Op, Form)> {
    use Form::*;
    use Op::*;
    let m = w.modifier;
    let pick = |ops: &[Op]| ops.get(m as usize).copied();
    Some(match w.opcode {
        0x00 => (Iadd, Three),
        0x01 => (Isub, Three),
        0x02 => (Imul, Three),
        0x03 => (ImulHi, Three),
        0x04 => (Imad, Four),
        0x05 => (Idiv, Three),
        0x06 => (Imod, Three),
        0x07 => (Ineg, Two),
        0x08 => (Iabs, Two),
        0x09 => (Imin, Three),
        0x0A => (Imax, Three),
        0x0B => (Iclamp, Four),
        0x10 => (Fadd, Three),
        0x11 => (Fsub, Three),
        0x12 => (Fmul, Three),
        0x13 => (Fma, Four),
        0x14 => (Fdiv, Three),
        0x15 => (Fneg, Two),
        0x16 => (Fabs, Two),
        0x17 => (Fmin, Three),
        0x18 => (Fmax, Three),
        0x19 => (Fclamp, Four),
        0x1A => (Fsqrt, Two),
        0x1B => {
            let ops = [Frsqrt, Frcp, Ffloor, Fceil, Fround, Ftrunc, Ffract, Fsat, Fsin, Fcos, Fexp2, Flog2];
            (pick(&ops)?, Two)
        }
        0x1C => (pick(&[Hadd, Hsub, Hmul, Hma])?, if m == 3 { Four } else { Three }),
        0x1D => (pick(&[Hadd2, Hmul2, Hma2])?, if m == 2 { Four } else { Three }),
        0x1E => (pick(&[Dadd, Dsub, Dmul, Dma])?, if m == 3 { Four } else { Three }),
        0x1F => (pick(&[Ddiv, Dsqrt])?, if m == 0 { Three } else { Two }),
        0x20 => (And, Three),
        0x21 => (Or, Three),
        0x22 => (Xor, Three),
        0x23 => (Not, Two),
        0x24 => (Shl, Three),
        0x25 => (Shr, Three),
        0x26 => (Sar, Three),
        0x27 => match m {
            0..=2 => (pick(&[Bitcount, Bitfind, Bitrev])?, Two),
            3 => (Bfe, Four),
            4 => (Bfi, Five),
            _ => return None,
        },
        // wave-decode accepts modifiers 0..7 on every compare; wave-emu implements fewer.
        0x28 => match m {
            0..=5 => (pick(&[IcmpEq, IcmpNe, IcmpLt, IcmpLe, IcmpGt, IcmpGe])?, Three),
            6 | 7 => (IcmpNe, CompareFalse),
            _ => return None,
        },
        0x29 => match m {
            2 => (UcmpLt, Three),
            3 => (UcmpLe, Three),
            0..=7 => (IcmpNe, CompareFalse),
            _ => return None,
        },
        0x2A => match m {
            0..=4 => (pick(&[FcmpEq, FcmpNe, FcmpLt, FcmpLe, FcmpGt])?, Three),
            5 => (IcmpNe, CompareFalse),
            6 => (FcmpOrd, Three),
            7 => (FcmpUnord, Three),
            _ => return None,
        },
        0x2B => (Select, PredicatedSelect),
        // Executed with the types swapped relative to the names (see the module comment).
        0x2C => {
            let ops =
                [CvtI32F32, CvtU32F32, CvtF32I32, CvtF32U32, CvtF32F16, CvtF16F32, CvtF32F64, CvtF64F32];
            (pick(&ops)?, Two)
        }
        // No 128-bit local access: the emulator falls back to 32 bits.
        0x30 => (pick(&[LocalLoadU8, LocalLoadU16, LocalLoadU32, LocalLoadU64, LocalLoadU32])?, Two),
        0x31 => (pick(&[LocalStoreU8, LocalStoreU16, LocalStoreU32, LocalStoreU64, LocalStoreU32])?, Store),
        0x38 => (pick(&[DeviceLoadU8, DeviceLoadU16, DeviceLoadU32, DeviceLoadU64, DeviceLoadU128])?, Two),
        0x39 => {
            let ops = [DeviceStoreU8, DeviceStoreU16, DeviceStoreU32, DeviceStoreU64, DeviceStoreU128];
            (pick(&ops)?, Store)
        }
        0x3C | 0x3D => {
            let local = w.opcode == 0x3C;
            // CAS needs its word1; without one wave-decode rejects modifier 8.
            if m == 8 && has_next_word {
                (if local { LocalAtomicCas } else { AtomicCas }, Cas)
            } else if local {
                let ops = [
                    LocalAtomicAdd,
                    LocalAtomicSub,
                    LocalAtomicMin,
                    LocalAtomicMax,
                    LocalAtomicAnd,
                    LocalAtomicOr,
                    LocalAtomicXor,
                    LocalAtomicExchange,
                ];
                (pick(&ops)?, Atomic)
            } else {
                let ops = [
                    AtomicAdd,
                    AtomicSub,
                    AtomicMin,
                    AtomicMax,
                    AtomicAnd,
                    AtomicOr,
                    AtomicXor,
                    AtomicExchange,
                ];
                (pick(&ops)?, Atomic)
            }
        }
        0x3E => match m {
            0..=4 => {
                (pick(&[WaveShuffle, WaveShuffleUp, WaveShuffleDown, WaveShuffleXor, WaveBroadcast])?, Three)
            }
            5 => (WaveBallot, Two),
            6 => (WaveAny, Two),
            7 => (WaveAll, Two),
            8..=11 => ([WavePrefixSum, WaveReduceAdd, WaveReduceMin, WaveReduceMax][m as usize - 8], Two),
            _ => return None,
        },
        0x3F if w.flags & SYNC_FLAG != 0 => match m {
            0..=2 => (pick(&[Return, Halt, Barrier])?, Plain),
            3..=5 => ([FenceAcquire, FenceRelease, FenceAcqRel][m as usize - 3], Fence),
            6 => (Wait, Plain),
            7 => (Nop, Plain),
            _ => return None,
        },
        0x3F if w.flags & MISC_FLAG != 0 => match m {
            0 => (Mov, Two),
            1 => (MovImm, Immediate),
            2 => (MovSr, Special),
            _ => return None,
        },
        0x3F => match m {
            0 => (If, PredicateOperand),
            1 => (Else, Plain),
            2 => (Endif, Plain),
            3 => (Loop, Plain),
            4 => (Break, PredicateOperand),
            5 => (Continue, PredicateOperand),
            6 => (Endloop, Plain),
            7 => (Call, Target),
            _ => return None,
        },
        _ => return None,
    })
}

/// Whether wave-decode 0.1.2 knows the opcode (to tell "unknown opcode" from "unknown modifier").
fn opcode_exists(opcode: u8) -> bool {
    matches!(opcode, 0x00..=0x0B | 0x10..=0x2C | 0x30 | 0x31 | 0x38 | 0x39 | 0x3C..=0x3F)
}

/// Decode the old-encoding instruction at `code[0..]`: the instruction and its size in bytes.
pub fn decode(code: &[u8]) -> Result<(Instruction, u32), DecodeError> {
    let word = |at: usize| code.get(at..at + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    let w0 = word(0).unwrap_or(0);
    let w1 = word(4);
    let w = Word0::new(w0);
    let (op, form) = classify(w, w1.is_some()).ok_or(if opcode_exists(w.opcode) {
        DecodeError::UnknownModifier { opcode: w.opcode, modifier: w.modifier }
    } else {
        DecodeError::UnknownOpcode { opcode: w.opcode }
    })?;
    let has_word1 = matches!(form, Form::Four | Form::Five | Form::Cas | Form::Target | Form::Immediate);
    let w1 = if has_word1 { w1.ok_or(DecodeError::Truncated { op })? } else { 0 };
    let (rs3, rs4) = (((w1 >> 27) & 0x1F) as u8, ((w1 >> 22) & 0x1F) as u8);

    let mut inst = Instruction::new(op);
    let (predicate, negated) = (((w0 >> 3) & 3) as u8, w0 & 4 != 0);
    inst.guard = (predicate != 0 || negated).then_some(PredRef { index: predicate, negated });
    match form {
        Form::Plain => {}
        Form::Two => (inst.rd, inst.rs1) = (w.rd, w.rs1),
        Form::Three => (inst.rd, inst.rs1, inst.rs2) = (w.rd, w.rs1, w.rs2),
        Form::Four => (inst.rd, inst.rs1, inst.rs2, inst.rs3) = (w.rd, w.rs1, w.rs2, rs3),
        Form::Five => (inst.rd, inst.rs1, inst.rs2, inst.rs3, inst.rs4) = (w.rd, w.rs1, w.rs2, rs3, rs4),
        Form::Store => (inst.rs1, inst.rs2) = (w.rs1, w.rs2),
        Form::Atomic | Form::Cas => {
            (inst.rd, inst.rs1, inst.rs2) = (w.rd, w.rs1, w.rs2);
            if form == Form::Cas {
                // The emulator compares with rs3 and stores rs2.
                (inst.rs2, inst.rs3) = (rs3, w.rs2);
            }
            if op.operands().iter().any(|s| s.kind == crate::opcodes::Kind::Scope) {
                inst.scope = Scope::from_bits(w.scope);
            }
        }
        Form::CompareFalse => (inst.rd, inst.rs1, inst.rs2) = (w.rd, w.rs1, w.rs1),
        Form::PredicatedSelect => (inst.rd, inst.rs1, inst.rs2, inst.rs3) = (w.rd, w.rs1, w.rs2, w.modifier),
        Form::PredicateOperand => inst.rs1 = w.rs1,
        Form::Fence => inst.scope = Scope::from_bits(w.scope),
        Form::Target => inst.imm = w1,
        Form::Immediate => (inst.rd, inst.imm) = (w.rd, w1),
        Form::Special if w.rs1 > LAST_SPECIAL => {
            // wave-emu reads 0 for special registers it does not know.
            inst.op = Op::MovImm;
            inst.rd = w.rd;
        }
        Form::Special => (inst.rd, inst.rs1) = (w.rd, w.rs1),
    }
    let size = if has_word1 { 8 } else { 4 };
    Ok((inst, size))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An old word0, laid out as wave-asm 0.1.2 writes it.
    fn word(opcode: u32, rd: u32, rs1: u32, rs2: u32, modifier: u32, flags: u32) -> u32 {
        opcode << 26 | rd << 21 | rs1 << 16 | rs2 << 11 | modifier << 7 | flags
    }

    fn one(words: &[u32]) -> (Instruction, u32) {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        decode(&bytes).unwrap()
    }

    #[test]
    fn words_written_by_wave_asm() {
        // `mov r0, sr_thread_id_x` as the crates.io wave-asm writes it (format_reference_compat).
        let (i, size) = one(&[0xFC00_0102]);
        assert_eq!((i.op, i.rd, i.rs1, size), (Op::MovSr, 0, 0, 4));
        // `select r5, p1, r3, r4`: 0xACA11A00 (wave-asm 0.1.2 output).
        let (i, _) = one(&[0xACA1_1A00]);
        assert_eq!((i.op, i.rd, i.rs1, i.rs2, i.rs3), (Op::Select, 5, 1, 3, 4));
        // `@p1 iadd r3, r1, r4` and `@!p0 iadd r3, r1, r4`.
        let (i, size) = one(&[0x0061_2008]);
        assert_eq!((i.op, i.rd, i.rs1, i.rs2, size), (Op::Iadd, 3, 1, 4, 4));
        assert_eq!(i.guard, Some(PredRef { index: 1, negated: false }));
        assert_eq!(one(&[0x0061_2004]).0.guard, Some(PredRef { index: 0, negated: true }));
        // `fma r7, r1, r2, r3`: rs3 in word1 bits 31..27.
        let (i, size) = one(&[0x4CE1_1000, 0x1800_0000]);
        assert_eq!((i.op, i.rd, i.rs1, i.rs2, i.rs3, size), (Op::Fma, 7, 1, 2, 3, 8));
        // `halt`: opcode 0x3F, modifier 1, sync flag.
        assert_eq!(one(&[0xFC00_0081]).0.op, Op::Halt);
    }

    #[test]
    fn ops_take_the_behaviour_wave_emu_gives_them() {
        let cvt = |m| one(&[word(0x2C, 1, 2, 0, m, 0)]).0.op;
        assert_eq!(
            [cvt(0), cvt(1), cvt(2), cvt(3)],
            [Op::CvtI32F32, Op::CvtU32F32, Op::CvtF32I32, Op::CvtF32U32]
        );
        let (i, _) = one(&[word(0x2A, 2, 5, 6, 5, 0)]);
        assert_eq!((i.op, i.rd, i.rs1, i.rs2), (Op::IcmpNe, 2, 5, 5), "fcmp modifier 5 writes false");
        let (i, size) = one(&[word(0x3D, 4, 1, 2, 8, 0) | 2 << 5, 3 << 27]);
        assert_eq!(
            (i.op, i.rd, i.rs1, i.rs2, i.rs3, i.scope, size),
            (Op::AtomicCas, 4, 1, 3, 2, Scope::Device, 8)
        );
        assert_eq!(one(&[word(0x30, 1, 2, 0, 4, 0)]).0.op, Op::LocalLoadU32);
        let (i, _) = one(&[word(0x3F, 3, 17, 0, 2, MISC_FLAG)]);
        assert_eq!((i.op, i.rd, i.imm), (Op::MovImm, 3, 0), "unknown special registers read 0");
    }

    #[test]
    fn errors() {
        let err = |words: &[u32]| {
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            decode(&bytes).unwrap_err()
        };
        assert_eq!(err(&[word(0x0C, 0, 0, 0, 0, 0)]), DecodeError::UnknownOpcode { opcode: 0x0C });
        assert_eq!(
            err(&[word(0x2C, 0, 0, 0, 8, 0)]),
            DecodeError::UnknownModifier { opcode: 0x2C, modifier: 8 }
        );
        assert_eq!(
            err(&[word(0x3F, 0, 0, 0, 8, SYNC_FLAG)]),
            DecodeError::UnknownModifier { opcode: 0x3F, modifier: 8 }
        );
        assert_eq!(err(&[word(0x04, 1, 2, 3, 0, 0)]), DecodeError::Truncated { op: Op::Imad });
        // CAS at the end of the code: modifier 8 without a word1 is no atomic op at all.
        assert_eq!(
            err(&[word(0x3C, 1, 2, 3, 8, 0)]),
            DecodeError::UnknownModifier { opcode: 0x3C, modifier: 8 }
        );
    }
}
