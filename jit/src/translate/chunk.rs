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
//! Where the loop counts its trips, its loads' bounds are instead checked once, for every trip,
//! before the first chunk ([`super::loop_bounds`]); a possible fault takes the same bail-out.
//! Accumulators that only accumulate (`fma acc, a, b, acc`) keep a NaN to the loop's end, so
//! their operands are not tested per trip: one test of the accumulators at each vector's loop
//! exit takes the same bail-out (`nan_sticky_accumulators`). With a budget, the wave pays
//! after the loop for its longest vector's trips beyond the first (what the wave-major loop's
//! back edge would have paid, see [`super::count`]), so loops with nested loops stay
//! wave-major then; with `--stats` (whose lane counts need helper calls) every loop does.
//!
//! The chunks' copies are unrolled where they are few or small (`UNROLLED_OPS`); a larger
//! loop is translated once and run by a run-time loop over the chunks, its state in a stack
//! home ([`ChunkHome`]), so its code and compile time do not grow with W. Accumulators too
//! many for the machine's registers are the entry function's resident registers
//! (`memory_resident_registers`): they live in memory for the whole function, the loop
//! changes them in place, and it keeps a copy of their entry values for its bail-out.
//!
//! A divergent `if` without a coherent copy whose bodies hold only vector ops that cannot
//! fault (and nested `if`s) runs one vector at a time too ([`Translator::chunk_major_if`]):
//! nothing in it can bail out, so it needs no wave-major copy.

use super::loop_fn::LoopState;
use super::shadow::ShadowPlan;
use super::{ChunkLoop, ChunkStart, Translator, WaveState};
use crate::error::JitError;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I32X4, I64};
use cranelift_codegen::ir::{Block, Inst, InstBuilder, MemFlagsData, StackSlot, Value};
use cranelift_frontend::Variable;
use std::collections::HashMap;
use wave_isa::analysis::cost::Cost;
use wave_isa::opcodes::Role;
use wave_isa::{FuncId, Op, StateRef, Stmt, StmtKind};

/// The stack home of a run-time chunk loop's state, by group (in [`LoopState`]'s `in`
/// order): what [`super::loop_fn::prune_loop_state`] needs to drop the stores nothing reads
/// back. Kept, a scratch register's stores at each chunk's end would keep its values live
/// across the chunk's trips (the tiled GEMM's accumulators spilled every trip).
#[derive(Debug, Default)]
pub struct ChunkHome {
    /// The stores of the loop's entry values.
    entry_stores: Vec<Vec<Inst>>,
    /// The loads at a chunk's start.
    head_loads: Vec<Vec<Value>>,
    /// The stores at a chunk's end (written groups only).
    back_stores: Vec<Vec<Inst>>,
    /// The loads after the loop (written groups only).
    reloads: Vec<Vec<Value>>,
}

impl ChunkHome {
    /// Each group's loads with the stores that fill them: the chunks' loads with the entry
    /// stores, the reloads after the loop with the chunks' stores.
    pub(super) fn fills(&self) -> impl Iterator<Item = (&[Value], &[Inst])> + Clone {
        let heads = self.head_loads.iter().zip(&self.entry_stores);
        let backs = self.reloads.iter().zip(&self.back_stores);
        heads.chain(backs).map(|(loads, stores)| (loads.as_slice(), stores.as_slice()))
    }
}

/// What every chunk's copy of a chunk-major loop shares.
struct ChunkRun {
    shadows: Option<ShadowPlan>,
    bail: Block,
    /// With a budget: the repeats the budget left at loop entry pays for.
    affordable: Option<Value>,
    /// The instructions pending at the loop's header.
    at_header: Cost,
    /// The most repeats any chunk made (I64).
    longest: Variable,
    /// What the wave-major loop counts a trip.
    per_trip: Cost,
    /// The bodies of the passes the loop runs as, where it is split by accumulators
    /// ([`super::fission`]); None: one pass of the whole body.
    passes: Option<Vec<Vec<Stmt>>>,
}

impl Translator<'_, '_> {
    /// Whether the loop with this body runs chunk-major (see the module doc).
    pub fn runs_chunk_major(&self, body: &[Stmt]) -> bool {
        self.chunk_loop.is_none() && may_run_chunk_major(body, self.flags)
    }

