//! Loop functions: the wave-major copy of a chunk-major loop (see [`super::chunk`]) as a
//! function of its own, `(ctx, in, out) -> status`, compiled only when some wave first bails
//! out of the loop (through [`Helper::WaveLoop`] and the kernel's
//! [`LoopTable`](crate::abi::LoopTable)). It is cold code as large as all the per-vector
//! copies together, and was over half of a GEMM kernel's compile time at W = 32. The
//! bail-out stores the loop's entry state to a stack area ([`LoopState`]), calls the
//! function, and loads the state it leaves; the caller's dead outputs are left out afterwards
//! ([`prune_loop_state`], which also prunes the stack homes of run-time chunk loops).

use super::chunk::ChunkHome;
use super::{Analyses, Region, Translator};
use crate::abi::Helper;
use crate::error::JitError;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32X4, I64};
use cranelift_codegen::ir::{Function, Inst, InstBuilder, MemFlagsData, Value};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::{FunctionBuilder, Variable};
use std::collections::{HashMap, HashSet};
use wave_isa::ir::written_state;
use wave_isa::opcodes::Role;
use wave_isa::{FuncId, Kernel, StateRef, Stmt, StmtKind};

/// The most vectors [`Translator::copy_run`] copies with straight-line code; more take a loop.
const UNROLLED_COPY: usize = 16;

/// Where a group of vectors lives: a base address and the offset of its first vector.
type Place = (Value, i32);

/// A chunk-major loop's wave-major function, `(ctx, in, out) -> status`: the loop on the whole
/// wave from the state in `in`, leaving its outputs in `out`; status 0 goes on, anything
/// else is the wave's exit status.
#[derive(Clone, Debug)]
pub struct LoopFn {
    /// Its number (the `op` its helper call passes).
    pub index: usize,
    pub func: FuncId,
    /// Byte offset of the `loop` statement in `func` (of a store run's first statement).
    pub offset: u32,
    /// A store run's statement count ([`super::store_run`]); None for a loop.
    pub run_len: Option<usize>,
    pub state: LoopState,
    /// The caller's stores of the `in` groups and loads of the `out` groups, by group (see
    /// [`prune_loop_state`]).
    in_stores: Vec<Vec<Inst>>,
    out_loads: Vec<Vec<Value>>,
    /// The `out` groups copied into resident registers' places: always live.
    copied_out: Vec<usize>,
    /// What is known about the lanes where the loop sits (it decides blends and masks); no
    /// coherent copy encloses the loop function.
    region: Region,
}

/// Where a wave-major function's caller takes the entry values of the resident registers
/// (see `chunk::memory_resident_registers`) it names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResidentEntry {
    /// From the backup made at the loop's entry (`Translator::back_up_resident`): a
    /// chunk-major loop changes them in place before it may bail out.
    Backup,
    /// From their places: a store run writes none of them.
    InPlace,
}

/// The wave state a loop function reads and writes, in the area its caller passes: `in`
/// holds the groups the body names (registers, predicates), then exec and live; `out`, at
/// [`LoopState::in_bytes`], the groups it writes, then exec. A group is one register's (or
/// mask's) W/4 vectors.
#[derive(Clone, Debug, Default)]
pub struct LoopState {
    pub(super) regs: Vec<u32>,
    pub(super) preds: Vec<u32>,
    pub(super) written_regs: Vec<u32>,
    pub(super) written_preds: Vec<u32>,
    /// Vectors per register of the wave (W / 4).
    vectors: usize,
    /// Per `out` group: whether the caller reads it (else the loop function skips it).
    live_out: Vec<bool>,
    /// Per `in` group: its `out` group when no read in the body can see the entry value
    /// (written before any read in every trip): the entry value then matters only as the
    /// value at an exit before the write, so it need not be stored when that output is dead.
    unexposed: Vec<Option<usize>>,
}

impl LoopState {
    /// Bytes of one group.
    fn stride(&self) -> i32 {
        16 * self.vectors as i32
    }
    /// Bytes of the `in` groups: where `out` starts.
    pub fn in_bytes(&self) -> usize {
        (self.regs.len() + self.preds.len() + 2) * self.stride() as usize
    }
    /// The `in` group of register `r` (one the body names).
    pub(super) fn group_of_reg(&self, r: u32) -> usize {
        self.regs.iter().position(|&q| q == r).expect("a written register is named")
    }
    /// The `in` group of predicate `p` (one the body names).
    pub(super) fn group_of_pred(&self, p: u32) -> usize {
        self.regs.len() + self.preds.iter().position(|&q| q == p).expect("a written predicate is named")
    }
    fn out_bytes(&self) -> usize {
        (self.written_regs.len() + self.written_preds.len() + 1) * self.stride() as usize
    }
}

