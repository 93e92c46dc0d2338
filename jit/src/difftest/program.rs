//! The random program as a tree of statements, and its lowering to WAVE instructions.
//!
//! The generator and the minimiser work on this tree rather than on raw instructions, so every
//! program they produce is structurally valid: memory accesses carry their own address masking,
//! loops carry their own termination counter, and removing or flattening a node never leaves an
//! unbalanced `endif` or an out-of-bounds address behind.

use wave_isa::instr::STRUCT_PRED_NEGATE;
use wave_isa::{Instruction, Op, PredRef};

/// Registers the generator may write with random data operations (`r0..=r21`).
pub const DATA_REGS: u8 = 22;
/// Loop counter of the (only) loop level allowed in function `i` is `FUNC_COUNTER_BASE - i`.
pub const FUNC_COUNTER_BASE: u8 = 23;
/// Scratch for constants in loop headers.
pub const LOOP_SCRATCH: u8 = 24;
/// Scratch for address masks and MMA strides.
pub const MASK_SCRATCH: u8 = 25;
/// The masked address of a memory access.
pub const ADDR_REG: u8 = 26;
/// Loop counters of the entry function, one per nesting level.
pub const ENTRY_COUNTERS: [u8; 2] = [27, 28];
/// Registers the kernel declares; the epilogue stores all of them.
pub const REGISTERS: u32 = 32;
/// Most functions a program has (each has its own loop counter register).
pub const MAX_FUNCS: usize = 2;

/// Bytes of device memory the program may load, store and update (masked addresses).
pub const DATA_BYTES: u32 = 4096;
/// Bytes of local memory the program touches (local memory is at least this large).
pub const LOCAL_BYTES: u32 = 4096;
/// Where the epilogue stores every thread's registers and predicates.
pub const DUMP_BASE: u32 = DATA_BYTES;
/// Words the epilogue stores per thread: the registers, then p0..p3 as 0/1.
pub const DUMP_WORDS_PER_THREAD: u32 = REGISTERS + 4;

/// One statement of a random program.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// A data, compare, wave, fence or nop instruction, emitted as is.
    Op(Instruction),
    /// A load, store or atomic: `addr` is masked with `mask` into [`ADDR_REG`] first, and the
    /// instruction's address operand is [`ADDR_REG`].
    Mem {
        addr: u8,
        mask: u32,
        inst: Instruction,
    },
    /// A load, store or atomic at `offset + 4 × id` with `id` the lane or x thread id: the
    /// addresses the JIT turns into whole-vector accesses.
    LinearMem {
        by_thread: bool,
        offset: u32,
        inst: Instruction,
    },
    /// An MMA tile load or store: the address is masked as for `Mem`, the row stride (bytes) is
    /// put in [`MASK_SCRATCH`].
    MmaMem {
        addr: u8,
        stride: u32,
        inst: Instruction,
    },
    If {
        pred: PredRef,
        then_body: Vec<Node>,
        else_body: Option<Vec<Node>>,
    },
    /// Runs at most `trips` iterations: a counter register is decremented at the top of the
    /// body and the loop breaks when it goes negative.
    Loop {
        trips: u32,
        body: Vec<Node>,
    },
    Break(PredRef),
    Continue(PredRef),
    Call(usize),
    Return(Option<PredRef>),
    Halt(Option<PredRef>),
    Barrier,
}

/// The dispatch shape a program was generated for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape {
    pub grid: [u32; 2],
    pub workgroup: [u32; 2],
    pub wave_width: u32,
    /// Kernel arguments: set in every thread before it starts.
    pub initial_registers: Vec<(u8, u32)>,
}

impl Shape {
    pub fn threads_per_workgroup(&self) -> u32 {
        self.workgroup[0] * self.workgroup[1]
    }
    pub fn total_threads(&self) -> u32 {
        self.threads_per_workgroup() * self.grid[0] * self.grid[1]
    }
    /// Device memory a run needs: the data area, then the dump area, in whole pages.
    pub fn device_bytes(&self) -> u64 {
        let dump = self.total_threads() as u64 * DUMP_WORDS_PER_THREAD as u64 * 4;
        (DUMP_BASE as u64 + dump).div_ceil(4096) * 4096
    }
}

/// A whole random program: the entry body (before the fixed epilogue), the functions, the
/// dispatch shape and the initial contents of the data area.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub entry: Vec<Node>,
    /// Function `i` may call only functions `j > i`, so there is no recursion.
    pub funcs: Vec<Vec<Node>>,
    pub shape: Shape,
    /// The first [`DATA_BYTES`] bytes of device memory; the rest starts zeroed.
    pub data: Vec<u8>,
}

/// Where each kernel-level piece of a lowered program starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lowered {
    pub insts: Vec<Instruction>,
    /// Index into `insts` of each function's first instruction.
    pub func_starts: Vec<usize>,
}

