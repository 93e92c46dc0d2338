//! Scalar shadows: registers and predicates whose lanes in view follow `base + lane × stride`,
//! kept as one scalar (lane 0 of the first vector in view) instead of vectors.
//!
//! Addresses, counters and constants are uniform or affine across the lanes. Kept as vectors
//! they cost a vector op per update, a lane extract per memory access and a vector register
//! each; as scalars they live in general registers and feed loads, bounds checks and branches
//! directly. The vector form, where an op needs it, is rebuilt from the scalar (vector k is
//! `splat(lane0 + 4k × stride) + stride × [0, 1, 2, 3]`).
//!
//! This is exact only where every lane runs every write, so shadows exist in two places:
//! - chunk-major loops whose whole body has uniform control, one vector in view
//!   ([`Translator::shadow_plan`], by the per-vector analysis);
//! - the coherent copy of a loop ([`Translator::coherent_shadow_plan`], by the wave analysis,
//!   any number of vectors in view), which runs only while every lane is active, and whose
//!   `break` test is decided on scalars where it can be ([`Translator::scalar_leave_test`]).
//!
//! Every write to a shadowed value then covers every lane (or, under a uniform guard, every
//! lane or none: the scalar selects by the guard's lane 0), and is computed by the scalar op
//! on lane 0 (lane-wise ops commute with taking lane 0); the analysis says the result keeps
//! the planned stride (and for the coherent copy, the op's own stride rule is checked
//! against it). Where shadows start, a value that some read may see from before is
//! checked against its planned form (a mismatch takes the loop's bail-out, or the masked loop
//! for a coherent copy); a value written before any read is not, and its entry vectors are
//! kept for an exit taken before it was written.

use super::alu::int_compare;
use super::Translator;
use crate::error::JitError;
use cranelift_codegen::entity::EntityRef;
use cranelift_codegen::ir::condcodes::{CondCode, IntCC};
use cranelift_codegen::ir::types::{I32, I32X4, I8};
use cranelift_codegen::ir::{Block, InstBuilder, Value};
use cranelift_frontend::Variable;
use std::collections::HashMap;
use wave_isa::analysis::{Uniformity, Value as Shape};
use wave_isa::opcodes::{Kind, Role};
use wave_isa::{FuncId, Instruction, Op, PredRef, StateRef, Stmt, StmtKind};

