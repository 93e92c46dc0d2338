//! Scalar shadows: registers and predicates whose four lanes follow `base + lane × stride` in a
//! chunk-major loop, kept as one scalar (the vector's lane 0) instead of a vector.
//!
//! In a chunk-major loop the vector in view is the whole "wave", and the per-vector analysis
//! says which values are uniform or affine across its lanes: addresses, counters and
//! constants. Kept as vectors they cost a vector op per update, a lane extract per memory
//! access and a vector register each; as scalars they live in general registers and feed
//! loads, bounds checks and uniform branches directly. The vector form, where an op needs it,
//! is rebuilt from the scalar (`splat(lane0) + stride × [0, 1, 2, 3]`).
//!
//! This is exact only where every lane runs every statement, so shadows exist only in loops
//! whose whole body has uniform control ([`Translator::shadow_plan`]): every write to a
//! shadowed value is then unguarded, covers all four lanes, and is computed by the scalar op
//! on lane 0 (lane-wise ops commute with taking lane 0); the analysis guarantees the result
//! is affine with the planned stride. At each vector's loop entry a shadowed value that some
//! read may see from before the loop is checked against its planned form (a mismatch takes the
//! loop's bail-out); a value the loop writes before any read is not, and its entry vector is
//! kept for an exit taken before the loop wrote it.

use super::alu::int_compare;
use super::Translator;
use crate::error::JitError;
use cranelift_codegen::entity::EntityRef;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I32X4, I8};
use cranelift_codegen::ir::{Block, InstBuilder, Value};
use cranelift_frontend::Variable;
use std::collections::HashMap;
use wave_isa::analysis::Value as Shape;
use wave_isa::opcodes::{Kind, Role};
use wave_isa::{FuncId, Instruction, Op, StateRef, Stmt, StmtKind};

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

/// The shadows in force while a chunk-major loop is translated.
#[derive(Default)]
pub struct Shadows {
    regs: HashMap<u32, (Variable, u32)>,
    preds: HashMap<u32, Variable>,
    /// Values whose entry vector is not checked (no read sees it): whether the loop has
    /// written them yet (an i8) and the vector to keep if it has not.
    reg_entries: HashMap<u32, (Variable, Value)>,
    pred_entries: HashMap<u32, (Variable, Value)>,
    /// Lane 0 of vectors rebuilt from a shadow: memory ops and branches read it from here.
    lane0: HashMap<Value, Value>,
    /// Registers the loop only reads, known to hold a constant: read as that constant (no
    /// loop-carried variable, and Cranelift folds it into addresses).
    constants: HashMap<u32, u32>,
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

impl Translator<'_, '_> {
    /// The shadows for the chunk-major loop at `offset`, or `None` when its body may run on
    /// part of a vector (divergent or guarded control) or keeps nothing as a scalar.
    pub fn shadow_plan(&self, offset: u32, body: &[Stmt], func: FuncId) -> Option<ShadowPlan> {
        if !self.exec_is_full(offset) || !self.control_is_uniform(body, func, true) {
            return None;
        }
        let mut regs: HashMap<u32, Seen> = HashMap::new();
        let mut preds: HashMap<u32, Seen> = HashMap::new();
        let mut complete = true;
        wave_isa::ir::walk_block(body, 0, &mut |s, _| {
            let StmtKind::Op(inst) = &s.kind else { return };
            let Some(info) = self.shapes.get(func, s.offset) else {
                complete = false;
                return;
            };
            let scalar_write = s.guard.is_none() && super::rules::has_scalar_form(inst.op);
            for ((spec, _), value) in inst.operands().zip(&info.operands) {
                let index = inst.slot_value(spec.slot);
                let uniform = |v: Option<Shape>| Seen::of(v.filter(|v| v.is_uniform()));
                match (spec.role, spec.kind) {
                    (Role::Use, Kind::Reg) => note(&mut regs, index, Seen::of(Some(*value))),
                    (Role::Use, Kind::Pred) => note(&mut preds, index, uniform(Some(*value))),
                    (Role::Def, Kind::Reg) => {
                        note(&mut regs, index, Seen::of(info.result.filter(|_| scalar_write)))
                    }
                    (Role::Def, Kind::Pred) => {
                        note(&mut preds, index, uniform(info.result.filter(|_| scalar_write)))
                    }
                    (_, Kind::Pair | Kind::Quad) => {
                        let span = spec.kind.register_span();
                        for r in index..index + span {
                            note(&mut regs, r, Seen::Unfit);
                        }
                    }
                    _ => {}
                }
            }
        });
        if !complete {
            return None;
        }
        let mut plan = ShadowPlan::default();
        let exposed = upward_exposed(body);
        let written_state = super::chunk::written_state(body);
        for (&reg, &seen) in &regs {
            if let (Seen::Fits { stride, constant }, true) = (seen, self.has_register(reg)) {
                let written = written_state.regs.get(reg as usize).copied().unwrap_or(false);
                let constant = constant.filter(|_| !written);
                let exposed = !written || exposed.regs.get(reg as usize).copied().unwrap_or(true);
                plan.regs.push(PlannedReg { reg, stride, written, exposed, constant });
            }
        }
        for (&pred, &seen) in &preds {
            if matches!(seen, Seen::Fits { .. }) && (pred as usize) < 4 {
                let written = written_state.preds.get(pred as usize).copied().unwrap_or(false);
                let exposed = !written || exposed.preds.get(pred as usize).copied().unwrap_or(true);
                plan.preds.push(PlannedPred { pred, written, exposed });
            }
        }
        plan.regs.sort_unstable();
        plan.preds.sort_unstable();
        (!plan.regs.is_empty() || !plan.preds.is_empty()).then_some(plan)
    }

