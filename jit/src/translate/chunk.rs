//! Chunk-major loops: a loop whose lanes cannot see each other runs to its end on one 4-lane
//! vector at a time instead of on the whole wave at once (or on a few vectors together, where
//! their registers fit: `vectors_per_chunk`).
//!
//! Wave-major code keeps every register of all W/4 vectors live across the body: a GEMM
//! kernel's 16 accumulators are 128 vectors at W = 32, far more than the 16 machine
//! registers, so most of the loop is spills. Run per vector, the same loop needs W/4 times
//! fewer live values. This is exact only when no lane can observe another lane's progress,
//! so the body may hold only ops that are pure vector code (no helper call, no cross-lane op,
//! no store or atomic, no barrier, call, `return` or `halt`); loads are fine because nothing
//! in the loop writes memory. What order can change is *which* fault comes first and where
//! an instruction budget runs out; and the vector code here has no exact NaN fix-up (it
//! would merge values in the hot path). So a possible bounds fault, a NaN operand of
//! `fadd`/`fmul`/`fma`, or a vector needing more trips than the budget pays for jumps to a
//! bail-out that runs the loop wave-major from its entry state, which behaves exactly as the
//! interpreter (the loop's wave-major function, compiled on first use: see [`super::loop_fn`]).
//! Accumulators that only accumulate (`fma acc, a, b, acc`) keep a NaN to the loop's end, so
//! their operands are not tested per trip: one test of the accumulators at each vector's loop
//! exit takes the same bail-out (`nan_sticky_accumulators`). With a budget, the wave pays
//! after the loop for its longest vector's trips beyond the first (what the wave-major loop's
//! back edge would have paid, see [`super::count`]), so loops with nested loops stay
//! wave-major then; with `--stats` (whose lane counts need helper calls) every loop does.

use super::Translator;
use crate::error::JitError;
use cranelift_codegen::ir::types::I64;
use cranelift_codegen::ir::{Block, InstBuilder, MemFlagsData, Value};
use cranelift_frontend::Variable;
use wave_isa::opcodes::Role;
use wave_isa::{FuncId, Op, StateRef, Stmt, StmtKind};

/// The wave state a chunk view replaces: registers, predicates, exec and live masks.
struct WaveView {
    regs: Vec<Option<Vec<Variable>>>,
    preds: Vec<Vec<Variable>>,
    exec: Vec<Variable>,
    live: Vec<Variable>,
    n: usize,
}

impl Translator<'_, '_> {
    /// Whether the loop with this body runs chunk-major (see the module doc).
    pub fn runs_chunk_major(&self, body: &[Stmt]) -> bool {
        // With a budget the wave is charged its longest vector's trips, which is exact only
        // without nested loops.
        let has_nested_loop = || {
            let mut found = false;
            wave_isa::ir::walk_block(body, 0, &mut |s, _| found |= matches!(s.kind, StmtKind::Loop { .. }));
            found
        };
        self.bailout.is_none()
            && !self.flags.stats
            && body_is_lane_local(body)
            && !(self.flags.fuel && has_nested_loop())
    }

