//! Structured control flow with explicit masks (gallivm style).
//!
//! `exec` is kept up to date incrementally: lanes leave it at `break`, `continue`, `return`
//! and `halt`; a construct's exit mask is the union of the masks its paths end with, plus the
//! lanes that rejoin there (broken lanes at a loop exit, returned lanes at a call's end).
//! Every statement is walked whatever the mask (ir.rs), so barriers inside empty bodies are
//! still reached, exactly as the interpreter. What the walk counts is kept by [`super::count`].

use super::exec_mask::{Gathering, LoopMasks};
use super::fp::is_nan_order_sensitive;
use super::{Region, Translator};
use crate::abi::{status, Helper};
use crate::error::JitError;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I32X4, I64};
use cranelift_codegen::ir::{Block, InstBuilder, SourceLoc};
use wave_isa::analysis::cost::{self, Cost};
use wave_isa::analysis::Uniformity;
use wave_isa::ir::{walk_block, MAX_CALL_DEPTH};
use wave_isa::{FuncId, Kernel, PredRef, StateRef, Stmt, StmtKind};

/// One open construct that `break`/`continue`/`return` refer to.
pub enum Frame {
    /// The lanes that broke out (rejoin at the exit) and that continued (rejoin at the latch);
    /// the latch and exit blocks, targets of uniform `continue`/`break`; the loop's body
    /// (where a `break`/`continue` sits decides which barriers a jump must still pass).
    /// `masked_exit`: some lanes may have left through the masks (not by a real branch).
    /// `latch`/`exit` gather the jumps of uniform `continue`s and `break`s.
    Loop {
        masks: LoopMasks,
        latch: super::count::Join,
        exit: super::count::Join,
        body: *const [Stmt],
        masked_exit: bool,
    },
    /// An inlined call: lanes that returned (rejoin at the call's end).
    Call { ret: Gathering },
}

#[derive(Default)]
pub struct ControlStack {
    pub frames: Vec<Frame>,
}

impl ControlStack {
    /// Depth of inlined calls open now.
    pub fn call_depth(&self) -> u32 {
        self.frames.iter().filter(|f| matches!(f, Frame::Call { .. })).count() as u32
    }

    /// The innermost loop of the current function.
    fn innermost_loop(&self) -> Option<&Frame> {
        // `if` opens no frame, so the innermost frame is the loop, or a call (none then).
        self.frames.last().filter(|f| matches!(f, Frame::Loop { .. }))
    }

    fn innermost_call(&self) -> Option<&Gathering> {
        self.frames.iter().rev().find_map(|f| match f {
            Frame::Call { ret } => Some(ret),
            Frame::Loop { .. } => None,
        })
    }
}

impl Translator<'_, '_> {
    pub fn block(&mut self, stmts: &[Stmt], func: FuncId) -> Result<(), JitError> {
        let forms_before = self.pred_forms.clone();
        let mut rest = stmts;
        // Statements to pass before a store run may start (see `store_run_len`).
        let mut no_run_for = 0;
        while let Some(first) = rest.first() {
            self.func = func;
            // Consecutive NaN-order-sensitive float ops share one NaN test (see `float_run`).
            let run = rest.iter().take_while(|s| is_nan_order_sensitive(s)).count();
            // Source locations tie the CLIF of a dump (WAVE_JIT_DUMP) to statement offsets
            // (`stmt` is reached only from here; nested blocks set their own).
            self.b.set_srcloc(SourceLoc::new(first.offset));
            let store_run = match no_run_for {
                0 => self.store_run_len(rest).map_err(|members| no_run_for = members).ok(),
                _ => None,
            };
            let taken = if let Some(len) = store_run {
                self.store_run(&rest[..len], func)?;
                len
            } else if run > 0 {
                for s in &rest[..run] {
                    self.count(cost::opening(s));
                }
                self.float_run(&rest[..run])?;
                run
            } else {
                self.stmt(first, func)?;
                self.prefetch_after(first.offset);
                1
            };
            rest = &rest[taken..];
            no_run_for = no_run_for.saturating_sub(taken);
        }
        // Forms recorded here do not dominate what follows the list.
        self.materialize_pred_forms_since(&forms_before);
        Ok(())
    }

