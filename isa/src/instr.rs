//! One decoded instruction, and its encoding to and from words. Driven by the opcode table.

use crate::opcodes::{Frag, Kind, Op, OperandSpec, Role, Scope, Slot};
use std::fmt;

/// Word0 bit 3: our predicate-enable bit (semantics.md B.1 #1). The reference leaves it 0, so
/// `@p0` (predicate bits 0) would mean "unpredicated"; our assembler sets the bit for `@p0`
/// only, where it is needed, and every other guard encodes exactly as the reference's.
pub const PRED_ENABLE_BIT: u32 = 1 << 3;
/// Word0 bit 2: negate the guard predicate.
pub const PRED_NEGATE_BIT: u32 = 1 << 2;
/// Bit 7 of the predicate in the rs1 slot of `if`/`break`/`continue`: `if !p1` (our extension;
/// the reference assembler cannot write a negated structural predicate).
pub const STRUCT_PRED_NEGATE: u8 = 0x80;

/// A predicate reference `pN` or `!pN`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PredRef {
    pub index: u8,
    pub negated: bool,
}

impl fmt::Display for PredRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}p{}", if self.negated { "!" } else { "" }, self.index)
    }
}

/// A typed operand value, in assembly order (see [`Instruction::operands`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    Reg(u8),
    Pair(u8),
    Quad(u8),
    Pred(u8),
    Special(u8),
    Imm(u32),
    Scope(Scope),
    Target(u32),
    Fragment(u8),
}

/// A register or predicate an instruction names (see [`Instruction::named_state`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StateRef {
    /// A register index (may exceed 255 for the tail of a pair or quad at the top).
    Reg(u32),
    Pred(u8),
}

/// One instruction with its raw fields. Fields an op does not use are 0.
///
/// The raw fields make encode(decode(x)) == x for every valid word pair; the typed view is
/// [`Instruction::operands`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Instruction {
    pub op: Op,
    /// Guard predicate (`@pN` / `@!pN`), `None` when unpredicated.
    pub guard: Option<PredRef>,
    pub rd: u8,
    pub rs1: u8,
    pub rs2: u8,
    pub rs3: u8,
    pub rs4: u8,
    pub scope: Scope,
    /// word1 for ops whose word1 is a raw value (`mov_imm`, `call`), else 0.
    pub imm: u32,
    /// The guard is encoded with the predicate-enable bit although it does not need it (a guard
    /// other than `@p0`; written `@p1.enable`). Binaries may carry the bit on any guard; this
    /// keeps their bytes through decode and encode. Meaningless without a guard.
    pub explicit_enable: bool,
}

/// Why two words do not form an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    UnknownOpcode {
        opcode: u8,
    },
    UnknownModifier {
        opcode: u8,
        modifier: u8,
    },
    /// An 8-byte instruction whose word1 is missing (code ends after word0).
    Truncated {
        op: Op,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::UnknownOpcode { opcode } => write!(f, "unknown opcode 0x{opcode:02x}"),
            DecodeError::UnknownModifier { opcode, modifier } => {
                write!(f, "unknown modifier {modifier} for opcode 0x{opcode:02x}")
            }
            DecodeError::Truncated { op } => {
                write!(f, "instruction `{}` cut off: its second word is missing", op.mnemonic())
            }
        }
    }
}

impl Instruction {
    /// An instruction with every field zero.
    pub fn new(op: Op) -> Instruction {
        Instruction {
            op,
            guard: None,
            rd: 0,
            rs1: 0,
            rs2: 0,
            rs3: 0,
            rs4: 0,
            scope: Scope::Wave,
            imm: 0,
            explicit_enable: false,
        }
    }

    pub fn size(&self) -> u32 {
        self.op.size()
    }

    /// Decode the instruction starting at `code[0..]`.
    pub fn decode(code: &[u8]) -> Result<Instruction, DecodeError> {
        let w0 = read_word(code, 0).unwrap_or(0);
        let opcode = (w0 >> 24) as u8;
        let modifier = ((w0 >> 4) & 0xF) as u8;
        let op = Op::from_encoding(opcode, modifier).ok_or(if Op::opcode_exists(opcode) {
            DecodeError::UnknownModifier { opcode, modifier }
        } else {
            DecodeError::UnknownOpcode { opcode }
        })?;
        let w1 = if op.size() == 8 { read_word(code, 4).ok_or(DecodeError::Truncated { op })? } else { 0 };
        // Predicated iff the enable bit is set or the predicate bits are not all zero.
        let pred_bits = w0 & 7;
        let enable = w0 & PRED_ENABLE_BIT != 0;
        let guard = (enable || pred_bits != 0)
            .then_some(PredRef { index: (w0 & 3) as u8, negated: w0 & PRED_NEGATE_BIT != 0 });
        let raw_word1 = op.operands().iter().any(|o| o.slot == Slot::Word1);
        let mut inst = Instruction {
            op,
            guard,
            rd: (w0 >> 16) as u8,
            rs1: (w0 >> 8) as u8,
            rs2: 0,
            rs3: 0,
            rs4: 0,
            scope: Scope::Wave,
            imm: 0,
            explicit_enable: enable && pred_bits != 0,
        };
        if raw_word1 {
            inst.imm = w1;
        } else {
            inst.rs2 = (w1 >> 24) as u8;
            inst.rs3 = (w1 >> 16) as u8;
            inst.rs4 = (w1 >> 8) as u8;
            inst.scope = Scope::from_bits(w1);
        }
        Ok(inst)
    }