    /// Translate the loop once per vector; the bail-out calls its wave-major function.
    pub fn chunk_major_loop(&mut self, offset: u32, body: &[Stmt], func: FuncId) -> Result<(), JitError> {
        let (state, entry) = self.loop_entry(body);
        let bail = self.b.create_block();
        self.b.set_cold_block(bail);
        let done = self.b.create_block();
        let shadows = self.shadow_plan(offset, body, func);
        self.nan_deferred = nan_sticky_accumulators(body);
        let wave = self.swap_view(None);
        self.bailout = Some(bail);
        let mut result = Ok(());
        // The wave-major loop pays this at each back edge (its first trip stays pending).
        let per_trip = self.costs.iteration(body, self.cf.call_depth());
        let at_header = self.pending;
        let zero = self.b.ins().iconst(I64, 0);
        // With a budget: the repeats (trips after the first, which is pending) it pays for
        // now. A vector that needs more (a runaway loop, or a budget that runs out here) bails
        // out, and the wave-major copy stops exactly.
        let affordable = self.flags.fuel.then(|| {
            let fuel_ptr = self.load_ctx(I64, self.env.fuel_offset());
            let left = self.b.ins().load(I64, MemFlagsData::new().with_notrap(), fuel_ptr, 0);
            let left = self.b.ins().smax(left, zero);
            let per = self.b.ins().iconst(I64, per_trip.total().max(1) as i64);
            self.b.ins().sdiv(left, per)
        });
        let mut longest = zero;
        // Shadows stand for one vector's lane 0, so a loop with them runs a vector at a time.
        let group = if shadows.is_some() { 1 } else { vectors_per_chunk(body, wave.n) };
        for chunk in (0..wave.n).step_by(group) {
            self.pending = at_header;
            self.set_chunk_view(&wave, chunk, group);
            if let Some(plan) = &shadows {
                self.enter_shadows(plan, bail);
            }
            let repeats = self.scoped_var(I64);
            self.b.def_var(repeats, zero);
            self.chunk_trips = affordable.map(|a| (repeats, a));
            result = self.loop_wave(offset, body, func);
            if let Some(plan) = &shadows {
                self.leave_shadows(plan);
            }
            if result.is_err() {
                break;
            }
            self.test_deferred_nans(bail);
            let r = self.b.use_var(repeats);
            longest = self.b.ins().umax(longest, r);
            self.release_vars(I64, &[repeats]);
        }
        self.chunk_trips = None;
        self.nan_deferred.clear();
        self.bailout = None;
        self.chunk = 0;
        self.swap_view(Some(wave));
        result?;
        let after = self.pending;
        if after.checked_sub(&at_header) != Some(per_trip) {
            return Err(JitError::Codegen(format!(
                "the loop at byte 0x{offset:x} counted {} instructions a trip, its cost {}",
                after.checked_sub(&at_header).unwrap_or_default().total(),
                per_trip.total()
            )));
        }
        if self.flags.fuel {
            // The wave-major loop would have taken its back edge as often as the longest
            // vector. No vector repeated more than the budget paid for at entry, and nothing
            // else drew on it since (no nested loop, call or barrier here), so this cannot
            // overdraw.
            let cost = self.b.ins().imul_imm_s(longest, per_trip.total() as i64);
            self.take_fuel(cost);
        }
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(bail);
        // The wave-major function starts from the loop's entry (its first trip is counted
        // here, what it leaves pending is the caller's).
        self.pending = at_header;
        self.call_wave_major(offset, func, state, &entry);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
        self.pending = after;
        Ok(())
    }

    /// At a vector's loop exit: bail out if a deferred accumulator holds a NaN (some trip
    /// then had a NaN operand, whose result the native ops may have chosen differently).
    fn test_deferred_nans(&mut self, bail: Block) {
        let accumulators: Vec<Vec<Value>> =
            self.nan_deferred.clone().into_iter().map(|r| self.reg(r)).collect();
        if let Some(nan) = self.nan_lanes(&accumulators) {
            let any = self.any(&nan);
            let go = self.b.create_block();
            self.b.ins().brif(any, bail, &[], go, &[]);
            self.continue_in(go);
        }
    }

    /// Put `view` in place (or an empty one) and return the state it replaced.
    fn swap_view(&mut self, view: Option<WaveView>) -> WaveView {
        let view = view.unwrap_or(WaveView {
            regs: Vec::new(),
            preds: Vec::new(),
            exec: Vec::new(),
            live: Vec::new(),
            n: 0,
        });
        WaveView {
            regs: std::mem::replace(&mut self.regs, view.regs),
            preds: std::mem::replace(&mut self.preds, view.preds),
            exec: std::mem::replace(&mut self.exec, view.exec),
            live: std::mem::replace(&mut self.live, view.live),
            n: std::mem::replace(&mut self.n, view.n),
        }
    }

    /// Make vectors `chunk..chunk + group` of the wave state the whole state.
    fn set_chunk_view(&mut self, wave: &WaveView, chunk: usize, group: usize) {
        let r = chunk..chunk + group;
        self.regs = wave.regs.iter().map(|vs| vs.as_ref().map(|vs| vs[r.clone()].to_vec())).collect();
        self.preds = wave.preds.iter().map(|vs| vs[r.clone()].to_vec()).collect();
        self.exec = wave.exec[r.clone()].to_vec();
        self.live = wave.live[r].to_vec();
        self.n = group;
        self.chunk = chunk;
    }
}

/// Vectors of register state a chunk may hold across a loop's trips (the 16 machine vector
/// registers, with room for spills of values the trip does not touch every time).
const CHUNK_VECTOR_BUDGET: usize = 64;