    pub(super) fn stmt(&mut self, s: &Stmt, func: FuncId) -> Result<(), JitError> {
        self.func = func;
        if self.runs_chunk_major_if(s, func) {
            return self.chunk_major_if(s, func);
        }
        match &s.kind {
            StmtKind::Op(_) => {}
            StmtKind::If { then_body, else_body, .. } => {
                self.materialize_pred_forms_for_if(&[then_body, else_body]);
            }
            // Loops, calls, exits and barriers read the predicates' variables wholesale or
            // join control flow.
            _ => self.materialize_pred_forms(),
        }
        self.full = s.guard.is_none() && self.exec_is_full(s.offset);
        self.count(cost::opening(s));
        match &s.kind {
            StmtKind::Op(inst) => {
                self.count_lanes(inst, s.offset);
                self.op(inst, s.offset)
            }
            StmtKind::If { pred, then_body, else_body, else_offset, .. } => {
                self.count_divergence(*pred);
                let has_else = else_offset.is_some();
                if self.waves().pred_is_uniform(func, s.offset)
                    && !self.passes_barrier(then_body)
                    && !self.passes_barrier(else_body)
                {
                    self.uniform_if(*pred, then_body, else_body, has_else, func, s.offset)?;
                    self.count(Cost::marker());
                    return Ok(());
                }
                let entry = self.exec_mask();
                let has_copy = self.has_coherent_copy(then_body, else_body);
                // Every lane runs the `if` and its predicate is a compare form: the test for
                // the copy is scalar, and the masks are built on the masked path only.
                let scalar_test = if has_copy && self.full { self.every_lane_holds(*pred) } else { None };
                let (coherent, then_mask, else_mask) = match scalar_test {
                    Some(every_lane) => {
                        // Every lane active and taking `then`: the `then` mask is `entry`.
                        let merge =
                            self.coherent_then(every_lane, &entry, then_body, else_body, has_else, func)?;
                        let p = self.pred_ref(*pred);
                        let (then_mask, else_mask) = self.cond_split(&entry, &p);
                        (Some(merge), then_mask, else_mask)
                    }
                    None => {
                        let p = self.pred_ref(*pred);
                        let (then_mask, else_mask) = self.cond_split(&entry, &p);
                        let coherent = if has_copy {
                            let every_lane = self.all_true(&then_mask);
                            Some(self.coherent_then(
                                every_lane, &then_mask, then_body, else_body, has_else, func,
                            )?)
                        } else {
                            None
                        };
                        (coherent, then_mask, else_mask)
                    }
                };
                // Either body may run with no active lane (the other side took them all), and
                // neither runs on every lane as far as the translation knows.
                let bodies = Region {
                    maybe_empty: true,
                    coherent: false,
                    in_coherent_nest: self.region.in_coherent_nest || coherent.is_some(),
                    ..self.region
                };
                let else_mask = self.keep_mask_across(else_mask, then_body);
                let (then_result, after_then, else_result) = self.in_region(bodies, |t| {
                    t.set_exec_mask(&then_mask);
                    let then_result = t.block(then_body, func);
                    let else_mask = t.kept_mask(&else_mask);
                    let after_then = t.cond_invert(&else_mask);
                    let after_then = t.keep_mask_across(after_then, else_body);
                    if has_else {
                        t.count(Cost::marker());
                    }
                    (then_result, after_then, t.block(else_body, func))
                });
                then_result?;
                else_result?;
                let after_then = self.kept_mask(&after_then);
                self.cond_merge(&after_then);
                if let Some(mut merge) = coherent {
                    let edge = self.edge(&mut merge);
                    self.b.ins().jump(edge, &[]);
                    self.enter(merge, s.offset);
                }
                self.count(Cost::marker());
                Ok(())
            }
            StmtKind::Loop { body, .. } => self.loop_(s.offset, body, func),
            StmtKind::Break { pred } | StmtKind::Continue { pred } => {
                let is_break = matches!(s.kind, StmtKind::Break { .. });
                let Some(Frame::Loop { masks, body, .. }) = self.cf.innermost_loop() else {
                    // The validator rules this out.
                    return Err(JitError::Codegen(format!(
                        "a loop exit outside a loop at byte 0x{:x}",
                        s.offset
                    )));
                };
                let (masks, body) = (masks.clone(), *body);
                // SAFETY: `body` points to the loop body inside `self.kernel`, which outlives the
                // translation; the frame is popped before the body's translation ends.
                let body: &[Stmt] = unsafe { &*body };
                let uniform_exit = self.exits_uniformly(func, s.offset);
                let position = body.iter().position(|b| std::ptr::eq(b, s));
                if let (true, Some(at)) = (uniform_exit, position) {
                    // Every active lane leaves together: a real branch. The lanes would
                    // still walk the rest of the body with an empty mask, so the jump passes
                    // the barriers found there (all waves then meet the same barriers) and
                    // counts what the walk counts.
                    let leaving = self.pred_any_active(*pred);
                    let leave = self.b.create_block();
                    let stay = self.b.create_block();
                    self.b.ins().brif(leaving, leave, &[], stay, &[]);
                    self.continue_in(leave);
                    let staying = self.pending;
                    self.skip(&body[at + 1..], true);
                    if is_break {
                        self.break_all(&masks);
                        // The `endloop` this last trip reaches.
                        self.count(Cost::marker());
                    }
                    let target = self.loop_edge(is_break)?;
                    self.b.ins().jump(target, &[]);
                    self.continue_in(stay);
                    self.pending = staying;
                    return Ok(());
                }
                if uniform_exit {
                    // A masked uniform exit: what follows in this iteration may run empty.
                    self.region.maybe_empty = true;
                }
                if let Some(Frame::Loop { masked_exit, .. }) = self.cf.frames.last_mut() {
                    *masked_exit = true;
                }
                let gathered = if is_break { &masks.broke } else { &masks.continued };
                self.leave_where(*pred, gathered);
                Ok(())
            }
            StmtKind::Call { func: callee, .. } => self.call(*callee, s.offset),
            StmtKind::Return => {
                let leaving = self.op_mask(s.guard);
                match self.cf.innermost_call().cloned() {
                    Some(ret) => self.leave_lanes(&leaving, &ret),
                    None => self.halt(&leaving, s.offset),
                }
                Ok(())
            }
            StmtKind::Halt { .. } => {
                let leaving = self.op_mask(s.guard);
                self.halt(&leaving, s.offset);
                Ok(())
            }
            StmtKind::Barrier => {
                self.barrier(s);
                Ok(())
            }
            StmtKind::Fence { .. } | StmtKind::Wait | StmtKind::Nop => Ok(()),
        }
    }