    /// The instruction's words: `(word0, Some(word1))` for 8-byte instructions.
    pub fn encode_words(&self) -> (u32, Option<u32>) {
        let info = self.op.info();
        let mut w0 = (info.opcode as u32) << 24
            | (self.rd as u32) << 16
            | (self.rs1 as u32) << 8
            | (info.modifier as u32) << 4;
        if let Some(g) = self.guard {
            w0 |= g.index as u32 & 3;
            if g.negated {
                w0 |= PRED_NEGATE_BIT;
            }
            // Only `@p0` needs the bit: its predicate bits are all zero.
            if self.explicit_enable || w0 & 7 == 0 {
                w0 |= PRED_ENABLE_BIT;
            }
        }
        let w1 = (info.size == 8).then(|| {
            if info.operands.iter().any(|o| o.slot == Slot::Word1) {
                self.imm
            } else {
                (self.rs2 as u32) << 24 | (self.rs3 as u32) << 16 | (self.rs4 as u32) << 8 | self.scope as u32
            }
        });
        (w0, w1)
    }

    /// Append the instruction's little-endian bytes to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let (w0, w1) = self.encode_words();
        out.extend_from_slice(&w0.to_le_bytes());
        if let Some(w1) = w1 {
            out.extend_from_slice(&w1.to_le_bytes());
        }
    }

    /// The raw value of the field an operand lives in.
    pub fn slot_value(&self, slot: Slot) -> u32 {
        match slot {
            Slot::Rd => self.rd as u32,
            Slot::Rs1 => self.rs1 as u32,
            Slot::Rs2 => self.rs2 as u32,
            Slot::Rs3 => self.rs3 as u32,
            Slot::Rs4 => self.rs4 as u32,
            Slot::Scope => self.scope as u32,
            Slot::Word1 => self.imm,
        }
    }

    /// Set the field an operand lives in (values are truncated to the field width).
    pub fn set_slot(&mut self, slot: Slot, value: u32) {
        match slot {
            Slot::Rd => self.rd = value as u8,
            Slot::Rs1 => self.rs1 = value as u8,
            Slot::Rs2 => self.rs2 = value as u8,
            Slot::Rs3 => self.rs3 = value as u8,
            Slot::Rs4 => self.rs4 = value as u8,
            Slot::Scope => self.scope = Scope::from_bits(value),
            Slot::Word1 => self.imm = value,
        }
    }

    /// The typed value of one operand.
    pub fn operand(&self, spec: &OperandSpec) -> Operand {
        let v = self.slot_value(spec.slot);
        match spec.kind {
            Kind::Reg => Operand::Reg(v as u8),
            Kind::Pair => Operand::Pair(v as u8),
            Kind::Quad => Operand::Quad(v as u8),
            Kind::Pred => Operand::Pred(v as u8),
            Kind::Special => Operand::Special(v as u8),
            Kind::Imm => Operand::Imm(v),
            Kind::Scope => Operand::Scope(Scope::from_bits(v)),
            Kind::Target => Operand::Target(v),
            Kind::Fragment(_) => Operand::Fragment(v as u8),
        }
    }

    /// The fragment id this MMA instruction names in `table`, if it names one.
    pub fn fragment(&self, table: Frag) -> Option<u8> {
        self.op.fragment_slot(table).map(|slot| self.slot_value(slot) as u8)
    }

    /// Typed operands in assembly order, paired with their table specs.
    pub fn operands(&self) -> impl Iterator<Item = (&'static OperandSpec, Operand)> + '_ {
        self.op.operands().iter().map(move |s| (s, self.operand(s)))
    }

    /// The registers (pairs and quads as their single registers) and predicates named by the
    /// operands of `role`, or of every role when `None`. A left-out optional operand (the
    /// destination of a non-returning atomic, encoded as r0) names nothing: such an atomic
    /// never writes r0.
    pub fn named_state(&self, role: Option<Role>) -> impl Iterator<Item = StateRef> + '_ {
        self.operands()
            .filter(move |(spec, _)| role.is_none_or(|r| spec.role == r))
            .filter(|(spec, _)| !(spec.optional && self.slot_value(spec.slot) == 0))
            .flat_map(|(spec, operand)| {
                let (first, count, pred) = match operand {
                    Operand::Reg(r) | Operand::Pair(r) | Operand::Quad(r) => {
                        (r as u32, spec.kind.register_span(), false)
                    }
                    Operand::Pred(p) => (p as u32, 1, true),
                    _ => (0, 0, false),
                };
                (first..first + count)
                    .map(move |i| if pred { StateRef::Pred(i as u8) } else { StateRef::Reg(i) })
            })
    }

    /// For `if`/`break`/`continue`: the predicate operand (index and negation).
    pub fn struct_pred(&self) -> PredRef {
        PredRef { index: self.rs1 & !STRUCT_PRED_NEGATE, negated: self.rs1 & STRUCT_PRED_NEGATE != 0 }
    }

    /// Whether an atomic returns the old value (rd = r0 means "no return", as the reference).
    pub fn atomic_returns(&self) -> bool {
        self.op.is_atomic() && self.rd != 0
    }
}