/// Which registers (with their lane stride) and predicates a loop keeps as scalars, and
/// which of them the loop writes.
#[derive(Clone, Debug, Default)]
pub struct ShadowPlan {
    regs: Vec<PlannedReg>,
    preds: Vec<PlannedPred>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct PlannedReg {
    reg: u32,
    stride: u32,
    written: bool,
    /// Some read may see the value the loop was entered with.
    exposed: bool,
    /// A register the loop only reads, known to hold this constant.
    constant: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct PlannedPred {
    pred: u32,
    written: bool,
    exposed: bool,
}

impl ShadowPlan {
    /// Whether this plan keeps as scalars every register and predicate `other` keeps.
    pub fn keeps_all_of(&self, other: &ShadowPlan) -> bool {
        other.regs.iter().all(|o| self.regs.iter().any(|r| r.reg == o.reg))
            && other.preds.iter().all(|o| self.preds.iter().any(|p| p.pred == o.pred))
    }
}

/// The shadows in force while a chunk-major loop is translated.
#[derive(Default)]
pub struct Shadows {
    regs: HashMap<u32, (Variable, u32)>,
    preds: HashMap<u32, Variable>,
    /// Values whose entry vector is not checked (no read sees it): whether the loop has
    /// written them yet (an i8) and the vector to keep if it has not.
    reg_entries: HashMap<u32, (Variable, Vec<Value>)>,
    pred_entries: HashMap<u32, (Variable, Vec<Value>)>,
    /// Lane 0 of vectors rebuilt from a shadow: memory ops and branches read it from here.
    lane0: HashMap<Value, Value>,
    /// Registers the loop only reads, known to hold a constant: read as that constant (no
    /// loop-carried variable, and Cranelift folds it into addresses).
    constants: HashMap<u32, u32>,
}

impl Shadows {
    /// Whether no value is a shadow now.
    pub fn is_empty(&self) -> bool {
        self.regs.is_empty() && self.preds.is_empty()
    }
}

/// What a planned value has seen so far: a consistent stride (and maybe constant), or a use
/// or write that does not fit.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Seen {
    Fits { stride: u32, constant: Option<u32> },
    Unfit,
}

impl Seen {
    fn of(shape: Option<Shape>) -> Seen {
        match shape {
            Some(Shape::Uniform(constant)) => Seen::Fits { stride: 0, constant },
            Some(Shape::Affine { stride }) => Seen::Fits { stride, constant: None },
            _ => Seen::Unfit,
        }
    }
}

fn note(map: &mut HashMap<u32, Seen>, key: u32, seen: Seen) {
    map.entry(key)
        .and_modify(|old| {
            *old = match (*old, seen) {
                (Seen::Fits { stride: a, constant: c }, Seen::Fits { stride: b, constant: d }) if a == b => {
                    Seen::Fits { stride: a, constant: c.filter(|_| c == d) }
                }
                _ => Seen::Unfit,
            }
        })
        .or_insert(seen);
}

/// What the operands of a body's ops say of each register and predicate.
#[derive(Default)]
struct SeenState {
    regs: HashMap<u32, Seen>,
    preds: HashMap<u32, Seen>,
}

impl SeenState {
    /// Note the shapes `shapes` gives the operands of `inst` (statement `s`); a write counts
    /// as fitting only where `may_write` and the op, unguarded, has a scalar form. False
    /// where the analysis has nothing for the statement.
    fn note_op(
        &mut self,
        shapes: &Uniformity,
        func: FuncId,
        s: &Stmt,
        inst: &Instruction,
        may_write: bool,
    ) -> bool {
        let Some(info) = shapes.get(func, s.offset) else { return false };
        // A guarded write fits too where its result does: the analysis makes the result of
        // a write under a varying guard varying, and under a uniform one (every lane in view
        // runs it, or none) joins it with the old value ([`Translator::scalar_op`] selects).
        let scalar_write = may_write && super::rules::has_scalar_form(inst.op);
        for ((spec, _), value) in inst.operands().zip(&info.operands) {
            let index = inst.slot_value(spec.slot);
            let uniform = |v: Option<Shape>| Seen::of(v.filter(|v| v.is_uniform()));
            match (spec.role, spec.kind) {
                (Role::Use, Kind::Reg) => note(&mut self.regs, index, Seen::of(Some(*value))),
                (Role::Use, Kind::Pred) => note(&mut self.preds, index, uniform(Some(*value))),
                (Role::Def, Kind::Reg) => {
                    note(&mut self.regs, index, Seen::of(info.result.filter(|_| scalar_write)))
                }
                (Role::Def, Kind::Pred) => {
                    note(&mut self.preds, index, uniform(info.result.filter(|_| scalar_write)))
                }
                (_, Kind::Pair | Kind::Quad) => {
                    let span = spec.kind.register_span();
                    for r in index..index + span {
                        note(&mut self.regs, r, Seen::Unfit);
                    }
                }
                _ => {}
            }
        }
        true
    }
}

/// The first planned value some write in `body` does not leave in its planned form: the
/// stride its op computes from the planned strides of its inputs (an input not planned, or
/// one without the constant a product needs, does not fit).
fn first_unfit_write(plan: &ShadowPlan, body: &[Stmt]) -> Option<StateRef> {
    let planned = |r: u32| plan.regs.iter().find(|p| p.reg == r);
    let mut unfit = None;
    wave_isa::ir::walk_block(body, 0, &mut |s, _| {
        let StmtKind::Op(inst) = &s.kind else { return };
        if unfit.is_some() {
            return;
        }
        let inputs: Option<Vec<(u32, Option<u32>)>> = inst
            .operands()
            .filter(|(spec, _)| spec.role == Role::Use && spec.kind == Kind::Reg)
            .map(|(spec, _)| planned(inst.slot_value(spec.slot)).map(|p| (p.stride, p.constant)))
            .collect();
        for (spec, _) in inst.operands().filter(|(spec, _)| spec.role == Role::Def) {
            let index = inst.slot_value(spec.slot);
            match spec.kind {
                Kind::Reg => {
                    if let Some(p) = planned(index) {
                        let stride = inputs.as_deref().and_then(|x| result_stride(inst, x));
                        if stride != Some(p.stride) {
                            unfit = Some(StateRef::Reg(index));
                        }
                    }
                }
                Kind::Pred => {
                    let is_planned = plan.preds.iter().any(|p| p.pred == index);
                    let uniform = int_compare(inst.op).is_some()
                        && inputs.as_deref().is_some_and(|x| x.iter().all(|&(stride, _)| stride == 0));
                    if is_planned && !uniform {
                        unfit = Some(StateRef::Pred(index as u8));
                    }
                }
                _ => {}
            }
        }
    });
    unfit
}

/// The lane stride of the result of `inst` (an op with a scalar form) from its register
/// inputs' strides and known constants, in operand order; `None` where it is not affine with
/// a stride known here (a product of two varying values, or of a varying value and an
/// unknown uniform one). Lane-wise wrapping arithmetic is linear modulo 2^32, so sums,
/// differences and products by a constant keep the form exactly.
fn result_stride(inst: &Instruction, x: &[(u32, Option<u32>)]) -> Option<u32> {
    let product = |(sa, ca): (u32, Option<u32>), (sb, cb): (u32, Option<u32>)| match (sa, sb) {
        (0, 0) => Some(0),
        (0, s) => ca.map(|c| c.wrapping_mul(s)),
        (s, 0) => cb.map(|c| c.wrapping_mul(s)),
        _ => None,
    };
    let all_uniform = x.iter().all(|&(stride, _)| stride == 0);
    match inst.op {
        Op::Iadd => Some(x.first()?.0.wrapping_add(x.get(1)?.0)),
        Op::Isub => Some(x.first()?.0.wrapping_sub(x.get(1)?.0)),
        Op::Imul => product(*x.first()?, *x.get(1)?),
        Op::Imad => Some(product(*x.first()?, *x.get(1)?)?.wrapping_add(x.get(2)?.0)),
        Op::Mov => Some(x.first()?.0),
        Op::MovImm => Some(0),
        Op::Ineg | Op::Not => Some(x.first()?.0.wrapping_neg()),
        Op::Imin | Op::Imax | Op::And | Op::Or | Op::Xor if all_uniform => Some(0),
        _ => None,
    }
}

impl Translator<'_, '_> {
    /// The shadows for the chunk-major loop at `offset`, each of one vector's lane 0 (by the
    /// per-vector analysis), or `None` when its body may run on part of a vector (divergent
    /// or guarded control) or keeps nothing as a scalar.
    pub fn shadow_plan(&self, offset: u32, body: &[Stmt], func: FuncId) -> Option<ShadowPlan> {
        self.uniform_control_plan(self.shapes(), offset, body, func)
    }

