//! A program as `.wave` assembly text (what the minimiser prints): the disassembler's syntax,
//! with `funcN` labels for call targets so that it re-assembles.

use crate::program::{Program, REGISTERS};
use wave_isa::Op;

/// The whole program as one `.wave` kernel named `fuzz`.
pub fn program_text(p: &Program) -> String {
    let lowered = p.lower();
    let mut out = String::new();
    out.push_str(".kernel fuzz\n");
    out.push_str(&format!(".registers {REGISTERS}\n"));
    let mut indent = 1usize;
    let mut byte_of_func = Vec::new();
    let mut byte = 0u32;
    for (i, inst) in lowered.insts.iter().enumerate() {
        if lowered.func_starts.contains(&i) {
            byte_of_func.push(byte);
        }
        byte += inst.size();
    }
    for (i, inst) in lowered.insts.iter().enumerate() {
        if let Some(f) = lowered.func_starts.iter().position(|&s| s == i) {
            out.push_str(&format!("func{f}:\n"));
            indent = 1;
        }
        if matches!(inst.op, Op::Else | Op::Endif | Op::Endloop) {
            indent = indent.saturating_sub(1).max(1);
        }
        out.push_str(&"    ".repeat(indent));
        if inst.op == Op::Call {
            let f = byte_of_func.iter().position(|&b| b == inst.imm).unwrap_or(usize::MAX);
            out.push_str(&format!("call func{f}"));
        } else {
            out.push_str(&wave_isa::disasm::format_instruction(inst));
        }
        out.push('\n');
        if matches!(inst.op, Op::If | Op::Else | Op::Loop) {
            indent += 1;
        }
    }
    out.push_str(".end\n");
    out
}