    /// Lanes of `leaving` halt for good; the wave ends when no lane is live (at `pc`).
    fn halt(&mut self, leaving: &[cranelift_codegen::ir::Value], pc: u32) {
        if self.full {
            // Every live lane is active and halts (`full`: unguarded, all lanes live and
            // active): no lane is left, so the wave ends without testing the masks. What
            // follows is unreachable.
            if self.flags.fuel {
                self.leave_done(pc);
            } else {
                let done = self.b.ins().iconst(I32, status::DONE as i64);
                self.b.ins().jump(self.exit, &[done.into()]);
            }
            let after = self.b.create_block();
            self.continue_in(after);
            return;
        }
        let live_vars = self.wave.live.clone();
        let live = self.get(&live_vars);
        let live = self.and_not(&live, leaving);
        self.set(&live_vars, &live);
        self.retire_lanes(leaving);
        let any = self.any(&live);
        let next = self.b.create_block();
        if self.flags.fuel {
            // The wave ends having counted what is pending; going on, it stays pending.
            let end = self.b.create_block();
            self.b.ins().brif(any, next, &[], end, &[]);
            self.continue_in(end);
            self.leave_done(pc);
        } else {
            let done = self.b.ins().iconst(I32, status::DONE as i64);
            self.b.ins().brif(any, next, &[], self.exit, &[done.into()]);
        }
        self.continue_in(next);
    }

    fn barrier(&mut self, s: &Stmt) {
        // A wave that waits has paid for everything before (see `count`).
        self.settle(s.offset);
        if s.guard.is_none() {
            self.barrier_call(s.offset);
            return;
        }
        let wait = self.b.create_block();
        let after = self.b.create_block();
        let m = self.op_mask(s.guard);
        let any = self.any(&m);
        self.b.ins().brif(any, wait, &[], after, &[]);
        self.continue_in(wait);
        self.barrier_call(s.offset);
        self.b.ins().jump(after, &[]);
        self.continue_in(after);
    }

    /// Wait at the barrier at byte `pc` (leaves the function on an error status).
    pub fn barrier_call(&mut self, pc: u32) {
        let zero = self.b.ins().iconst(I64, 0);
        let st = self.call_helper(Helper::Barrier, 0, zero, pc);
        self.check_status(st);
    }