    /// The same by the wave analysis: each shadow stands for lane 0 of the first of any
    /// number of vectors in view, so a chunk may hold several.
    pub fn wave_shadow_plan(&self, offset: u32, body: &[Stmt], func: FuncId) -> Option<ShadowPlan> {
        self.uniform_control_plan(self.waves(), offset, body, func)
    }

    fn uniform_control_plan(
        &self,
        analysis: &Uniformity,
        offset: u32,
        body: &[Stmt],
        func: FuncId,
    ) -> Option<ShadowPlan> {
        if !self.exec_is_full(offset) || !self.control_is_uniform(body, func, true) {
            return None;
        }
        let mut seen = SeenState::default();
        let mut complete = true;
        wave_isa::ir::walk_block(body, 0, &mut |s, _| {
            if let StmtKind::Op(inst) = &s.kind {
                complete &= seen.note_op(analysis, func, s, inst, true);
            }
        });
        if !complete {
            return None;
        }
        let plan = self.plan_from(body, &seen);
        (!plan.regs.is_empty() || !plan.preds.is_empty()).then_some(plan)
    }

    /// The shadows of the coherent copy of the loop with this body (see `coherent_loop` in
    /// [`super::control`]): registers that are `base + lane × stride` across the lanes in
    /// view, by the wave analysis, whose every write in the body is an op at its top level
    /// with a scalar form (unguarded, or under a guard the analysis finds uniform). The copy
    /// runs only while every lane is active, so such a write covers every lane (or, guarded,
    /// every lane or none); the stride each write leaves is checked here against the
    /// stride the op computes from its inputs' strides (what does not fit stays a vector),
    /// and the values a read may see from before the loop are checked at run time when the
    /// copy starts. `None` inside other shadows, or where nothing would be kept as a scalar.
    pub fn coherent_shadow_plan(&self, body: &[Stmt], func: FuncId) -> Option<ShadowPlan> {
        if !self.shadows_are_empty() {
            return None;
        }
        let mut seen = SeenState::default();
        let mut complete = true;
        wave_isa::ir::walk_block(body, 0, &mut |s, depth| {
            if let StmtKind::Op(inst) = &s.kind {
                complete &= seen.note_op(self.waves(), func, s, inst, depth == 0);
            }
        });
        if !complete {
            return None;
        }
        let mut plan = self.plan_from(body, &seen);
        // Drop what the ops do not keep in form, until every planned write fits.
        while let Some(unfit) = first_unfit_write(&plan, body) {
            match unfit {
                StateRef::Reg(r) => plan.regs.retain(|p| p.reg != r),
                StateRef::Pred(p) => plan.preds.retain(|q| q.pred != p as u32),
            }
        }
        // A scalar the copy writes is what makes it pay; read-only ones alone only add the
        // entry check.
        let writes = plan.regs.iter().any(|r| r.written) || plan.preds.iter().any(|p| p.written);
        writes.then_some(plan)
    }

