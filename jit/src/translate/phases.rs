//! Barrier phases: a kernel whose barriers are all unguarded statements at the top level of its
//! entry function runs each stretch between two of them (a phase) for every wave of the
//! workgroup in turn, in one call, instead of one fiber per wave. The interpreter runs a
//! workgroup in rounds, each wave until its next barrier or its end, in wave order: that is
//! this order. A fiber cost about 44 ns per wave and barrier (its start, the switches, its
//! stack), a third of the prefix sum's block scan.
//!
//! At a barrier a wave stores the state the rest of the kernel may read before writing it
//! (registers, predicates, the exec and live masks: [`saved_state`]) in its place in a stack
//! area of the entry function, and the next wave runs the same phase; after the last wave, the
//! first one starts the next phase from its stored state. Where every lane reaches the barrier,
//! the wave analysis says what most of that state is: constants are made again after it,
//! uniform and affine values keep only their lane 0; only varying values store their W/4
//! vectors. (Stored whole, the prefix sum's, softmax's and transpose's states were 12 to 19
//! groups of W/4 vectors and cost more than the fibers they replaced.) A wave that ends (a
//! `halt`, or the code's end) marks its place, and later phases pass over it. Resident
//! registers ([`super::chunk`]) live in one home for all waves, so kernels with them keep
//! fibers.
//!
//! Only values the translation keeps in variables cross a phase by the stored state. The
//! compiler checks what it built (no variable reaches a phase's start from another wave,
//! and the verifier passes): otherwise it translates the kernel again with fibers.

use super::{Flags, Translator};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I32X4, I64};
use cranelift_codegen::ir::{Block, InstBuilder, StackSlot, StackSlotData, StackSlotKind, Value};
use cranelift_frontend::Variable;
use std::cell::Cell;
use std::collections::HashSet;
use wave_isa::analysis::Value as Known;
use wave_isa::{Kernel, SpecialReg, StateRef, Stmt, StmtKind};

/// Bytes of the stack area for the waves' stored state above which a kernel keeps fibers.
const MAX_AREA: u32 = 256 << 10;

/// Vectors and scalars a wave stores at a barrier (and loads after it) above which a kernel
/// keeps fibers: a fiber's switches cost about as much as storing and loading 100 vectors
/// (stored whole, the prefix sum's block scan, 12 groups of 8 vectors at W = 32, ran 10-30 %
/// faster in phases; the transpose, 19 groups, 17 % slower).
const MAX_STORED_VECTORS: usize = 96;

/// The indices (in the entry function's top-level statements) of a kernel's barriers, where
/// it runs in phases: every barrier of the kernel is an unguarded statement at the top level
/// of its entry function, and the code neither counts for `--stats` (which counts the waits
/// at barriers in their helper) nor keeps registers in a home of its own.
pub fn barrier_phases(kernel: &Kernel, flags: Flags) -> Option<Vec<usize>> {
    if flags.stats {
        return None;
    }
    let body = &kernel.funcs.first()?.body;
    let top: Vec<usize> = body
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(s.kind, StmtKind::Barrier) && s.guard.is_none())
        .map(|(i, _)| i)
        .collect();
    let mut all = 0;
    kernel.walk(&mut |_, s, _| all += matches!(s.kind, StmtKind::Barrier) as usize);
    let resident =
        super::chunk::memory_resident_registers(kernel, flags, super::WaveView::of(kernel, flags).vectors);
    (!top.is_empty() && top.len() == all && resident.is_empty()).then_some(top)
}

/// The state that crosses a barrier ([`saved_state`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Crossing {
    /// The registers and predicates a wave stores there.
    pub regs: Vec<u32>,
    pub preds: Vec<u32>,
    /// Registers and predicates that loops after the barrier write before any lane reads them
    /// (`loop_entry_writes`, `trip_local_state`): not stored, and any value will do after
    /// the barrier. (The code's blends still name the old value of lanes that no longer run.)
    pub unread: Vec<StateRef>,
}