/// How many of the wave's `n` vectors a chunk-major loop runs together: the most (a power of
/// two dividing `n`) whose registers written and read in the body fit
/// [`CHUNK_VECTOR_BUDGET`]. Several vectors at once make each trip's loads wider: a
/// grid-stride loop, whose every trip jumps to another page, then touches whole cache lines
/// per trip instead of 16 bytes of one (`bench reduction`, 16M, W = 32: 10.8-11.1 ms one
/// vector at a time, 7.4-7.6 ms the whole wave). Register-heavy bodies (a GEMM's
/// accumulators) keep one vector: wave-major they spill on every trip.
fn vectors_per_chunk(body: &[Stmt], n: usize) -> usize {
    let written = written_state(body);
    let mut carried = vec![false; 256];
    wave_isa::ir::walk_block(body, 0, &mut |s, _| {
        let StmtKind::Op(inst) = &s.kind else { return };
        for named in inst.named_state(Some(Role::Use)) {
            if let StateRef::Reg(r) = named {
                if written.regs.get(r as usize) == Some(&true) {
                    carried[r as usize] = true;
                }
            }
        }
    });
    let per_vector = carried.iter().filter(|&&c| c).count().max(1);
    let mut group = 1;
    while group * 2 <= n && n.is_multiple_of(group * 2) && group * 2 * per_vector <= CHUNK_VECTOR_BUDGET {
        group *= 2;
    }
    group
}

/// Registers and predicates a body writes.
pub(super) struct Written {
    pub(super) regs: Vec<bool>,
    pub(super) preds: Vec<bool>,
}

pub(super) fn written_state(body: &[Stmt]) -> Written {
    let mut w = Written { regs: vec![false; 256], preds: vec![false; 8] };
    wave_isa::ir::walk_block(body, 0, &mut |s, _| {
        let StmtKind::Op(inst) = &s.kind else { return };
        for named in inst.named_state(Some(Role::Def)) {
            let slot = match named {
                StateRef::Reg(r) => w.regs.get_mut(r as usize),
                StateRef::Pred(p) => w.preds.get_mut(p as usize),
            };
            if let Some(slot) = slot {
                *slot = true;
            }
        }
    });
    w
}

/// Registers the body changes only by accumulating: every write is an `fadd`, `fmul` or
/// `fma` that reads the register it writes, and nothing else in the body reads it. A NaN
/// operand of such an op (IEEE: NaN in, NaN out) then leaves a NaN in the register to the
/// loop's end, so one test there replaces the per-trip operand tests of `float_run`: a
/// NaN-free end means no trip met a NaN operand, where native and exact results agree. No
/// other reader, because a NaN payload that is not exact must not steer the loop (a branch
/// on its bits could keep it running where the interpreter stops).
pub(super) fn nan_sticky_accumulators(body: &[Stmt]) -> Vec<u32> {
    // Per register: untouched, or whether every statement naming it accumulates into it.
    let mut fits: Vec<Option<bool>> = vec![None; 256];
    wave_isa::ir::walk_block(body, 0, &mut |s, _| {
        let StmtKind::Op(inst) = &s.kind else { return };
        let rd = inst.rd as u32;
        let accumulates = matches!(inst.op, Op::Fadd | Op::Fmul | Op::Fma)
            && inst.named_state(Some(Role::Use)).any(|u| u == StateRef::Reg(rd));
        for named in inst.named_state(None) {
            if let StateRef::Reg(r) = named {
                if let Some(slot) = fits.get_mut(r as usize) {
                    *slot = Some(slot.unwrap_or(true) && accumulates && r == rd);
                }
            }
        }
    });
    (0..256).filter(|&r| fits[r as usize] == Some(true)).collect()
}

/// Whether every statement of the body (nested ones too) keeps each lane to itself and runs
/// without a helper call.
fn body_is_lane_local(body: &[Stmt]) -> bool {
    body.iter().all(|s| match &s.kind {
        StmtKind::Op(inst) => super::rules::is_native(inst.op),
        StmtKind::If { then_body, else_body, .. } => {
            body_is_lane_local(then_body) && body_is_lane_local(else_body)
        }
        StmtKind::Loop { body, .. } => body_is_lane_local(body),
        StmtKind::Break { .. } | StmtKind::Continue { .. } => true,
        StmtKind::Fence { .. } | StmtKind::Wait | StmtKind::Nop => true,
        StmtKind::Barrier | StmtKind::Call { .. } | StmtKind::Return | StmtKind::Halt { .. } => false,
    })
}