/// Drop the parts of the loop state of `fns` (loop functions `func` calls) and of the chunk
/// `homes` of its run-time chunk loops that `func` never reads: `out` groups whose loads
/// feed no effect, the `in` stores of unexposed values whose output is dead, and the home
/// stores no load that matters reads back (see [`ChunkHome`]). A register the loop only uses
/// as scratch (overwritten before any read, as a GEMM's loaded operands) then adds nothing to
/// the caller's live state. One fixpoint for both: a loop's bail-out stores the values a
/// chunk home's reloads define, and the next loop's home stores those its outputs define.
pub fn prune_loop_state(func: &mut Function, fns: &mut [LoopFn], homes: &[ChunkHome]) {
    if fns.is_empty() && homes.is_empty() {
        return;
    }
    // Optional: the stores of unexposed entry values, which must not keep their own values
    // live, and every home store. One whose value turns out to be read stays, and is then an
    // effect like any store (its value may be another loop's output): its values become live
    // in turn, which may make more outputs live, until nothing changes. Each value is looked
    // at once.
    let mut optional: HashSet<Inst> = fns
        .iter()
        .flat_map(|f| f.state.unexposed.iter().zip(&f.in_stores).filter(|(u, _)| u.is_some()))
        .flat_map(|(_, stores)| stores.iter().copied())
        .collect();
    let home_fills = homes.iter().flat_map(ChunkHome::fills);
    optional.extend(home_fills.clone().flat_map(|(_, stores)| stores.iter().copied()));
    // The home stores that fill each load of a home.
    let mut home_filled_by: HashMap<Value, &[Inst]> = HashMap::new();
    for (loads, stores) in home_fills {
        home_filled_by.extend(loads.iter().map(|&v| (v, stores)));
    }
    // Which loop function's `out` group each of the caller's loads fills.
    let mut filled_by: HashMap<Value, (usize, usize)> = HashMap::new();
    for (i, f) in fns.iter().enumerate() {
        for (group, loads) in f.out_loads.iter().enumerate() {
            filled_by.extend(loads.iter().map(|&v| (v, (i, group))));
        }
    }
    let mut liveness = crate::dead_params::Liveness::new(func, &optional);
    let mut outputs_seen: HashSet<(usize, usize)> = HashSet::new();
    loop {
        let newly_live = liveness.take_new();
        if newly_live.is_empty() {
            break;
        }
        for v in newly_live {
            for &store in home_filled_by.get(&v).copied().unwrap_or_default() {
                if optional.remove(&store) {
                    liveness.add_root(store);
                }
            }
            let Some(&(i, out)) = filled_by.get(&v) else { continue };
            if !outputs_seen.insert((i, out)) {
                continue;
            }
            let f = &fns[i];
            for (group, _) in f.state.unexposed.iter().enumerate().filter(|(_, u)| **u == Some(out)) {
                for &store in &f.in_stores[group] {
                    if optional.remove(&store) {
                        liveness.add_root(store);
                    }
                }
            }
        }
    }
    for f in fns.iter_mut() {
        for (group, loads) in f.out_loads.iter().enumerate() {
            f.state.live_out[group] =
                f.copied_out.contains(&group) || loads.iter().any(|v| liveness.contains(v));
        }
    }
    drop(liveness);
    for inst in optional {
        func.layout.remove_inst(inst);
    }
}

/// The body of the loop statement at `offset` in function `func`.
fn loop_body(kernel: &Kernel, func: FuncId, offset: u32) -> Option<&[Stmt]> {
    find_in_lists(kernel, func, &|list| {
        list.iter().find_map(|s| match &s.kind {
            StmtKind::Loop { body, .. } if s.offset == offset => Some(body.as_slice()),
            _ => None,
        })
    })
}