    /// The plan for what `seen` found fitting in `body`.
    fn plan_from(&self, body: &[Stmt], seen: &SeenState) -> ShadowPlan {
        let mut plan = ShadowPlan::default();
        let exposed = upward_exposed(body);
        let written_state = wave_isa::ir::written_state(body);
        for (&reg, &fit) in &seen.regs {
            let in_variables = self.has_register(reg) && !self.in_memory(reg);
            if let (Seen::Fits { stride, constant }, true) = (fit, in_variables) {
                let written = written_state.regs.get(reg as usize).copied().unwrap_or(false);
                let constant = constant.filter(|_| !written);
                let exposed = !written || exposed.regs.get(reg as usize).copied().unwrap_or(true);
                plan.regs.push(PlannedReg { reg, stride, written, exposed, constant });
            }
        }
        for (&pred, &fit) in &seen.preds {
            if matches!(fit, Seen::Fits { .. }) && (pred as usize) < 4 {
                let written = written_state.preds.get(pred as usize).copied().unwrap_or(false);
                let exposed = !written || exposed.preds.get(pred as usize).copied().unwrap_or(true);
                plan.preds.push(PlannedPred { pred, written, exposed });
            }
        }
        plan.regs.sort_unstable();
        plan.preds.sort_unstable();
        plan
    }

    /// Whether every statement of the body runs on all lanes that entered it: no divergence
    /// by the wave analysis, uniform `if`s, and uniform `break`/`continue` placed directly in
    /// their loop's body (so each is a real branch and no mask ever narrows).
    fn control_is_uniform(&self, body: &[Stmt], func: FuncId, loop_level: bool) -> bool {
        body.iter().all(|s| {
            let Some(info) = self.waves().get(func, s.offset) else { return false };
            let uniform_pred = info.pred.is_some_and(Shape::is_uniform);
            !info.divergent
                && match &s.kind {
                    StmtKind::If { then_body, else_body, .. } => {
                        uniform_pred
                            && self.control_is_uniform(then_body, func, false)
                            && self.control_is_uniform(else_body, func, false)
                    }
                    StmtKind::Loop { body, .. } => self.control_is_uniform(body, func, true),
                    StmtKind::Break { .. } | StmtKind::Continue { .. } => {
                        loop_level && uniform_pred && !info.divergent_exit && s.guard.is_none()
                    }
                    _ => true,
                }
        })
    }

    /// Set up the plan's shadows for the vector in view: lane 0 of each value (or its known
    /// constant). A value some read may see as it was at loop entry is first checked to have
    /// the planned form (else: `bail`): the analysis says so, and the check guards against an
    /// analysis mistake. A value the loop writes before any read is not checked; its entry
    /// vector is kept for an exit taken before the loop wrote it.
    pub fn enter_shadows(&mut self, plan: &ShadowPlan, bail: Block) {
        let mut all_fit: Option<Value> = None;
        let mut fits = |t: &mut Self, vs: &[Value], expected: &[Value]| {
            for (&v, &e) in vs.iter().zip(expected) {
                let eq = t.b.ins().icmp(IntCC::Equal, v, e);
                all_fit = Some(match all_fit {
                    Some(acc) => t.b.ins().band(acc, eq),
                    None => eq,
                });
            }
        };
        for &PlannedReg { reg, stride, exposed, constant, .. } in &plan.regs {
            let vs = self.reg(reg);
            let lane0 = match constant {
                Some(c) => self.b.ins().iconst(I32, c as i32 as i64),
                None => self.b.ins().extractlane(vs[0], 0),
            };
            if exposed {
                let expected = self.affine_vectors(lane0, stride);
                fits(self, &vs, &expected);
            } else {
                let flag = self.not_written_yet();
                self.shadows.reg_entries.insert(reg, (flag, vs));
            }
            let var = self.scoped_var(I32);
            self.b.def_var(var, lane0);
            self.shadows.regs.insert(reg, (var, stride));
            if let Some(c) = constant {
                self.shadows.constants.insert(reg, c);
            }
        }
        for &PlannedPred { pred, exposed, .. } in &plan.preds {
            let vs = self.pred(pred);
            let lane0 = self.b.ins().extractlane(vs[0], 0);
            if exposed {
                let expected = self.affine_vectors(lane0, 0);
                fits(self, &vs, &expected);
            } else {
                let flag = self.not_written_yet();
                self.shadows.pred_entries.insert(pred, (flag, vs));
            }
            let var = self.scoped_var(I32);
            self.b.def_var(var, lane0);
            self.shadows.preds.insert(pred, var);
        }
        if let Some(all) = all_fit {
            let all = self.b.ins().vall_true(all);
            let go = self.b.create_block();
            self.b.ins().brif(all, go, &[], bail, &[]);
            self.continue_in(go);
        }
    }

