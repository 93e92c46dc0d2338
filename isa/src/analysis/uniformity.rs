//! Uniformity and lane-affine analysis, for the JIT (jit-design.md §3).
//!
//! A forward dataflow over the statement tree that tells, for every statement, whether the
//! values it writes are the same in every lane that runs it ([`Value::Uniform`]), of the form
//! `base + lane_id × stride` with a uniform base ([`Value::Affine`]), or neither
//! ([`Value::Varying`]); and whether the predicate of each `if`/`break`/`continue` is uniform.
//!
//! # Meaning of a [`Value`]
//! A value is described **among the lanes active at that statement**. Inside a divergent
//! region a register can be uniform among the active lanes while the whole wave holds
//! different values; after the region (the `endif`, the loop exit, the call's return) every
//! register written under lane-dependent control becomes [`Value::Varying`] (sync
//! dependence). A JIT that keeps a uniform value as a scalar must therefore blend it into
//! the vector register when it is written under a partial mask ([`StmtUniformity::divergent`]).
//!
//! # Seeds
//! - Uniform: every register and predicate at kernel entry (registers start as 0 or as the
//!   same `--set-reg` value in every thread; predicates start false), `mov_imm`, special
//!   registers other than lane and thread ids, results of `wave_broadcast`, `wave_ballot`,
//!   `wave_any`, `wave_all` and `wave_reduce_*`, loads from a uniform address.
//! - Affine: `sr_lane_id` (stride 1). With [`UniformityOptions::rows_fill_waves`],
//!   `sr_thread_id_x` too (stride 1), and `sr_thread_id_y/z` are uniform.
//! - Varying: thread ids otherwise, atomics' returned values, shuffles, `wave_prefix_sum`.
//!
//! Arithmetic: `iadd`, `isub`, `imul`/`shl` by a known constant, `imad` and `mov` keep the
//! affine form (strides and constants in wrapping 32-bit arithmetic); `select` on a uniform
//! predicate between equal forms keeps it; any other op is uniform when every input is,
//! varying otherwise. A guarded op writes a varying result when its guard is varying.
//!
//! Loops iterate to a fixed point. Calls are analysed in the context of each call site
//! (they are inlined by the JIT anyway) and the per-statement results of all contexts are
//! joined. The work is bounded: a kernel too large to analyse within the budget, or an
//! unvalidated one with recursion, gets the conservative answer (everything varying).

use crate::instr::Instruction;
use crate::ir::{Block, FuncId, Kernel, Stmt, StmtKind, MAX_CALL_DEPTH};
use crate::opcodes::{Class, Kind, Op, Role, Slot, SpecialReg};
use std::collections::HashMap;

/// What is known about a 32-bit register or a predicate across the active lanes of a wave.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    /// The same in every active lane; `Some(c)` when it is known to be the constant `c`.
    Uniform(Option<u32>),
    /// `base + lane_id * stride` (wrapping), with a uniform `base` and a non-zero `stride`
    /// (two's complement: `u32::MAX` is −1).
    Affine { stride: u32 },
    /// Anything else.
    Varying,
}

impl Value {
    pub fn is_uniform(self) -> bool {
        matches!(self, Value::Uniform(_))
    }
    /// The stride in lanes: 0 for uniform values, `None` for varying ones.
    pub fn stride(self) -> Option<u32> {
        match self {
            Value::Uniform(_) => Some(0),
            Value::Affine { stride } => Some(stride),
            Value::Varying => None,
        }
    }
    fn constant(self) -> Option<u32> {
        match self {
            Value::Uniform(c) => c,
            _ => None,
        }
    }
    fn from_stride(stride: u32, constant: Option<u32>) -> Value {
        if stride == 0 {
            Value::Uniform(constant)
        } else {
            Value::Affine { stride }
        }
    }
    /// The least value describing both (the lattice join).
    pub fn join(self, other: Value) -> Value {
        match (self, other) {
            (a, b) if a == b => a,
            (Value::Uniform(_), Value::Uniform(_)) => Value::Uniform(None),
            _ => Value::Varying,
        }
    }
}

/// Facts about the dispatch that sharpen the analysis.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UniformityOptions {
    /// The workgroup's x size is a multiple of the wave width, so in every wave
    /// `sr_thread_id_x = base + lane` and `sr_thread_id_y/z` are uniform.
    pub rows_fill_waves: bool,
    /// log2 of the lanes in the analysed "wave" (the real wave, or one vector of a JIT's
    /// lane vectors), when known. Its lane 0 is then a multiple of that many lanes, which lets
    /// the analysis follow `shr`/`and` of affine values (`t / 64`, `t % 64` of a thread index)
    /// where no lane crosses a power-of-two boundary. 0: unknown.
    pub lanes_log2: u8,
}

/// What the analysis says about one statement (joined over every context it runs in).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StmtUniformity {
    /// For an `Op`: one value per operand, in the order of `inst.operands()`. A used operand
    /// gets its value before the statement (immediates are uniform constants, a pair or
    /// quad is uniform when all its registers are, varying otherwise); a defined operand gets
    /// the value written (for a pair or quad: its first register's).
    /// Empty for other statements.
    pub operands: Vec<Value>,
    /// The value written to the registers/predicates the statement defines, if any.
    pub result: Option<Value>,
    /// For `if`, `break`, `continue`: the predicate's value (negation does not matter).
    pub pred: Option<Value>,
    /// The statement may run on a lane-dependent subset of the lanes that entered its
    /// function: it is inside an `if` with a varying predicate, or after a varying
    /// `break`/`continue`/`return`. Writes must then be masked.
    pub divergent: bool,
    /// For `break`/`continue`: lanes may leave at different times (varying predicate, or
    /// divergent control inside the loop). When false, every active lane takes it together
    /// and a real branch is correct.
    pub divergent_exit: bool,
    /// For a `barrier`: what is known of each register (0..=255) and predicate (256..=259)
    /// as the wave reaches it (what a JIT that stores the wave's state there may keep as a
    /// scalar or a constant). Empty for other statements.
    pub state: Vec<Value>,
}

/// The analysis result for one kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Uniformity {
    stmts: HashMap<(FuncId, u32), StmtUniformity>,
    /// True when the budget ran out (or the call graph recursed) and everything is varying.
    pub conservative: bool,
}