/// What `pick` finds in the first statement list of function `func` where it finds
/// something: the function's body, then the bodies of its loops and `if`s, nested ones too.
pub(super) fn find_in_lists<'k>(
    kernel: &'k Kernel,
    func: FuncId,
    pick: &dyn Fn(&'k [Stmt]) -> Option<&'k [Stmt]>,
) -> Option<&'k [Stmt]> {
    fn find<'k>(stmts: &'k [Stmt], pick: &dyn Fn(&'k [Stmt]) -> Option<&'k [Stmt]>) -> Option<&'k [Stmt]> {
        pick(stmts).or_else(|| {
            stmts.iter().find_map(|s| match &s.kind {
                StmtKind::Loop { body, .. } => find(body, pick),
                StmtKind::If { then_body, else_body, .. } => {
                    find(then_body, pick).or_else(|| find(else_body, pick))
                }
                _ => None,
            })
        })
    }
    find(&kernel.funcs.get(func)?.body, pick)
}

impl<'a, 'f> Translator<'a, 'f> {
    /// The state a loop with this body passes to its wave-major function, and its values now
    /// (at the loop's entry).
    pub(super) fn loop_entry(&mut self, body: &[Stmt]) -> (LoopState, Vec<Vec<Value>>) {
        let state = self.loop_state(body);
        let entry = self.state_groups(&state, false).iter().map(|vars| self.get(vars)).collect();
        (state, entry)
    }

    /// The state a store run passes to its wave-major function, and its values now (see
    /// [`super::store_run`]). A register the run writes before any read passes zeros: its
    /// variable stays unread here (in a kernel run in barrier phases, a read would reach back
    /// to the state of another wave, see [`super::phases`]). Exact because the bail-out is
    /// taken only where a store faults for sure, which ends the wave: no later code reads
    /// what the function leaves, and the function itself writes the register before it
    /// reads it.
    pub(super) fn run_entry(&mut self, run: &[Stmt]) -> (LoopState, Vec<Vec<Value>>) {
        let state = self.loop_state(run);
        let groups = self.state_groups(&state, false);
        let entry = groups
            .iter()
            .zip(&state.unexposed)
            .map(|(vars, unexposed)| match unexposed {
                Some(_) if !vars.is_empty() => self.zeros(),
                _ => self.get(vars),
            })
            .collect();
        (state, entry)
    }

    /// The resident registers (kept in memory, see [`super::chunk::memory_resident_registers`])
    /// among `regs`: their group, and their place.
    fn resident_groups(&self, regs: &[u32]) -> Vec<(usize, (Value, i32))> {
        regs.iter().enumerate().filter_map(|(g, r)| Some((g, *self.wave.in_memory.get(r)?))).collect()
    }

    /// Copy each group's vectors (see [`Translator::load_vectors`]) from its first place to its
    /// second. Groups that follow each other in both places are copied as one run; a run
    /// longer than [`UNROLLED_COPY`] vectors is a loop (see [`Self::copy_run`]).
    fn copy_groups(&mut self, places: &[(Place, Place)]) {
        let stride = 16 * self.wave.n as i32;
        let mut i = 0;
        while i < places.len() {
            let (from, to) = places[i];
            let mut groups = 1;
            while let Some(&(f, t)) = places.get(i + groups) {
                let at = groups as i32 * stride;
                if (f.0, t.0) != (from.0, to.0) || (f.1, t.1) != (from.1 + at, to.1 + at) {
                    break;
                }
                groups += 1;
            }
            self.copy_run(from, to, groups * self.wave.n);
            i += groups;
        }
    }

    /// Copy `vectors` vectors from `from` to `to` (places that do not overlap): unrolled up to
    /// [`UNROLLED_COPY`] (or when not a multiple of four, which resident registers, W/4 ≥ 4
    /// vectors each, never are), else a loop of four vectors a trip. The 64 resident
    /// accumulators of the GPU-style GEMM are 1,024 vectors at W = 64: unrolled, the three
    /// copies around its chunk-major loop (the backup, and the bail-out's copies in and out)
    /// were a fifth of the entry function's instructions.
    fn copy_run(&mut self, (from, from_at): Place, (to, to_at): Place, vectors: usize) {
        let flags = MemFlagsData::new().with_notrap();
        let copy = |t: &mut Self, from: Value, to: Value, k: i32| {
            let v = t.b.ins().load(I32X4, flags, from, from_at + 16 * k);
            t.b.ins().store(flags, v, to, to_at + 16 * k);
        };
        const PER_TRIP: usize = 4;
        if vectors <= UNROLLED_COPY || !vectors.is_multiple_of(PER_TRIP) {
            for k in 0..vectors as i32 {
                copy(self, from, to, k);
            }
            return;
        }
        let trips = vectors / PER_TRIP;
        let head = self.b.create_block();
        let done = self.b.create_block();
        // A copy on a bail-out's path stays with the cold code.
        if self.b.current_block().is_some_and(|block| self.b.func.layout.is_cold(block)) {
            self.b.set_cold_block(head);
            self.b.set_cold_block(done);
        }
        self.b.append_block_param(head, I64);
        let zero = self.b.ins().iconst(I64, 0);
        self.b.ins().jump(head, &[zero.into()]);
        self.b.switch_to_block(head);
        let done_bytes = self.b.block_params(head)[0];
        let (src, dst) = (self.b.ins().iadd(from, done_bytes), self.b.ins().iadd(to, done_bytes));
        for k in 0..PER_TRIP as i32 {
            copy(self, src, dst, k);
        }
        let next = self.b.ins().iadd_imm_s(done_bytes, 16 * PER_TRIP as i64);
        let more = self.b.ins().icmp_imm_s(IntCC::UnsignedLessThan, next, (16 * PER_TRIP * trips) as i64);
        self.b.ins().brif(more, head, &[next.into()], done, &[]);
        self.b.seal_block(head);
        self.b.switch_to_block(done);
        self.b.seal_block(done);
    }