    /// A fresh "written yet" flag, false.
    fn not_written_yet(&mut self) -> Variable {
        let flag = self.scoped_var(I8);
        let no = self.b.ins().iconst(I8, 0);
        self.b.def_var(flag, no);
        flag
    }

    /// Write the shadows the loop changed back into the vector state; drop all shadows.
    pub fn leave_shadows(&mut self, plan: &ShadowPlan) {
        self.write_back_shadows(plan);
        self.drop_shadows();
    }

    /// Write the shadows the loop changed back into the vector state, keeping them in force
    /// (an exit edge of code that goes on with them).
    pub fn write_back_shadows(&mut self, plan: &ShadowPlan) {
        for &PlannedReg { reg, written, .. } in &plan.regs {
            if written {
                let vs = self.reg(reg);
                let entry = self.shadows.reg_entries.get(&reg).cloned();
                let vs = self.unless_unwritten(vs, entry);
                let vars = self.reg_vars(reg);
                self.set(&vars, &vs);
            }
        }
        for &PlannedPred { pred, written, .. } in &plan.preds {
            if written {
                let vs = self.pred(pred);
                let entry = self.shadows.pred_entries.get(&pred).cloned();
                let vs = self.unless_unwritten(vs, entry);
                let vars = self.pred_vars(pred);
                self.set(&vars, &vs);
            }
        }
    }

    /// Drop every shadow (their vector state is up to date or no longer read).
    pub fn drop_shadows(&mut self) {
        let shadows = std::mem::take(&mut self.shadows);
        // Sorted: the maps' order is random, and the code should not be.
        let mut scalars: Vec<Variable> =
            shadows.regs.values().map(|&(var, _)| var).chain(shadows.preds.values().copied()).collect();
        scalars.sort_unstable_by_key(|v| v.index());
        self.release_vars(I32, &scalars);
        let mut flags: Vec<Variable> = shadows
            .reg_entries
            .values()
            .chain(shadows.pred_entries.values())
            .map(|(flag, _)| *flag)
            .collect();
        flags.sort_unstable_by_key(|v| v.index());
        self.release_vars(I8, &flags);
    }

    /// `vs`, or the entry vectors where the loop has not written the value (unchecked values).
    fn unless_unwritten(&mut self, vs: Vec<Value>, entry: Option<(Variable, Vec<Value>)>) -> Vec<Value> {
        match entry {
            Some((flag, entry)) => {
                let flag = self.b.use_var(flag);
                vs.iter().zip(&entry).map(|(&v, &e)| self.b.ins().select(flag, v, e)).collect()
            }
            None => vs,
        }
    }

    /// Note that an unchecked value has been written (under a guard: where it holds).
    fn mark_written(&mut self, entry: Option<Variable>, guard: Option<(Value, bool)>) {
        if let Some(flag) = entry {
            let yes = self.b.ins().iconst(I8, 1);
            let written = self.guarded(guard, flag, yes);
            self.b.def_var(flag, written);
        }
    }

    /// The vectors in view of `base + lane × stride` with lane 0 `lane0`: vector k is
    /// `affine_vector(lane0 + 4k × stride)`.
    pub(super) fn affine_vectors(&mut self, lane0: Value, stride: u32) -> Vec<Value> {
        (0..self.wave.n)
            .map(|k| {
                let first = match (k as u32).wrapping_mul(4).wrapping_mul(stride) {
                    0 => lane0,
                    step => self.b.ins().iadd_imm_u(lane0, step as i64),
                };
                self.affine_vector(first, stride)
            })
            .collect()
    }

    /// `splat(lane0) + stride × [0, 1, 2, 3]`, remembered as having lane 0 `lane0`.
    fn affine_vector(&mut self, lane0: Value, stride: u32) -> Value {
        let mut v = self.b.ins().splat(I32X4, lane0);
        if stride != 0 {
            let steps = self.vconst4([0, stride, stride.wrapping_mul(2), stride.wrapping_mul(3)]);
            v = self.b.ins().iadd(v, steps);
        }
        self.shadows.lane0.insert(v, lane0);
        v
    }

    /// The vectors of a shadowed register, rebuilt from its scalar.
    pub(super) fn shadowed_reg(&mut self, r: u32) -> Option<Vec<Value>> {
        let stride = self.shadow_stride(r)?;
        let lane0 = self.shadow_lane0(r)?;
        Some(self.affine_vectors(lane0, stride))
    }