impl Uniformity {
    /// The facts about the statement at byte `offset` of function `func`.
    /// `None` for statements the analysis never reached (and, in a conservative result,
    /// for every statement: treat as varying and divergent).
    pub fn get(&self, func: FuncId, offset: u32) -> Option<&StmtUniformity> {
        self.stmts.get(&(func, offset))
    }
    /// What is known about the operand in `slot` of the op `inst` at `offset`.
    pub fn operand(&self, func: FuncId, offset: u32, inst: &Instruction, slot: Slot) -> Option<Value> {
        let info = self.get(func, offset)?;
        inst.operands().zip(&info.operands).find(|((spec, _), _)| spec.slot == slot).map(|(_, &v)| v)
    }
    /// Whether the value written by the statement is uniform (false when unknown).
    pub fn result_is_uniform(&self, func: FuncId, offset: u32) -> bool {
        self.get(func, offset).and_then(|s| s.result).is_some_and(Value::is_uniform)
    }
    /// Whether the predicate of the `if`/`break`/`continue` at `offset` is uniform.
    pub fn pred_is_uniform(&self, func: FuncId, offset: u32) -> bool {
        self.get(func, offset).and_then(|s| s.pred).is_some_and(Value::is_uniform)
    }
}

/// Analyse a kernel with no dispatch facts.
pub fn uniformity(kernel: &Kernel) -> Uniformity {
    uniformity_with(kernel, UniformityOptions::default())
}

/// Analyse a kernel, using what is known about the dispatch.
pub fn uniformity_with(kernel: &Kernel, options: UniformityOptions) -> Uniformity {
    analyse_kernel(kernel, options, true)
}

/// The analysis; `reuse_exits`: whether loops met again take their exits from where they
/// settled ([`Settled`]) when that is exact (only tests compare it with walking every time).
fn analyse_kernel(kernel: &Kernel, options: UniformityOptions, reuse_exits: bool) -> Uniformity {
    let mut statements = 0usize;
    kernel.walk(&mut |_, _, _| statements += 1);
    let mut walker = Walker {
        kernel,
        options,
        stmts: HashMap::new(),
        budget: 200_000usize.saturating_add(statements.saturating_mul(64)),
        out_of_budget: false,
        call_stack: vec![0],
        written: Vec::new(),
        loops: Vec::new(),
        funcs: vec![FuncFrame::default()],
        loop_headers: HashMap::new(),
        reuse_exits,
    };
    let mut state = State::entry();
    if let Some(entry) = kernel.funcs.first() {
        walker.block(0, &entry.body, &mut state, Ctx::default());
    }
    if walker.out_of_budget {
        return Uniformity { stmts: HashMap::new(), conservative: true };
    }
    Uniformity { stmts: walker.stmts, conservative: false }
}

/// Registers 0..=255 then predicates 0..=3.
const SLOTS: usize = 260;
const PRED_BASE: usize = 256;

/// Per slot: its value, and its alignment: log2 of a power of two known to divide the value
/// (uniform) or its lane-0 base (affine), up to 32 (0 = nothing known).
#[derive(Clone, PartialEq, Eq)]
struct State(Vec<Value>, Vec<u8>);

impl State {
    fn entry() -> State {
        let mut v = vec![Value::Uniform(None); SLOTS];
        for p in &mut v[PRED_BASE..] {
            *p = Value::Uniform(Some(0));
        }
        State(v, vec![0; SLOTS])
    }
    fn join_from(&mut self, other: &State) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a = a.join(*b);
        }
        for (a, b) in self.1.iter_mut().zip(&other.1) {
            *a = (*a).min(*b);
        }
    }
    fn align(&self, slot: u32) -> u8 {
        self.1.get(slot as usize).copied().unwrap_or(0)
    }
    fn reg(&self, r: u32) -> Value {
        self.0.get(r as usize).copied().unwrap_or(Value::Varying)
    }
    fn pred(&self, p: u32) -> Value {
        self.0.get(PRED_BASE + p as usize).copied().unwrap_or(Value::Varying)
    }
}

/// Set of slots written in a region.
#[derive(Clone, Default)]
struct Written(Vec<u64>);

impl Written {
    fn new() -> Written {
        Written(vec![0; SLOTS.div_ceil(64)])
    }
    fn insert(&mut self, slot: usize) {
        if let Some(w) = self.0.get_mut(slot / 64) {
            *w |= 1 << (slot % 64);
        }
    }
    fn merge(&mut self, other: &Written) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a |= b;
        }
    }
    fn make_varying(&self, state: &mut State) {
        for (slot, v) in state.0.iter_mut().enumerate() {
            if self.0[slot / 64] & (1 << (slot % 64)) != 0 {
                *v = Value::Varying;
                state.1[slot] = 0;
            }
        }
    }
}

#[derive(Clone, Copy, Default)]
struct Ctx {
    /// Divergent since the entry of the current function.
    divergent: bool,
    /// Divergent since the entry of the innermost loop (of the current function).
    loop_divergent: bool,
    /// A divergent `break`/`continue`/`return` happened earlier in this region: the lanes
    /// still active after the region are a lane-dependent subset.
    exited: bool,
}

#[derive(Default)]
struct LoopFrame {
    break_state: Option<State>,
    continue_state: Option<State>,
    varying_break: bool,
    varying_continue: bool,
}

#[derive(Default)]
struct FuncFrame {
    return_state: Option<State>,
    varying_return: bool,
}

struct Walker<'a> {
    kernel: &'a Kernel,
    options: UniformityOptions,
    stmts: HashMap<(FuncId, u32), StmtUniformity>,
    budget: usize,
    out_of_budget: bool,
    call_stack: Vec<FuncId>,
    /// Slots written, one set per open region (if branch, loop body, callee).
    written: Vec<Written>,
    loops: Vec<LoopFrame>,
    funcs: Vec<FuncFrame>,
    /// The header state each loop of the function being walked (in this call) last settled
    /// at. An enclosing loop walks its body again until its own header settles, so an inner
    /// loop is met once per outer trip, each time with an entry state no smaller than before
    /// (states only grow): starting from where it settled last reaches the same fixed point
    /// without climbing to it again. Without this a nest of d loops took ~2^d walks of the
    /// innermost body (32 nested loops ran out of the budget).
    loop_headers: HashMap<(FuncId, u32), Settled>,
    reuse_exits: bool,
}

/// Where a loop settled, with what its settling walk of the body found: met again with an
/// entry for which that walk would be repeated unchanged (see [`Settled::exit_for`]), the loop
/// takes its exit from here instead of walking its body. A nest of d loops then walks each
/// body about twice, not once per trip of every loop around it (d²/2 walks; the conformance
/// suite's 64-deep nest spent a sixth of its compile time re-walking).
struct Settled {
    header: State,
    /// Whether the walk ran with divergent control.
    divergent: bool,
    /// The body's end state joined with its `continue` states.
    body_out: State,
    varying_continue: bool,
    written: Written,
    exit: State,
}

