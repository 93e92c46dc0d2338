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
/// Loop counter of the (only) loop level allowed in function `i`.
pub const FUNC_COUNTERS: [u8; MAX_FUNCS] = [23, 22, 38, 39];
/// Scratch for constants in loop headers, and for the workgroup's data copy in an access.
pub const LOOP_SCRATCH: u8 = 24;
/// Scratch for address masks and MMA strides.
pub const MASK_SCRATCH: u8 = 25;
/// The masked address of a memory access.
pub const ADDR_REG: u8 = 26;
/// Loop counters of the entry function, one per nesting level.
pub const ENTRY_COUNTERS: [u8; 8] = [27, 28, 32, 33, 34, 35, 36, 37];
/// Registers the kernel declares; the epilogue stores all of them.
pub const REGISTERS: u32 = 40;
/// Most functions a program has (each has its own loop counter register).
pub const MAX_FUNCS: usize = 4;

/// Bytes of device memory the program may load, store and update (masked addresses), in each
/// copy of the data area.
pub const DATA_BYTES: u32 = 4096;
/// Bytes of local memory the program touches with masked addresses.
pub const LOCAL_BYTES: u32 = 4096;
/// Local memory of every run (the dispatch's default): accesses relative to its end use it.
pub const LOCAL_MEMORY: u32 = wave_runtime::caps::DEFAULT_LOCAL_MEMORY;
/// The shared counters after the data area(s): one region per kind of commutative atomic.
pub const COUNTER_BYTES: u32 = COUNTER_CLASSES * COUNTER_CLASS_BYTES;
/// Kinds of commutative atomics with a region of their own (add/sub, or, and, xor, min, max).
pub const COUNTER_CLASSES: u32 = 6;
/// Bytes of one counter region: 64 bytes of masked addresses plus room for a misalignment.
pub const COUNTER_CLASS_BYTES: u32 = 128;
/// The window at the top of a 4 GiB device that programs may access (besides the bottom).
pub const TOP_WINDOW_BYTES: u32 = 4096;
/// The first address of the top window on a 4 GiB device.
pub const TOP_WINDOW_BASE: u32 = TOP_WINDOW_BYTES.wrapping_neg();
/// A 4 GiB device: every 32-bit address is in bounds.
pub const FULL_DEVICE_BYTES: u64 = 1 << 32;
/// Words the epilogue stores per thread: the registers, then p0..p3 as 0/1.
pub const DUMP_WORDS_PER_THREAD: u32 = REGISTERS + 4;

/// Which part of device memory a masked access ([`Node::Mem`]) lands in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Area {
    /// The data area (of the thread's workgroup, when every workgroup has its own copy); for
    /// local accesses, the bottom of local memory.
    Data,
    /// The shared counters, updated by every workgroup with commutative atomics.
    Counters,
    /// The top window of a 4 GiB device.
    Top,
}

/// The kind of program the generator chose (each kind stresses one corner of the engines).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProgramKind {
    /// The general mix.
    Plain,
    /// Loops and ifs nested up to 10 deep with divergent breaks and continues, some ifs with
    /// a uniformly false (or true) condition.
    DeepNesting,
    /// Each function calls the next two or three times, three or four levels deep.
    CallFan,
    /// A 4 GiB device: accesses at the top, and consecutive lanes whose addresses wrap past 2^32.
    FullDevice,
    /// Consecutive-word accesses whose inactive lanes' implied addresses are out of range
    /// (below zero, or past the end of memory).
    InactiveLanes,
    /// Several workgroups updating shared counters with (often unaligned) commutative atomics.
    SharedCounters,
}

impl ProgramKind {
    pub const ALL: [ProgramKind; 6] = [
        ProgramKind::Plain,
        ProgramKind::DeepNesting,
        ProgramKind::CallFan,
        ProgramKind::FullDevice,
        ProgramKind::InactiveLanes,
        ProgramKind::SharedCounters,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ProgramKind::Plain => "plain",
            ProgramKind::DeepNesting => "deep nesting",
            ProgramKind::CallFan => "call fans",
            ProgramKind::FullDevice => "4 GiB device",
            ProgramKind::InactiveLanes => "inactive out-of-range lanes",
            ProgramKind::SharedCounters => "shared counters",
        }
    }
}

