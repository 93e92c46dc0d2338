//! The random program generator: structured, valid, terminating WAVE programs whose results do
//! not depend on anything but the WAVE semantics (no out-of-bounds accesses, barriers only in
//! uniform control flow, bounded loops, no recursion).

use super::program::*;
use super::rng::SplitMix64;
use wave_isa::opcodes::{Class, Kind, Role, OPS};
use wave_isa::{Instruction, Op, PredRef, Scope, SpecialReg};

/// What the generator may produce.
#[derive(Clone, Debug)]
pub struct GenConfig {
    /// Upper bound on statements in the entry body (functions get a share of it).
    pub max_statements: u32,
    /// Deepest if/loop nesting.
    pub max_depth: u32,
    /// Ops never generated (for an engine that does not support them yet).
    pub excluded_ops: Vec<Op>,
}

impl Default for GenConfig {
    fn default() -> GenConfig {
        GenConfig { max_statements: 48, max_depth: 4, excluded_ops: Vec::new() }
    }
}

/// Bit patterns that exercise the corners: signed zeros, infinities, NaNs (quiet, signalling,
/// negative), denormals, INT_MIN/INT_MAX, rounding ties, f16/bf16 specials, shift amounts.
pub const INTERESTING: &[u32] = &[
    0x0000_0000,
    0x8000_0000,
    0x7F80_0000,
    0xFF80_0000,
    0x7FC0_0000,
    0xFFC0_0000,
    0x7F80_0001,
    0x7FA0_0000,
    0x0000_0001,
    0x8000_0001,
    0x007F_FFFF,
    0x0080_0000,
    0x3F80_0000,
    0xBF80_0000,
    0x3F00_0000,
    0x4020_0000,
    0xC020_0000,
    0x3EFF_FFFF,
    0x4B00_0000,
    0x4F00_0000,
    0xCF00_0000,
    0x4F80_0000,
    0x7F7F_FFFF,
    0x7FFF_FFFF,
    0xFFFF_FFFF,
    0xFFFF_FFFE,
    1,
    2,
    3,
    7,
    16,
    31,
    32,
    33,
    0x3C00,
    0x7C00,
    0x7E00,
    0xFC00,
    0x0001_0001,
    0x3C00_BC00,
    0x3F80,
    0x7FC0_3F80,
    0x3FF0_0000,
    0x4049_0FDB,
];

/// An interesting value or, a third of the time, random bits.
pub fn random_value(rng: &mut SplitMix64) -> u32 {
    if rng.percent(66) {
        rng.pick(INTERESTING)
    } else {
        rng.next_u32()
    }
}

/// Generate one program for wave width `wave_width`.
pub fn generate(rng: &mut SplitMix64, wave_width: u32, config: &GenConfig) -> Program {
    let shape = random_shape(rng, wave_width);
    let data = (0..DATA_BYTES / 4).flat_map(|_| random_value(rng).to_le_bytes()).collect();
    let funcs_wanted = rng.below(MAX_FUNCS as u32 + 1) as usize;
    let mut g = Gen { rng, config, budget: 0, funcs: funcs_wanted };
    let mut funcs = Vec::new();
    for i in 0..funcs_wanted {
        g.budget = config.max_statements / 4;
        let ctx = Ctx { func: Some(i), depth: 0, loop_depth: 0, uniform: false };
        funcs.push(g.block(ctx));
    }
    g.budget = config.max_statements;
    let mut entry = g.prologue();
    let ctx = Ctx { func: None, depth: 0, loop_depth: 0, uniform: true };
    entry.extend(g.block(ctx));
    Program { entry, funcs, shape, data }
}

fn random_shape(rng: &mut SplitMix64, w: u32) -> Shape {
    let x = match rng.below(7) {
        0 => 1,
        1 => (w / 2).max(1),
        2 => w,
        3 => w + 1,
        4 => 2 * w,
        5 => 2 * w + 3,
        _ => rng.range(1, 3 * w),
    }
    .min(128);
    let y = if x <= 64 && rng.percent(20) { 2 } else { 1 };
    let grid = [rng.range(1, 2), if rng.percent(15) { 2 } else { 1 }];
    let initial_registers =
        (0..rng.below(3)).map(|_| (rng.below(REGISTERS) as u8, random_value(rng))).collect();
    Shape { grid, workgroup: [x, y], wave_width: w, initial_registers }
}