    /// `if` on a uniform predicate: a real branch; each body runs with the mask unchanged.
    /// Each path counts the other side as the interpreter's walk of it with an empty mask
    /// (`else` marker included; the caller counts `endif`).
    fn uniform_if(
        &mut self,
        pred: PredRef,
        then_body: &[Stmt],
        else_body: &[Stmt],
        has_else: bool,
        func: FuncId,
        offset: u32,
    ) -> Result<(), JitError> {
        let taken = self.pred_any_active(pred);
        let then_block = self.b.create_block();
        let else_block = self.b.create_block();
        let mut merge = self.join();
        let entry = self.pending;
        self.b.ins().brif(taken, then_block, &[], else_block, &[]);
        self.continue_in(then_block);
        self.block(then_body, func)?;
        if has_else {
            self.count(Cost::marker());
        }
        self.skip(else_body, false);
        let edge = self.edge(&mut merge);
        self.b.ins().jump(edge, &[]);
        self.continue_in(else_block);
        self.pending = entry;
        self.skip(then_body, false);
        if has_else {
            self.count(Cost::marker());
        }
        self.block(else_body, func)?;
        let edge = self.edge(&mut merge);
        self.b.ins().jump(edge, &[]);
        self.enter(merge, offset);
        Ok(())
    }

    /// Whether a divergent `if` with these bodies gets a coherent copy (see
    /// [`Self::coherent_then`]). No copy in a masked path of an `if` with a copy, and inside
    /// copies only up to COHERENT_LEVELS of them: a nest of ifs then has at most
    /// COHERENT_LEVELS + 1 copies of any statement (a copy at every level of both paths
    /// doubled the code per level).
    pub(super) fn has_coherent_copy(&self, then_body: &[Stmt], else_body: &[Stmt]) -> bool {
        self.chunk_loop.is_none()
            && !self.region.in_coherent_nest
            && self.region.coherent_levels < COHERENT_LEVELS
            && coherent_body(then_body)
            && coherent_body(else_body)
    }

    /// Whether every lane of `masks` is set, as an i8.
    pub(super) fn all_true(
        &mut self,
        masks: &[cranelift_codegen::ir::Value],
    ) -> cranelift_codegen::ir::Value {
        let mut all = masks[0];
        for &m in &masks[1..] {
            all = self.b.ins().band(all, m);
        }
        self.b.ins().vall_true(all)
    }

    /// The coherent fast path of a divergent `if` (ISPC's `cif`): where every lane of the wave
    /// takes the `then` side (`every_lane`, an i8), which is common (a bounds guard
    /// `if (i < n)` fails only in the last wave), run a copy of the `then` body translated as
    /// if every lane ran it, with `then_mask` (then every lane) as its mask: no blends, no
    /// mask tests on stores, lane 0 deciding bounds checks. Returns the join both paths meet
    /// at, with the masked path to be translated next (the current block). Only where
    /// [`Self::has_coherent_copy`].
    fn coherent_then(
        &mut self,
        every_lane: cranelift_codegen::ir::Value,
        then_mask: &[cranelift_codegen::ir::Value],
        then_body: &[Stmt],
        else_body: &[Stmt],
        has_else: bool,
        func: FuncId,
    ) -> Result<super::count::Join, JitError> {
        let fast = self.b.create_block();
        let masked = self.b.create_block();
        self.b.ins().brif(every_lane, fast, &[], masked, &[]);
        // Their one predecessor is this branch: sealed now, they read the values defined
        // before it (no block parameters), with the lane-0 forms recorded for them.
        self.b.seal_block(fast);
        self.b.seal_block(masked);
        self.b.switch_to_block(fast);
        let entry = self.pending;
        self.set_exec_mask(then_mask);
        let copy = Region { coherent: true, coherent_levels: self.region.coherent_levels + 1, ..self.region };
        self.in_region(copy, |t| t.block(then_body, func))?;
        if has_else {
            self.count(Cost::marker());
        }
        // No lane takes the `else` side: it is walked with an empty mask.
        self.skip(else_body, false);
        let mut merge = self.join();
        let edge = self.edge(&mut merge);
        self.b.ins().jump(edge, &[]);
        self.b.switch_to_block(masked);
        self.pending = entry;
        Ok(merge)
    }

    /// A branch target for a uniform `break` (the loop's exit) or `continue` (its latch) of
    /// the innermost loop, bringing what is pending here.
    fn loop_edge(&mut self, is_break: bool) -> Result<Block, JitError> {
        let pending = self.pending;
        let edge = self.flags.fuel.then(|| self.b.create_block());
        let Some(Frame::Loop { latch, exit, .. }) = self.cf.frames.last_mut() else {
            return Err(JitError::Codegen("a loop exit outside a loop".into()));
        };
        let join = if is_break { exit } else { latch };
        Ok(join.add_edge(edge, pending))
    }