    /// The masks of a shadowed predicate, rebuilt from its scalar.
    pub(super) fn shadowed_pred(&mut self, p: u32) -> Option<Vec<Value>> {
        let var = *self.shadows.preds.get(&p)?;
        let lane0 = self.b.use_var(var);
        Some(self.affine_vectors(lane0, 0))
    }

    /// The lane stride of a shadowed register across the vectors in view.
    pub(super) fn shadow_stride(&self, r: u32) -> Option<u32> {
        self.shadows.regs.get(&r).map(|&(_, stride)| stride)
    }

    /// Lane 0 of a shadowed register, as its scalar.
    fn shadow_lane0(&mut self, r: u32) -> Option<Value> {
        let (var, _) = *self.shadows.regs.get(&r)?;
        Some(match self.shadows.constants.get(&r) {
            Some(&c) => self.b.ins().iconst(I32, c as i32 as i64),
            None => self.b.use_var(var),
        })
    }

    /// Whether some lane in view leaves by `break pred` after `before` (the ops of the trip up
    /// to that `break`), decided on scalars, conservatively (true may also mean "cannot
    /// tell"): where the predicate's last write there compares a shadowed register of
    /// positive stride with a uniform one by order (`<`, `<=`, `>`, `>=`) and the register's
    /// lanes in view do not wrap in the compare's domain, the compare is monotone in the
    /// lane, so some lane leaves exactly when the first or the last one does. `None` where
    /// the write is not such a compare. Nothing in `before` writes a register it reads (see
    /// `coherent_loop_split`), so the operands are still those the compare saw.
    pub fn scalar_leave_test(&mut self, before: &[Stmt], pred: PredRef) -> Option<Value> {
        let target = StateRef::Pred(pred.index);
        let (s, inst) = before.iter().rev().find_map(|s| match &s.kind {
            StmtKind::Op(inst) if inst.named_state(Some(Role::Def)).any(|d| d == target) => Some((s, inst)),
            _ => None,
        })?;
        let cc = int_compare(inst.op)?;
        if s.guard.is_some() {
            return None;
        }
        let (a, b) = (inst.rs1 as u32, inst.rs2 as u32);
        let (varying_is_left, stride) =
            super::pred_forms::monotone_compare(cc, self.shadow_stride(a), self.shadow_stride(b))?;
        let (x0, u) = {
            let la = self.shadow_lane0(a)?;
            let lb = self.shadow_lane0(b)?;
            if varying_is_left {
                (la, lb)
            } else {
                (lb, la)
            }
        };
        let leaves_cc = if pred.negated { cc.complement() } else { cc };
        let lanes = 4 * self.wave.n;
        Some(self.some_lane_satisfies(leaves_cc, varying_is_left, x0, stride, u, lanes))
    }

    /// Whether no shadow is in force.
    pub(super) fn shadows_are_empty(&self) -> bool {
        self.shadows.regs.is_empty() && self.shadows.preds.is_empty()
    }

    pub(super) fn is_shadowed_reg(&self, r: u32) -> bool {
        self.shadows.regs.contains_key(&r)
    }

    pub(super) fn is_shadowed_pred(&self, p: u32) -> bool {
        self.shadows.preds.contains_key(&p)
    }

    /// Lane 0 of a vector: free for one rebuilt from a shadow or with a lane-0 form.
    pub fn lane0(&mut self, v: Value) -> Value {
        match self.known_lane0(v) {
            Some(s) => s,
            None => self.b.ins().extractlane(v, 0),
        }
    }

    /// The recorded lane 0 of vector `v`, if any. A variable read at a join may come back as
    /// an alias of the value it had before (the frontend resolves a block parameter that
    /// every predecessor agrees on to that value), so the lookup goes through aliases.
    fn known_lane0(&self, v: Value) -> Option<Value> {
        self.shadows.lane0.get(&self.b.func.dfg.resolve_aliases(v)).copied()
    }

    /// Whether `inst` writes a shadowed register or predicate (it then has a scalar form:
    /// the plan admits no other writer).
    pub fn writes_shadow(&self, inst: &Instruction) -> bool {
        inst.operands().any(|(spec, _)| {
            let index = inst.slot_value(spec.slot);
            match (spec.role, spec.kind) {
                (Role::Def, Kind::Reg) => self.is_shadowed_reg(index),
                (Role::Def, Kind::Pred) => self.is_shadowed_pred(index),
                _ => false,
            }
        })
    }