/// The registers and predicates `rest` (the statements after a barrier, to the code's end) may
/// read before it writes them: reads anywhere, and the destinations of writes that may leave
/// some lanes alone (guarded, inside an `if` or loop, or where not every lane is active: they
/// blend into the old value), until a top-level op writes every lane of them
/// (`writes_every_lane`), or a loop writes them before reading them. A call reads everything.
pub fn saved_state(rest: &[Stmt], used_regs: &[bool], writes_every_lane: &dyn Fn(&Stmt) -> bool) -> Crossing {
    let mut skipped: Vec<StateRef> = Vec::new();
    let mut written: Vec<StateRef> = Vec::new();
    let mut read: Vec<StateRef> = Vec::new();
    let mut calls = false;
    let cross_lane = super::temporaries::cross_lane_state(rest);
    for s in rest {
        let top_level_write = matches!(s.kind, StmtKind::Op(_)) && writes_every_lane(s);
        // In a loop: what it writes before any read, and what each trip writes before its
        // reads (those reads never see the value from the barrier).
        let mut in_trip = Vec::new();
        if let StmtKind::Loop { body, .. } = &s.kind {
            let entry = loop_entry_writes(body, writes_every_lane);
            skipped.extend(entry.iter().filter(|n| !written.contains(n)));
            written.extend(entry);
            in_trip = trip_local_state(body, &cross_lane);
            skipped.extend(in_trip.iter().filter(|n| !written.contains(n)));
        }
        wave_isa::ir::walk_block(std::slice::from_ref(s), 0, &mut |t, _| {
            calls |= matches!(t.kind, StmtKind::Call { .. });
            let mut named: Vec<StateRef> = t.guard.map(|g| StateRef::Pred(g.index)).into_iter().collect();
            if let StmtKind::If { pred, .. } | StmtKind::Break { pred } | StmtKind::Continue { pred } =
                &t.kind
            {
                named.push(StateRef::Pred(pred.index));
            }
            if let StmtKind::Op(inst) = &t.kind {
                let role = if top_level_write { Some(wave_isa::opcodes::Role::Use) } else { None };
                named.extend(inst.named_state(role));
            }
            read.extend(named.into_iter().filter(|n| !written.contains(n) && !in_trip.contains(n)));
        });
        if let (true, StmtKind::Op(inst)) = (top_level_write, &s.kind) {
            written.extend(inst.named_state(Some(wave_isa::opcodes::Role::Def)));
        }
    }
    let regs = (0..used_regs.len() as u32)
        .filter(|&r| used_regs[r as usize] && (calls || read.contains(&StateRef::Reg(r))))
        .collect();
    let preds =
        (0..super::PREDICATES as u32).filter(|&p| calls || read.contains(&StateRef::Pred(p as u8))).collect();
    let mut unread: Vec<StateRef> = Vec::new();
    for n in skipped {
        if !calls && !read.contains(&n) && !unread.contains(&n) {
            unread.push(n);
        }
    }
    Crossing { regs, preds, unread }
}

/// What a loop writes in every lane before anything reads it: the destinations of the ops
/// that open its body (unguarded, every lane active) that those ops do not read first. Every
/// lane that enters the loop runs them at the start of each trip, before any `break`, so no
/// read in the loop or after it sees the value from before the loop.
fn loop_entry_writes(body: &[Stmt], writes_every_lane: &dyn Fn(&Stmt) -> bool) -> Vec<StateRef> {
    use wave_isa::opcodes::Role;
    let mut read: Vec<StateRef> = Vec::new();
    let mut written: Vec<StateRef> = Vec::new();
    for s in body {
        let StmtKind::Op(inst) = &s.kind else { break };
        if !writes_every_lane(s) {
            break;
        }
        read.extend(inst.named_state(Some(Role::Use)).filter(|n| !written.contains(n)));
        written.extend(inst.named_state(Some(Role::Def)).filter(|n| !read.contains(n)));
    }
    written
}

/// The registers and predicates each trip of a loop with this body writes before it reads
/// them ([`super::temporaries::written_first_each_trip`]), but not the state a cross-lane op
/// names (`cross_lane`): it reads other lanes, which may have left before the write. (A lane
/// that left keeps the older value, so what follows the loop may still read that.)
fn trip_local_state(body: &[Stmt], cross_lane: &HashSet<StateRef>) -> Vec<StateRef> {
    let mut local = super::temporaries::written_first_each_trip(body);
    local.retain(|n| !cross_lane.contains(n));
    local
}

/// How a group of a wave's state crosses a barrier.
enum Kept {
    /// Its vectors, at this byte offset of the wave's place.
    Vectors(i32),
    /// Lane 0, at this offset, with the stride between lanes (0: uniform).
    Lane0(i32, u32),
    /// The same constant in every lane, made again after the barrier.
    Constant(u32),
}