    /// Whether the (maybe negated) predicate holds in some active lane, as an i8. Where every
    /// lane is active, lane 0 answers.
    fn pred_any_active(&mut self, pred: PredRef) -> cranelift_codegen::ir::Value {
        let p = self.pred(pred.index as u32);
        let lane0_decides = self.full;
        let holds = if lane0_decides {
            let lane0 = self.lane0(p[0]);
            self.b.ins().icmp_imm_s(IntCC::NotEqual, lane0, 0)
        } else {
            let exec = self.exec_mask();
            let active = if pred.negated { self.and_not(&exec, &p) } else { self.and(&exec, &p) };
            return self.any(&active);
        };
        if pred.negated {
            self.b.ins().bxor_imm_s(holds, 1)
        } else {
            holds
        }
    }

    /// Whether running `stmts` with an empty mask would meet a barrier.
    fn passes_barrier(&self, stmts: &[Stmt]) -> bool {
        !barriers_walked(self.kernel, stmts).is_empty()
    }

    fn loop_(&mut self, offset: u32, body: &[Stmt], func: FuncId) -> Result<(), JitError> {
        if self.runs_chunk_major(body) {
            return self.chunk_major_loop(offset, body, func);
        }
        self.loop_wave(offset, body, func)
    }

    /// A loop over the whole wave (or, in a chunk-major loop, over the vector in view). Its
    /// `loop` marker is counted by the caller; each iteration after the first pays for itself
    /// at the back edge, the first stays pending.
    pub fn loop_wave(&mut self, offset: u32, body: &[Stmt], func: FuncId) -> Result<(), JitError> {
        if self.flags.fuel && self.costs().has_barrier(body, self.cf.call_depth()) {
            // Its barriers settle, so its iterations start from nothing pending.
            self.settle(offset);
        }
        let at_header = self.pending;
        let masks = self.loop_begin(contains_loop(body), has_own_continue(body));
        // Before the loop and its coherent copy, which run the same loads.
        let prefetch = self.prefetch_plan(body);
        let outer_prefetch = std::mem::replace(&mut self.prefetch, prefetch);
        let header = self.b.create_block();
        let latch = self.join();
        let exit = self.join();
        // Entered by every lane, and left only by real branches: every lane is still active
        // at the latch, so the "any lane left" test would always pass.
        let entered_full = self.exec_is_full(offset) && !leaves_early(body);
        // Not with --stats, whose counters count lanes; not where every lane leaves at once
        // (that `break` is a branch of its own, and the copy would only double the code).
        let coherent_split = if entered_full && !self.flags.stats { coherent_loop_split(body) } else { None }
            .filter(|&split| !self.exits_uniformly(func, body[split].offset));
        match coherent_split {
            Some(split) => self.coherent_loop(offset, body, split, header, func)?,
            None => {
                self.b.ins().jump(header, &[]);
            }
        }
        self.b.switch_to_block(header);
        self.trip_begin(&masks);
        self.cf.frames.push(Frame::Loop {
            masks: masks.clone(),
            latch,
            exit,
            body: body as *const [Stmt],
            masked_exit: false,
        });
        // From the second iteration on, lanes that left at different times are missing
        // everywhere in the body, which the per-statement `divergent` facts do not say.
        let diverges = (exits_diverge(self.waves(), func, body), exits_diverge(self.shapes(), func, body));
        let (waves, vectors) = self.region.divergent_loops;
        let body_region = Region {
            divergent_loops: (waves + diverges.0 as u32, vectors + diverges.1 as u32),
            ..self.region
        };
        let result = self.in_region(body_region, |t| t.block(body, func));
        self.prefetch = outer_prefetch;
        let Some(Frame::Loop { masked_exit, latch, mut exit, .. }) = self.cf.frames.pop() else {
            return Err(JitError::Codegen(format!("loop frame at byte 0x{offset:x} lost")));
        };
        result?;
        // Latch: continuing lanes rejoin; repeat while any lane is left.
        self.fall_into(latch, offset);
        self.count(Cost::marker());
        let next = self.trip_end(&masks, has_own_continue(body));
        let iteration =
            if self.flags.fuel { self.iteration_counted(&at_header, offset)? } else { Cost::ZERO };
        let repeat = if self.flags.fuel { self.b.create_block() } else { header };
        if entered_full && !masked_exit {
            self.b.ins().jump(repeat, &[]);
        } else {
            let any = self.any(&next);
            let leave = self.edge(&mut exit);
            self.b.ins().brif(any, repeat, &[], leave, &[]);
        }
        if repeat != header {
            self.continue_in(repeat);
            self.repeat_trip(header, iteration, offset);
        }
        // Every back edge is in.
        self.b.seal_block(header);
        self.enter(exit, offset);
        self.loop_end(masks);
        Ok(())
    }