    /// Compute a write to a shadowed value on lane 0 only. Under a guard (uniform: the plan
    /// admits only writes whose result keeps the form, and a varying guard's does not) the
    /// new value is selected by the guard's lane 0, the old one kept where it fails.
    pub fn scalar_op(&mut self, inst: &Instruction, pc: u32) -> Result<(), JitError> {
        let every_lane = if inst.guard.is_some() { self.exec_is_full(pc) } else { self.full };
        if !every_lane {
            return Err(JitError::Codegen(format!(
                "internal: shadowed write under a partial mask at byte 0x{pc:x}"
            )));
        }
        let guard = inst.guard.map(|g| self.scalar_guard(g));
        // The register inputs' lane 0, in operand order.
        let inputs: Vec<u32> = inst
            .operands()
            .filter(|(spec, _)| spec.role == Role::Use && spec.kind == Kind::Reg)
            .map(|(spec, _)| inst.slot_value(spec.slot))
            .collect();
        let mut x = Vec::with_capacity(inputs.len());
        for r in inputs {
            let lane0 = match self.shadow_lane0(r) {
                Some(lane0) => lane0,
                None => {
                    let v = self.reg(r)[0];
                    self.lane0(v)
                }
            };
            x.push(lane0);
        }
        let arg = |i: usize| {
            x.get(i)
                .copied()
                .ok_or_else(|| JitError::Codegen(format!("internal: missing operand {i} at byte 0x{pc:x}")))
        };
        if let Some(cc) = int_compare(inst.op) {
            let holds = self.b.ins().icmp(cc, arg(0)?, arg(1)?);
            let mask = self.b.ins().bmask(I32, holds);
            let var = self.shadows.preds[&(inst.rd as u32)];
            let mask = self.guarded(guard, var, mask);
            self.b.def_var(var, mask);
            let entry = self.shadows.pred_entries.get(&(inst.rd as u32)).map(|(flag, _)| *flag);
            self.mark_written(entry, guard);
            return Ok(());
        }
        let Some(value) = self.scalar_form(inst, &x) else {
            return Err(JitError::Codegen(format!(
                "internal: `{}` has no scalar form (byte 0x{pc:x})",
                inst.op.mnemonic()
            )));
        };
        let (var, _) = self.shadows.regs[&(inst.rd as u32)];
        let value = self.guarded(guard, var, value);
        self.b.def_var(var, value);
        let entry = self.shadows.reg_entries.get(&(inst.rd as u32)).map(|(flag, _)| *flag);
        self.mark_written(entry, guard);
        Ok(())
    }

    /// Whether a uniform guard holds, as a scalar (`(mask, negated)`: the predicate's lane 0,
    /// all ones or zero, and whether the guard negates it).
    fn scalar_guard(&mut self, g: PredRef) -> (Value, bool) {
        let mask = match self.shadows.preds.get(&(g.index as u32)) {
            Some(&var) => self.b.use_var(var),
            None => {
                let v = self.pred(g.index as u32)[0];
                self.lane0(v)
            }
        };
        (mask, g.negated)
    }

    /// `new` where `guard` holds (or there is none), else the value `var` holds now.
    fn guarded(&mut self, guard: Option<(Value, bool)>, var: Variable, new: Value) -> Value {
        let Some((mask, negated)) = guard else { return new };
        let old = self.b.use_var(var);
        let (then, otherwise) = if negated { (old, new) } else { (new, old) };
        self.b.ins().select(mask, then, otherwise)
    }
}

impl Translator<'_, '_> {
    /// The scalar form of a non-compare op with a scalar form, on the inputs' lane 0 `x` (in
    /// operand order); `None` for other ops (or an input missing).
    fn scalar_form(&mut self, inst: &Instruction, x: &[Value]) -> Option<Value> {
        let arg = |i: usize| x.get(i).copied();
        let ins = self.b.ins();
        Some(match inst.op {
            Op::Iadd => ins.iadd(arg(0)?, arg(1)?),
            Op::Isub => ins.isub(arg(0)?, arg(1)?),
            Op::Imul => ins.imul(arg(0)?, arg(1)?),
            Op::Imad => {
                let m = ins.imul(arg(0)?, arg(1)?);
                self.b.ins().iadd(m, arg(2)?)
            }
            Op::Imin => ins.smin(arg(0)?, arg(1)?),
            Op::Imax => ins.smax(arg(0)?, arg(1)?),
            Op::And => ins.band(arg(0)?, arg(1)?),
            Op::Or => ins.bor(arg(0)?, arg(1)?),
            Op::Xor => ins.bxor(arg(0)?, arg(1)?),
            Op::Not => ins.bnot(arg(0)?),
            Op::Ineg => ins.ineg(arg(0)?),
            Op::Mov => arg(0)?,
            Op::MovImm => ins.iconst(I32, inst.imm as i32 as i64),
            _ => return None,
        })
    }

    /// Record that scalar `lane0` is lane 0 of the vector `v` (both defined here), so memory
    /// ops and branches read it instead of extracting the lane.
    pub fn note_lane0(&mut self, v: Value, lane0: Value) {
        self.shadows.lane0.insert(v, lane0);
    }