    /// Translate the loop for the vectors of one chunk; a run-time loop runs it for each
    /// chunk in turn (or the one copy runs on the whole wave, where its registers fit). The
    /// bail-out calls its wave-major function.
    pub fn chunk_major_loop(&mut self, offset: u32, body: &[Stmt], func: FuncId) -> Result<(), JitError> {
        let (state, entry) = self.loop_entry(body);
        self.back_up_resident(&state);
        let bail = self.b.create_block();
        self.b.set_cold_block(bail);
        let done = self.b.create_block();
        let shadows = self.shadow_plan(offset, body, func);
        // Shadows of the per-vector analysis stand for one vector's lane 0, so a loop with them
        // runs a vector at a time, each vector redoing the scalar work. Where the wave analysis
        // keeps the same values as scalars (uniform across the wave, or affine with one stride),
        // its shadows stand for the first vector of a chunk of several: a loop over uniform
        // values (the prefix sum's walk over the wave totals) runs once, not W/4 times.
        // A loop split into passes runs one vector at a time (its passes are sized for that).
        let passes = self.accumulator_passes(body);
        let widest = if passes.is_some() { 1 } else { vectors_per_chunk(body, self.wave.n) };
        let (shadows, group) = match shadows {
            Some(plan) if widest > 1 => match self.wave_shadow_plan(offset, body, func) {
                Some(wave_plan) if wave_plan.keeps_all_of(&plan) => (Some(wave_plan), widest),
                _ => (Some(plan), 1),
            },
            Some(plan) => (Some(plan), 1),
            None => (None, widest),
        };
        // The wave-major loop pays this at each back edge (its first trip stays pending).
        let per_trip = self.costs().iteration(body, self.cf.call_depth());
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
        let longest = self.scoped_var(I64);
        self.b.def_var(longest, zero);
        let checked_at_entry = self.check_loads_at_entry(offset, body, func, bail);
        let wave = self.swap_view(None);
        self.chunk_loop = Some(ChunkLoop {
            start: ChunkStart::Fixed(0),
            bailout: Some(bail),
            trips: None,
            nan_deferred: nan_sticky_accumulators(body),
            checked_at_entry,
        });
        let run = ChunkRun { shadows, bail, affordable, at_header, longest, per_trip, passes };
        let chunks = wave.n / group;
        let result = if !chunks_at_run_time(chunks, body) {
            // Few or small copies: unrolled, each has its vectors at known places.
            let mut result = Ok(());
            for chunk in (0..wave.n).step_by(group) {
                self.set_chunk_view(&wave, chunk, group);
                result = self.run_chunk(&run, offset, body, func);
                if result.is_err() {
                    break;
                }
            }
            result.map(|()| None)
        } else {
            self.chunks_at_run_time(&state, &entry, &wave, group, &run, offset, body, func)
        };
        self.chunk_loop = None;
        self.swap_view(Some(wave));
        if let Some((slot, mut home)) = result? {
            self.reload_written(&state, slot, &mut home);
            self.chunk_homes.push(home);
        }
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
            let longest = self.b.use_var(longest);
            let cost = self.b.ins().imul_imm_s(longest, per_trip.total() as i64);
            self.take_fuel(cost);
        }
        self.release_vars(I64, &[longest]);
        self.b.ins().jump(done, &[]);
        self.continue_in(bail);
        // The wave-major function starts from the loop's entry (its first trip is counted
        // here, what it leaves pending is the caller's).
        self.pending = at_header;
        self.call_wave_major(offset, func, state, &entry, None, super::loop_fn::ResidentEntry::Backup);
        self.b.ins().jump(done, &[]);
        self.continue_in(done);
        self.pending = after;
        Ok(())
    }

    /// Whether the `if` statement `s` runs chunk-major ([`Self::chunk_major_if`]): a divergent
    /// `if` of the whole wave (not inside a chunk-major loop or `if`) without a coherent
    /// copy (which runs unmasked where every lane takes `then`), without `--stats`, whose
    /// bodies hold only vector ops that cannot fault and nested `if`s. Not where values live
    /// as scalar shadows (a loop's coherent copy): a shadow stands for lane 0 of the wave's
    /// first vector, not of the vector in view.
    pub fn runs_chunk_major_if(&self, s: &Stmt, func: FuncId) -> bool {
        let StmtKind::If { then_body, else_body, .. } = &s.kind else { return false };
        self.chunk_loop.is_none()
            && self.shadows.is_empty()
            && !self.flags.stats
            && self.wave.n > 1
            && !self.waves().pred_is_uniform(func, s.offset)
            && !self.has_coherent_copy(then_body, else_body)
            && is_fault_free_vector_code(std::slice::from_ref(s))
    }

    /// Translate the `if` statement `s` one vector at a time: the whole statement for the
    /// wave's first vector, then for the next. Its masked bodies, as wave-major code, kept
    /// every register, predicate and mask they name live as W/4 vectors across all of
    /// them, and the register allocator spent most of the compile time of deep `if` nests on
    /// spilling them (`nest_if_64`). Exact: no op in it reads another lane, touches memory,
    /// calls a helper or can fault (`is_fault_free_vector_code`), so each lane computes
    /// the same values in either order; NaN operands of `fadd`, `fmul` and `fma` take their
    /// exact vector path, as there is no bail-out here. What it counts is the same for every
    /// vector (a walk of its statements, no loop in it) and is counted once.
    pub fn chunk_major_if(&mut self, s: &Stmt, func: FuncId) -> Result<(), JitError> {
        // Forms stand for the whole wave: the vectors in view read their variables. The
        // forms of predicates the `if` leaves alone stay in force after it (their scalars
        // dominate what follows; a path around this one, such as an enclosing `if`'s
        // coherent copy, never wrote the variables). Those it writes were written into
        // their variables before any enclosing `if` (`materialize_pred_forms_for_if`).
        let forms = self.pred_forms.clone();
        self.materialize_pred_forms();
        let before = self.pending;
        let wave = self.swap_view(None);
        self.chunk_loop = Some(ChunkLoop {
            start: ChunkStart::Fixed(0),
            bailout: None,
            trips: None,
            nan_deferred: Vec::new(),
            checked_at_entry: Vec::new(),
        });
        let mut result = Ok(());
        let mut after = None;
        for chunk in 0..wave.n {
            self.set_chunk_view(&wave, chunk, 1);
            self.pending = before;
            result = self.stmt(s, func);
            if result.is_err() {
                break;
            }
            if after.is_some_and(|a| a != self.pending) {
                result = Err(JitError::Codegen(format!(
                    "the `if` at byte 0x{:x} counted differently for two vectors",
                    s.offset
                )));
                break;
            }
            after = Some(self.pending);
        }
        self.chunk_loop = None;
        self.swap_view(Some(wave));
        self.pending = after.unwrap_or(before);
        let written = wave_isa::ir::written_state(std::slice::from_ref(s)).preds;
        self.pred_forms = forms.into_iter().filter(|&(p, _)| !written[p as usize]).collect();
        result
    }

    /// The loop on the vectors in view, from the loop's header count: shadows in and out,
    /// the deferred NaN test at its exit, and its repeats into `run.longest`.
    fn run_chunk(
        &mut self,
        run: &ChunkRun,
        offset: u32,
        body: &[Stmt],
        func: FuncId,
    ) -> Result<(), JitError> {
        self.pending = run.at_header;
        let repeats = self.scoped_var(I64);
        let zero = self.b.ins().iconst(I64, 0);
        self.b.def_var(repeats, zero);
        self.chunk_loop_mut().trips = run.affordable.map(|a| (repeats, a));
        match &run.passes {
            None => self.shadowed_loop(run, offset, body, func)?,
            Some(passes) => self.loop_in_passes(run, offset, passes, func)?,
        }
        self.test_deferred_nans(run.bail);
        let r = self.b.use_var(repeats);
        let longest = self.b.use_var(run.longest);
        let longest = self.b.ins().umax(longest, r);
        self.b.def_var(run.longest, longest);
        self.release_vars(I64, &[repeats]);
        Ok(())
    }

    /// The passes a chunk-major loop with this body runs as ([`super::fission`]), where its
    /// accumulators are the entry function's resident registers, too many for the machine's
    /// registers (`memory_resident_registers`): each pass keeps its own in variables. Not
    /// with a budget or `--stats`, which count each statement once a trip.
    fn accumulator_passes(&self, body: &[Stmt]) -> Option<Vec<Vec<Stmt>>> {
        let accumulators = nan_sticky_accumulators(body);
        if self.flags.fuel
            || self.flags.stats
            || accumulators.is_empty()
            || !accumulators.iter().all(|r| self.wave.in_memory.contains_key(r))
        {
            return None;
        }
        super::fission::accumulator_passes(body).filter(|passes| !rewrites_resident(passes, &self.wave))
    }

    /// The loop with this body on the vectors in view, its shadows in and out.
    fn shadowed_loop(
        &mut self,
        run: &ChunkRun,
        offset: u32,
        body: &[Stmt],
        func: FuncId,
    ) -> Result<(), JitError> {
        if let Some(plan) = &run.shadows {
            self.enter_shadows(plan, run.bail);
        }
        let result = self.loop_wave(offset, body, func);
        if let Some(plan) = &run.shadows {
            self.leave_shadows(plan);
        }
        result
    }

    /// The loop as passes over its trips, each with some of its accumulators (see
    /// [`super::fission`]), which it keeps in variables while it runs (they live in memory
    /// otherwise). Each pass starts from the loop's entry values of what it writes.
    fn loop_in_passes(
        &mut self,
        run: &ChunkRun,
        offset: u32,
        passes: &[Vec<Stmt>],
        func: FuncId,
    ) -> Result<(), JitError> {
        // The loop's accumulators, as the chunk loop found them for its deferred NaN test.
        let accumulators = self.chunk_loop_mut().nan_deferred.clone();
        let written: Vec<wave_isa::ir::Written> =
            passes.iter().map(|p| wave_isa::ir::written_state(p)).collect();
        let in_pass = |k: usize, s: StateRef| match s {
            StateRef::Reg(r) => written[k].regs[r as usize],
            StateRef::Pred(p) => written[k].preds[p as usize],
        };
        // The entry values of what a later pass writes (in variables), to start it from.
        let mut entry: Vec<(StateRef, Vec<Variable>, Vec<Value>)> = Vec::new();
        let states =
            (0..256u32).map(StateRef::Reg).chain((0..written[0].preds.len() as u8).map(StateRef::Pred));
        for s in states.filter(|&s| (1..passes.len()).any(|k| in_pass(k, s))) {
            let vars = match s {
                StateRef::Reg(r) => self.reg_vars(r),
                StateRef::Pred(p) => self.pred_vars(p as u32),
            };
            let values = self.get(&vars);
            entry.push((s, vars, values));
        }
        let exec_vars = self.wave.exec.clone();
        let exec = self.get(&exec_vars);
        for (k, pass) in passes.iter().enumerate() {
            if k > 0 {
                for (s, vars, values) in &entry {
                    if in_pass(k, *s) {
                        self.set(vars, values);
                    }
                }
                self.set(&exec_vars, &exec);
                self.pending = run.at_header;
            }
            // Its accumulators from memory into variables, and back after it.
            let lifted: Vec<(u32, (Value, i32))> = accumulators
                .iter()
                .filter(|&&r| in_pass(k, StateRef::Reg(r)))
                .filter_map(|&r| self.wave.in_memory.get(&r).map(|&place| (r, place)))
                .collect();
            let mut lifted_vars = Vec::new();
            for &(r, _) in &lifted {
                let values = self.reg(r);
                let vars = self.new_vars(&values);
                self.wave.in_memory.remove(&r);
                self.wave.regs[r as usize] = Some(vars.clone());
                lifted_vars.push(vars);
            }
            let result = self.shadowed_loop(run, offset, pass, func);
            for (&(r, place), vars) in lifted.iter().zip(&lifted_vars) {
                let values = self.get(vars);
                self.store_vectors(place, &values);
                self.wave.regs[r as usize] = None;
                self.wave.in_memory.insert(r, place);
                self.release_vars(I32X4, vars);
            }
            result?;
        }
        // Every pass counted only its own statements; the loop counts the whole body.
        self.pending = run.at_header + run.per_trip;
        Ok(())
    }

    /// Run the loop for each chunk of `group` vectors in a run-time loop over the chunks,
    /// translated once: the state the body names lives in a stack home, one group of W/4
    /// vectors per register or mask in [`LoopState`]'s `in` order; each chunk loads its
    /// vectors from there and stores back what the body writes. One copy, where unrolled
    /// copies made the code and its compile time grow with W.
    #[allow(clippy::too_many_arguments)]
    fn chunks_at_run_time(
        &mut self,
        state: &LoopState,
        entry: &[Vec<Value>],
        wave: &WaveState,
        group: usize,
        run: &ChunkRun,
        offset: u32,
        body: &[Stmt],
        func: FuncId,
    ) -> Result<Option<(StackSlot, ChunkHome)>, JitError> {
        let stride = 16 * wave.n as i32;
        let bytes = stride as u32 * entry.len() as u32;
        // Chunk-major loops do not nest, so each has the shared home to itself while it runs.
        let slot = super::grown_slot(&mut self.b, &mut self.areas.chunk_home, bytes);
        let home = self.b.ins().stack_addr(I64, slot, 0);
        let flags = MemFlagsData::new().with_notrap();
        let groups = entry.len();
        let mut record = ChunkHome {
            entry_stores: vec![Vec::new(); groups],
            head_loads: vec![Vec::new(); groups],
            back_stores: vec![Vec::new(); groups],
            reloads: vec![Vec::new(); groups],
        };
        // A group the body only reads that holds one value in every vector (a constant, a
        // uniform value) is the same for every chunk: it stays that value, with what is known
        // about it (its lane 0), and needs no home.
        let mut read_only = vec![true; groups];
        for &r in &state.written_regs {
            read_only[state.group_of_reg(r)] = false;
        }
        for &p in &state.written_preds {
            read_only[state.group_of_pred(p)] = false;
        }
        let masks = state.regs.len() + state.preds.len();
        read_only[masks] = false;
        let same: Vec<Option<Value>> = entry
            .iter()
            .zip(&read_only)
            .map(|(values, &read_only)| {
                let first = *values.first()?;
                values.iter().all(|&v| v == first).then_some(first).filter(|_| read_only)
            })
            .collect();
        // Accumulators far beyond the machine's vector registers live in their home for the
        // whole loop, read and written there by the body: kept as values, the register
        // allocator spilled them anyway, each to one slot in the body and another at the
        // loop's head, and copied every one between the two at each trip's end. (None is
        // a scalar shadow: only ops with a scalar form write those, and these are float.)
        let accumulators = &self.chunk_loop_mut().nan_deferred;
        let homed: Vec<u32> = if homes_accumulators(accumulators.len(), group) {
            accumulators
                .iter()
                .copied()
                .filter(|r| state.regs.contains(r) && !wave.in_memory.contains_key(r))
                .collect()
        } else {
            Vec::new()
        };
        let homed_group = |g: usize| g < state.regs.len() && homed.contains(&state.regs[g]);
        for (g, values) in entry.iter().enumerate() {
            if same[g].is_some() && !homed_group(g) {
                continue;
            }
            for (k, &v) in values.iter().enumerate() {
                let store = self.b.ins().store(flags, v, home, g as i32 * stride + 16 * k as i32);
                // A homed group's loads are the body's own: its entry stores must stay.
                if !homed_group(g) {
                    record.entry_stores[g].push(store);
                }
            }
        }
        let index = self.scoped_var(I64);
        let zero = self.b.ins().iconst(I64, 0);
        self.b.def_var(index, zero);
        let head = self.b.create_block();
        let after = self.b.create_block();
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(head);
        let chunk = self.b.use_var(index);
        let first = self.b.ins().imul_imm_s(chunk, group as i64);
        let at = self.b.ins().ishl_imm_u(first, 4);
        let base = self.b.ins().iadd(home, at);
        let load_group = |t: &mut Self, record: &mut ChunkHome, g: usize| -> Vec<Variable> {
            if let Some(v) = same[g] {
                return t.new_vars(&vec![v; group]);
            }
            // Each vector with its lane 0 as a scalar (addresses built from it stay scalar);
            // either load keeps the group's entry stores.
            let values: Vec<Value> = (0..group)
                .map(|j| {
                    let at = g as i32 * stride + 16 * j as i32;
                    let v = t.b.ins().load(I32X4, flags, base, at);
                    let lane0 = t.b.ins().load(I32, flags, base, at);
                    t.note_lane0(v, lane0);
                    record.head_loads[g].extend([v, lane0]);
                    v
                })
                .collect();
            t.new_vars(&values)
        };
        let mut regs: Vec<Option<Vec<Variable>>> = vec![None; wave.regs.len()];
        // The resident registers stay in the register home, at this chunk's vectors.
        let mut in_memory: HashMap<u32, (Value, i32)> = HashMap::new();
        let mut chunk_bases: HashMap<Value, Value> = HashMap::new();
        for (&r, &(wave_base, at_wave)) in &wave.in_memory {
            let chunk_base =
                *chunk_bases.entry(wave_base).or_insert_with(|| self.b.ins().iadd(wave_base, at));
            in_memory.insert(r, (chunk_base, at_wave));
        }
        for (g, &r) in state.regs.iter().enumerate() {
            if homed.contains(&r) {
                in_memory.insert(r, (base, g as i32 * stride));
            } else if !in_memory.contains_key(&r) {
                regs[r as usize] = Some(load_group(self, &mut record, g));
            }
        }
        let mut preds = Vec::with_capacity(wave.preds.len());
        for p in 0..wave.preds.len() as u32 {
            preds.push(match state.preds.iter().position(|&q| q == p) {
                Some(i) => load_group(self, &mut record, state.regs.len() + i),
                // Not named by the body, so never read.
                None => {
                    let zero = self.vconst4([0; 4]);
                    self.new_vars(&vec![zero; group])
                }
            });
        }
        let exec = load_group(self, &mut record, masks);
        let live = load_group(self, &mut record, masks + 1);
        let view = WaveState { regs, in_memory, preds, exec, live, n: group };
        let view_vars: Vec<Variable> = view
            .regs
            .iter()
            .flatten()
            .chain(&view.preds)
            .chain([&view.exec, &view.live])
            .flatten()
            .copied()
            .collect();
        self.swap_view(Some(view));
        self.chunk_loop_mut().start = ChunkStart::Dynamic(first);
        let result = self.run_chunk(run, offset, body, func);
        if result.is_ok() {
            // The written state back to its home.
            for (vars, g) in self.written_groups(state) {
                for (j, &var) in vars.iter().enumerate() {
                    let v = self.b.use_var(var);
                    let store = self.b.ins().store(flags, v, base, g as i32 * stride + 16 * j as i32);
                    record.back_stores[g].push(store);
                }
            }
            let chunk = self.b.use_var(index);
            let next = self.b.ins().iadd_imm_s(chunk, 1);
            self.b.def_var(index, next);
            let more = self.b.ins().icmp_imm_u(IntCC::UnsignedLessThan, next, (wave.n / group) as i64);
            self.b.ins().brif(more, head, &[], after, &[]);
            self.b.seal_block(head);
            self.continue_in(after);
        }
        self.release_vars(I32X4, &view_vars);
        self.release_vars(I64, &[index]);
        result.map(|()| Some((slot, record)))
    }

    /// After the run-time chunk loop (with the wave in view again): the written registers,
    /// predicates and exec from their home.
    fn reload_written(&mut self, state: &LoopState, slot: StackSlot, record: &mut ChunkHome) {
        let home = self.b.ins().stack_addr(I64, slot, 0);
        let stride = 16 * self.wave.n as i32;
        let flags = MemFlagsData::new().with_notrap();
        for (vars, g) in self.written_groups(state) {
            for (k, &var) in vars.iter().enumerate() {
                let v = self.b.ins().load(I32X4, flags, home, g as i32 * stride + 16 * k as i32);
                self.b.def_var(var, v);
                record.reloads[g].push(v);
            }
        }
    }

    /// The variables of the state a chunk-major loop writes, with their groups in the home:
    /// registers, predicates, exec (in [`LoopState`]'s `in` order). Those of the state in
    /// view: a chunk's at a chunk's end, the wave's after the loop.
    fn written_groups(&self, state: &LoopState) -> Vec<(Vec<Variable>, usize)> {
        let mut groups: Vec<(Vec<Variable>, usize)> =
            state.written_regs.iter().map(|&r| (self.reg_vars(r), state.group_of_reg(r))).collect();
        groups.extend(state.written_preds.iter().map(|&p| (self.pred_vars(p), state.group_of_pred(p))));
        groups.push((self.wave.exec.clone(), state.regs.len() + state.preds.len()));
        groups
    }

    /// Where the vectors in view start (the wave's first, outside chunk-major loops).
    pub fn chunk_start(&self) -> ChunkStart {
        self.chunk_loop.as_ref().map_or(ChunkStart::Fixed(0), |c| c.start)
    }

    /// Whether the load at `pc` was bounds-checked for every trip at its chunk-major loop's
    /// entry (see [`super::loop_bounds`]).
    pub fn checked_at_entry(&self, pc: u32) -> bool {
        self.checked_load(pc).is_some()
    }

    /// The load at `pc` if its chunk-major loop's entry checked its every address.
    pub fn checked_load(&self, pc: u32) -> Option<&wave_isa::analysis::induction::RangedLoad> {
        self.chunk_loop.as_ref()?.checked_at_entry.iter().find(|l| l.pc == pc)
    }

    /// Where a possible fault in a chunk-major loop leaves for its wave-major copy (none
    /// outside one).
    pub fn bailout(&self) -> Option<Block> {
        self.chunk_loop.as_ref().and_then(|c| c.bailout)
    }

    fn chunk_loop_mut(&mut self) -> &mut ChunkLoop {
        self.chunk_loop.as_mut().expect("in a chunk-major loop")
    }

    /// At a vector's loop exit: bail out if a deferred accumulator holds a NaN (some trip
    /// then had a NaN operand, whose result the native ops may have chosen differently).
    fn test_deferred_nans(&mut self, bail: Block) {
        let accumulators: Vec<Vec<Value>> =
            self.chunk_loop_mut().nan_deferred.clone().into_iter().map(|r| self.reg(r)).collect();
        if let Some(nan) = self.nan_lanes(&accumulators) {
            let any = self.any(&nan);
            let go = self.b.create_block();
            self.b.ins().brif(any, bail, &[], go, &[]);
            self.continue_in(go);
        }
    }

    /// Put `view` in place (or an empty one) and return the state it replaced.
    fn swap_view(&mut self, view: Option<WaveState>) -> WaveState {
        std::mem::replace(&mut self.wave, view.unwrap_or_default())
    }

    /// Make vectors `chunk..chunk + group` of the wave state the whole state.
    fn set_chunk_view(&mut self, wave: &WaveState, chunk: usize, group: usize) {
        let r = chunk..chunk + group;
        self.wave = WaveState {
            regs: wave.regs.iter().map(|vs| vs.as_ref().map(|vs| vs[r.clone()].to_vec())).collect(),
            in_memory: wave
                .in_memory
                .iter()
                .map(|(&q, &(base, at))| (q, (base, at + 16 * chunk as i32)))
                .collect(),
            preds: wave.preds.iter().map(|vs| vs[r.clone()].to_vec()).collect(),
            exec: wave.exec[r.clone()].to_vec(),
            live: wave.live[r].to_vec(),
            n: group,
        };
        self.chunk_loop_mut().start = ChunkStart::Fixed(chunk);
    }
}

