//! The random program generator: structured, valid, terminating WAVE programs whose results do
//! not depend on anything but the WAVE semantics (no out-of-bounds accesses, barriers only in
//! uniform control flow, bounded loops, no recursion), small enough for the instruction limit
//! and for the size limit of the engine under test ([`GenConfig::instruction_limit`]). Most
//! programs are a general mix ([`ProgramKind::Plain`]); a share of them stresses one corner
//! each (the other [`ProgramKind`]s).

use crate::program::*;
use crate::rng::SplitMix64;
use wave_isa::opcodes::{Class, Kind, Role, OPS};
use wave_isa::{Instruction, Op, PredRef, Scope, SpecialReg};

/// What the generator may produce.
#[derive(Clone, Debug)]
pub struct GenConfig {
    /// Upper bound on statements in the entry body (functions get a share of it).
    pub max_statements: u32,
    /// Deepest if/loop nesting (deep-nesting programs go deeper).
    pub max_depth: u32,
    /// Ops never generated (for an engine that does not support them yet).
    pub excluded_ops: Vec<Op>,
    /// Percent of programs of each special kind; the rest are [`ProgramKind::Plain`].
    pub deep_nesting_percent: u32,
    pub call_fan_percent: u32,
    pub full_device_percent: u32,
    pub inactive_lanes_percent: u32,
    pub shared_counters_percent: u32,
    /// Switch the inactive lanes of an access with out-of-range implied addresses off with
    /// its guard as well as with an `if` around it (false: only with an `if`).
    pub guarded_inactive_lanes: bool,
    /// Only programs whose results do not depend on the order workgroups run in (for a JIT
    /// with several worker threads): every workgroup has its own copy of the data area, the
    /// shared counters see only commutative atomics that return nothing, nothing else is
    /// shared (no stores near the end of the device, no 4 GiB device).
    pub order_independent: bool,
    /// The most instructions (calls inlined) the engine under test compiles at a wave width
    /// (for the JIT: `wave_jit_codegen::compiler::instruction_limit`); programs stay under
    /// nine tenths of it. `None`: no limit but the instruction limit of the run.
    pub instruction_limit: Option<fn(u32) -> u64>,
    /// The ops lane-local loop bodies are made of, among loads and lane-local data ops (for
    /// the JIT: `wave_jit_codegen::translate::rules::is_native`, the ops it lowers to vector
    /// code with no helper call, so that its chunk-major loops get exercised). It must hold
    /// for some of them. `None`: any of them.
    pub favoured_ops: Option<fn(Op) -> bool>,
}

impl Default for GenConfig {
    fn default() -> GenConfig {
        GenConfig {
            max_statements: 48,
            max_depth: 4,
            excluded_ops: Vec::new(),
            deep_nesting_percent: 4,
            call_fan_percent: 3,
            full_device_percent: 4,
            inactive_lanes_percent: 4,
            shared_counters_percent: 4,
            guarded_inactive_lanes: true,
            order_independent: false,
            instruction_limit: None,
            favoured_ops: None,
        }
    }
}

impl GenConfig {
    /// Only programs of `kind`.
    pub fn only(kind: ProgramKind) -> GenConfig {
        let percent = |k: ProgramKind| if k == kind { 100 } else { 0 };
        GenConfig {
            deep_nesting_percent: percent(ProgramKind::DeepNesting),
            call_fan_percent: percent(ProgramKind::CallFan),
            full_device_percent: percent(ProgramKind::FullDevice),
            inactive_lanes_percent: percent(ProgramKind::InactiveLanes),
            shared_counters_percent: percent(ProgramKind::SharedCounters),
            ..GenConfig::default()
        }
    }