    /// Whether the `break` or `continue` at `offset` takes every active lane or none.
    fn exits_uniformly(&self, func: FuncId, offset: u32) -> bool {
        self.waves()
            .get(func, offset)
            .is_some_and(|i| !i.divergent_exit && i.pred.is_some_and(|p| p.is_uniform()))
    }

    /// A loop's back edge to `header` with a budget: pay for the trip just done (its count
    /// stays pending for the code after the loop, standing for the last one); in a
    /// chunk-major loop count the vector's repeats instead (the wave pays after the loop).
    fn repeat_trip(&mut self, header: Block, iteration: Cost, offset: u32) {
        match (self.chunk_loop.as_ref().and_then(|c| c.trips), self.bailout()) {
            (Some((repeats, affordable)), Some(bail)) => {
                let r = self.b.use_var(repeats);
                let r = self.b.ins().iadd_imm_s(r, 1);
                self.b.def_var(repeats, r);
                let over = self.b.ins().icmp(IntCC::SignedGreaterThan, r, affordable);
                self.b.ins().brif(over, bail, &[], header, &[]);
            }
            _ => {
                self.pay(iteration, offset);
                self.b.ins().jump(header, &[]);
            }
        }
    }

    /// The coherent copy of a loop entered by every lane (ISPC's coherent loops): `body[..split]`
    /// (ops that may run again, see [`coherent_loop_split`]), then the `break` at `split`: where
    /// no lane leaves, the rest of the body runs unmasked and the copy repeats; once a lane
    /// leaves, the masked loop takes over from its `header`, running this trip's ops before the
    /// `break` again with every lane still active. A grid-stride loop runs unmasked but for its
    /// last trips.
    fn coherent_loop(
        &mut self,
        offset: u32,
        body: &[Stmt],
        split: usize,
        header: Block,
        func: FuncId,
    ) -> Result<(), JitError> {
        let StmtKind::Break { pred } = body[split].kind else {
            return Err(JitError::Codegen("internal: a coherent loop copy split off no break".into()));
        };
        let top = self.b.create_block();
        let rest = self.b.create_block();
        // Values of the form `base + lane × stride` live as scalars in the copy; where they
        // do not have that form when it starts, the masked loop runs instead.
        let shadows = self.coherent_shadow_plan(body, func);
        if let Some(plan) = &shadows {
            self.enter_shadows(plan, header);
        }
        self.b.ins().jump(top, &[]);
        self.b.switch_to_block(top);
        // What its statements count is paid at its back edge (below).
        let pending = self.pending;
        let copy = Region { coherent: true, ..self.region };
        let result = self.in_region(copy, |t| {
            let mut result = t.block(&body[..split], func);
            if result.is_ok() {
                let any_leaves = match t.scalar_leave_test(&body[..split], pred) {
                    Some(any) => any,
                    None => {
                        let leaving = t.pred_ref(pred);
                        t.any(&leaving)
                    }
                };
                let leave = t.b.create_block();
                t.b.ins().brif(any_leaves, leave, &[], rest, &[]);
                t.b.seal_block(leave);
                t.b.switch_to_block(leave);
                if let Some(plan) = &shadows {
                    // The masked loop reads the vectors: write the scalars back on the way.
                    t.write_back_shadows(plan);
                }
                t.fresh_carried_vectors(body);
                t.b.ins().jump(header, &[]);
                t.b.seal_block(rest);
                t.b.switch_to_block(rest);
                result = t.block(&body[split + 1..], func);
                // Each trip is paid as the masked loop's back edge pays it; the masked loop pays
                // for the trips it runs, the last one included.
                if t.flags.fuel {
                    let iteration = t.costs().iteration(body, t.cf.call_depth());
                    t.repeat_trip(top, iteration, offset);
                } else {
                    t.b.ins().jump(top, &[]);
                }
            }
            if shadows.is_some() {
                t.drop_shadows();
            }
            result
        });
        self.pending = pending;
        result
    }

