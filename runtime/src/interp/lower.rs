//! Lowering of a kernel's statement tree into a flat list of micro-ops with explicit jumps,
//! done once per run. Each wave then executes the list as a small state machine (pc plus
//! mask stacks), which lets it stop at a barrier and resume later.

use wave_isa::instr::{PredRef, STRUCT_PRED_NEGATE};
use wave_isa::ir::{Block, Kernel, StmtKind};
use wave_isa::{Instruction, Op};

/// One step of a wave. Mask rules are those of `wave_isa::ir` (module doc).
#[derive(Clone, Copy, Debug)]
pub(crate) enum MicroOp {
    /// A data, memory, atomic, wave or MMA operation on `exec ∧ guard`.
    Exec(Instruction),
    /// Push (entry, entry ∧ ¬pred); exec = entry ∧ pred.
    IfBegin {
        pred: PredRef,
    },
    /// exec = the else mask of the innermost if (minus lanes that left since).
    Else,
    /// Pop the innermost if; exec = its entry minus lanes that left inside.
    EndIf,
    /// Push a loop frame (entry exec, outer break and continue masks).
    LoopBegin,
    /// The latch: repeat at `body` while lanes remain, else pop the frame.
    LoopEnd {
        body: u32,
    },
    Break {
        pred: PredRef,
    },
    Continue {
        pred: PredRef,
    },
    /// Push a call frame and jump to `entry`.
    Call {
        entry: u32,
    },
    /// End of a function body: return to the caller (or end the wave in the entry).
    FuncEnd,
    Return {
        guard: Option<PredRef>,
    },
    Halt {
        guard: Option<PredRef>,
        implicit: bool,
    },
    Barrier {
        guard: Option<PredRef>,
    },
    /// fence, wait, nop: counted, no effect on the CPU.
    Nop,
}

/// A lowered kernel: micro-ops with, in parallel, the byte offset and the instruction each
/// came from (for traces, errors and statistics).
pub(crate) struct Program {
    pub ops: Vec<MicroOp>,
    pub pcs: Vec<u32>,
    pub insts: Vec<Instruction>,
}

impl Program {
    pub fn lower(kernel: &Kernel) -> Program {
        let mut p = Program { ops: Vec::new(), pcs: Vec::new(), insts: Vec::new() };
        let mut func_entries = vec![0u32; kernel.funcs.len()];
        // Call sites are patched once every function has its entry index.
        let mut calls: Vec<(usize, usize)> = Vec::new();
        for (id, func) in kernel.funcs.iter().enumerate() {
            func_entries[id] = p.ops.len() as u32;
            p.block(&func.body, &mut calls);
            p.push(MicroOp::FuncEnd, func.offset, Instruction::new(Op::Nop));
        }
        for (at, func) in calls {
            if let MicroOp::Call { entry } = &mut p.ops[at] {
                *entry = func_entries.get(func).copied().unwrap_or(0);
            }
        }
        p
    }

    fn push(&mut self, op: MicroOp, pc: u32, inst: Instruction) {
        self.ops.push(op);
        self.pcs.push(pc);
        self.insts.push(inst);
    }

    fn block(&mut self, block: &Block, calls: &mut Vec<(usize, usize)>) {
        for stmt in block {
            let marker = |op: Op| {
                let mut i = Instruction::new(op);
                i.guard = stmt.guard;
                i
            };
            let with_pred = |op: Op, pred: PredRef| {
                let mut i = marker(op);
                i.rs1 = pred.index | if pred.negated { STRUCT_PRED_NEGATE } else { 0 };
                i
            };
            let guard = stmt.guard;
            match &stmt.kind {
                StmtKind::Op(inst) => self.push(MicroOp::Exec(*inst), stmt.offset, *inst),
                StmtKind::If { pred, then_body, else_body, else_offset, end_offset } => {
                    self.push(MicroOp::IfBegin { pred: *pred }, stmt.offset, with_pred(Op::If, *pred));
                    self.block(then_body, calls);
                    if let Some(else_offset) = else_offset {
                        self.push(MicroOp::Else, *else_offset, Instruction::new(Op::Else));
                        self.block(else_body, calls);
                    }
                    self.push(MicroOp::EndIf, *end_offset, Instruction::new(Op::Endif));
                }
                StmtKind::Loop { body, end_offset } => {
                    self.push(MicroOp::LoopBegin, stmt.offset, marker(Op::Loop));
                    let start = self.ops.len() as u32;
                    self.block(body, calls);
                    self.push(MicroOp::LoopEnd { body: start }, *end_offset, Instruction::new(Op::Endloop));
                }
                StmtKind::Break { pred } => {
                    self.push(MicroOp::Break { pred: *pred }, stmt.offset, with_pred(Op::Break, *pred))
                }
                StmtKind::Continue { pred } => {
                    self.push(MicroOp::Continue { pred: *pred }, stmt.offset, with_pred(Op::Continue, *pred))
                }
                StmtKind::Call { func, target } => {
                    calls.push((self.ops.len(), *func));
                    let mut i = marker(Op::Call);
                    i.imm = *target;
                    self.push(MicroOp::Call { entry: 0 }, stmt.offset, i);
                }
                StmtKind::Return => self.push(MicroOp::Return { guard }, stmt.offset, marker(Op::Return)),
                StmtKind::Halt { implicit } => {
                    self.push(MicroOp::Halt { guard, implicit: *implicit }, stmt.offset, marker(Op::Halt))
                }
                StmtKind::Barrier => self.push(MicroOp::Barrier { guard }, stmt.offset, marker(Op::Barrier)),
                StmtKind::Fence { op, scope } => {
                    let mut i = marker(*op);
                    i.scope = *scope;
                    self.push(MicroOp::Nop, stmt.offset, i)
                }
                StmtKind::Wait => self.push(MicroOp::Nop, stmt.offset, marker(Op::Wait)),
                StmtKind::Nop => self.push(MicroOp::Nop, stmt.offset, marker(Op::Nop)),
            }
        }
    }
}