/// What the entry function's phases share while it is translated.
pub struct Phases {
    /// Where each phase starts for a wave (taking its context): the first is the wave start.
    pub starts: Vec<Block>,
    /// Where a wave that is done with a phase hands over (taking its context): to the next
    /// wave's start of the same phase, or the first wave's of the next.
    advances: Vec<Block>,
    /// The phase running now (I32) and the context of the wave running it (I64).
    phase: Variable,
    ctx: Variable,
    area: StackSlot,
    /// Bytes of one wave's place: its end mark, then its stored groups.
    per_wave: u32,
    /// The state stored at the barrier before each phase after the first.
    stored: Vec<Crossing>,
    /// The barriers' indices in the entry function's top-level statements.
    barriers: Vec<usize>,
    /// The most vectors a wave stored at one barrier.
    most_stored: Cell<usize>,
}

impl Translator<'_, '_> {
    /// Set up the phases of the entry function (at its wave start, with the wave's context in
    /// `self.ctx`); `None` where the stored state would not fit [`MAX_AREA`]. (What a wave
    /// stores, and so whether phases are worth it, is known after the translation.)
    pub(super) fn plan_phases(&mut self, barriers: &[usize], used_regs: &[bool]) -> Option<Phases> {
        let body = &self.kernel.funcs[0].body;
        // An op writes every lane without a guard where every lane is active (the analysis's
        // facts for the top level, which is where the translation stands now).
        let every_lane = |s: &Stmt| s.guard.is_none() && self.exec_is_full(s.offset);
        // A loop temporary (named only inside one loop, written there before any read: see
        // [`super::temporaries`]) is dead outside it, at every top-level barrier.
        let temporary = |state: StateRef| self.unblended().iter().any(|&(_, t)| t == state);
        let stored: Vec<Crossing> = barriers
            .iter()
            .map(|&b| {
                let mut crossing = saved_state(&body[b + 1..], used_regs, &every_lane);
                crossing.regs.retain(|&r| !temporary(StateRef::Reg(r)));
                crossing.preds.retain(|&p| !temporary(StateRef::Pred(p as u8)));
                crossing
            })
            .collect();
        let groups = stored.iter().map(|c| c.regs.len() + c.preds.len() + 2).max().unwrap_or(0) as u32;
        let per_wave = 16 + groups * 16 * self.wave.n as u32;
        let threads = self.flags.workgroup.iter().fold(1u32, |t, &d| t.saturating_mul(d));
        let waves = threads.div_ceil(self.flags.width.max(1)).max(1);
        let bytes = per_wave.checked_mul(waves).filter(|&b| b <= MAX_AREA)?;
        let area = self.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, bytes, 4));
        let wave_start = self.wave_start?;
        let mut starts = vec![wave_start];
        let mut advances = Vec::new();
        for i in 0..=barriers.len() {
            if i > 0 {
                let start = self.b.create_block();
                self.b.append_block_param(start, I64);
                starts.push(start);
            }
            let advance = self.b.create_block();
            self.b.append_block_param(advance, I64);
            advances.push(advance);
        }
        let phase = self.b.declare_var(I32);
        let ctx = self.b.declare_var(I64);
        let barriers = barriers.to_vec();
        let phases = Phases {
            starts,
            advances,
            phase,
            ctx,
            area,
            per_wave,
            stored,
            barriers,
            most_stored: Cell::new(0),
        };
        self.enter_phase(&phases, 0);
        // A fresh wave has not ended.
        let place = self.wave_place(&phases);
        let zero = self.b.ins().iconst(I32, 0);
        self.b.ins().store(super::ctx_flags(), zero, place, 0);
        Some(phases)
    }

    fn enter_phase(&mut self, phases: &Phases, index: usize) {
        let i = self.b.ins().iconst(I32, index as i64);
        self.b.def_var(phases.phase, i);
        self.b.def_var(phases.ctx, self.ctx);
    }

    /// The running wave's place in the stored-state area.
    fn wave_place(&mut self, phases: &Phases) -> Value {
        let wave = self.load_ctx(I32, self.env.special_offset(SpecialReg::WaveId as u8));
        let wave = self.b.ins().uextend(I64, wave);
        let at = self.b.ins().imul_imm_s(wave, phases.per_wave as i64);
        let area = self.b.ins().stack_addr(I64, phases.area, 0);
        self.b.ins().iadd(area, at)
    }

    /// The barrier at byte `offset` ending phase `index`: store the state the next phase
    /// reads, hand over; then start the next phase for a wave from its stored state. Where
    /// every lane of the wave is active there, what the wave analysis knows of a register or
    /// predicate decides how it is kept ([`Kept`]): a constant is made again, a uniform value
    /// stores its lane 0, an affine one its lane 0 as the base; only varying ones store their
    /// vectors.
    pub(super) fn phase_barrier(&mut self, phases: &Phases, index: usize, offset: u32) {
        self.materialize_pred_forms();
        let Crossing { regs, preds, unread } = phases.stored[index].clone();
        let groups = self.phase_groups(&regs, &preds);
        // Per group (registers, predicates, exec, live): what is known of it.
        let known: Vec<Known> = match self.waves().get(self.func, offset) {
            Some(info) if self.exec_is_full(offset) && !info.state.is_empty() => {
                let slot = |i: usize| info.state.get(i).copied().unwrap_or(Known::Varying);
                let mut known: Vec<Known> = regs.iter().map(|&r| slot(r as usize)).collect();
                known.extend(preds.iter().map(|&p| match slot(256 + p as usize) {
                    // A predicate is a lane mask: true is every bit set.
                    Known::Uniform(Some(c)) => Known::Uniform(Some(if c != 0 { u32::MAX } else { 0 })),
                    _ => Known::Varying,
                }));
                // Every lane active and live.
                known.extend([Known::Uniform(Some(u32::MAX)); 2]);
                known
            }
            _ => vec![Known::Varying; groups.len()],
        };
        let place = self.wave_place(phases);
        let mut kept = Vec::with_capacity(groups.len());
        let mut at = 16;
        let mut stored = 0;
        for (vars, &what) in groups.iter().zip(&known) {
            let k = match what {
                Known::Uniform(Some(c)) => Kept::Constant(c),
                Known::Uniform(None) | Known::Affine { .. } => {
                    let first = self.b.use_var(vars[0]);
                    let lane0 = self.lane0(first);
                    self.b.ins().store(super::ctx_flags(), lane0, place, at);
                    stored += 1;
                    at += 16;
                    Kept::Lane0(at - 16, what.stride().unwrap_or(0))
                }
                Known::Varying => {
                    for (j, &var) in vars.iter().enumerate() {
                        let v = self.b.use_var(var);
                        self.b.ins().store(super::ctx_flags(), v, place, at + 16 * j as i32);
                    }
                    stored += vars.len();
                    at += 16 * vars.len() as i32;
                    Kept::Vectors(at - 16 * vars.len() as i32)
                }
            };
            kept.push(k);
        }
        phases.note_stored(stored);
        self.b.ins().jump(phases.advances[index], &[self.ctx.into()]);
        let start = phases.starts[index + 1];
        self.b.switch_to_block(start);
        self.ctx = self.b.block_params(start)[0];
        self.enter_phase(phases, index + 1);
        let place = self.wave_place(phases);
        let ended = self.b.ins().load(I32, super::ctx_flags(), place, 0);
        let restore = self.b.create_block();
        self.b.ins().brif(ended, phases.advances[index + 1], &[self.ctx.into()], restore, &[]);
        self.continue_in(restore);
        for (vars, k) in groups.iter().zip(kept) {
            let values: Vec<Value> = match k {
                Kept::Vectors(at) => (0..vars.len())
                    .map(|j| self.b.ins().load(I32X4, super::ctx_flags(), place, at + 16 * j as i32))
                    .collect(),
                Kept::Constant(c) => self.splat_u32(c)[..vars.len()].to_vec(),
                Kept::Lane0(at, stride) => {
                    let base = self.b.ins().load(I32, super::ctx_flags(), place, at);
                    let splat = self.b.ins().splat(I32X4, base);
                    self.note_lane0(splat, base);
                    (0..vars.len() as u32)
                        .map(|k| {
                            if stride == 0 {
                                return splat;
                            }
                            // Lane l is base + l * stride (wrapping).
                            let steps = self
                                .vconst4(std::array::from_fn(|i| (4 * k + i as u32).wrapping_mul(stride)));
                            let v = self.b.ins().iadd(splat, steps);
                            if k == 0 {
                                self.note_lane0(v, base);
                            }
                            v
                        })
                        .collect()
                }
            };
            self.set(vars, &values);
        }
        // What loops write before any lane reads it: any value (zero) for the blends that
        // name the old value of lanes no longer running.
        for state in unread {
            let vars = match state {
                StateRef::Reg(r) => self.reg_vars(r),
                StateRef::Pred(p) => self.pred_vars(u32::from(p)),
            };
            let zeros = self.zeros();
            self.set(&vars, &zeros);
        }
    }

    /// The variables of the stored groups: the registers, the predicates, exec and live.
    fn phase_groups(&self, regs: &[u32], preds: &[u32]) -> Vec<Vec<Variable>> {
        let mut groups: Vec<Vec<Variable>> = regs.iter().map(|&r| self.reg_vars(r)).collect();
        groups.extend(preds.iter().map(|&p| self.pred_vars(p)));
        groups.push(self.wave.exec.clone());
        groups.push(self.wave.live.clone());
        groups
    }

    /// The way out of a wave that ended well (status DONE): mark its place, and hand over in
    /// the phase it ended in. Then fill in the hand-overs: the next wave's start of the same
    /// phase, or the first wave's of the next phase, or, after the last, return DONE.
    pub(super) fn finish_phases(&mut self, phases: &Phases) {
        let ctx = self.ctx;
        let place = self.wave_place(phases);
        let one = self.b.ins().iconst(I32, 1);
        self.b.ins().store(super::ctx_flags(), one, place, 0);
        let phase = self.b.use_var(phases.phase);
        let last = phases.advances.len() - 1;
        for (i, &advance) in phases.advances.iter().enumerate() {
            if i == last {
                self.b.ins().jump(advance, &[ctx.into()]);
                break;
            }
            let here = self.b.ins().icmp_imm_u(IntCC::Equal, phase, i as i64);
            let other = self.b.create_block();
            self.b.ins().brif(here, advance, &[ctx.into()], other, &[]);
            self.continue_in(other);
        }
        let first = self.params[0];
        for (i, &advance) in phases.advances.iter().enumerate() {
            self.b.switch_to_block(advance);
            let ctx = self.b.block_params(advance)[0];
            let next = self.b.ins().load(I64, super::ctx_flags(), ctx, self.env.next_wave_offset());
            let after = self.b.create_block();
            self.b.ins().brif(next, phases.starts[i], &[next.into()], after, &[]);
            self.continue_in(after);
            match phases.starts.get(i + 1) {
                Some(&start) => {
                    self.b.ins().jump(start, &[first.into()]);
                }
                None => {
                    let done = self.b.ins().iconst(I32, crate::abi::status::DONE as i64);
                    self.b.ins().return_(&[done]);
                }
            }
        }
    }

    /// Whether every phase start and hand-over takes only the wave's context: no variable
    /// reaches them from another wave (checked after the function is finished).
    pub fn phases_are_closed(func: &cranelift_codegen::ir::Function, blocks: &[Block]) -> bool {
        blocks.iter().all(|&b| func.dfg.num_block_params(b) == 1)
    }
}