    /// New values for the vector registers the loop carries, on the way from the coherent copy
    /// to the masked loop. The register allocator otherwise puts a carried value's copy-side
    /// and masked-side definitions in one bundle (a block parameter and its arguments), and
    /// once the masked loop's pressure spills that bundle, the copy stores every new value
    /// to the stack on every trip: the reduction's grid-stride loop stored its 8 partial sums
    /// per trip, 8 stores beside 8 loads (3.55-3.67 -> 3.08-3.59 ms at 16M). The new values
    /// are `v + z` with `z` a zero Cranelift cannot see through (a lane count shifted right by
    /// 16: at most 64 lanes). Loop temporaries are not live at the header and stay as they are.
    fn fresh_carried_vectors(&mut self, body: &[Stmt]) {
        let written = wave_isa::ir::written_state(body);
        let carried: Vec<u32> = (0..256u32)
            .filter(|&r| written.regs[r as usize] && self.has_register(r) && !self.is_shadowed_reg(r))
            // Memory is no loop-carried value.
            .filter(|&r| !self.in_memory(r))
            .filter(|&r| !body.iter().any(|s| self.unblended().contains(&(s.offset, StateRef::Reg(r)))))
            .collect();
        if carried.is_empty() {
            return;
        }
        let lanes = self.load_ctx(I32, self.env.live_lanes_offset());
        let zero = self.b.ins().ushr_imm_u(lanes, 16);
        let zero = self.b.ins().splat(I32X4, zero);
        for r in carried {
            let fresh: Vec<_> = self.reg(r).into_iter().map(|v| self.b.ins().iadd(v, zero)).collect();
            let vars = self.reg_vars(r);
            self.set(&vars, &fresh);
        }
    }

    fn call(&mut self, callee: FuncId, offset: u32) -> Result<(), JitError> {
        if self.cf.call_depth() >= MAX_CALL_DEPTH {
            // The interpreter fails when the call runs; so does the compiled code.
            let zero = self.b.ins().iconst(I64, 0);
            let st = self.call_helper(Helper::CallDepth, 0, zero, offset);
            self.leave(st);
            let dead = self.b.create_block();
            self.b.switch_to_block(dead);
            return Ok(());
        }
        let func = self
            .kernel
            .funcs
            .get(callee)
            .ok_or_else(|| JitError::Unsupported(format!("call to unknown function {callee}")))?;
        let zero = self.zeros();
        let ret = Gathering::Vars(self.new_vars(&zero));
        self.cf.frames.push(Frame::Call { ret: ret.clone() });
        let call_site = self.shapes().get(self.func, offset);
        let divergent = self.region.call_divergent || call_site.is_none_or(|info| info.divergent);
        let callee_region = Region { call_divergent: divergent, ..self.region };
        let result = self.in_region(callee_region, |t| t.block(&func.body, callee));
        self.cf.frames.pop();
        result?;
        self.rejoin_lanes(&ret);
        self.release_gathering(ret);
        Ok(())
    }
}

/// Whether `body` holds a loop (at any depth).
pub(super) fn contains_loop(body: &[Stmt]) -> bool {
    let mut found = false;
    wave_isa::ir::walk_block(body, 0, &mut |s, _| found |= matches!(s.kind, StmtKind::Loop { .. }));
    found
}