/// One statement of a random program.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// A data, compare, wave, fence or nop instruction, emitted as is.
    Op(Instruction),
    /// A load, store or atomic: `addr` is masked with `mask`, plus `offset`, plus the base of
    /// `area`, into [`ADDR_REG`] first, and the instruction's address operand is [`ADDR_REG`].
    Mem {
        area: Area,
        addr: u8,
        mask: u32,
        offset: u32,
        inst: Instruction,
    },
    /// A load, store or atomic at `start + 4 × id` with `id` the lane or x thread id: the
    /// addresses the JIT turns into whole-vector accesses. `start` is `offset` into the data
    /// area (wrapping: below zero is near 2^32), or with `from_end` `offset` bytes below the end
    /// of the memory (local memory, or the device).
    LinearMem {
        by_thread: bool,
        offset: u32,
        from_end: bool,
        /// Only ids in `lo..hi` take part (the others' implied addresses may be out of
        /// range): through the instruction's guard, or an `if` around it with `by_if`.
        active: Option<(u32, u32)>,
        by_if: bool,
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

/// The dispatch shape a program was generated for, and its device memory layout:
/// the data area (one copy per workgroup when `data_copies` > 1), the shared counters, the
/// dump area, and on a 4 GiB device also the top window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape {
    pub grid: [u32; 2],
    pub workgroup: [u32; 2],
    pub wave_width: u32,
    /// Kernel arguments: set in every thread before it starts.
    pub initial_registers: Vec<(u8, u32)>,
    /// Copies of the data area: with more than one, workgroup x uses copy x (the grid is
    /// one row of at most this many workgroups), so that no workgroup sees another's
    /// stores and the result does not depend on the order workgroups run in.
    pub data_copies: u32,
    /// A 4 GiB device (`device memory` = 2^32 bytes) instead of just what the program uses.
    pub full_device: bool,
}

impl Shape {
    pub fn threads_per_workgroup(&self) -> u32 {
        self.workgroup[0] * self.workgroup[1]
    }
    pub fn total_threads(&self) -> u32 {
        self.threads_per_workgroup() * self.grid[0] * self.grid[1]
    }
    pub fn waves_per_workgroup(&self) -> u32 {
        self.threads_per_workgroup().div_ceil(self.wave_width.max(1))
    }
    /// Whether workgroup x accesses data copy x.
    pub fn private_data(&self) -> bool {
        self.data_copies > 1
    }
    /// Bytes of the data area copies.
    pub fn data_bytes(&self) -> u32 {
        DATA_BYTES * self.data_copies.max(1)
    }
    pub fn counter_base(&self) -> u32 {
        self.data_bytes()
    }
    /// Bytes at address 0 that start with the program's data (data copies and counters).
    pub fn initialized_bytes(&self) -> u32 {
        self.counter_base() + COUNTER_BYTES
    }
    /// Where the epilogue stores every thread's registers and predicates.
    pub fn dump_base(&self) -> u32 {
        self.initialized_bytes()
    }
    fn dump_end(&self) -> u64 {
        self.dump_base() as u64 + self.total_threads() as u64 * DUMP_WORDS_PER_THREAD as u64 * 4
    }
    /// Device memory a run needs: what the program uses in whole pages, or 4 GiB.
    pub fn device_bytes(&self) -> u64 {
        if self.full_device {
            FULL_DEVICE_BYTES
        } else {
            self.dump_end().div_ceil(4096) * 4096
        }
    }
    /// The device address ranges a run may write and that the engines' results are compared
    /// on: all of a small device; on a 4 GiB device the bottom (up to the dump area's end) and
    /// the top window, never the whole 4 GiB.
    pub fn compared_ranges(&self) -> Vec<std::ops::Range<u64>> {
        if self.full_device {
            vec![0..self.dump_end(), TOP_WINDOW_BASE as u64..FULL_DEVICE_BYTES]
        } else {
            let whole_device = 0..self.device_bytes();
            vec![whole_device]
        }
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
    /// The first [`Shape::initialized_bytes`] bytes of device memory; the rest starts zeroed.
    pub data: Vec<u8>,
    /// What the generator meant the program to stress (no effect on how it runs).
    pub kind: ProgramKind,
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
        let shape = &self.shape;
        let mut lo = Lowerer { out: &mut out, func_offsets, counters: &ENTRY_COUNTERS, shape };
        lo.block(&self.entry, 0);
        epilogue(&mut out, shape.dump_base());
        out.push(Instruction::new(Op::Halt));
        let mut func_starts = Vec::new();
        for (i, body) in self.funcs.iter().enumerate() {
            func_starts.push(out.len());
            let counter = [FUNC_COUNTERS[i.min(MAX_FUNCS - 1)]];
            let mut lo = Lowerer { out: &mut out, func_offsets, counters: &counter, shape };
            lo.block(body, 0);
            out.push(Instruction::new(Op::Return));
        }
        Lowered { insts: out, func_starts }
    }