impl Program {
    /// Statements in the whole program (a measure of size for the minimiser).
    pub fn statement_count(&self) -> usize {
        count(&self.entry) + self.funcs.iter().map(|f| count(f)).sum::<usize>()
    }

    /// The linear instruction list: entry, epilogue, `halt`, then each function ending in
    /// `return`. Call targets are byte offsets relative to the kernel start.
    pub fn lower(&self) -> Lowered {
        // Sizes do not depend on call targets, so lay out once with dummy targets.
        let mut offsets = vec![0u32; self.funcs.len()];
        let first = self.lower_with(&offsets);
        let mut byte = 0u32;
        let mut next = 0usize;
        for (i, inst) in first.insts.iter().enumerate() {
            if next < first.func_starts.len() && first.func_starts[next] == i {
                offsets[next] = byte;
                next += 1;
            }
            byte += inst.size();
        }
        self.lower_with(&offsets)
    }

    /// The encoded code bytes of [`Program::lower`].
    pub fn code(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for inst in self.lower().insts {
            inst.encode_into(&mut out);
        }
        out
    }

    fn lower_with(&self, func_offsets: &[u32]) -> Lowered {
        let mut out = Vec::new();
        let mut lo = Lowerer { out: &mut out, func_offsets, counters: &ENTRY_COUNTERS };
        lo.block(&self.entry, 0);
        epilogue(&mut out);
        out.push(Instruction::new(Op::Halt));
        let mut func_starts = Vec::new();
        for (i, body) in self.funcs.iter().enumerate() {
            func_starts.push(out.len());
            let counter = [FUNC_COUNTER_BASE - i as u8];
            let mut lo = Lowerer { out: &mut out, func_offsets, counters: &counter };
            lo.block(body, 0);
            out.push(Instruction::new(Op::Return));
        }
        Lowered { insts: out, func_starts }
    }
}

fn count(block: &[Node]) -> usize {
    block
        .iter()
        .map(|n| match n {
            Node::If { then_body, else_body, .. } => {
                1 + count(then_body) + else_body.as_ref().map_or(0, |b| count(b))
            }
            Node::Loop { body, .. } => 1 + count(body),
            _ => 1,
        })
        .sum()
}

/// An instruction with `rd`, `rs1`, `rs2` set (the common shape of the helpers below).
pub fn inst3(op: Op, rd: u8, rs1: u8, rs2: u8) -> Instruction {
    Instruction { rd, rs1, rs2, ..Instruction::new(op) }
}

pub fn mov_imm(rd: u8, value: u32) -> Instruction {
    Instruction { rd, imm: value, ..Instruction::new(Op::MovImm) }
}

pub fn mov_sr(rd: u8, sr: wave_isa::SpecialReg) -> Instruction {
    Instruction { rd, rs1: sr as u8, ..Instruction::new(Op::MovSr) }
}

/// The rs1 byte of `if`/`break`/`continue` for a predicate reference.
fn struct_pred(p: PredRef) -> u8 {
    p.index | if p.negated { STRUCT_PRED_NEGATE } else { 0 }
}

struct Lowerer<'a> {
    out: &'a mut Vec<Instruction>,
    func_offsets: &'a [u32],
    /// Loop counter register per loop nesting level of this function.
    counters: &'a [u8],
}