/// The pcs of the barriers that running `stmts` with an empty mask meets, in order: both
/// sides of every `if`, every loop body once (its latch then finds no lane), called bodies.
pub fn barriers_walked(kernel: &Kernel, stmts: &[Stmt]) -> Vec<u32> {
    fn walk(kernel: &Kernel, stmts: &[Stmt], depth: u32, out: &mut Vec<u32>) {
        for s in stmts {
            match &s.kind {
                StmtKind::Barrier if s.guard.is_none() => out.push(s.offset),
                StmtKind::If { then_body, else_body, .. } => {
                    walk(kernel, then_body, depth, out);
                    walk(kernel, else_body, depth, out);
                }
                StmtKind::Loop { body, .. } => walk(kernel, body, depth, out),
                StmtKind::Call { func, .. } if depth < MAX_CALL_DEPTH => {
                    if let Some(f) = kernel.funcs.get(*func) {
                        walk(kernel, &f.body, depth + 1, out);
                    }
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(kernel, stmts, 0, &mut out);
    out
}

/// Whether lanes may stop anywhere in the body other than through this loop's own exits: a
/// `halt`, a `return` or a call (nested loops give back every lane they took in; masked exits
/// of this loop are seen through its frame).
fn leaves_early(body: &[Stmt]) -> bool {
    let mut found = false;
    walk_block(body, 0, &mut |s, _| {
        found |= matches!(s.kind, StmtKind::Halt { .. } | StmtKind::Return | StmtKind::Call { .. })
    });
    found
}

/// Whether a `continue` of this loop (not of a nested one) is in the body: without one,
/// the latch has no lanes to bring back.
fn has_own_continue(body: &[Stmt]) -> bool {
    body.iter().any(|s| match &s.kind {
        StmtKind::Continue { .. } => true,
        StmtKind::If { then_body, else_body, .. } => {
            has_own_continue(then_body) || has_own_continue(else_body)
        }
        _ => false,
    })
}

/// Whether lanes may leave the loop with this body at different times by the analysis: a
/// `break`/`continue` (outside nested loops) or a `return` that is divergent or has a
/// varying predicate or guard.
fn exits_diverge(analysis: &Uniformity, func: FuncId, body: &[Stmt]) -> bool {
    body.iter().any(|s| match &s.kind {
        StmtKind::Break { .. } | StmtKind::Continue { .. } | StmtKind::Return => {
            analysis
                .get(func, s.offset)
                .is_none_or(|i| i.divergent || i.divergent_exit || i.pred.is_some_and(|p| !p.is_uniform()))
                || s.guard.is_some()
        }
        StmtKind::If { then_body, else_body, .. } => {
            exits_diverge(analysis, func, then_body) || exits_diverge(analysis, func, else_body)
        }
        StmtKind::Loop { body, .. } => body.iter().any(|s| matches!(s.kind, StmtKind::Return)),
        _ => false,
    })
}

/// Where a loop body has a coherent copy ([`Translator::coherent_loop`]): the index of its
/// first statement that is not an op, which must be a `break`, with a body after it that the
/// coherent copy of an `if` takes ([`coherent_body`]: no other exit). The ops before the
/// `break` run again in the masked loop when a lane leaves, so they must compute the same
/// there: no memory writes, atomics, wave or MMA ops, and no register or predicate that one
/// of them writes is read by any of them.
fn coherent_loop_split(body: &[Stmt]) -> Option<usize> {
    use wave_isa::opcodes::{Class, Role};
    use wave_isa::StateRef;
    let split = body.iter().position(|s| !matches!(s.kind, StmtKind::Op(_)))?;
    if !matches!(body[split].kind, StmtKind::Break { .. }) || !coherent_body(&body[split + 1..]) {
        return None;
    }
    let (mut read, mut written) = (Vec::new(), Vec::new());
    for s in &body[..split] {
        let StmtKind::Op(inst) = &s.kind else { return None };
        let has_effects = matches!(
            inst.op.class(),
            Class::LocalStore
                | Class::DeviceStore
                | Class::LocalAtomic
                | Class::DeviceAtomic
                | Class::Wave
                | Class::Mma
                | Class::Control
                | Class::Sync
        );
        if has_effects {
            return None;
        }
        if let Some(g) = s.guard {
            read.push(StateRef::Pred(g.index));
        }
        read.extend(inst.named_state(Some(Role::Use)));
        written.extend(inst.named_state(Some(Role::Def)));
    }
    written.iter().all(|w| !read.contains(w)).then_some(split)
}

/// Most coherent copies around a statement: `if (col < cols) { if (i < n) { .. } }` gets a
/// copy at both levels, deeper nests only at their outer levels (see
/// `Translator::coherent_then`).
pub const COHERENT_LEVELS: u32 = 3;

/// Most statements an `if` body may have for its coherent copy (see
/// `Translator::coherent_then`): the copy doubles the body's code.
const COHERENT_BODY_LIMIT: usize = 48;

/// Whether a body's coherent copy keeps every lane active from its start to its end: only
/// operations and nested `if`s (no loop, `break`, `continue`, call, `return`, `halt` or
/// barrier takes lanes away or must be met by every wave), and small.
fn coherent_body(body: &[Stmt]) -> bool {
    let mut statements = 0;
    let mut simple = true;
    walk_block(body, 0, &mut |s, _| {
        statements += 1;
        simple &= matches!(
            s.kind,
            StmtKind::Op(_) | StmtKind::If { .. } | StmtKind::Nop | StmtKind::Wait | StmtKind::Fence { .. }
        );
    });
    simple && statements <= COHERENT_BODY_LIMIT
}