/// Whether some register written by two passes of a split loop lives in memory, where a later
/// pass could not start from its entry value (the accumulators a pass owns may: each is
/// written by one pass only).
fn rewrites_resident(passes: &[Vec<Stmt>], wave: &WaveState) -> bool {
    let mut writers = [0u8; 256];
    for pass in passes {
        let written = wave_isa::ir::written_state(pass);
        for (r, &w) in written.regs.iter().enumerate() {
            writers[r] += w as u8;
        }
    }
    (0..256u32).any(|r| writers[r as usize] > 1 && wave.in_memory.contains_key(&r))
}

/// Vectors of register state a chunk may hold across a loop's trips (the 16 machine vector
/// registers, with room for spills of values the trip does not touch every time).
const CHUNK_VECTOR_BUDGET: usize = 64;

/// How many of the wave's `n` vectors a chunk-major loop runs together: the most (a power of
/// two dividing `n`) whose registers written and read in the body, and the masks of the loops
/// nested in it ([`MASKS_PER_NESTED_LOOP`] per level), fit [`CHUNK_VECTOR_BUDGET`]. (Counted
/// without the masks, a nest of 64 loops ran on the whole wave at once, and its optimized
/// tier took 1.8 s at W = 64 in the register allocator; a vector at a time, 30 ms.) Several
/// vectors at once make each trip's loads wider: a grid-stride loop, whose every trip jumps to
/// another page, then touches whole cache lines per trip instead of 16 bytes of one (`bench
/// reduction`, 16M, W = 32: 10.8-11.1 ms one vector at a time, 7.4-7.6 ms the whole wave).
/// Register-heavy bodies (a GEMM's accumulators) keep one vector: wave-major they spill on
/// every trip.
fn vectors_per_chunk(body: &[Stmt], n: usize) -> usize {
    let written = wave_isa::ir::written_state(body);
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
    let masks = MASKS_PER_NESTED_LOOP * loop_nesting(body);
    let per_vector = (carried.iter().filter(|&&c| c).count() + masks).max(1);
    let mut group = 1;
    while group * 2 <= n && n.is_multiple_of(group * 2) && group * 2 * per_vector <= CHUNK_VECTOR_BUDGET {
        group *= 2;
    }
    group
}