fn read_word(code: &[u8], at: usize) -> Option<u32> {
    let b = code.get(at..at + 4)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opcodes::OPS;

    #[test]
    fn a_non_returning_atomic_names_no_destination() {
        let mut inst = Instruction::new(Op::AtomicAdd);
        inst.rs1 = 3;
        inst.rs2 = 4;
        let defs = |i: &Instruction| i.named_state(Some(Role::Def)).collect::<Vec<_>>();
        assert_eq!(defs(&inst), vec![]);
        assert_eq!(inst.named_state(None).collect::<Vec<_>>(), vec![StateRef::Reg(3), StateRef::Reg(4)]);
        inst.rd = 5;
        assert_eq!(defs(&inst), vec![StateRef::Reg(5)]);
    }

    #[test]
    fn every_table_entry_round_trips() {
        for info in OPS {
            let mut inst = Instruction::new(info.op);
            for (i, spec) in info.operands.iter().enumerate() {
                let v = match spec.kind {
                    Kind::Pred => 1 + i as u32 % 3,
                    Kind::Scope => 2,
                    Kind::Imm | Kind::Target => 0xDEAD_BEE0 + i as u32,
                    _ => 3 + 5 * i as u32,
                };
                inst.set_slot(spec.slot, v);
            }
            for explicit_enable in [false, true] {
                inst.guard = Some(PredRef { index: 2, negated: true });
                inst.explicit_enable = explicit_enable;
                let mut bytes = Vec::new();
                inst.encode_into(&mut bytes);
                assert_eq!(bytes.len() as u32, info.size as u32);
                assert_eq!(Instruction::decode(&bytes), Ok(inst), "{}", info.mnemonic);
            }
        }
    }

    #[test]
    fn reference_p0_bits_mean_unpredicated() {
        // iadd r1, r2, r3 as the reference writes it: predicate bits all zero.
        let bytes = [0x00, 0x02, 0x01, 0x00, 0x00, 0x00, 0x00, 0x03];
        let inst = Instruction::decode(&bytes).unwrap();
        assert_eq!(inst.guard, None);
        // Our @p0 sets bit 3.
        let mut guarded = inst;
        guarded.guard = Some(PredRef { index: 0, negated: false });
        let (w0, _) = guarded.encode_words();
        assert_eq!(w0 & 0xF, 0x8);
    }

    #[test]
    fn enable_bit_only_where_needed() {
        // Low nibble of word0 for every guard: bit 3 enable, bit 2 negate, bits 1..0 index.
        let nibble = |index, negated| {
            let mut i = Instruction::new(Op::Nop);
            i.guard = Some(PredRef { index, negated });
            i.encode_words().0 & 0xF
        };
        assert_eq!(nibble(0, false), 0b1000, "@p0 needs the enable bit");
        assert_eq!(nibble(0, true), 0b0100, "@!p0 is expressible without it");
        for index in 1..4u8 {
            assert_eq!(nibble(index, false), index as u32);
            assert_eq!(nibble(index, true), 0b100 | index as u32);
        }
        assert_eq!(Instruction::new(Op::Nop).encode_words().0 & 0xF, 0);
    }

    #[test]
    fn enable_bit_on_other_guards_round_trips() {
        // `@p1` with the enable bit (0b1001) and `@!p0` with it (0b1100): both predicated,
        // both re-encode to their own bytes.
        for low in [0b1001u32, 0b1100, 0b1111] {
            let word = 0x3F00_00F0 | low;
            let inst = Instruction::decode(&word.to_le_bytes()).unwrap();
            assert!(inst.guard.is_some() && inst.explicit_enable, "{low:#06b}");
            assert_eq!(inst.encode_words().0, word);
        }
        let p0 = Instruction::decode(&0x3F00_00F8u32.to_le_bytes()).unwrap();
        assert_eq!(p0.guard, Some(PredRef { index: 0, negated: false }));
        assert!(!p0.explicit_enable, "@p0 needs the bit: nothing explicit about it");
    }

    #[test]
    fn decode_errors() {
        assert_eq!(
            Instruction::decode(&0xFF00_0000u32.to_le_bytes()),
            Err(DecodeError::UnknownOpcode { opcode: 0xFF })
        );
        assert_eq!(
            Instruction::decode(&0x2A00_0050u32.to_le_bytes()),
            Err(DecodeError::UnknownModifier { opcode: 0x2A, modifier: 5 })
        );
        assert_eq!(
            Instruction::decode(&0x0000_0000u32.to_le_bytes()),
            Err(DecodeError::Truncated { op: Op::Iadd })
        );
    }
}