impl Lowerer<'_> {
    fn block(&mut self, block: &[Node], loop_depth: usize) {
        for node in block {
            self.node(node, loop_depth);
        }
    }

    fn node(&mut self, node: &Node, loop_depth: usize) {
        match node {
            Node::Op(inst) => self.out.push(*inst),
            Node::Mem { addr, mask, inst } => {
                self.out.push(mov_imm(MASK_SCRATCH, *mask));
                self.out.push(inst3(Op::And, ADDR_REG, *addr, MASK_SCRATCH));
                self.out.push(*inst);
            }
            Node::LinearMem { by_thread, offset, inst } => {
                let id =
                    if *by_thread { wave_isa::SpecialReg::ThreadIdX } else { wave_isa::SpecialReg::LaneId };
                self.out.push(mov_sr(ADDR_REG, id));
                self.out.push(mov_imm(MASK_SCRATCH, 4));
                self.out.push(inst3(Op::Imul, ADDR_REG, ADDR_REG, MASK_SCRATCH));
                self.out.push(mov_imm(MASK_SCRATCH, *offset));
                self.out.push(inst3(Op::Iadd, ADDR_REG, ADDR_REG, MASK_SCRATCH));
                self.out.push(*inst);
            }
            Node::MmaMem { addr, stride, inst } => {
                self.out.push(mov_imm(MASK_SCRATCH, 0x7FF));
                self.out.push(inst3(Op::And, ADDR_REG, *addr, MASK_SCRATCH));
                self.out.push(mov_imm(MASK_SCRATCH, *stride));
                self.out.push(*inst);
            }
            Node::If { pred, then_body, else_body } => {
                self.out.push(Instruction { rs1: struct_pred(*pred), ..Instruction::new(Op::If) });
                self.block(then_body, loop_depth);
                if let Some(else_body) = else_body {
                    self.out.push(Instruction::new(Op::Else));
                    self.block(else_body, loop_depth);
                }
                self.out.push(Instruction::new(Op::Endif));
            }
            Node::Loop { trips, body } => {
                // The generator never nests loops deeper than there are counters; a tree that
                // does anyway (hand-written) reuses the innermost counter and still terminates
                // because the inner loop leaves it negative.
                let counter = self.counters[loop_depth.min(self.counters.len() - 1)];
                self.out.push(mov_imm(counter, *trips));
                self.out.push(Instruction::new(Op::Loop));
                self.out.push(mov_imm(LOOP_SCRATCH, 1));
                self.out.push(inst3(Op::Isub, counter, counter, LOOP_SCRATCH));
                self.out.push(mov_imm(LOOP_SCRATCH, 0));
                self.out.push(inst3(Op::IcmpLt, 3, counter, LOOP_SCRATCH));
                self.out.push(Instruction { rs1: 3, ..Instruction::new(Op::Break) });
                self.block(body, loop_depth + 1);
                self.out.push(Instruction::new(Op::Endloop));
            }
            Node::Break(p) => {
                self.out.push(Instruction { rs1: struct_pred(*p), ..Instruction::new(Op::Break) })
            }
            Node::Continue(p) => {
                self.out.push(Instruction { rs1: struct_pred(*p), ..Instruction::new(Op::Continue) })
            }
            Node::Call(f) => {
                let target = self.func_offsets.get(*f).copied().unwrap_or(0);
                self.out.push(Instruction { imm: target, ..Instruction::new(Op::Call) });
            }
            Node::Return(guard) => {
                self.out.push(Instruction { guard: *guard, ..Instruction::new(Op::Return) })
            }
            Node::Halt(guard) => self.out.push(Instruction { guard: *guard, ..Instruction::new(Op::Halt) }),
            Node::Barrier => self.out.push(Instruction::new(Op::Barrier)),
        }
    }
}

/// Store every register, then p0..p3 as 0/1, of every live lane to the dump area at
/// `DUMP_BASE + global_thread_index * DUMP_WORDS_PER_THREAD * 4`. The index is computed from
/// special registers, so the same code works at every wave width. It clobbers r29..r31 before
/// storing them (their stored values are then the address arithmetic, still deterministic).
fn epilogue(out: &mut Vec<Instruction>) {
    use wave_isa::SpecialReg as Sr;
    let (a, b, c) = (29u8, 30u8, 31u8);
    out.extend([
        mov_sr(a, Sr::WorkgroupIdY),
        mov_sr(b, Sr::GridSizeX),
        inst3(Op::Imul, a, a, b),
        mov_sr(b, Sr::WorkgroupIdX),
        inst3(Op::Iadd, a, a, b),
        mov_sr(b, Sr::WorkgroupSizeX),
        mov_sr(c, Sr::WorkgroupSizeY),
        inst3(Op::Imul, b, b, c),
        inst3(Op::Imul, a, a, b),
        mov_sr(b, Sr::WaveId),
        mov_sr(c, Sr::WaveWidth),
        inst3(Op::Imul, b, b, c),
        inst3(Op::Iadd, a, a, b),
        mov_sr(b, Sr::LaneId),
        inst3(Op::Iadd, a, a, b),
        mov_imm(b, DUMP_WORDS_PER_THREAD * 4),
        inst3(Op::Imul, a, a, b),
        mov_imm(b, DUMP_BASE),
        inst3(Op::Iadd, a, a, b),
    ]);
    // Slot i holds register i; four at a time (the JIT compiles fewer instructions per
    // program). r29..r31 hold the address arithmetic by then (deterministic).
    out.push(mov_imm(b, 16));
    for reg in (0..REGISTERS as u8).step_by(4) {
        out.push(Instruction { rs1: a, rs2: reg, ..Instruction::new(Op::DeviceStoreU128) });
        out.push(inst3(Op::Iadd, a, a, b));
    }
    // Predicates as words: select(p, 1, 0) into r0..r3 (already stored).
    out.push(mov_imm(c, 1));
    out.push(mov_imm(4, 0));
    for p in 0..4u8 {
        out.push(Instruction { rd: p, rs1: p, rs2: c, rs3: 4, ..Instruction::new(Op::Select) });
    }
    out.push(Instruction { rs1: a, rs2: 0, ..Instruction::new(Op::DeviceStoreU128) });
}