    /// Lane 0 of each vector `result` of `inst` (an op with a scalar form), where lane 0 of
    /// every input vector is known: lane ops commute with taking lane 0, so the scalar op on
    /// the inputs' lane 0 is the result's lane 0. Addresses built from thread ids, uniform
    /// values and constants then reach memory ops as scalars, and the vector arithmetic that
    /// only fed them is dead code. In chunk-major loops too: a run-time chunk loop's home
    /// loads bring their vector's lane 0, so an address chain from a per-lane base the loop
    /// only reads stays scalar (the GPU-style GEMM's tile pointers).
    pub fn note_scalar_forms(&mut self, inst: &Instruction, result: &[Value]) {
        // (Compares write predicates: `scalar_form` gives them none.)
        if !super::rules::has_scalar_form(inst.op) {
            return;
        }
        let inputs: Vec<Vec<Value>> = inst
            .operands()
            .filter(|(spec, _)| spec.role == Role::Use && spec.kind == Kind::Reg)
            .map(|(spec, _)| self.reg(inst.slot_value(spec.slot)))
            .collect();
        for (k, &v) in result.iter().enumerate() {
            let x: Option<Vec<Value>> = inputs.iter().map(|vectors| self.known_lane0(vectors[k])).collect();
            let Some(x) = x else { continue };
            if let Some(lane0) = self.scalar_form(inst, &x) {
                self.note_lane0(v, lane0);
            }
        }
    }
}

/// Registers and predicates some read in the body may see with their value from before the
/// loop: read on a path from the body's start that has not written them (an unguarded write
/// counts; inside an `if` only when both sides write; a nested loop's writes do not count
/// after it, and a value one of its reads sees from its own previous trip was written then).
#[derive(Default)]
struct Exposed {
    regs: Vec<bool>,
    preds: Vec<bool>,
}

#[derive(Clone)]
struct Defined {
    regs: Vec<bool>,
    preds: Vec<bool>,
}

fn upward_exposed(body: &[Stmt]) -> Exposed {
    let mut exposed = Exposed { regs: vec![false; 256], preds: vec![false; 4] };
    let mut defined = Defined { regs: vec![false; 256], preds: vec![false; 4] };
    walk_exposed(body, &mut defined, &mut exposed);
    exposed
}

fn walk_exposed(stmts: &[Stmt], defined: &mut Defined, exposed: &mut Exposed) {
    let read_pred = |p: u32, defined: &Defined, exposed: &mut Exposed| {
        if let (Some(e), false) =
            (exposed.preds.get_mut(p as usize), defined.preds.get(p as usize) == Some(&true))
        {
            *e = true;
        }
    };
    for s in stmts {
        if let Some(g) = s.guard {
            read_pred(g.index as u32, defined, exposed);
        }
        match &s.kind {
            StmtKind::Op(inst) => {
                for state in inst.named_state(Some(Role::Use)) {
                    match state {
                        StateRef::Reg(r) => {
                            if let (Some(e), false) = (
                                exposed.regs.get_mut(r as usize),
                                defined.regs.get(r as usize) == Some(&true),
                            ) {
                                *e = true;
                            }
                        }
                        StateRef::Pred(p) => read_pred(p as u32, defined, exposed),
                    }
                }
                if s.guard.is_none() {
                    for state in inst.named_state(Some(Role::Def)) {
                        let slot = match state {
                            StateRef::Reg(r) => defined.regs.get_mut(r as usize),
                            StateRef::Pred(p) => defined.preds.get_mut(p as usize),
                        };
                        if let Some(d) = slot {
                            *d = true;
                        }
                    }
                }
            }
            StmtKind::If { pred, then_body, else_body, .. } => {
                read_pred(pred.index as u32, defined, exposed);
                let mut then_defined = defined.clone();
                walk_exposed(then_body, &mut then_defined, exposed);
                let mut else_defined = defined.clone();
                walk_exposed(else_body, &mut else_defined, exposed);
                for (d, (a, b)) in
                    defined.regs.iter_mut().zip(then_defined.regs.iter().zip(&else_defined.regs))
                {
                    *d = *a && *b;
                }
                for (d, (a, b)) in
                    defined.preds.iter_mut().zip(then_defined.preds.iter().zip(&else_defined.preds))
                {
                    *d = *a && *b;
                }
            }
            StmtKind::Loop { body, .. } => walk_exposed(body, &mut defined.clone(), exposed),
            StmtKind::Break { pred } | StmtKind::Continue { pred } => {
                read_pred(pred.index as u32, defined, exposed)
            }
            _ => {}
        }
    }
}