    /// Most wave-instructions one wave can execute: every instruction charged in every
    /// iteration a loop may run (bodies run even with no active lane), calls expanded.
    pub fn worst_case_instructions_per_wave(&self) -> u64 {
        let mut func_costs = vec![0u64; self.funcs.len()];
        // Function i calls only j > i: cost them from the last one.
        for i in (0..self.funcs.len()).rev() {
            let cost = self.block_cost(&self.funcs[i], &func_costs) + 1;
            func_costs[i] = cost;
        }
        self.block_cost(&self.entry, &func_costs) + EPILOGUE_INSTRUCTIONS
    }

    fn block_cost(&self, block: &[Node], func_costs: &[u64]) -> u64 {
        block.iter().map(|n| self.node_cost(n, func_costs)).fold(0u64, u64::saturating_add)
    }

    fn node_cost(&self, node: &Node, func_costs: &[u64]) -> u64 {
        match node {
            Node::If { then_body, else_body, .. } => {
                let else_cost = else_body.as_ref().map_or(0, |e| 1 + self.block_cost(e, func_costs));
                2 + self.block_cost(then_body, func_costs) + else_cost
            }
            Node::Loop { trips, body } => {
                // The set-up and `loop`, then per iteration (one more than the trips: the
                // last one breaks) the header, the body and `endloop`.
                let iteration = LOOP_HEADER_INSTRUCTIONS + self.block_cost(body, func_costs) + 1;
                2 + iteration.saturating_mul(u64::from(*trips) + 1)
            }
            Node::Call(f) => 1 + func_costs.get(*f).copied().unwrap_or(0),
            leaf => {
                let mut out = Vec::new();
                let mut lo = Lowerer {
                    out: &mut out,
                    func_offsets: &[],
                    counters: &ENTRY_COUNTERS,
                    shape: &self.shape,
                };
                lo.node(leaf, 0);
                out.len() as u64
            }
        }
    }
}