    /// The kind of the next program, from a roll of the percentages.
    fn choose_kind(&self, rng: &mut SplitMix64) -> ProgramKind {
        let full_device = if self.order_independent { 0 } else { self.full_device_percent };
        let weights = [
            (ProgramKind::DeepNesting, self.deep_nesting_percent),
            (ProgramKind::CallFan, self.call_fan_percent),
            (ProgramKind::FullDevice, full_device),
            (ProgramKind::InactiveLanes, self.inactive_lanes_percent),
            (ProgramKind::SharedCounters, self.shared_counters_percent),
        ];
        let mut roll = rng.below(100);
        for (kind, percent) in weights {
            if roll < percent {
                return kind;
            }
            roll -= percent;
        }
        ProgramKind::Plain
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

/// Programs of a special kind that do not fit the limits are generated again; after this
/// many tries the program is a plain one.
const TRIES_PER_KIND: u32 = 8;

/// Generate one program for wave width `wave_width`.
pub fn generate(rng: &mut SplitMix64, wave_width: u32, config: &GenConfig) -> Program {
    let mut kind = config.choose_kind(rng);
    let mut tries = 0;
    loop {
        let program = generate_kind(rng, wave_width, config, kind);
        tries += 1;
        if fits_limits(&program, config) || tries >= 2 * TRIES_PER_KIND {
            return program;
        }
        if tries >= TRIES_PER_KIND {
            kind = ProgramKind::Plain;
        }
    }
}

/// Whether both engines can run `program` to the end: no workgroup can reach the instruction
/// limit and, with [`GenConfig::instruction_limit`], the engine under test compiles it (calls
/// inlined, it stays under that limit, with room to spare). A program that does not even build
/// counts as fitting, so that the fuzzer reports it.
pub fn fits_limits(program: &Program, config: &GenConfig) -> bool {
    let shape = &program.shape;
    let per_workgroup =
        program.worst_case_instructions_per_wave().saturating_mul(u64::from(shape.waves_per_workgroup()));
    if per_workgroup > crate::run::MAX_INSTRUCTIONS {
        return false;
    }
    let Some(limit) = config.instruction_limit else {
        return true;
    };
    let Ok(kernel) = crate::run::kernel_of(program) else {
        return true;
    };
    let inlined = wave_isa::analysis::inlined_instructions(&kernel);
    inlined <= limit(shape.wave_width) * 9 / 10
}

/// Whether the op of a data or memory statement reads and writes its own lane only: not a
/// store, an atomic, a wave op or a synchronisation.
fn is_lane_local(op: Op) -> bool {
    !matches!(
        op.class(),
        Class::LocalStore
            | Class::DeviceStore
            | Class::LocalAtomic
            | Class::DeviceAtomic
            | Class::Wave
            | Class::Sync
    )
}

/// Deepest loop nesting in the entry of a program that is not a deep-nesting one.
const PLAIN_LOOP_LEVELS: usize = 2;
/// Most functions of a program that is not a call fan.
const PLAIN_FUNCS: u32 = 2;
/// The product of (trips + 1) of nested loops in a deep-nesting program stays below this.
const DEEP_ITERATIONS: u32 = 64;

fn generate_kind(rng: &mut SplitMix64, wave_width: u32, config: &GenConfig, kind: ProgramKind) -> Program {
    let shape = random_shape(rng, wave_width, kind, config);
    let data = (0..shape.initialized_bytes() / 4).flat_map(|_| random_value(rng).to_le_bytes()).collect();
    let fan = kind == ProgramKind::CallFan;
    let funcs_wanted = if fan { rng.range(3, MAX_FUNCS as u32) } else { rng.below(PLAIN_FUNCS + 1) } as usize;
    let max_depth = if kind == ProgramKind::DeepNesting { rng.range(7, 10) } else { config.max_depth };
    // Add, min and max windows of one program never overlap partially: each kind keeps one
    // misalignment (overlapping windows of add do not commute: a carry out of the window is
    // dropped).
    let mut counter_misalignment = [0u32; COUNTER_CLASSES as usize];
    for m in &mut counter_misalignment {
        *m = rng.below(4);
    }
    let mut g = Gen {
        rng,
        config,
        budget: 0,
        funcs: funcs_wanted,
        kind,
        max_depth,
        shape: &shape,
        counter_misalignment,
    };
    let mut funcs = Vec::new();
    for i in 0..funcs_wanted {
        g.budget = if fan { config.max_statements / 6 } else { config.max_statements / 4 };
        let ctx = Ctx { func: Some(i), depth: 0, loop_depth: 0, uniform: false, iterations: 1 };
        let mut body = g.block(ctx);
        if fan && i + 1 < funcs_wanted {
            for _ in 0..g.rng.range(2, 3) {
                let at = g.rng.below(body.len() as u32 + 1) as usize;
                body.insert(at, Node::Call(i + 1));
            }
        }
        funcs.push(body);
    }
    g.budget = config.max_statements;
    let mut entry = g.prologue();
    let ctx = Ctx { func: None, depth: 0, loop_depth: 0, uniform: true, iterations: 1 };
    let mut body = g.block(ctx);
    if fan {
        for _ in 0..g.rng.range(1, 2) {
            let at = g.rng.below(body.len() as u32 + 1) as usize;
            body.insert(at, Node::Call(0));
        }
    }
    entry.extend(body);
    Program { entry, funcs, shape, data, kind }
}

fn random_shape(rng: &mut SplitMix64, w: u32, kind: ProgramKind, config: &GenConfig) -> Shape {
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
    let mut grid = [rng.range(1, 2), if rng.percent(15) { 2 } else { 1 }];
    if kind == ProgramKind::SharedCounters {
        // Enough workgroups for several worker threads to update the counters at once.
        grid = [rng.range(3, 8), 1];
    }
    if config.order_independent {
        grid[1] = 1;
    }
    let initial_registers =
        (0..rng.below(3)).map(|_| (rng.below(REGISTERS) as u8, random_value(rng))).collect();
    Shape {
        grid,
        workgroup: [x, y],
        wave_width: w,
        initial_registers,
        data_copies: if config.order_independent { grid[0] } else { 1 },
        full_device: kind == ProgramKind::FullDevice,
    }
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
    /// Product of (trips + 1) of the enclosing loops.
    iterations: u32,
}

struct Gen<'a> {
    rng: &'a mut SplitMix64,
    config: &'a GenConfig,
    budget: u32,
    funcs: usize,
    kind: ProgramKind,
    max_depth: u32,
    shape: &'a Shape,
    /// Per counter kind, the misalignment of its windows (see [`Gen::counter_atomic`]).
    counter_misalignment: [u32; COUNTER_CLASSES as usize],
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
                    out.push(Node::Mem {
                        area: Area::Data,
                        addr: r,
                        mask: DATA_BYTES - 4,
                        offset: 0,
                        inst: load,
                    });
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

    fn deep(&self) -> bool {
        self.kind == ProgramKind::DeepNesting
    }

    fn block(&mut self, ctx: Ctx) -> Vec<Node> {
        let mut out = Vec::new();
        let len = self.rng.range(1, 8);
        for _ in 0..len {
            if self.budget == 0 {
                break;
            }
            self.budget -= 1;
            let node = self.statement(ctx);
            if let Node::If { pred, .. } = &node {
                if self.deep() && self.rng.percent(30) {
                    // A uniform condition (x < x is false everywhere; negated, true): the
                    // engines still charge every instruction of the skipped body.
                    let op = self.rng.pick(&[Op::IcmpLt, Op::UcmpLt, Op::IcmpGt]);
                    let r = self.use_reg();
                    out.push(Node::Op(inst3(op, pred.index, r, r)));
                }
            }
            out.push(node);
        }
        out
    }

    /// A loop or an if one level deeper.
    fn nested(&mut self, ctx: Ctx, max_loops: usize) -> Node {
        let loop_ok = ctx.loop_depth < max_loops && ctx.iterations * 2 <= DEEP_ITERATIONS.max(16);
        if loop_ok && self.rng.percent(if self.deep() { 60 } else { 40 }) {
            // The trip count is uniform, so the body is still uniform if the loop is; but a
            // divergent break inside makes waves leave at different times, so barriers stay
            // out of loops.
            let trips = if self.deep() {
                let room = DEEP_ITERATIONS / ctx.iterations;
                self.rng.range(if room >= 3 { 1 } else { 0 }, (room - 1).min(2))
            } else {
                self.rng.range(0, 3)
            };
            let inner = Ctx {
                depth: ctx.depth + 1,
                loop_depth: ctx.loop_depth + 1,
                uniform: false,
                iterations: ctx.iterations * (trips + 1),
                ..ctx
            };
            // A third of the loops hold only loads and vector arithmetic: the JIT runs those
            // vector by vector, with uniform values as scalars.
            let lane_local = !self.deep() && self.rng.percent(33);
            let body = if lane_local { self.lane_local_block() } else { self.block(inner) };
            return Node::Loop { trips, body };
        }
        let inner = Ctx { depth: ctx.depth + 1, uniform: false, ..ctx };
        let pred = self.pred();
        let then_body = self.block(inner);
        let else_body = self.rng.percent(50).then(|| self.block(inner));
        Node::If { pred, then_body, else_body }
    }

    fn statement(&mut self, ctx: Ctx) -> Node {
        let nest_ok = ctx.depth < self.max_depth;
        let max_loops = if ctx.func.is_some() {
            1
        } else if self.deep() {
            ENTRY_COUNTERS.len()
        } else {
            PLAIN_LOOP_LEVELS
        };
        if self.deep() {
            // Mostly nesting and divergent exits, so that the chains reach the depth.
            if nest_ok && self.rng.percent(45) {
                return self.nested(ctx, max_loops);
            }
            if ctx.loop_depth > 0 && self.rng.percent(20) {
                return if self.rng.percent(60) {
                    Node::Break(self.pred())
                } else {
                    Node::Continue(self.pred())
                };
            }
        }
        let memory_kind = matches!(
            self.kind,
            ProgramKind::FullDevice | ProgramKind::InactiveLanes | ProgramKind::SharedCounters
        );
        if memory_kind && self.rng.percent(25) {
            // More accesses than a plain program has (bounded tries: every memory op may be
            // excluded).
            for _ in 0..100 {
                if let Some(node) = self.memory_op() {
                    return node;
                }
            }
        }
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
                68..=82 if nest_ok => Some(self.nested(ctx, max_loops)),
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

    /// Loads and lane-local data ops only, of [`GenConfig::favoured_ops`] (mostly unguarded):
    /// a chunk-major loop body.
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
                if is_lane_local(op) && self.config.favoured_ops.is_none_or(|favoured| favoured(op)) {
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
        let counters_percent = if self.kind == ProgramKind::SharedCounters { 40 } else { 3 };
        if self.rng.percent(counters_percent) {
            return self.counter_atomic();
        }
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
        let device = is_device_access(op);
        if self.shape.full_device && device && self.rng.percent(60) {
            return Some(self.near_top(inst));
        }
        // Mostly naturally aligned; sometimes unaligned (allowed, bytewise).
        let linear_percent = if self.kind == ProgramKind::InactiveLanes { 70 } else { 35 };
        if bytes == 4 && self.rng.percent(linear_percent) {
            let partial_percent = if self.kind == ProgramKind::InactiveLanes { 85 } else { 10 };
            if self.rng.percent(partial_percent) {
                return Some(self.partial_linear(inst));
            }
            // 128 threads × 4 bytes + the offset stay inside the data (and local memory).
            let offset = 4 * self.rng.below((DATA_BYTES - 4 * 128) / 4);
            let by_thread = self.rng.percent(70);
            return Some(Node::LinearMem {
                by_thread,
                offset,
                from_end: false,
                active: None,
                by_if: false,
                inst,
            });
        }
        let mask = if self.rng.percent(85) { (DATA_BYTES - bytes) & !(bytes - 1) } else { 0x7FF };
        Some(Node::Mem { area: Area::Data, addr: self.use_reg(), mask, offset: 0, inst })
    }

    /// A device access near 2^32 on a 4 GiB device: masked into the top window, or (4-byte
    /// accesses) consecutive lanes from just below 2^32 that wrap around to address 0.
    fn near_top(&mut self, inst: Instruction) -> Node {
        let bytes = inst.op.access_bytes();
        if bytes == 4 && self.rng.percent(75) {
            // Lanes 0..j-1 below 2^32, the rest from 0 up (at most 128 × 4 bytes: in the data
            // area). Aligned, so no access straddles 2^32.
            let lanes_at_top = self.rng.range(1, 64);
            let by_thread = self.rng.percent(60);
            return Node::LinearMem {
                by_thread,
                offset: 4 * lanes_at_top,
                from_end: true,
                active: None,
                by_if: false,
                inst,
            };
        }
        let mask = if self.rng.percent(85) { (TOP_WINDOW_BYTES - bytes) & !(bytes - 1) } else { 0x7FF };
        // Sometimes shifted up so that the highest masked access ends exactly at 2^32.
        let offset = if self.rng.percent(30) { TOP_WINDOW_BYTES - bytes - mask } else { 0 };
        Node::Mem { area: Area::Top, addr: self.use_reg(), mask, offset, inst }
    }

    /// A consecutive-word access in which only ids `lo..hi` take part and the others' implied
    /// addresses are out of range: below zero (`a[t - j]` with `a` at 0: the first ids wrap to
    /// near 2^32), or past the end of local or device memory.
    fn partial_linear(&mut self, inst: Instruction) -> Node {
        let device = is_device_access(inst.op);
        let by_thread = self.rng.percent(60);
        let by_if = self.rng.percent(40) || !self.config.guarded_inactive_lanes;
        let misalignment = if self.rng.percent(20) { self.rng.range(1, 3) } else { 0 };
        // The end of the device is the dump area, which every workgroup writes.
        let past_end_ok = !device || !self.config.order_independent;
        if past_end_ok && self.rng.percent(50) {
            // Ids below `hi` end at or before the end; id `hi` and up would be out of range.
            let hi = self.rng.range(1, 64);
            let lo = self.rng.below(hi.min(4));
            let offset = 4 * hi + misalignment;
            return Node::LinearMem {
                by_thread,
                offset,
                from_end: true,
                active: Some((lo, hi)),
                by_if,
                inst,
            };
        }
        // Ids below `j` would be below address zero; ids from `lo >= j` are active.
        let j = self.rng.range(1, 8);
        let lo = j + self.rng.below(3);
        let hi = lo + self.rng.range(1, 128);
        let offset = (4 * j).wrapping_neg() + misalignment;
        Node::LinearMem { by_thread, offset, from_end: false, active: Some((lo, hi)), by_if, inst }
    }

    /// A commutative atomic (add/sub, or, and, xor, min, max) on the shared counters, where
    /// every workgroup may update the same words. Each kind has a region of its own. The
    /// bitwise kinds commute at any overlap, so their windows go to any byte; add/sub, min
    /// and max windows keep their kind's misalignment so that two never overlap partially.
    /// With `order_independent` the old value is not returned (it depends on the order).
    fn counter_atomic(&mut self) -> Option<Node> {
        let op = self.rng.pick(&[
            Op::AtomicAdd,
            Op::AtomicSub,
            Op::AtomicOr,
            Op::AtomicAnd,
            Op::AtomicXor,
            Op::AtomicMin,
            Op::AtomicMax,
        ]);
        if !self.allowed(op) {
            return None;
        }
        let class = match op {
            Op::AtomicAdd | Op::AtomicSub => 0,
            Op::AtomicOr => 1,
            Op::AtomicAnd => 2,
            Op::AtomicXor => 3,
            Op::AtomicMin => 4,
            _ => 5,
        };
        let mut inst = self.operands(op);
        inst.rs1 = ADDR_REG;
        inst.guard = self.maybe_guard();
        if self.config.order_independent || self.rng.percent(50) {
            inst.rd = 0;
        }
        let region = class * COUNTER_CLASS_BYTES;
        let (mask, offset) = if matches!(op, Op::AtomicOr | Op::AtomicAnd | Op::AtomicXor) {
            (0x3F, region)
        } else {
            (0x3C, region + self.counter_misalignment[class as usize])
        };
        Some(Node::Mem { area: Area::Counters, addr: self.use_reg(), mask, offset, inst })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case_program;

    const WIDTHS: [u32; 5] = [4, 8, 16, 32, 64];

    /// Every node of a program, depth first, with its if/loop nesting depth.
    fn walk<'a>(block: &'a [Node], depth: u32, out: &mut Vec<(&'a Node, u32)>) {
        for node in block {
            out.push((node, depth));
            match node {
                Node::If { then_body, else_body, .. } => {
                    walk(then_body, depth + 1, out);
                    if let Some(e) = else_body {
                        walk(e, depth + 1, out);
                    }
                }
                Node::Loop { body, .. } => walk(body, depth + 1, out),
                _ => {}
            }
        }
    }

    fn nodes(p: &Program) -> Vec<(&Node, u32)> {
        let mut out = Vec::new();
        walk(&p.entry, 0, &mut out);
        for f in &p.funcs {
            walk(f, 0, &mut out);
        }
        out
    }

    /// Deepest chain of nested loops in a block.
    fn loop_depth(block: &[Node]) -> u32 {
        block
            .iter()
            .map(|n| match n {
                Node::Loop { body, .. } => 1 + loop_depth(body),
                Node::If { then_body, else_body, .. } => {
                    loop_depth(then_body).max(else_body.as_ref().map_or(0, |e| loop_depth(e)))
                }
                _ => 0,
            })
            .max()
            .unwrap_or(0)
    }

    /// The size limit of the engine under test in these tests: fewer instructions at wider
    /// waves (5,555 at W = 64).
    fn size_limit(width: u32) -> u64 {
        400_000 / u64::from(width + 8)
    }

    /// `config` for an engine with [`size_limit`].
    fn limited(config: GenConfig) -> GenConfig {
        GenConfig { instruction_limit: Some(size_limit), ..config }
    }

    fn programs(config: &GenConfig, count: u64) -> Vec<Program> {
        (0..count).map(|case| case_program(0xC0DE, case, &WIDTHS, config).1).collect()
    }

    #[test]
    fn a_default_session_mixes_every_kind() {
        let config = limited(GenConfig::default());
        let all = programs(&config, 600);
        for kind in ProgramKind::ALL {
            let n = all.iter().filter(|p| p.kind == kind).count();
            assert!(n >= 5, "{} programs of kind {kind:?} in 600", n);
        }
        let special = all.iter().filter(|p| p.kind != ProgramKind::Plain).count();
        assert!((60..=160).contains(&special), "{special} of 600 programs are of a special kind");
        assert!(all.iter().all(|p| fits_limits(p, &config)), "every program fits both limits");
    }

    #[test]
    fn deep_nesting_programs_nest_divergent_loops_deeply() {
        let all = programs(&GenConfig::only(ProgramKind::DeepNesting), 100);
        let deep: Vec<&Program> = all.iter().filter(|p| p.kind == ProgramKind::DeepNesting).collect();
        assert!(deep.len() >= 90, "{} of 100 stayed deep-nesting programs", deep.len());
        let deepest = deep.iter().map(|p| nodes(p).iter().map(|(_, d)| *d).max().unwrap_or(0)).max();
        assert!(deepest >= Some(7), "deepest nesting {deepest:?}");
        assert!(deepest <= Some(10), "deepest nesting {deepest:?}");
        let loops_5_deep = deep.iter().filter(|p| loop_depth(&p.entry) >= 5).count();
        assert!(loops_5_deep >= 20, "{loops_5_deep} programs nest 5 loops or more");
        // Breaks and continues inside at least 3 loops, and ifs with a uniform condition.
        let exits_deep = deep
            .iter()
            .filter(|p| {
                nodes(p).iter().any(|(n, d)| matches!(n, Node::Break(_) | Node::Continue(_)) && *d >= 3)
            })
            .count();
        assert!(exits_deep >= 50, "{exits_deep} programs break or continue at depth 3 or more");
        let uniform_if = deep.iter().any(|p| {
            p.entry.windows(2).any(|w| match w {
                [Node::Op(cmp), Node::If { pred, .. }] => cmp.rs1 == cmp.rs2 && cmp.rd == pred.index,
                _ => false,
            })
        });
        assert!(uniform_if, "some if has a uniformly false condition");
    }

    #[test]
    fn call_fan_programs_call_each_function_several_times() {
        let all = programs(&limited(GenConfig::only(ProgramKind::CallFan)), 60);
        let fans: Vec<&Program> = all.iter().filter(|p| p.kind == ProgramKind::CallFan).collect();
        assert!(fans.len() >= 50, "{} of 60 stayed call fans", fans.len());
        for p in fans {
            assert!(p.funcs.len() >= 3);
            for (i, f) in p.funcs.iter().enumerate().take(p.funcs.len() - 1) {
                let calls_next = f.iter().filter(|n| matches!(n, Node::Call(c) if *c == i + 1)).count();
                assert!(calls_next >= 2, "function {i} calls the next {calls_next} times");
            }
            let kernel = crate::run::kernel_of(p).expect("builds");
            let inlined = wave_isa::analysis::inlined_instructions(&kernel);
            assert!(inlined <= size_limit(p.shape.wave_width));
        }
    }

    #[test]
    fn full_device_programs_access_near_2_pow_32() {
        let all = programs(&GenConfig::only(ProgramKind::FullDevice), 60);
        let (mut top, mut wrapping) = (0, 0);
        for p in all.iter().filter(|p| p.kind == ProgramKind::FullDevice) {
            assert!(p.shape.full_device);
            assert_eq!(p.shape.device_bytes(), 1 << 32);
            // Compared: the bottom and the top window, not 4 GiB.
            let compared: u64 = p.shape.compared_ranges().iter().map(|r| r.end - r.start).sum();
            assert!(compared < 1 << 20, "{compared} bytes compared");
            for (n, _) in nodes(p) {
                match n {
                    Node::Mem { area: Area::Top, .. } => top += 1,
                    Node::LinearMem { from_end: true, inst, .. } if is_device_access(inst.op) => {
                        wrapping += 1
                    }
                    _ => {}
                }
            }
        }
        assert!(top >= 20 && wrapping >= 15, "{top} top-window and {wrapping} wrapping accesses");
    }

    #[test]
    fn inactive_lane_programs_have_out_of_range_implied_addresses() {
        let all = programs(&GenConfig::only(ProgramKind::InactiveLanes), 60);
        let (mut below_zero, mut past_end, mut local) = (0, 0, 0);
        for p in &all {
            for (n, _) in nodes(p) {
                if let Node::LinearMem { offset, from_end, active: Some((lo, hi)), inst, .. } = n {
                    assert!(lo < hi);
                    if *from_end {
                        // Id `hi` would start at the end (or straddle it).
                        assert!(*offset >= 4 * hi && *offset < 4 * hi + 4);
                        past_end += 1;
                    } else {
                        // Id 0 would be below address zero; the first active id is not.
                        assert!(offset.wrapping_add(4 * lo) < DATA_BYTES && *offset > u32::MAX / 2);
                        below_zero += 1;
                    }
                    local += usize::from(!is_device_access(inst.op));
                }
            }
        }
        assert!(below_zero >= 30 && past_end >= 20 && local >= 10, "{below_zero} {past_end} {local}");
    }

    #[test]
    fn shared_counter_programs_update_counters_from_several_workgroups() {
        let all = programs(&GenConfig::only(ProgramKind::SharedCounters), 60);
        let mut unaligned = 0;
        for p in all.iter().filter(|p| p.kind == ProgramKind::SharedCounters) {
            assert!(p.shape.grid[0] >= 3);
            let mut misalignment = std::collections::HashMap::new();
            for (n, _) in nodes(p) {
                if let Node::Mem { area: Area::Counters, offset, mask, inst, .. } = n {
                    let class = offset / COUNTER_CLASS_BYTES;
                    if *mask == 0x3C {
                        // Add, min and max windows of one kind never overlap partially.
                        let m = misalignment.entry(class).or_insert(offset % 4);
                        assert_eq!(*m, offset % 4, "{:?}", inst.op);
                        unaligned += usize::from(offset % 4 != 0);
                    } else {
                        assert!(matches!(inst.op, Op::AtomicOr | Op::AtomicAnd | Op::AtomicXor));
                        unaligned += 1;
                    }
                }
            }
        }
        assert!(unaligned >= 50, "{unaligned} unaligned counter atomics");
    }

    #[test]
    fn lane_local_loops_are_made_of_the_favoured_ops() {
        let only_fadd = |block: &[Node]| {
            !block.is_empty() && block.iter().all(|n| matches!(n, Node::Op(i) if i.op == Op::Fadd))
        };
        let fadd_loops = |config: &GenConfig| {
            let all = programs(config, 200);
            let loops = all
                .iter()
                .flat_map(nodes)
                .filter(|(n, _)| matches!(n, Node::Loop { body, .. } if only_fadd(body)));
            loops.count()
        };
        let favoured = GenConfig { favoured_ops: Some(|op| op == Op::Fadd), ..GenConfig::default() };
        let (with, without) = (fadd_loops(&favoured), fadd_loops(&GenConfig::default()));
        assert!(with >= 20 && without <= 2, "{with} loops of fadd alone, {without} without favoured ops");
    }

    #[test]
    fn order_independent_programs_share_nothing_but_commutative_counters() {
        let config = GenConfig { order_independent: true, ..GenConfig::default() };
        let all = programs(&config, 400);
        assert!(all.iter().any(|p| p.kind == ProgramKind::SharedCounters));
        for p in &all {
            let s = &p.shape;
            assert!(!s.full_device);
            assert_eq!((s.grid[1], s.data_copies), (1, s.grid[0]));
            for (n, _) in nodes(p) {
                match n {
                    Node::Mem { area: Area::Counters, inst, .. } => {
                        assert_eq!(inst.rd, 0, "a counter atomic returns nothing");
                        assert!(matches!(
                            inst.op,
                            Op::AtomicAdd
                                | Op::AtomicSub
                                | Op::AtomicOr
                                | Op::AtomicAnd
                                | Op::AtomicXor
                                | Op::AtomicMin
                                | Op::AtomicMax
                        ));
                    }
                    Node::Mem { area: Area::Top, .. } => panic!("no top window"),
                    Node::LinearMem { from_end: true, inst, .. } => assert!(!is_device_access(inst.op)),
                    _ => {}
                }
            }
        }
    }
}
