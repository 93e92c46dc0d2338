//! The disassembler: instructions and `.wbin` files back to assembly text.
//!
//! Output is the canonical dialect: underscore mnemonics, scope last, immediates in hex,
//! call targets as labels `L_<hex offset>` placed before their instruction. It re-assembles
//! to the same bytes with our assembler, and — for code that uses none of our extensions
//! (`@p0`, CAS, `if !pN`, calls, whose labels the reference resolves differently) — with the
//! reference wave-asm too.
//!
//! A guard whose word carries the predicate-enable bit although it does not need it (any
//! guard but `@p0`; our assembler sets the bit only for `@p0`, other writers may set it on
//! every guard) is printed `@p1.enable` / `@!p1.enable`, which assembles to the same bytes.
//! What does not survive a round trip: non-zero bits in fields an instruction does not use,
//! and the encoding of binaries of the 0.1.2 toolchain (see [`crate::legacy`]): those are
//! printed in today's dialect and re-assemble to the current encoding.
//!
//! It works on the linear instruction list, so code whose if/loop structure is broken still
//! disassembles (indentation is then best effort); only undecodable words are an error.

use crate::encoding::Encoding;
use crate::instr::Instruction;
use crate::ir::{decode_code_in, BuildError};
use crate::opcodes::{Kind, Op, SpecialReg};
use crate::wbin::WbinFile;
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// What [`disassemble`] prints besides the code.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DisasmOptions {
    /// A `; 0x0040` comment with the byte offset after every instruction.
    pub offsets: bool,
}

/// The label name of a call target.
pub fn label_name(target: u32) -> String {
    format!("L_{target:04x}")
}

/// One instruction in assembly syntax, without indentation or newline.
pub fn format_instruction(inst: &Instruction) -> String {
    let mut out = String::new();
    if let Some(guard) = inst.guard {
        let enable = if inst.explicit_enable { ".enable" } else { "" };
        let _ = write!(out, "@{guard}{enable} ");
    }
    out.push_str(inst.op.mnemonic());
    let structural_pred = matches!(inst.op, Op::If | Op::Break | Op::Continue);
    let mut first = true;
    for (spec, _) in inst.operands() {
        let value = inst.slot_value(spec.slot);
        // A non-returning atomic leaves out its destination.
        if spec.optional && value == 0 {
            continue;
        }
        out.push_str(if first { " " } else { ", " });
        first = false;
        match spec.kind {
            Kind::Reg | Kind::Pair | Kind::Quad | Kind::Fragment(_) => {
                let _ = write!(out, "r{value}");
            }
            Kind::Pred if structural_pred => {
                let _ = write!(out, "{}", inst.struct_pred());
            }
            Kind::Pred => {
                let _ = write!(out, "p{value}");
            }
            Kind::Special => match u8::try_from(value).ok().and_then(SpecialReg::from_index) {
                Some(sr) => out.push_str(sr.name()),
                None => {
                    let _ = write!(out, "sr_unknown_{value}");
                }
            },
            Kind::Imm => {
                let _ = write!(out, "0x{value:x}");
            }
            Kind::Scope => {
                let _ = write!(out, ".{}", inst.scope.name());
            }
            Kind::Target => out.push_str(&label_name(value)),
        }
    }
    out
}

/// Disassemble every kernel of a file, its code read in `file.encoding`.
pub fn disassemble(file: &WbinFile, opts: DisasmOptions) -> Result<String, BuildError> {
    let mut out = String::new();
    if file.encoding == Encoding::Legacy012 {
        let _ = writeln!(
            out,
            "; Decoded from {}.\n; This listing assembles to the current encoding{}.\n",
            file.encoding.describe(),
            if opts.offsets { "; the offsets are those of the original code" } else { "" }
        );
    }
    for (i, kernel) in file.kernels.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let meta = &kernel.meta;
        let insts = decode_code_in(&meta.name, &kernel.code, file.encoding)?;
        let _ = writeln!(out, ".kernel {}", meta.name);
        let _ = writeln!(out, ".registers {}", meta.registers);
        if meta.local_memory != 0 {
            let _ = writeln!(out, ".local_memory {}", meta.local_memory);
        }
        if meta.workgroup_size != [0; 3] {
            let [x, y, z] = meta.workgroup_size;
            let _ = writeln!(out, ".workgroup_size {x}, {y}, {z}");
        }
        let starts: BTreeSet<u32> = insts.iter().map(|(offset, _)| *offset).collect();
        let targets: BTreeSet<u32> =
            insts.iter().filter(|(_, inst)| inst.op == Op::Call).map(|(_, inst)| inst.imm).collect();
        let mut depth = 0usize;
        for (offset, inst) in &insts {
            if matches!(inst.op, Op::Else | Op::Endif | Op::Endloop) {
                depth = depth.saturating_sub(1);
            }
            if targets.contains(offset) {
                let _ = writeln!(out, "{}:", label_name(*offset));
            }
            let mut line = format!("{}{}", "    ".repeat(depth + 1), format_instruction(inst));
            let mut comments = Vec::new();
            if inst.op == Op::Call && !starts.contains(&inst.imm) {
                comments.push("target is not the start of an instruction of this kernel".to_string());
            }
            if opts.offsets {
                comments.push(format!("0x{offset:04x}"));
            }
            if !comments.is_empty() {
                let width = line.len().max(40);
                let _ = write!(line, "{:pad$} ; {}", "", comments.join("; "), pad = width - line.len());
            }
            out.push_str(&line);
            out.push('\n');
            if matches!(inst.op, Op::If | Op::Else | Op::Loop) {
                depth += 1;
            }
        }
        out.push_str(".end\n");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::instr::PredRef;
    use crate::opcodes::Scope;

    #[test]
    fn formats_operands() {
        let mut i = Instruction::new(Op::Iadd);
        (i.rd, i.rs1, i.rs2) = (1, 2, 3);
        i.guard = Some(PredRef { index: 2, negated: true });
        assert_eq!(format_instruction(&i), "@!p2 iadd r1, r2, r3");
        i.guard = Some(PredRef { index: 0, negated: false });
        assert_eq!(format_instruction(&i), "@p0 iadd r1, r2, r3");
        i.guard = Some(PredRef { index: 1, negated: false });
        i.explicit_enable = true;
        assert_eq!(format_instruction(&i), "@p1.enable iadd r1, r2, r3");

        let mut a = Instruction::new(Op::AtomicAdd);
        (a.rs1, a.rs2, a.scope) = (4, 5, Scope::Device);
        assert_eq!(format_instruction(&a), "atomic_add r4, r5, .device");
        a.rd = 7;
        assert_eq!(format_instruction(&a), "atomic_add r7, r4, r5, .device");

        let mut m = Instruction::new(Op::MovSr);
        (m.rd, m.rs1) = (1, 4);
        assert_eq!(format_instruction(&m), "mov_sr r1, sr_lane_id");
        let mut imm = Instruction::new(Op::MovImm);
        (imm.rd, imm.imm) = (3, 0x3f80_0000);
        assert_eq!(format_instruction(&imm), "mov_imm r3, 0x3f800000");
        let mut b = Instruction::new(Op::Break);
        b.rs1 = 0x81;
        assert_eq!(format_instruction(&b), "break !p1");
        let mut c = Instruction::new(Op::Call);
        c.imm = 0x40;
        assert_eq!(format_instruction(&c), "call L_0040");
        let mut f = Instruction::new(Op::FenceAcquire);
        f.scope = Scope::Workgroup;
        assert_eq!(format_instruction(&f), "fence_acquire .workgroup");
    }
}