/// Instructions a loop runs at the top of each iteration (count down, compare, break).
const LOOP_HEADER_INSTRUCTIONS: u64 = 5;
/// A bound on the epilogue's length.
const EPILOGUE_INSTRUCTIONS: u64 = 64;

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
    shape: &'a Shape,
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
            Node::Mem { area, addr, mask, offset, inst } => {
                self.out.push(mov_imm(MASK_SCRATCH, *mask));
                self.out.push(inst3(Op::And, ADDR_REG, *addr, MASK_SCRATCH));
                let base = match area {
                    Area::Data => 0,
                    Area::Counters => self.shape.counter_base(),
                    Area::Top => TOP_WINDOW_BASE,
                };
                let base = base.wrapping_add(*offset);
                if base != 0 {
                    self.out.push(mov_imm(MASK_SCRATCH, base));
                    self.out.push(inst3(Op::Iadd, ADDR_REG, ADDR_REG, MASK_SCRATCH));
                }
                if *area == Area::Data {
                    self.add_data_copy(inst.op);
                }
                self.out.push(*inst);
            }
            Node::LinearMem { by_thread, offset, from_end, active, by_if, inst } => {
                let id =
                    if *by_thread { wave_isa::SpecialReg::ThreadIdX } else { wave_isa::SpecialReg::LaneId };
                let device = is_device_access(inst.op);
                let start = if !*from_end {
                    *offset
                } else if device {
                    // Truncated: the end of a 4 GiB device is address 0, so lanes wrap.
                    (self.shape.device_bytes() as u32).wrapping_sub(*offset)
                } else {
                    LOCAL_MEMORY.wrapping_sub(*offset)
                };
                if let Some((lo, hi)) = active {
                    // p3 = lo <= id < hi, as one unsigned compare of id - lo.
                    self.out.push(mov_sr(ADDR_REG, id));
                    self.out.push(mov_imm(MASK_SCRATCH, *lo));
                    self.out.push(inst3(Op::Isub, ADDR_REG, ADDR_REG, MASK_SCRATCH));
                    self.out.push(mov_imm(MASK_SCRATCH, hi.saturating_sub(*lo)));
                    self.out.push(inst3(Op::UcmpLt, ACTIVE_PRED, ADDR_REG, MASK_SCRATCH));
                }
                self.out.push(mov_sr(ADDR_REG, id));
                self.out.push(mov_imm(MASK_SCRATCH, 4));
                self.out.push(inst3(Op::Imul, ADDR_REG, ADDR_REG, MASK_SCRATCH));
                self.out.push(mov_imm(MASK_SCRATCH, start));
                self.out.push(inst3(Op::Iadd, ADDR_REG, ADDR_REG, MASK_SCRATCH));
                if !*from_end {
                    self.add_data_copy(inst.op);
                }
                let only_active = PredRef { index: ACTIVE_PRED, negated: false };
                match (active, by_if) {
                    (None, _) => self.out.push(*inst),
                    (Some(_), false) => self.out.push(Instruction { guard: Some(only_active), ..*inst }),
                    (Some(_), true) => {
                        self.out
                            .push(Instruction { rs1: struct_pred(only_active), ..Instruction::new(Op::If) });
                        self.out.push(*inst);
                        self.out.push(Instruction::new(Op::Endif));
                    }
                }
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

    /// With a data copy per workgroup, add workgroup x's copy to the address of a device
    /// access (local memory is per workgroup anyway).
    fn add_data_copy(&mut self, op: Op) {
        if !self.shape.private_data() || !is_device_access(op) {
            return;
        }
        use wave_isa::SpecialReg as Sr;
        self.out.push(mov_sr(LOOP_SCRATCH, Sr::WorkgroupIdX));
        self.out.push(mov_imm(MASK_SCRATCH, DATA_BYTES));
        self.out.push(inst3(Op::Imul, LOOP_SCRATCH, LOOP_SCRATCH, MASK_SCRATCH));
        self.out.push(inst3(Op::Iadd, ADDR_REG, ADDR_REG, LOOP_SCRATCH));
    }
}

/// The predicate a [`Node::LinearMem`] with `active` ids computes and runs under.
const ACTIVE_PRED: u8 = 3;

/// Whether `op` accesses device memory (rather than local memory).
pub fn is_device_access(op: Op) -> bool {
    use wave_isa::Class;
    matches!(op.class(), Class::DeviceLoad | Class::DeviceStore | Class::DeviceAtomic)
}

/// Store every register, then p0..p3 as 0/1, of every live lane to the dump area at
/// `dump_base + global_thread_index * DUMP_WORDS_PER_THREAD * 4`. The index is computed from
/// special registers, so the same code works at every wave width. It clobbers r29..r31 before
/// storing them (their stored values are then the address arithmetic, still deterministic).
fn epilogue(out: &mut Vec<Instruction>, dump_base: u32) {
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
        mov_imm(b, dump_base),
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