impl Translator<'_, '_> {
    /// Run the kernel in phases where it can ([`barrier_phases`], `Translator::plan_phases`):
    /// right after [`Translator::new`], at the wave start.
    pub fn use_barrier_phases(&mut self) {
        let Some(barriers) = barrier_phases(self.kernel, self.flags) else { return };
        let used = super::used_registers(self.kernel);
        self.phases = self.plan_phases(&barriers, &used);
    }

    /// The entry function's statements, phase after phase.
    pub(super) fn translate_phases(&mut self, phases: &Phases, body: &[Stmt]) -> Result<(), super::JitError> {
        let mut from = 0;
        for (i, &b) in phases.barriers.iter().enumerate() {
            self.block(&body[from..b], 0)?;
            // As a barrier statement: counted, and everything before it paid for.
            let barrier = &body[b];
            self.b.set_srcloc(cranelift_codegen::ir::SourceLoc::new(barrier.offset));
            self.count(wave_isa::analysis::cost::opening(barrier));
            self.settle(barrier.offset);
            self.phase_barrier(phases, i, barrier.offset);
            from = b + 1;
        }
        self.block(&body[from..], 0)
    }

    /// The blocks [`Translator::phases_are_closed`] checks, where the kernel runs in phases.
    pub fn phase_entry_blocks(&self) -> Option<Vec<Block>> {
        self.phases.as_ref().map(Phases::entry_blocks)
    }

    /// Whether the translated kernel's phases are worth it ([`Phases::worth_it`]; true
    /// without phases).
    pub fn phases_worth_it(&self) -> bool {
        self.phases.as_ref().is_none_or(Phases::worth_it)
    }
}

impl Phases {
    /// Whether a wave stores few enough vectors at its barriers for phases to beat fibers
    /// (`MAX_STORED_VECTORS`): known once the kernel is translated.
    pub fn worth_it(&self) -> bool {
        self.most_stored.get() <= MAX_STORED_VECTORS
    }

    fn note_stored(&self, vectors: usize) {
        self.most_stored.set(self.most_stored.get().max(vectors));
    }

    /// The variable of the running wave's context.
    pub fn context(&self) -> Variable {
        self.ctx
    }

    /// Every block a wave enters a phase or hands over at.
    pub fn entry_blocks(&self) -> Vec<Block> {
        self.starts.iter().chain(&self.advances).copied().collect()
    }
}