impl Settled {
    /// The loop's exit state for `entry` under `divergent` control, if walking from this
    /// header settles at once: the walk from the same header is the same walk, and its
    /// back-edge state is `entry` joined with what the body gives.
    fn exit_for(&self, entry: &State, divergent: bool) -> Option<&State> {
        let mut next = entry.clone();
        next.join_from(&self.body_out);
        if self.varying_continue {
            self.written.make_varying(&mut next);
        }
        (divergent == self.divergent && next == self.header).then_some(&self.exit)
    }
}

fn join_into(target: &mut Option<State>, state: &State) {
    match target {
        Some(t) => t.join_from(state),
        None => *target = Some(state.clone()),
    }
}

impl Walker<'_> {
    fn record(&mut self, func: FuncId, stmt: &Stmt, info: StmtUniformity) {
        match self.stmts.get_mut(&(func, stmt.offset)) {
            None => {
                self.stmts.insert((func, stmt.offset), info);
            }
            Some(old) => {
                for (a, b) in old.operands.iter_mut().zip(&info.operands) {
                    *a = a.join(*b);
                }
                for (a, b) in old.state.iter_mut().zip(&info.state) {
                    *a = a.join(*b);
                }
                old.result = match (old.result, info.result) {
                    (Some(a), Some(b)) => Some(a.join(b)),
                    (a, b) => a.or(b),
                };
                old.pred = match (old.pred, info.pred) {
                    (Some(a), Some(b)) => Some(a.join(b)),
                    (a, b) => a.or(b),
                };
                old.divergent |= info.divergent;
                old.divergent_exit |= info.divergent_exit;
            }
        }
    }

    fn write(&mut self, state: &mut State, slot: usize, value: Value, align: u8) {
        if let Some(v) = state.0.get_mut(slot) {
            *v = value;
            state.1[slot] = if value == Value::Varying { 0 } else { align };
        }
        if let Some(w) = self.written.last_mut() {
            w.insert(slot);
        }
    }

    /// Walk a block in a fresh written-set; returns the slots it wrote.
    /// Walk a block in a fresh written-set; returns the slots it wrote and the final context.
    fn region(&mut self, func: FuncId, block: &Block, state: &mut State, ctx: Ctx) -> (Written, Ctx) {
        self.written.push(Written::new());
        let end = self.block(func, block, state, ctx);
        let written = self.written.pop().unwrap_or_default();
        if let Some(parent) = self.written.last_mut() {
            parent.merge(&written);
        }
        (written, end)
    }

    fn block(&mut self, func: FuncId, block: &Block, state: &mut State, mut ctx: Ctx) -> Ctx {
        for stmt in block {
            if self.out_of_budget {
                break;
            }
            match self.budget.checked_sub(1) {
                Some(b) => self.budget = b,
                None => {
                    self.out_of_budget = true;
                    break;
                }
            }
            self.stmt(func, stmt, state, &mut ctx);
        }
        ctx
    }

    fn stmt(&mut self, func: FuncId, stmt: &Stmt, state: &mut State, ctx: &mut Ctx) {
        let mut info = StmtUniformity {
            operands: Vec::new(),
            result: None,
            pred: None,
            divergent: ctx.divergent,
            divergent_exit: false,
            state: Vec::new(),
        };
        match &stmt.kind {
            StmtKind::Op(inst) => self.op(inst, state, &mut info),
            StmtKind::If { pred, then_body, else_body, .. } => {
                let p = state.pred(pred.index as u32);
                info.pred = Some(p);
                let varying = !p.is_uniform();
                let inner = Ctx {
                    divergent: ctx.divergent || varying,
                    loop_divergent: ctx.loop_divergent || varying,
                    exited: false,
                };
                let mut then_state = state.clone();
                let (mut written, then_end) = self.region(func, then_body, &mut then_state, inner);
                let mut else_state = state.clone();
                let (else_written, else_end) = self.region(func, else_body, &mut else_state, inner);
                written.merge(&else_written);
                then_state.join_from(&else_state);
                if varying {
                    written.make_varying(&mut then_state);
                }
                *state = then_state;
                if then_end.exited || else_end.exited {
                    ctx.divergent = true;
                    ctx.loop_divergent = true;
                    ctx.exited = true;
                }
            }
            StmtKind::Loop { body, .. } => {
                let returns_before = self.funcs.last().is_some_and(|f| f.varying_return);
                self.loop_(func, stmt.offset, body, state, *ctx);
                // A divergent `return` inside the loop leaves a subset of lanes after it.
                if !returns_before && self.funcs.last().is_some_and(|f| f.varying_return) {
                    ctx.divergent = true;
                    ctx.loop_divergent = true;
                    ctx.exited = true;
                }
            }
            StmtKind::Break { pred } | StmtKind::Continue { pred } => {
                let p = state.pred(pred.index as u32);
                info.pred = Some(p);
                let divergent_exit = !p.is_uniform() || ctx.loop_divergent;
                info.divergent_exit = divergent_exit;
                let is_break = matches!(stmt.kind, StmtKind::Break { .. });
                if let Some(frame) = self.loops.last_mut() {
                    if is_break {
                        join_into(&mut frame.break_state, state);
                        frame.varying_break |= divergent_exit;
                    } else {
                        join_into(&mut frame.continue_state, state);
                        frame.varying_continue |= divergent_exit;
                    }
                }
                if divergent_exit {
                    ctx.divergent = true;
                    ctx.loop_divergent = true;
                    ctx.exited = true;
                }
            }
            StmtKind::Return if func != 0 => {
                let guard_varying = stmt.guard.is_some_and(|g| !state.pred(g.index as u32).is_uniform());
                let varying = guard_varying || ctx.divergent;
                if let Some(frame) = self.funcs.last_mut() {
                    join_into(&mut frame.return_state, state);
                    frame.varying_return |= varying;
                }
                if varying {
                    ctx.divergent = true;
                    ctx.loop_divergent = true;
                    ctx.exited = true;
                }
            }
            StmtKind::Halt { .. } | StmtKind::Return => {
                // Halted lanes are gone for good: the remaining lanes stay consistent.
            }
            StmtKind::Call { func: callee, .. } => self.call(*callee, state, *ctx),
            StmtKind::Barrier => info.state = state.0.clone(),
            StmtKind::Fence { .. } | StmtKind::Wait | StmtKind::Nop => {}
        }
        self.record(func, stmt, info);
    }

    fn loop_(&mut self, func: FuncId, offset: u32, body: &Block, state: &mut State, ctx: Ctx) {
        let entry = state.clone();
        let mut header = entry.clone();
        if let Some(settled) = self.loop_headers.get(&(func, offset)) {
            if let Some(exit) = settled.exit_for(&entry, ctx.divergent).filter(|_| self.reuse_exits) {
                // What the walk would record is recorded already; what it wrote still counts
                // as written in the enclosing region.
                *state = exit.clone();
                let written = settled.written.clone();
                if let Some(parent) = self.written.last_mut() {
                    parent.merge(&written);
                }
                return;
            }
            // Below the new fixed point: the old one was the least above a smaller entry.
            header.join_from(&settled.header);
        }
        let inner = Ctx { divergent: ctx.divergent, loop_divergent: false, exited: false };
        loop {
            self.loops.push(LoopFrame::default());
            let mut end = header.clone();
            let (written, _) = self.region(func, body, &mut end, inner);
            let frame = self.loops.pop().unwrap_or_default();
            if self.out_of_budget {
                return;
            }
            let mut body_out = end;
            if let Some(c) = &frame.continue_state {
                body_out.join_from(c);
            }
            let mut next = entry.clone();
            next.join_from(&body_out);
            if frame.varying_continue {
                written.make_varying(&mut next);
            }
            if next == header {
                let mut exit = frame.break_state.unwrap_or_else(|| header.clone());
                if frame.varying_break {
                    written.make_varying(&mut exit);
                }
                *state = exit.clone();
                let settled = Settled {
                    header,
                    divergent: ctx.divergent,
                    body_out,
                    varying_continue: frame.varying_continue,
                    written,
                    exit,
                };
                self.loop_headers.insert((func, offset), settled);
                return;
            }
            header = next;
        }
    }

    fn call(&mut self, callee: FuncId, state: &mut State, ctx: Ctx) {
        let recursive = self.call_stack.contains(&callee);
        let Some(function) = self.kernel.funcs.get(callee) else { return };
        if recursive || self.call_stack.len() > MAX_CALL_DEPTH as usize {
            self.out_of_budget = true;
            return;
        }
        self.call_stack.push(callee);
        self.funcs.push(FuncFrame::default());
        let saved_loops = std::mem::take(&mut self.loops);
        // Each call site is its own context: its loops settle afresh.
        let saved_headers = std::mem::take(&mut self.loop_headers);
        let inner = Ctx { divergent: ctx.divergent, loop_divergent: false, exited: false };
        let (written, _) = self.region(callee, &function.body, state, inner);
        self.loop_headers = saved_headers;
        self.loops = saved_loops;
        let frame = self.funcs.pop().unwrap_or_default();
        self.call_stack.pop();
        if let Some(r) = &frame.return_state {
            state.join_from(r);
        }
        if frame.varying_return {
            written.make_varying(state);
        }
    }

    /// The alignment (see [`State`]) of a special register's value.
    fn special_align(&self, index: u32) -> u8 {
        let lanes = self.options.lanes_log2;
        match u8::try_from(index).ok().and_then(SpecialReg::from_index) {
            Some(SpecialReg::LaneId) => lanes,
            Some(SpecialReg::ThreadIdX) if self.options.rows_fill_waves => lanes,
            None => 32,
            Some(_) => 0,
        }
    }

    fn special(&self, index: u32) -> Value {
        let rows = self.options.rows_fill_waves;
        match u8::try_from(index).ok().and_then(SpecialReg::from_index) {
            Some(SpecialReg::LaneId) => Value::Affine { stride: 1 },
            Some(SpecialReg::ThreadIdX) if rows => Value::Affine { stride: 1 },
            Some(SpecialReg::ThreadIdY | SpecialReg::ThreadIdZ) if rows => Value::Uniform(None),
            Some(SpecialReg::ThreadIdX | SpecialReg::ThreadIdY | SpecialReg::ThreadIdZ) => Value::Varying,
            // Unknown indices read 0 everywhere.
            None => Value::Uniform(Some(0)),
            Some(_) => Value::Uniform(None),
        }
    }

    fn op(&mut self, inst: &Instruction, state: &mut State, info: &mut StmtUniformity) {
        // Values of the used operands, in operand order (defs filled in below).
        let mut operands: Vec<Value> = inst
            .operands()
            .map(|(spec, _)| {
                let v = inst.slot_value(spec.slot);
                match (spec.role, spec.kind) {
                    (Role::Use, Kind::Reg) => state.reg(v),
                    // A pair or quad is uniform when all its registers are; never affine.
                    (Role::Use, Kind::Pair | Kind::Quad) => {
                        let span = v..v + spec.kind.register_span();
                        let joined = span
                            .map(|r| {
                                if (r as usize) < PRED_BASE {
                                    state.reg(r)
                                } else {
                                    Value::Uniform(Some(0))
                                }
                            })
                            .reduce(Value::join)
                            .unwrap_or(Value::Varying);
                        if joined.is_uniform() {
                            joined
                        } else {
                            Value::Varying
                        }
                    }
                    (Role::Use, Kind::Pred) => state.pred(v),
                    (Role::Use, Kind::Special) => self.special(v),
                    (_, Kind::Imm) => Value::Uniform(Some(v)),
                    _ => Value::Uniform(None),
                }
            })
            .collect();
        let uses: Vec<Value> = inst
            .operands()
            .zip(&operands)
            .filter(|((spec, _), _)| spec.role == Role::Use && !matches!(spec.kind, Kind::Fragment(_)))
            .map(|(_, v)| *v)
            .collect();
        let aligns: Vec<u8> = inst
            .operands()
            .filter(|(spec, _)| spec.role == Role::Use && !matches!(spec.kind, Kind::Fragment(_)))
            .map(|(spec, _)| {
                let v = inst.slot_value(spec.slot);
                match spec.kind {
                    Kind::Reg => state.align(v),
                    Kind::Special => self.special_align(v),
                    Kind::Imm => v.trailing_zeros() as u8,
                    _ => 0,
                }
            })
            .collect();
        let align_of = |i: usize| aligns.get(i).copied().unwrap_or(0);
        // The lanes of an affine value (base aligned to 2^align, stride > 0) all agree above
        // bit `bits` when the largest lane offset stays below the base's alignment and 2^bits.
        let lanes_log2 = self.options.lanes_log2;
        let no_carry_past = |v: Value, align: u8, bits: u32| match v {
            Value::Affine { stride } if lanes_log2 > 0 => {
                let span = u64::from(stride) * ((1u64 << lanes_log2) - 1);
                span < 1u64 << u32::from(align).min(bits).min(32)
            }
            _ => false,
        };
        let all_uniform = uses.iter().all(|v| v.is_uniform());
        let generic = if all_uniform { Value::Uniform(None) } else { Value::Varying };
        let arg = |i: usize| uses.get(i).copied().unwrap_or(Value::Varying);
        let add = |a: Value, b: Value, negate: bool| match (a.stride(), b.stride()) {
            (Some(sa), Some(sb)) => {
                let (sb, cb) = if negate {
                    (sb.wrapping_neg(), b.constant().map(u32::wrapping_neg))
                } else {
                    (sb, b.constant())
                };
                let constant = a.constant().zip(cb).map(|(x, y)| x.wrapping_add(y));
                Value::from_stride(sa.wrapping_add(sb), constant)
            }
            _ => Value::Varying,
        };
        let mul = |a: Value, b: Value| match (a, b) {
            (Value::Uniform(x), Value::Uniform(y)) => {
                Value::Uniform(x.zip(y).map(|(x, y)| x.wrapping_mul(y)))
            }
            (Value::Affine { stride }, Value::Uniform(Some(c)))
            | (Value::Uniform(Some(c)), Value::Affine { stride }) => {
                Value::from_stride(stride.wrapping_mul(c), None)
            }
            _ => Value::Varying,
        };
        let result = match inst.op {
            Op::Mov => arg(0),
            Op::MovImm => Value::Uniform(Some(inst.imm)),
            Op::MovSr => arg(0),
            Op::Iadd => add(arg(0), arg(1), false),
            Op::Isub => add(arg(0), arg(1), true),
            Op::Imul => mul(arg(0), arg(1)),
            Op::Imad => add(mul(arg(0), arg(1)), arg(2), false),
            Op::Shl => match arg(1).constant() {
                Some(c) => mul(arg(0), Value::Uniform(Some(1u32 << (c & 31)))),
                None => generic,
            },
            // `x >> s` with every lane of x between the same multiples of 2^s: uniform.
            Op::Shr => match arg(1).constant() {
                Some(c) if no_carry_past(arg(0), align_of(0), c & 31) => Value::Uniform(None),
                _ => generic,
            },
            // `x & (2^s - 1)` with no lane carrying into bit s: the same affine form.
            Op::And => match arg(1).constant() {
                Some(m)
                    if m.wrapping_add(1).is_power_of_two()
                        && no_carry_past(arg(0), align_of(0), m.count_ones()) =>
                {
                    arg(0)
                }
                _ => generic,
            },
            Op::Select => {
                let (p, a, b) = (arg(0), arg(1), arg(2));
                if p.is_uniform() && a.stride().is_some() && a.stride() == b.stride() {
                    a.join(b)
                } else {
                    generic
                }
            }
            Op::WaveBroadcast
            | Op::WaveBallot
            | Op::WaveAny
            | Op::WaveAll
            | Op::WaveReduceAdd
            | Op::WaveReduceMin
            | Op::WaveReduceMax => Value::Uniform(None),
            _ => match inst.op.class() {
                Class::LocalAtomic | Class::DeviceAtomic | Class::Wave => Value::Varying,
                _ => generic,
            },
        };
        let result_align = match inst.op {
            Op::Mov | Op::MovSr => align_of(0),
            Op::MovImm => inst.imm.trailing_zeros() as u8,
            Op::Iadd | Op::Isub => align_of(0).min(align_of(1)),
            Op::Imul => align_of(0).saturating_add(align_of(1)).min(32),
            Op::Imad => align_of(0).saturating_add(align_of(1)).min(32).min(align_of(2)),
            Op::Shl => match arg(1).constant() {
                Some(c) => align_of(0).saturating_add((c & 31) as u8).min(32),
                None => 0,
            },
            Op::Shr => match arg(1).constant() {
                Some(c) => align_of(0).saturating_sub((c & 31) as u8),
                None => 0,
            },
            Op::And => align_of(0).max(align_of(1)),
            _ => 0,
        };
        let guard = inst.guard.map(|g| state.pred(g.index as u32));
        let mut defined = None;
        for ((spec, _), value) in inst.operands().zip(operands.iter_mut()) {
            if spec.role != Role::Def || matches!(spec.kind, Kind::Fragment(_)) {
                continue;
            }
            let v = inst.slot_value(spec.slot);
            if spec.optional && v == 0 {
                continue;
            }
            let slots: Vec<usize> = if spec.kind == Kind::Pred {
                // Predicate indices above 3 are rejected by the validator; they write nothing.
                vec![PRED_BASE + v as usize].into_iter().filter(|&s| s < SLOTS).collect()
            } else {
                let span = v..v + spec.kind.register_span();
                span.map(|r| r as usize).filter(|&r| r < PRED_BASE).collect()
            };
            let mut first = None;
            for (i, slot) in slots.into_iter().enumerate() {
                // A pair or quad half other than the first is not affine in the lane.
                let result = if i > 0 && !result.is_uniform() { Value::Varying } else { result };
                // Under a guard, each register keeps its own old value where the guard fails.
                let written = match guard {
                    Some(g) if !g.is_uniform() => Value::Varying,
                    Some(_) => result.join(state.0[slot]),
                    None => result,
                };
                let align = if guard.is_some() { result_align.min(state.1[slot]) } else { result_align };
                self.write(state, slot, written, align);
                first.get_or_insert(written);
            }
            let written = first.unwrap_or(Value::Varying);
            *value = written;
            defined = Some(written);
        }
        // At W = 64 `wave_ballot` also writes rd + 1 (the high 32 lanes, semantics B.15), which
        // the opcode table does not name; below 64 it leaves it. This analysis does not know
        // the width (the per-vector one runs with 4 lanes at every width), so rd + 1 varies.
        let ballot_high = inst.rd as usize + 1;
        if inst.op == Op::WaveBallot && ballot_high < PRED_BASE {
            self.write(state, ballot_high, Value::Varying, 0);
        }
        info.operands = operands;
        info.result = defined;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::module::load_bytes;

    fn analyse(body: &str, options: UniformityOptions) -> (Kernel, Uniformity) {
        let source = format!(".kernel k\n.registers 64\n{body}\n.end\n");
        let (module, _) = load_bytes(source.as_bytes(), "t.wave").unwrap_or_else(|e| panic!("{e}"));
        let kernel = module.kernels[0].kernel().clone();
        let u = uniformity_with(&kernel, options);
        assert!(!u.conservative);
        (kernel, u)
    }

    /// The result of the `n`-th statement (in walk order) whose text starts with `mnemonic`.
    fn result_of(kernel: &Kernel, u: &Uniformity, op: Op, n: usize) -> Value {
        let mut found = Vec::new();
        kernel.walk(&mut |f, s, _| {
            if matches!(&s.kind, StmtKind::Op(i) if i.op == op) {
                found.push((f, s.offset));
            }
        });
        let (f, offset) = found[n];
        u.get(f, offset).and_then(|s| s.result).expect("statement analysed")
    }

    fn pred_of(kernel: &Kernel, u: &Uniformity, want_if: bool) -> Vec<(Value, bool)> {
        let mut out = Vec::new();
        kernel.walk(&mut |f, s, _| {
            let is_if = matches!(s.kind, StmtKind::If { .. });
            let is_exit = matches!(s.kind, StmtKind::Break { .. } | StmtKind::Continue { .. });
            if (want_if && is_if) || (!want_if && is_exit) {
                let info = u.get(f, s.offset).unwrap();
                out.push((info.pred.unwrap(), info.divergent_exit));
            }
        });
        out
    }

    #[test]
    fn seeds_and_affine_addresses() {
        let (k, u) = analyse(
            "mov_sr r1, sr_lane_id
             mov_imm r2, 2
             shl r3, r1, r2
             iadd r4, r3, r10
             device_load_u32 r5, r4
             mov_sr r6, sr_workgroup_id_x
             device_load_u32 r7, r6
             imul r8, r1, r6
             mov_sr r9, sr_thread_id_x
             isub r11, r10, r1",
            UniformityOptions::default(),
        );
        assert_eq!(result_of(&k, &u, Op::MovSr, 0), Value::Affine { stride: 1 });
        assert_eq!(result_of(&k, &u, Op::MovImm, 0), Value::Uniform(Some(2)));
        assert_eq!(result_of(&k, &u, Op::Shl, 0), Value::Affine { stride: 4 });
        assert_eq!(result_of(&k, &u, Op::Iadd, 0), Value::Affine { stride: 4 });
        assert_eq!(result_of(&k, &u, Op::DeviceLoadU32, 0), Value::Varying);
        assert_eq!(result_of(&k, &u, Op::DeviceLoadU32, 1), Value::Uniform(None));
        assert_eq!(result_of(&k, &u, Op::Imul, 0), Value::Varying, "stride times an unknown");
        assert_eq!(result_of(&k, &u, Op::MovSr, 2), Value::Varying);
        assert_eq!(result_of(&k, &u, Op::Isub, 0), Value::Affine { stride: u32::MAX });
        // The address operand of the affine load is reported per operand.
        let mut load = None;
        k.walk(&mut |f, s, _| {
            if matches!(&s.kind, StmtKind::Op(i) if i.op == Op::DeviceLoadU32) && load.is_none() {
                load = Some((f, s.offset));
            }
        });
        let (f, o) = load.unwrap();
        assert_eq!(u.get(f, o).unwrap().operands, [Value::Varying, Value::Affine { stride: 4 }]);

        let (k, u) = analyse(
            "mov_sr r1, sr_thread_id_x\nmov_sr r2, sr_thread_id_y",
            UniformityOptions { rows_fill_waves: true, ..Default::default() },
        );
        assert_eq!(result_of(&k, &u, Op::MovSr, 0), Value::Affine { stride: 1 });
        assert_eq!(result_of(&k, &u, Op::MovSr, 1), Value::Uniform(None));
    }

    /// A nest of loops is analysed in time linear in its depth, not exponential: 48 nested
    /// loops, each with a divergent `break` and a counter, fit the budget (they ran it out,
    /// leaving the whole kernel unanalysed), and the facts come out as for a shallow nest.
    #[test]
    fn deep_loop_nests_settle_without_running_out_of_budget() {
        let depth = 48;
        let mut body = String::from("mov_sr r1, sr_lane_id\nmov_imm r30, 1\nmov_imm r6, 0\n");
        for level in 0..depth {
            body += &format!("loop\nmov_imm r10, {level}\nicmp_lt p1, r1, r10\nbreak p1\niadd r6, r6, r30\n");
        }
        body += "mov_imm r20, 7\nimul r21, r1, r20\n";
        for _ in 0..depth {
            body += "endloop\n";
        }
        // The default budget, which the exponential walk exceeded before depth 32.
        let (k, u) = analyse(&body, UniformityOptions::default());
        assert_eq!(result_of(&k, &u, Op::MovImm, 2 + depth - 1), Value::Uniform(Some(depth as u32 - 1)));
        assert_eq!(result_of(&k, &u, Op::Imul, 0), Value::Affine { stride: 7 }, "innermost");
        assert_eq!(
            result_of(&k, &u, Op::Iadd, 0),
            Value::Varying,
            "a counter lanes leave at different trips"
        );
        let exits = pred_of(&k, &u, false);
        assert_eq!(exits.len(), depth);
        assert!(exits.iter().all(|&(p, divergent)| p == Value::Varying && divergent));
    }

    /// A pair operand is as uniform as its least uniform register (the fuzzer found an f64
    /// op on `r10:r11` with a lane-dependent `r11` taken as uniform from `r10`).
    #[test]
    fn pair_operands_join_both_registers() {
        let (k, u) = analyse(
            "mov_sr r11, sr_lane_id
             dsqrt r18, r10
             mov_imm r13, 5
             dsqrt r20, r12
             mov_sr r14, sr_lane_id
             dsqrt r22, r14",
            UniformityOptions::default(),
        );
        assert_eq!(result_of(&k, &u, Op::Dsqrt, 0), Value::Varying);
        assert!(result_of(&k, &u, Op::Dsqrt, 1).is_uniform());
        assert_eq!(result_of(&k, &u, Op::Dsqrt, 2), Value::Varying);
    }

    /// A guarded pair write joins each register with its own old value (the fuzzer found an
    /// affine `r7` taken as uniform after `@p3 local_load_u64 r6, ...` joined it with `r6`).
    #[test]
    fn guarded_pair_write_keeps_each_old_value() {
        let (k, u) = analyse(
            "mov_sr r7, sr_lane_id
             icmp_eq p3, r1, r2
             @p3 local_load_u64 r6, r1
             mov r8, r7",
            UniformityOptions::default(),
        );
        assert_eq!(result_of(&k, &u, Op::Mov, 0), Value::Varying);
    }

    #[test]
    fn divergent_if_makes_writes_varying_afterwards() {
        let (k, u) = analyse(
            "mov_sr r1, sr_lane_id
             icmp_lt p1, r1, r2
             if p1
                 mov_imm r3, 7
                 iadd r4, r3, r3
             endif
             iadd r5, r3, r3
             icmp_eq p2, r2, r2
             if p2
                 mov_imm r6, 1
             else
                 mov_imm r6, 2
             endif
             iadd r7, r6, r6",
            UniformityOptions::default(),
        );
        assert_eq!(pred_of(&k, &u, true), [(Value::Varying, false), (Value::Uniform(None), false)]);
        assert_eq!(result_of(&k, &u, Op::Iadd, 0), Value::Uniform(Some(14)), "uniform among active lanes");
        assert_eq!(result_of(&k, &u, Op::Iadd, 1), Value::Varying, "after the divergent if");
        assert_eq!(result_of(&k, &u, Op::Iadd, 2), Value::Uniform(None), "uniform if: still uniform");
        let mut divergent = Vec::new();
        k.walk(&mut |f, s, _| divergent.push(u.get(f, s.offset).unwrap().divergent));
        assert!(divergent[3], "mov_imm inside the varying if");
        assert!(!divergent[5], "after it");
    }

    #[test]
    fn guarded_writes() {
        let (k, u) = analyse(
            "mov_sr r1, sr_lane_id
             icmp_lt p1, r1, r2
             @p1 mov_imm r3, 1
             icmp_eq p2, r2, r2
             @p2 mov_imm r4, 1
             iadd r5, r3, r4",
            UniformityOptions::default(),
        );
        assert_eq!(result_of(&k, &u, Op::MovImm, 0), Value::Varying);
        assert_eq!(result_of(&k, &u, Op::MovImm, 1), Value::Uniform(None));
        assert_eq!(result_of(&k, &u, Op::Iadd, 0), Value::Varying);
    }

    #[test]
    fn loops_reach_a_fixed_point() {
        let (k, u) = analyse(
            "mov_imm r1, 0
             mov_imm r2, 1
             mov_sr r9, sr_lane_id
             loop
                 iadd r1, r1, r2
                 icmp_eq p1, r1, r10
                 break p1
                 iadd r3, r9, r1
             endloop
             iadd r4, r1, r1
             loop
                 iadd r5, r5, r2
                 icmp_lt p2, r9, r5
                 break p2
             endloop
             iadd r6, r5, r5",
            UniformityOptions::default(),
        );
        assert_eq!(result_of(&k, &u, Op::Iadd, 0), Value::Uniform(None), "counter after join");
        assert_eq!(result_of(&k, &u, Op::Iadd, 1), Value::Affine { stride: 1 });
        assert_eq!(result_of(&k, &u, Op::Iadd, 2), Value::Uniform(None), "uniform break: exit uniform");
        assert_eq!(pred_of(&k, &u, false), [(Value::Uniform(None), false), (Value::Varying, true)]);
        assert_eq!(result_of(&k, &u, Op::Iadd, 4), Value::Varying, "varying break: exit varying");
    }

    #[test]
    fn break_under_divergent_if_is_a_divergent_exit() {
        let (k, u) = analyse(
            "mov_sr r9, sr_lane_id
             icmp_lt p1, r9, r2
             loop
                 if p1
                     break p2
                 endif
                 continue p3
             endloop",
            UniformityOptions::default(),
        );
        // break p2: uniform predicate but under a varying if; continue after it: divergent too.
        assert_eq!(
            pred_of(&k, &u, false),
            [(Value::Uniform(Some(0)), true), (Value::Uniform(Some(0)), true)]
        );
    }

    #[test]
    fn calls_use_the_callers_context() {
        let (k, u) = analyse(
            "mov_imm r1, 3
             call f
             iadd r3, r2, r2
             mov_sr r1, sr_lane_id
             call f
             iadd r4, r2, r2
             halt
         f:
             iadd r2, r1, r1
             return",
            UniformityOptions::default(),
        );
        // r2 = r1 + r1 in the callee: 6 after the first call, 2 × lane after the second.
        assert_eq!(result_of(&k, &u, Op::Iadd, 0), Value::Uniform(Some(12)));
        assert_eq!(result_of(&k, &u, Op::Iadd, 1), Value::Affine { stride: 4 });
        // The callee's statement, joined over both call sites.
        let f = k.funcs[1].offset;
        assert_eq!(u.get(1, f).unwrap().result, Some(Value::Varying));
    }

    #[test]
    fn wave_ops_and_atomics() {
        let (k, u) = analyse(
            "mov_sr r1, sr_lane_id
             wave_reduce_add r2, r1
             wave_prefix_sum r3, r1
             atomic_add r4, r2, r2, .device
             wave_broadcast r5, r1, r2",
            UniformityOptions::default(),
        );
        assert_eq!(result_of(&k, &u, Op::WaveReduceAdd, 0), Value::Uniform(None));
        assert_eq!(result_of(&k, &u, Op::WavePrefixSum, 0), Value::Varying);
        assert_eq!(result_of(&k, &u, Op::AtomicAdd, 0), Value::Varying);
        assert_eq!(result_of(&k, &u, Op::WaveBroadcast, 0), Value::Uniform(None));
    }

    #[test]
    fn huge_nesting_falls_back_to_conservative() {
        let mut body = String::new();
        for _ in 0..40 {
            body.push_str("loop\nmov_sr r1, sr_lane_id\niadd r2, r2, r1\n");
        }
        body.push_str("break p1\n");
        for _ in 0..40 {
            body.push_str("endloop\n");
        }
        let source = format!(".kernel k\n{body}.end\n");
        let (module, _) = load_bytes(source.as_bytes(), "t.wave").unwrap();
        let u = uniformity(&module.kernels[0]);
        // Either it converged, or it gave up soundly; it must not hang.
        if u.conservative {
            assert!(u.get(0, 0).is_none());
        }
    }

    /// With the lanes of the analysed "wave" known (4 here), a thread index whose lane 0 is a
    /// multiple of 4 stays affine under `% 64` and becomes uniform under `/ 64` (the tiled GEMM
    /// kernel's B-tile addresses); where a lane can cross the boundary, or the alignment is
    /// unknown, both stay varying.
    #[test]
    fn shifts_and_masks_of_aligned_indices() {
        let body = "mov_sr r1, sr_thread_id_x
             mov_sr r2, sr_thread_id_y
             mov_imm r3, 16
             imad r4, r2, r3, r1      ; t = ty*16 + tx: lane 0 a multiple of 4
             mov_imm r5, 6
             shr r6, r4, r5           ; t / 64
             mov_imm r7, 63
             and r8, r4, r7           ; t % 64
             mov_imm r9, 1
             iadd r10, r4, r9         ; t + 1: lane 0 no longer aligned
             shr r11, r10, r5
             and r12, r10, r7
             mov_imm r13, 32
             imul r14, r1, r13        ; tx * 32: lanes 0, 32, 64, 96 past lane 0
             shr r15, r14, r5         ; crosses a multiple of 64
             mov_imm r16, 7
             shr r17, r14, r16        ; stays below the next multiple of 128
             mov_imm r18, 1
             and r19, r4, r18         ; t % 2: lanes carry into bit 1";
        let aligned = UniformityOptions { rows_fill_waves: true, lanes_log2: 2 };
        let (k, u) = analyse(body, aligned);
        assert_eq!(result_of(&k, &u, Op::Shr, 0), Value::Uniform(None));
        assert_eq!(result_of(&k, &u, Op::And, 0), Value::Affine { stride: 1 });
        assert_eq!(result_of(&k, &u, Op::Shr, 1), Value::Varying);
        assert_eq!(result_of(&k, &u, Op::And, 1), Value::Varying);
        assert_eq!(result_of(&k, &u, Op::Shr, 2), Value::Varying);
        assert_eq!(result_of(&k, &u, Op::Shr, 3), Value::Uniform(None));
        assert_eq!(result_of(&k, &u, Op::And, 2), Value::Varying);
        // The same kernel with the lanes unknown: nothing is derived from alignment.
        let (k, u) = analyse(body, UniformityOptions { rows_fill_waves: true, lanes_log2: 0 });
        assert_eq!(result_of(&k, &u, Op::Shr, 0), Value::Varying);
        assert_eq!(result_of(&k, &u, Op::And, 0), Value::Varying);
    }

    /// Alignment is joined like the values: a loop that adds an odd constant to an aligned
    /// index each trip leaves it unaligned at the header, so `/ 64` inside is varying there;
    /// adding a multiple of 4 keeps it aligned.
    #[test]
    fn alignment_joins_at_loop_headers() {
        let shr_in_loop = |step: u32| {
            let body = format!(
                "mov_sr r1, sr_lane_id
                 mov_imm r5, 6
                 mov_imm r9, {step}
                 loop
                     shr r6, r1, r5
                     iadd r1, r1, r9
                     icmp_eq p0, r6, r9
                     break p0
                 endloop"
            );
            let (k, u) = analyse(&body, UniformityOptions { rows_fill_waves: false, lanes_log2: 2 });
            result_of(&k, &u, Op::Shr, 0)
        };
        assert_eq!(shr_in_loop(1), Value::Varying);
        assert_eq!(shr_in_loop(4), Value::Uniform(None));
    }

    /// Every kernel the repository holds (conformance programs, bundled benchmarks) and
    /// nests whose inner loops are met again with new entries, with and without the
    /// settled loops' exits reused: the results must be the same.
    #[test]
    fn reused_loop_exits_change_nothing() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut files = Vec::new();
        let mut dirs = vec![root.join("conformance/programs"), root.join("benches/kernels")];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
                let path = entry.expect("directory entry").path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "wave") {
                    files.push((path.display().to_string(), std::fs::read(&path).expect("readable")));
                }
            }
        }
        assert!(files.len() > 200, "only {} kernels found", files.len());
        // Inner loops whose entry grows on later trips of the outer loop: a register that
        // turns affine then varying, control that turns divergent, a `continue` that makes
        // what the body wrote varying.
        for (i, body) in [
            "mov_sr r1, sr_lane_id
             mov_imm r2, 0
             mov_imm r3, 1
             loop
                 loop
                     iadd r4, r2, r3
                     icmp_eq p1, r4, r3
                     break p1
                 endloop
                 mov r2, r1
                 loop
                     iadd r5, r2, r3
                     break p1
                 endloop
                 icmp_eq p0, r5, r3
                 break p0
             endloop",
            "mov_sr r1, sr_lane_id
             mov_imm r3, 1
             mov_imm r6, 0
             loop
                 icmp_lt p2, r6, r3
                 if p2
                     loop
                         iadd r6, r6, r3
                         icmp_eq p1, r6, r3
                         continue p1
                         break p1
                     endloop
                 endif
                 icmp_lt p2, r1, r3
                 if p2
                     mov r6, r1
                 endif
                 icmp_eq p0, r6, r3
                 break p0
             endloop",
            // The inner loop's entry state is the same on both trips, its control is not:
            // the `if` around it turns divergent on the second.
            "mov_sr r1, sr_lane_id
             mov_imm r2, 0
             mov_imm r3, 1
             loop
                 icmp_eq p2, r2, r3
                 if p2
                     mov_imm r2, 0
                     icmp_eq p2, r3, r3
                     iadd r5, r3, r3
                     loop
                         iadd r5, r3, r3
                         break p2
                     endloop
                 endif
                 mov r2, r1
             endloop",
        ]
        .iter()
        .enumerate()
        {
            let source = format!(".kernel k\n.registers 64\n{body}\n.end\n");
            files.push((format!("nest {i}"), source.into_bytes()));
        }
        let options = [
            UniformityOptions::default(),
            UniformityOptions { rows_fill_waves: true, lanes_log2: 2 },
            UniformityOptions { rows_fill_waves: true, lanes_log2: 5 },
        ];
        let mut compared = 0;
        let mut nested = 0;
        for (name, bytes) in &files {
            let Ok((module, _)) = load_bytes(bytes, name) else { continue };
            for kernel in &module.kernels {
                let kernel = kernel.kernel();
                for options in options {
                    let walked = analyse_kernel(kernel, options, false);
                    let fast = analyse_kernel(kernel, options, true);
                    let differ = walked.stmts.iter().find(|(at, s)| fast.stmts.get(at) != Some(s));
                    assert!(
                        fast == walked,
                        "{name}, {options:?}: statement {:?} walked {:?}, reused {:?}",
                        differ.map(|d| d.0),
                        differ.map(|d| d.1),
                        differ.and_then(|d| fast.stmts.get(d.0))
                    );
                    compared += 1;
                    nested += usize::from(has_nested_loop(&kernel.funcs[0].body, 0));
                }
            }
        }
        assert!(compared > 600 && nested > 30, "{compared} analyses, {nested} with nested loops");
    }

    fn has_nested_loop(block: &Block, depth: usize) -> bool {
        block.iter().any(|s| match &s.kind {
            StmtKind::Loop { body, .. } => depth >= 1 || has_nested_loop(body, depth + 1),
            StmtKind::If { then_body, else_body, .. } => {
                has_nested_loop(then_body, depth) || has_nested_loop(else_body, depth)
            }
            _ => false,
        })
    }
}