#[derive(Clone, Copy)]
struct Ctx {
    /// `Some(i)` inside function `i`, `None` in the entry.
    func: Option<usize>,
    depth: u32,
    loop_depth: usize,
    /// True at the top level of the entry: every wave of the workgroup gets here the same
    /// number of times, so a barrier is valid.
    uniform: bool,
}

struct Gen<'a> {
    rng: &'a mut SplitMix64,
    config: &'a GenConfig,
    budget: u32,
    funcs: usize,
}

impl Gen<'_> {
    fn allowed(&self, op: Op) -> bool {
        !self.config.excluded_ops.contains(&op)
    }

    /// Fill most data registers with corner values or lane-dependent values, and the
    /// predicates with lane-dependent compares.
    fn prologue(&mut self) -> Vec<Node> {
        use SpecialReg as Sr;
        let mut out = Vec::new();
        for r in 0..DATA_REGS {
            if self.rng.percent(20) {
                continue;
            }
            match self.rng.below(4) {
                0 | 1 => out.push(Node::Op(mov_imm(r, random_value(self.rng)))),
                2 => {
                    let sr = self.rng.pick(&[Sr::LaneId, Sr::ThreadIdX, Sr::ThreadIdY, Sr::WaveId]);
                    out.push(Node::Op(mov_sr(r, sr)));
                    out.push(Node::Op(mov_imm(MASK_SCRATCH, random_value(self.rng))));
                    let mix = self.rng.pick(&[Op::Imul, Op::Xor, Op::Iadd, Op::Shl]);
                    out.push(Node::Op(inst3(mix, r, r, MASK_SCRATCH)));
                }
                _ => {
                    // A per-lane word of the data area.
                    out.push(Node::Op(mov_sr(r, Sr::ThreadIdX)));
                    out.push(Node::Op(mov_imm(MASK_SCRATCH, 4 * self.rng.range(1, 5))));
                    out.push(Node::Op(inst3(Op::Imul, r, r, MASK_SCRATCH)));
                    let load = Instruction { rd: r, rs1: ADDR_REG, ..Instruction::new(Op::DeviceLoadU32) };
                    out.push(Node::Mem { addr: r, mask: DATA_BYTES - 4, inst: load });
                }
            }
        }
        for p in 0..3 {
            let op = self.rng.pick(&[Op::IcmpLt, Op::UcmpLt, Op::IcmpEq, Op::FcmpLt, Op::IcmpGt]);
            let (a, b) = (self.data_reg(), self.data_reg());
            out.push(Node::Op(inst3(op, p, a, b)));
        }
        out
    }

    fn data_reg(&mut self) -> u8 {
        self.rng.below(DATA_REGS as u32) as u8
    }

    /// A register to read: mostly data registers, sometimes any register (all hold
    /// deterministic values).
    fn use_reg(&mut self) -> u8 {
        if self.rng.percent(90) {
            self.data_reg()
        } else {
            self.rng.below(REGISTERS) as u8
        }
    }

    fn pred(&mut self) -> PredRef {
        PredRef { index: self.rng.below(4) as u8, negated: self.rng.percent(30) }
    }

    fn maybe_guard(&mut self) -> Option<PredRef> {
        self.rng.percent(20).then(|| self.pred())
    }

    fn block(&mut self, ctx: Ctx) -> Vec<Node> {
        let mut out = Vec::new();
        let len = self.rng.range(1, 8);
        for _ in 0..len {
            if self.budget == 0 {
                break;
            }
            self.budget -= 1;
            out.push(self.statement(ctx));
        }
        out
    }

    fn statement(&mut self, ctx: Ctx) -> Node {
        let nest_ok = ctx.depth < self.config.max_depth;
        let max_loops = if ctx.func.is_some() { 1 } else { ENTRY_COUNTERS.len() };
        loop {
            let roll = self.rng.below(100);
            let node = match roll {
                0..=44 => self.data_op(),
                45..=59 => self.memory_op(),
                60..=67 => {
                    // Lane-dependent predicates drive divergence.
                    let op = self.rng.pick(&[Op::IcmpLt, Op::IcmpEq, Op::UcmpLe, Op::FcmpLt, Op::FcmpUnord]);
                    let (a, b) = (self.use_reg(), self.use_reg());
                    Some(Node::Op(inst3(op, self.rng.below(3) as u8, a, b)))
                }
                68..=76 if nest_ok => {
                    let inner = Ctx { depth: ctx.depth + 1, uniform: false, ..ctx };
                    let pred = self.pred();
                    let then_body = self.block(inner);
                    let else_body = self.rng.percent(50).then(|| self.block(inner));
                    Some(Node::If { pred, then_body, else_body })
                }
                77..=82 if nest_ok && ctx.loop_depth < max_loops => {
                    // The trip count is uniform, so the body is still uniform if the loop is;
                    // but a divergent break inside makes waves leave at different times,
                    // so barriers stay out of loops.
                    let inner =
                        Ctx { depth: ctx.depth + 1, loop_depth: ctx.loop_depth + 1, uniform: false, ..ctx };
                    let trips = self.rng.range(0, 3);
                    // A third of the loops hold only loads and vector arithmetic: the JIT runs
                    // those vector by vector, with uniform values as scalars.
                    let body = if self.rng.percent(33) { self.lane_local_block() } else { self.block(inner) };
                    Some(Node::Loop { trips, body })
                }
                83..=86 if ctx.loop_depth > 0 => Some(if self.rng.percent(60) {
                    Node::Break(self.pred())
                } else {
                    Node::Continue(self.pred())
                }),
                87..=89 => {
                    let first = ctx.func.map_or(0, |f| f + 1);
                    (first < self.funcs)
                        .then(|| Node::Call(self.rng.range(first as u32, self.funcs as u32 - 1) as usize))
                }
                90..=91 if ctx.func.is_some() => {
                    // An unguarded return at a function's top level would end its code early.
                    let guard = if ctx.depth == 0 { Some(self.pred()) } else { self.maybe_guard() };
                    Some(Node::Return(guard))
                }
                92 => {
                    let guard = if ctx.depth == 0 { Some(self.pred()) } else { self.maybe_guard() };
                    Some(Node::Halt(guard))
                }
                93..=95 if ctx.uniform => Some(Node::Barrier),
                96..=99 => self.mma_op(),
                _ => None,
            };
            if let Some(node) = node {
                return node;
            }
        }
    }

    /// Loads and pure vector ops only (mostly unguarded): a chunk-major loop body.
    fn lane_local_block(&mut self) -> Vec<Node> {
        let mut out = Vec::new();
        for _ in 0..self.rng.range(1, 8) {
            if self.budget == 0 {
                break;
            }
            self.budget -= 1;
            loop {
                let node = if self.rng.percent(25) { self.memory_op() } else { self.data_op() };
                let op = match &node {
                    Some(Node::Op(i) | Node::Mem { inst: i, .. } | Node::LinearMem { inst: i, .. }) => i.op,
                    _ => continue,
                };
                if crate::translate::rules::is_native(op) {
                    let mut node = node.expect("matched above");
                    if let Node::Op(i) | Node::Mem { inst: i, .. } | Node::LinearMem { inst: i, .. } =
                        &mut node
                    {
                        if self.rng.percent(80) {
                            i.guard = None;
                        }
                    }
                    out.push(node);
                    break;
                }
            }
        }
        out
    }

    /// Any op that is not memory, control or MMA, with random operands.
    fn data_op(&mut self) -> Option<Node> {
        let info = OPS[self.rng.below(OPS.len() as u32) as usize];
        let op = info.op;
        let is_data = !matches!(
            info.class,
            Class::LocalLoad
                | Class::LocalStore
                | Class::DeviceLoad
                | Class::DeviceStore
                | Class::LocalAtomic
                | Class::DeviceAtomic
                | Class::Control
                | Class::Mma
        ) && !matches!(op, Op::Return | Op::Halt | Op::Barrier);
        if !is_data || !self.allowed(op) {
            return None;
        }
        let mut inst = self.operands(op);
        inst.guard = self.maybe_guard();
        Some(Node::Op(inst))
    }

    fn memory_op(&mut self) -> Option<Node> {
        let info = OPS[self.rng.below(OPS.len() as u32) as usize];
        let op = info.op;
        let is_memory = matches!(
            info.class,
            Class::LocalLoad
                | Class::LocalStore
                | Class::DeviceLoad
                | Class::DeviceStore
                | Class::LocalAtomic
                | Class::DeviceAtomic
        );
        if !is_memory || !self.allowed(op) {
            return None;
        }
        let mut inst = self.operands(op);
        inst.rs1 = ADDR_REG;
        inst.guard = self.maybe_guard();
        let bytes = op.access_bytes();
        // Mostly naturally aligned; sometimes unaligned (allowed, bytewise).
        if bytes == 4 && self.rng.percent(35) {
            // 128 threads × 4 bytes + the offset stay inside the data (and local memory).
            let offset = 4 * self.rng.below((DATA_BYTES - 4 * 128) / 4);
            let by_thread = self.rng.percent(70);
            return Some(Node::LinearMem { by_thread, offset, inst });
        }
        let mask = if self.rng.percent(85) { (DATA_BYTES - bytes) & !(bytes - 1) } else { 0x7FF };
        Some(Node::Mem { addr: self.use_reg(), mask, inst })
    }

    fn mma_op(&mut self) -> Option<Node> {
        let op = self.rng.pick(&[Op::MmaLoadA, Op::MmaLoadB, Op::MmaStoreC, Op::MmaCompute]);
        if !self.allowed(op) {
            return None;
        }
        let frag = |g: &mut Self| g.rng.below(6) as u8;
        let stride = self.rng.pick(&[0, 16, 20, 32, 64]);
        let addr = self.use_reg();
        let mut inst = Instruction::new(op);
        match op {
            Op::MmaLoadA | Op::MmaLoadB => {
                inst.rd = frag(self);
                inst.rs1 = ADDR_REG;
                inst.rs2 = MASK_SCRATCH;
            }
            Op::MmaStoreC => {
                inst.rd = ADDR_REG;
                inst.rs1 = MASK_SCRATCH;
                inst.rs2 = frag(self);
            }
            _ => {
                (inst.rd, inst.rs1, inst.rs2) = (frag(self), frag(self), frag(self));
                return Some(Node::Op(inst));
            }
        }
        Some(Node::MmaMem { addr, stride, inst })
    }

    /// Random operands for `op` from its table entry: definitions go to data registers
    /// (pairs and quads kept inside them), uses read anything.
    fn operands(&mut self, op: Op) -> Instruction {
        let mut inst = Instruction::new(op);
        for spec in op.operands() {
            let value = match (spec.kind, spec.role) {
                (Kind::Reg, Role::Def) if spec.optional && self.rng.percent(25) => 0,
                // At W = 64 a ballot also writes rd + 1.
                (Kind::Reg, Role::Def) if op == Op::WaveBallot => self.rng.below(DATA_REGS as u32 - 1),
                (Kind::Reg, Role::Def) => self.data_reg() as u32,
                (Kind::Reg, Role::Use) => self.use_reg() as u32,
                (Kind::Pair, Role::Def) => self.rng.below(DATA_REGS as u32 - 1),
                (Kind::Pair, Role::Use) => self.rng.below(DATA_REGS as u32 - 1),
                (Kind::Quad, Role::Def) => self.rng.below(DATA_REGS as u32 - 3),
                (Kind::Quad, Role::Use) => self.rng.below(DATA_REGS as u32 - 3),
                (Kind::Pred, _) => self.rng.below(4),
                (Kind::Special, _) => self.rng.below(wave_isa::opcodes::SPECIAL_REGISTERS.len() as u32),
                (Kind::Imm, _) => random_value(self.rng),
                (Kind::Scope, _) => {
                    self.rng.pick(&[Scope::Wave, Scope::Workgroup, Scope::Device, Scope::System]) as u32
                }
                (Kind::Target, _) | (Kind::Fragment(_), _) => 0,
            };
            inst.set_slot(spec.slot, value);
        }
        inst
    }
}