    /// Keep the loop's entry values of the resident registers it names: a chunk that bails out
    /// may have changed them in place already, and the wave-major function starts from the
    /// loop's entry ([`Self::call_wave_major`] reads them back).
    pub(super) fn back_up_resident(&mut self, state: &LoopState) {
        let resident = self.resident_groups(&state.regs);
        if resident.is_empty() {
            return;
        }
        let backup = self.resident_backup(state);
        let places: Vec<_> =
            resident.into_iter().map(|(g, place)| (place, (backup, g as i32 * state.stride()))).collect();
        self.copy_groups(&places);
    }

    /// The address of the stack area for [`Self::back_up_resident`], by `in` group.
    fn resident_backup(&mut self, state: &LoopState) -> Value {
        let bytes = state.regs.len() as u32 * state.stride() as u32;
        let slot = super::grown_slot(&mut self.b, &mut self.areas.resident_backup, bytes);
        self.b.ins().stack_addr(I64, slot, 0)
    }

    /// Run the loop's (or store run's, `run_len`) wave-major function from the `entry` state,
    /// with the resident registers' entry values from `resident`; take the state it leaves.
    pub(super) fn call_wave_major(
        &mut self,
        offset: u32,
        func: FuncId,
        state: LoopState,
        entry: &[Vec<Value>],
        run_len: Option<usize>,
        resident: ResidentEntry,
    ) {
        let area = self.state_area(state.in_bytes() + state.out_bytes());
        let stride = state.stride();
        // Resident groups have no entry values here (none are in variables): their stores are
        // the copy from the backup, never pruned.
        let in_stores = self.store_groups(entry, area, 0, stride);
        let resident_in = self.resident_groups(&state.regs);
        if !resident_in.is_empty() {
            let places: Vec<_> = match resident {
                ResidentEntry::Backup => {
                    let backup = self.resident_backup(&state);
                    resident_in
                        .iter()
                        .map(|&(g, _)| ((backup, g as i32 * stride), (area, g as i32 * stride)))
                        .collect()
                }
                ResidentEntry::InPlace => {
                    resident_in.iter().map(|&(g, place)| (place, (area, g as i32 * stride))).collect()
                }
            };
            self.copy_groups(&places);
        }
        let index = self.first_loop_fn + self.loop_fns.len();
        let st = self.call_helper(Helper::WaveLoop, index as u32, area, offset);
        self.check_status(st);
        let out_groups = self.state_groups(&state, true);
        let out_loads = self.load_groups(&out_groups, area, state.in_bytes() as i32, stride);
        // The copy back into the resident registers' places reads these outputs whatever the
        // rest of the function reads.
        let resident_out = self.resident_groups(&state.written_regs);
        let copied_out: Vec<usize> = resident_out.iter().map(|&(g, _)| g).collect();
        let places: Vec<_> = resident_out
            .into_iter()
            .map(|(g, place)| ((area, state.in_bytes() as i32 + g as i32 * stride), place))
            .collect();
        self.copy_groups(&places);
        self.loop_fns.push(LoopFn {
            index,
            func,
            offset,
            run_len,
            state,
            in_stores,
            out_loads,
            copied_out,
            region: Region {
                coherent: false,
                in_coherent_nest: false,
                coherent_levels: 0,
                in_call: self.inside_call(),
                ..self.region
            },
        });
    }