/// Vectors of mask state each loop nested in a chunk-major loop keeps per vector of the chunk
/// across its own trips (the lanes that entered it, and those that left by a `break`).
const MASKS_PER_NESTED_LOOP: usize = 2;

/// How deep loops nest in `body` (0: no loop in it).
fn loop_nesting(body: &[Stmt]) -> usize {
    body.iter()
        .map(|s| match &s.kind {
            StmtKind::Loop { body, .. } => 1 + loop_nesting(body),
            StmtKind::If { then_body, else_body, .. } => loop_nesting(then_body).max(loop_nesting(else_body)),
            _ => 0,
        })
        .max()
        .unwrap_or(0)
}

/// The registers the entry function keeps in a memory home of its own, for the whole
/// function, instead of in variables: the accumulators a run-time chunk loop keeps in memory
/// (more than [`HOMED_ACCUMULATORS`] vectors of a chunk). In variables they lived as W/4
/// vectors each across every loop around that one: the loop stored all of them into its home
/// on entry and loaded them back after, and the register allocator spilled them in the loops
/// around it (the GPU-style GEMM's 64 accumulators were 512 vectors at W = 32, carried by
/// its outer loop, most of its optimized compile time). Chosen from the statements alone, as
/// the translation would choose for the loop (without the shadows it may plan, which only
/// make a loop's chunks smaller): where a loop then runs otherwise, its registers are still
/// read and written in memory, exactly, only slower.
pub(super) fn memory_resident_registers(
    kernel: &wave_isa::Kernel,
    flags: super::Flags,
    n: usize,
) -> Vec<u32> {
    fn visit(stmts: &[Stmt], flags: super::Flags, n: usize, out: &mut Vec<u32>) {
        for s in stmts {
            match &s.kind {
                StmtKind::Loop { body, .. } => {
                    if !may_run_chunk_major(body, flags) {
                        visit(body, flags, n, out);
                        continue;
                    }
                    let group = vectors_per_chunk(body, n);
                    let accumulators = nan_sticky_accumulators(body);
                    if chunks_at_run_time(n / group, body) && homes_accumulators(accumulators.len(), group) {
                        out.extend(accumulators);
                    }
                }
                StmtKind::If { then_body, else_body, .. } => {
                    visit(then_body, flags, n, out);
                    visit(else_body, flags, n, out);
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    for f in &kernel.funcs {
        visit(&f.body, flags, n, &mut out);
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Whether a loop with this body runs chunk-major where no chunk-major loop encloses it. With
/// a budget the wave is charged its longest vector's trips, which is exact only without nested
/// loops.
fn may_run_chunk_major(body: &[Stmt], flags: super::Flags) -> bool {
    !flags.stats && body_is_lane_local(body) && !(flags.fuel && super::control::contains_loop(body))
}

/// Whether a chunk-major loop of this many chunks runs them in a run-time loop over one copy
/// rather than unrolled ([`UNROLLED_OPS`]).
fn chunks_at_run_time(chunks: usize, body: &[Stmt]) -> bool {
    chunks > 1 && chunks * ops_in(body) > UNROLLED_OPS
}

/// Whether a run-time chunk loop keeps these accumulators (so many per vector, `group`
/// vectors a chunk) in memory ([`HOMED_ACCUMULATORS`]).
fn homes_accumulators(accumulators: usize, group: usize) -> bool {
    accumulators * group > HOMED_ACCUMULATORS
}

/// More accumulator vectors than this (of a chunk, `fma acc, a, b, acc` and the like: see
/// [`nan_sticky_accumulators`]) and a run-time chunk loop keeps them in its home, read and
/// written there by the body (the 16 machine vector registers could not hold them). The
/// GPU-style GEMM's 64 go there; the tiled GEMM's 16 stay values.
const HOMED_ACCUMULATORS: usize = 16;

/// The most ops (counted over all copies) a chunk-major loop is unrolled to, one copy per
/// chunk; a larger one runs a run-time loop over one copy. Small copies unrolled keep their
/// values at known places (the tiled GEMM's inner loop, 36 ops, ran at 54 GFLOP/s unrolled
/// eight times and 39 in a run-time loop, `bench gemm --n 1024 --threads 2`), while large
/// ones made the code and its compile time grow with W (the GPU-style GEMM's optimized tier
/// took 2× longer at W = 32 and 3× at W = 64, and ran no faster).
const UNROLLED_OPS: usize = 640;

/// The ops in a body, nested ones too.
fn ops_in(body: &[Stmt]) -> usize {
    let mut ops = 0;
    wave_isa::ir::walk_block(body, 0, &mut |s, _| ops += matches!(s.kind, StmtKind::Op(_)) as usize);
    ops
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

/// Whether `stmts` hold only vector ops (no helper call, no cross-lane op, nothing that
/// touches memory, so nothing that can fault) and `if`s of such statements.
fn is_fault_free_vector_code(stmts: &[Stmt]) -> bool {
    stmts.iter().all(|s| match &s.kind {
        StmtKind::Op(inst) => {
            super::rules::is_native(inst.op)
                && !matches!(
                    inst.op.class(),
                    wave_isa::opcodes::Class::LocalLoad | wave_isa::opcodes::Class::DeviceLoad
                )
        }
        StmtKind::If { then_body, else_body, .. } => {
            is_fault_free_vector_code(then_body) && is_fault_free_vector_code(else_body)
        }
        StmtKind::Nop => true,
        _ => false,
    })
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

#[cfg(test)]
mod tests {
    use super::super::first_loop_body as loop_body;
    use super::{loop_nesting, vectors_per_chunk};

    /// A loop of `depth` levels, each counting r2 up and breaking where it passes the lane's
    /// thread id.
    fn nest(depth: usize) -> String {
        let mut s = String::from(".kernel k\n    mov_sr r1, sr_thread_id_x\n    mov_imm r3, 1\n");
        s += &"    loop\n    icmp_lt p1, r1, r2\n    break p1\n    iadd r2, r2, r3\n".repeat(depth);
        s += &"    endloop\n".repeat(depth);
        s + ".end\n"
    }

    #[test]
    fn nested_loops_count_their_masks() {
        assert_eq!(loop_nesting(&loop_body(&nest(1))), 0);
        assert_eq!(loop_nesting(&loop_body(&nest(3))), 2);
        // One carried register: the whole wave of 16 vectors fits a chunk.
        assert_eq!(vectors_per_chunk(&loop_body(&nest(1)), 16), 16);
        // Two nested loops add 4 mask vectors per vector: 5 per vector, 8 vectors fit 64.
        assert_eq!(vectors_per_chunk(&loop_body(&nest(3)), 16), 8);
        // 32 levels: the masks alone are too many for two vectors.
        assert_eq!(vectors_per_chunk(&loop_body(&nest(32)), 16), 1);
    }

    #[test]
    fn loops_on_either_side_of_an_if_count_once() {
        let source = ".kernel k
    mov_sr r1, sr_thread_id_x
    loop
    icmp_lt p1, r1, r2
    break p1
    if p1
    loop
    break p1
    endloop
    else
    loop
    loop
    break p1
    endloop
    break p1
    endloop
    endif
    endloop
.end
";
        assert_eq!(loop_nesting(&loop_body(source)), 2);
    }
}