    /// Whether every statement of the body runs on all lanes that entered it: no divergence
    /// by the wave analysis, uniform `if`s, and uniform `break`/`continue` placed directly in
    /// their loop's body (so each is a real branch and no mask ever narrows).
    fn control_is_uniform(&self, body: &[Stmt], func: FuncId, loop_level: bool) -> bool {
        body.iter().all(|s| {
            let Some(info) = self.waves.get(func, s.offset) else { return false };
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
        let mut fits = |t: &mut Self, v: Value, expected: Value| {
            let eq = t.b.ins().icmp(IntCC::Equal, v, expected);
            all_fit = Some(match all_fit {
                Some(acc) => t.b.ins().band(acc, eq),
                None => eq,
            });
        };
        for &PlannedReg { reg, stride, exposed, constant, .. } in &plan.regs {
            let v = self.reg(reg)[0];
            let lane0 = match constant {
                Some(c) => self.b.ins().iconst(I32, c as i32 as i64),
                None => self.b.ins().extractlane(v, 0),
            };
            if exposed {
                let expected = self.affine_vector(lane0, stride);
                fits(self, v, expected);
            } else {
                let flag = self.not_written_yet();
                self.shadows.reg_entries.insert(reg, (flag, v));
            }
            let var = self.scoped_var(I32);
            self.b.def_var(var, lane0);
            self.shadows.regs.insert(reg, (var, stride));
            if let Some(c) = constant {
                self.shadows.constants.insert(reg, c);
            }
        }
        for &PlannedPred { pred, exposed, .. } in &plan.preds {
            let v = self.pred(pred)[0];
            let lane0 = self.b.ins().extractlane(v, 0);
            if exposed {
                let expected = self.b.ins().splat(I32X4, lane0);
                fits(self, v, expected);
            } else {
                let flag = self.not_written_yet();
                self.shadows.pred_entries.insert(pred, (flag, v));
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
        for &PlannedReg { reg, written, .. } in &plan.regs {
            if written {
                let v = self.reg(reg)[0];
                let entry = self.shadows.reg_entries.get(&reg).copied();
                let v = self.unless_unwritten(v, entry);
                let vars = self.reg_vars(reg);
                self.set(&vars, &[v]);
            }
        }
        for &PlannedPred { pred, written, .. } in &plan.preds {
            if written {
                let v = self.pred(pred)[0];
                let entry = self.shadows.pred_entries.get(&pred).copied();
                let v = self.unless_unwritten(v, entry);
                let vars = self.pred_vars(pred);
                self.set(&vars, &[v]);
            }
        }
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
            .map(|&(flag, _)| flag)
            .collect();
        flags.sort_unstable_by_key(|v| v.index());
        self.release_vars(I8, &flags);
    }

    /// `v`, or the entry vector where the loop has not written the value (unchecked values).
    fn unless_unwritten(&mut self, v: Value, entry: Option<(Variable, Value)>) -> Value {
        match entry {
            Some((flag, entry)) => {
                let flag = self.b.use_var(flag);
                self.b.ins().select(flag, v, entry)
            }
            None => v,
        }
    }

    /// Note that an unchecked value has been written.
    fn mark_written(&mut self, entry: Option<(Variable, Value)>) {
        if let Some((flag, _)) = entry {
            let yes = self.b.ins().iconst(I8, 1);
            self.b.def_var(flag, yes);
        }
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

    /// The vector of a shadowed register, rebuilt from its scalar.
    pub(super) fn shadowed_reg(&mut self, r: u32) -> Option<Value> {
        let (var, stride) = *self.shadows.regs.get(&r)?;
        let lane0 = match self.shadows.constants.get(&r) {
            Some(&c) => self.b.ins().iconst(I32, c as i32 as i64),
            None => self.b.use_var(var),
        };
        Some(self.affine_vector(lane0, stride))
    }

    /// The mask of a shadowed predicate, rebuilt from its scalar.
    pub(super) fn shadowed_pred(&mut self, p: u32) -> Option<Value> {
        let var = *self.shadows.preds.get(&p)?;
        let lane0 = self.b.use_var(var);
        Some(self.affine_vector(lane0, 0))
    }

    pub(super) fn is_shadowed_reg(&self, r: u32) -> bool {
        self.shadows.regs.contains_key(&r)
    }

    pub(super) fn is_shadowed_pred(&self, p: u32) -> bool {
        self.shadows.preds.contains_key(&p)
    }

    /// Lane 0 of a vector: free for one rebuilt from a shadow.
    pub fn lane0(&mut self, v: Value) -> Value {
        match self.shadows.lane0.get(&v) {
            Some(&s) => s,
            None => self.b.ins().extractlane(v, 0),
        }
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

    /// Compute a write to a shadowed value on lane 0 only.
    pub fn scalar_op(&mut self, inst: &Instruction, pc: u32) -> Result<(), JitError> {
        if !self.full || inst.guard.is_some() {
            return Err(JitError::Codegen(format!(
                "internal: shadowed write under a partial mask at byte 0x{pc:x}"
            )));
        }
        // The register inputs' lane 0, in operand order.
        let inputs: Vec<u32> = inst
            .operands()
            .filter(|(spec, _)| spec.role == Role::Use && spec.kind == Kind::Reg)
            .map(|(spec, _)| inst.slot_value(spec.slot))
            .collect();
        let mut x = Vec::with_capacity(inputs.len());
        for r in inputs {
            let v = self.reg(r)[0];
            x.push(self.lane0(v));
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
            self.b.def_var(var, mask);
            let entry = self.shadows.pred_entries.get(&(inst.rd as u32)).copied();
            self.mark_written(entry);
            return Ok(());
        }
        let Some(value) = self.scalar_form(inst, &x) else {
            return Err(JitError::Codegen(format!(
                "internal: `{}` has no scalar form (byte 0x{pc:x})",
                inst.op.mnemonic()
            )));
        };
        let (var, _) = self.shadows.regs[&(inst.rd as u32)];
        self.b.def_var(var, value);
        let entry = self.shadows.reg_entries.get(&(inst.rd as u32)).copied();
        self.mark_written(entry);
        Ok(())
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
    /// only fed them is dead code. Not in chunk-major loops (shadows cover them there).
    pub fn note_scalar_forms(&mut self, inst: &Instruction, result: &[Value]) {
        // (Compares write predicates: `scalar_form` gives them none.)
        if !super::rules::has_scalar_form(inst.op) || self.bailout.is_some() {
            return;
        }
        let inputs: Vec<Vec<Value>> = inst
            .operands()
            .filter(|(spec, _)| spec.role == Role::Use && spec.kind == Kind::Reg)
            .map(|(spec, _)| self.reg(inst.slot_value(spec.slot)))
            .collect();
        for (k, &v) in result.iter().enumerate() {
            let x: Option<Vec<Value>> =
                inputs.iter().map(|vectors| self.shadows.lane0.get(&vectors[k]).copied()).collect();
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