    /// The address of the stack area for loop state, grown to at least `bytes`.
    fn state_area(&mut self, bytes: usize) -> Value {
        let slot = super::grown_slot(&mut self.b, &mut self.areas.loop_state, bytes as u32);
        self.b.ins().stack_addr(I64, slot, 0)
    }

    /// What a loop with this body reads and writes of the wave state.
    fn loop_state(&self, body: &[Stmt]) -> LoopState {
        let mut regs = vec![false; 256];
        let mut preds = vec![false; self.wave.preds.len()];
        let mut note = |named: StateRef| {
            let slot = match named {
                StateRef::Reg(r) => regs.get_mut(r as usize),
                StateRef::Pred(p) => preds.get_mut(p as usize),
            };
            if let Some(slot) = slot {
                *slot = true;
            }
        };
        wave_isa::ir::walk_block(body, 0, &mut |s, _| named_by(s, None).into_iter().for_each(&mut note));
        let written = written_state(body);
        let regs: Vec<u32> = (0..256).filter(|&r| regs[r as usize] && self.has_register(r)).collect();
        let preds: Vec<u32> = (0..preds.len() as u32).filter(|&p| preds[p as usize]).collect();
        let written_regs: Vec<u32> = regs.iter().copied().filter(|&r| written.regs[r as usize]).collect();
        let written_preds: Vec<u32> = preds.iter().copied().filter(|&p| written.preds[p as usize]).collect();
        let exposed = exposed_state(body);
        let out_group = |named: StateRef| match named {
            StateRef::Reg(r) => written_regs.iter().position(|&w| w == r),
            StateRef::Pred(p) => {
                written_preds.iter().position(|&w| w == p as u32).map(|i| written_regs.len() + i)
            }
        };
        let unexposed = regs
            .iter()
            .map(|&r| StateRef::Reg(r))
            .chain(preds.iter().map(|&p| StateRef::Pred(p as u8)))
            .map(|named| out_group(named).filter(|_| !exposed.contains(&named)))
            .chain([None, None])
            .collect();
        let live_out = vec![true; written_regs.len() + written_preds.len() + 1];
        LoopState { regs, preds, written_regs, written_preds, vectors: self.wave.n, live_out, unexposed }
    }

    /// The variables of the state groups in their order in the area: the `in` groups, or
    /// (`written`) the `out` groups.
    fn state_groups(&self, state: &LoopState, written: bool) -> Vec<Vec<Variable>> {
        let (regs, preds) =
            if written { (&state.written_regs, &state.written_preds) } else { (&state.regs, &state.preds) };
        let mut groups: Vec<Vec<Variable>> = regs.iter().map(|&r| self.reg_vars(r)).collect();
        groups.extend(preds.iter().map(|&p| self.pred_vars(p)));
        groups.push(self.wave.exec.clone());
        if !written {
            groups.push(self.wave.live.clone());
        }
        groups
    }

    /// Store the groups at `base + at`; returns the stores by group.
    fn store_groups(&mut self, groups: &[Vec<Value>], base: Value, at: i32, stride: i32) -> Vec<Vec<Inst>> {
        let flags = MemFlagsData::new().with_notrap();
        let mut stores = Vec::with_capacity(groups.len());
        for (g, values) in groups.iter().enumerate() {
            let offset = |k: usize| at + g as i32 * stride + 16 * k as i32;
            stores.push(
                values
                    .iter()
                    .enumerate()
                    .map(|(k, &v)| self.b.ins().store(flags, v, base, offset(k)))
                    .collect(),
            );
        }
        stores
    }

    /// Load the groups from `base + at`; returns the loaded values by group.
    fn load_groups(
        &mut self,
        groups: &[Vec<Variable>],
        base: Value,
        at: i32,
        stride: i32,
    ) -> Vec<Vec<Value>> {
        let flags = MemFlagsData::new().with_notrap();
        let mut loads = Vec::with_capacity(groups.len());
        for (g, vars) in groups.iter().enumerate() {
            let mut group = Vec::with_capacity(vars.len());
            for (k, &var) in vars.iter().enumerate() {
                let v = self.b.ins().load(I32X4, flags, base, at + g as i32 * stride + 16 * k as i32);
                self.b.def_var(var, v);
                group.push(v);
            }
            loads.push(group);
        }
        loads
    }

    /// The translator of loop function `f`: its state from the `in` area, in its context.
    #[allow(clippy::too_many_arguments)]
    pub fn for_loop(
        b: FunctionBuilder<'f>,
        kernel: &'a Kernel,
        env: &'a dyn super::env::WaveEnv,
        analyses: &'a Analyses,
        flags: super::Flags,
        call_conv: CallConv,
        first_loop_fn: usize,
        f: &LoopFn,
    ) -> Translator<'a, 'f> {
        let mut t = Translator::bare(b, kernel, env, analyses, flags, call_conv, first_loop_fn);
        t.func = f.func;
        t.region = f.region;
        let zero = t.zeros();
        for &r in &f.state.regs {
            t.wave.regs[r as usize] = Some(t.new_vars(&zero));
        }
        // Predicates the body does not name are never read; they still need variables.
        t.wave.preds = (0..super::PREDICATES).map(|_| t.new_vars(&zero)).collect();
        t.wave.exec = t.new_vars(&zero);
        t.wave.live = t.new_vars(&zero);
        let groups = t.state_groups(&f.state, false);
        t.load_groups(&groups, t.params[1], 0, f.state.stride());
        t
    }

    /// Translate loop function `f` (with the translator from [`Translator::for_loop`]);
    /// returns the loop functions it calls in turn and its chunk homes.
    pub fn translate_loop_fn(
        mut self,
        f: &LoopFn,
        config: cranelift_codegen::isa::TargetFrontendConfig,
    ) -> Result<(Vec<LoopFn>, Vec<super::chunk::ChunkHome>), JitError> {
        let output = self.params[2];
        self.b.set_srcloc(cranelift_codegen::ir::SourceLoc::new(f.offset));
        match f.run_len {
            None => {
                let body = loop_body(self.kernel, f.func, f.offset).ok_or_else(|| {
                    JitError::Codegen(format!("no loop at byte 0x{:x} of function {}", f.offset, f.func))
                })?;
                self.loop_wave(f.offset, body, f.func)?;
            }
            Some(len) => {
                let run =
                    super::store_run::run_stmts(self.kernel, f.func, f.offset, len).ok_or_else(|| {
                        JitError::Codegen(format!(
                            "no store run at byte 0x{:x} of function {}",
                            f.offset, f.func
                        ))
                    })?;
                // Every store of the run keeps its own exact fault path here.
                self.store_runs = super::store_run::StoreRuns::Off;
                self.block(run, f.func)?;
            }
        }
        // The loop's first trip is counted by the caller (see `count`).
        self.pending = wave_isa::analysis::cost::Cost::ZERO;
        let groups = self.state_groups(&f.state, true);
        let values: Vec<Vec<Value>> = groups
            .iter()
            .zip(&f.state.live_out)
            .map(|(vars, &live)| if live { self.get(vars) } else { Vec::new() })
            .collect();
        self.store_groups(&values, output, 0, f.state.stride());
        let fns = std::mem::take(&mut self.loop_fns);
        let homes = std::mem::take(&mut self.chunk_homes);
        self.finish(config);
        Ok((fns, homes))
    }
}

/// The registers and predicates a statement names in `role` (all when `None`): its op's
/// operands, its guard, and the predicate of an `if`, `break` or `continue` (reads all).
fn named_by(s: &Stmt, role: Option<Role>) -> Vec<StateRef> {
    let mut named: Vec<StateRef> = Vec::new();
    if role != Some(Role::Def) {
        named.extend(s.guard.map(|g| StateRef::Pred(g.index)));
        if let StmtKind::If { pred, .. } | StmtKind::Break { pred } | StmtKind::Continue { pred } = &s.kind {
            named.push(StateRef::Pred(pred.index));
        }
    }
    if let StmtKind::Op(inst) = &s.kind {
        named.extend(inst.named_state(role));
    }
    named
}

/// The registers and predicates some read in the body may see with the value the loop was
/// entered with: read before an unguarded write at the body's top level (lanes only leave
/// during a trip, so every lane still active at a later read passed that write).
pub(super) fn exposed_state(body: &[Stmt]) -> Vec<StateRef> {
    let mut defined: Vec<StateRef> = Vec::new();
    let mut exposed: Vec<StateRef> = Vec::new();
    for s in body {
        wave_isa::ir::walk_block(std::slice::from_ref(s), 0, &mut |t, _| {
            exposed.extend(named_by(t, Some(Role::Use)).into_iter().filter(|r| !defined.contains(r)));
        });
        if let (StmtKind::Op(inst), None) = (&s.kind, s.guard) {
            defined.extend(inst.named_state(Some(Role::Def)));
        }
    }
    exposed
}
