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
//! is affine with the planned stride. At each vector's loop entry every shadowed value is
//! checked against its planned form (a value the loop may leave untouched must already have
//! it), and a mismatch takes the loop's bail-out.

use super::alu::int_compare;
use super::Translator;
use crate::error::JitError;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I32X4};
use cranelift_codegen::ir::{Block, InstBuilder, Value};
use cranelift_frontend::Variable;
use std::collections::HashMap;
use wave_isa::analysis::Value as Shape;
use wave_isa::opcodes::{Kind, Role};
use wave_isa::{FuncId, Instruction, Op, Stmt, StmtKind};

/// Which registers (with their lane stride) and predicates a loop keeps as scalars, and
/// which of them the loop writes.
#[derive(Clone, Debug, Default)]
pub struct ShadowPlan {
    regs: Vec<PlannedReg>,
    preds: Vec<(u32, bool)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct PlannedReg {
    reg: u32,
    stride: u32,
    written: bool,
    /// A register the loop only reads, known to hold this constant.
    constant: Option<u32>,
}

/// The shadows in force while a chunk-major loop is translated.
#[derive(Default)]
pub struct Shadows {
    regs: HashMap<u32, (Variable, u32)>,
    preds: HashMap<u32, Variable>,
    /// Lane 0 of vectors rebuilt from a shadow: memory ops and branches read it from here.
    lane0: HashMap<Value, Value>,
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

/// Ops whose scalar form [`Translator::scalar_op`] computes (integer, lane-wise, no helper).
fn has_scalar_form(op: Op) -> bool {
    use Op::*;
    matches!(op, Iadd | Isub | Imul | Imad | Imin | Imax | And | Or | Xor | Not | Ineg | Mov | MovImm)
        || int_compare(op).is_some()
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
        let mut written_regs = Vec::new();
        let mut written_preds = Vec::new();
        let mut complete = true;
        wave_isa::ir::walk_block(body, 0, &mut |s, _| {
            let StmtKind::Op(inst) = &s.kind else { return };
            let Some(info) = self.shapes.get(func, s.offset) else {
                complete = false;
                return;
            };
            let scalar_write = s.guard.is_none() && has_scalar_form(inst.op);
            for ((spec, _), value) in inst.operands().zip(&info.operands) {
                let index = inst.slot_value(spec.slot);
                let uniform = |v: Option<Shape>| Seen::of(v.filter(|v| v.is_uniform()));
                match (spec.role, spec.kind) {
                    (Role::Use, Kind::Reg) => note(&mut regs, index, Seen::of(Some(*value))),
                    (Role::Use, Kind::Pred) => note(&mut preds, index, uniform(Some(*value))),
                    (Role::Def, Kind::Reg) => {
                        written_regs.push(index);
                        note(&mut regs, index, Seen::of(info.result.filter(|_| scalar_write)));
                    }
                    (Role::Def, Kind::Pred) => {
                        written_preds.push(index);
                        note(&mut preds, index, uniform(info.result.filter(|_| scalar_write)));
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
        for (&reg, &seen) in &regs {
            if let (Seen::Fits { stride, constant }, true) = (seen, self.has_register(reg)) {
                let written = written_regs.contains(&reg);
                let constant = constant.filter(|_| !written);
                plan.regs.push(PlannedReg { reg, stride, written, constant });
            }
        }
        for (&p, &seen) in &preds {
            if matches!(seen, Seen::Fits { .. }) && (p as usize) < 4 {
                plan.preds.push((p, written_preds.contains(&p)));
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
    /// constant), after checking that every value already has the planned form (else: `bail`).
    /// The analysis says so; the check keeps a value the loop writes exact on a path that
    /// leaves before writing it, and guards the rest against an analysis mistake.
    pub fn enter_shadows(&mut self, plan: &ShadowPlan, bail: Block) {
        let mut all_fit: Option<Value> = None;
        let mut fits = |t: &mut Self, v: Value, expected: Value| {
            let eq = t.b.ins().icmp(IntCC::Equal, v, expected);
            all_fit = Some(match all_fit {
                Some(acc) => t.b.ins().band(acc, eq),
                None => eq,
            });
        };
        for &PlannedReg { reg, stride, constant, .. } in &plan.regs {
            let v = self.reg(reg)[0];
            let lane0 = match constant {
                Some(c) => self.b.ins().iconst(I32, c as i32 as i64),
                None => self.b.ins().extractlane(v, 0),
            };
            let expected = self.affine_vector(lane0, stride);
            fits(self, v, expected);
            let var = self.b.declare_var(I32);
            self.b.def_var(var, lane0);
            self.shadows.regs.insert(reg, (var, stride));
        }
        for &(p, _) in &plan.preds {
            let v = self.pred(p)[0];
            let lane0 = self.b.ins().extractlane(v, 0);
            let expected = self.b.ins().splat(I32X4, lane0);
            fits(self, v, expected);
            let var = self.b.declare_var(I32);
            self.b.def_var(var, lane0);
            self.shadows.preds.insert(p, var);
        }
        if let Some(all) = all_fit {
            let all = self.b.ins().vall_true(all);
            let go = self.b.create_block();
            self.b.ins().brif(all, go, &[], bail, &[]);
            self.b.switch_to_block(go);
        }
    }

    /// Write the shadows the loop changed back into the vector state; drop all shadows.
    pub fn leave_shadows(&mut self, plan: &ShadowPlan) {
        for &PlannedReg { reg, written, .. } in &plan.regs {
            if written {
                let v = self.reg(reg);
                let vars = self.reg_vars(reg);
                self.shadows.regs.remove(&reg);
                self.set(&vars, &v);
            }
        }
        for &(p, written) in &plan.preds {
            if written {
                let v = self.pred(p);
                let vars = self.pred_vars(p);
                self.shadows.preds.remove(&p);
                self.set(&vars, &v);
            }
        }
        self.shadows = Shadows::default();
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
        let lane0 = self.b.use_var(var);
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
            return Ok(());
        }
        let ins = self.b.ins();
        let value = match inst.op {
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
            op => {
                return Err(JitError::Codegen(format!(
                    "internal: `{}` has no scalar form (byte 0x{pc:x})",
                    op.mnemonic()
                )))
            }
        };
        let (var, _) = self.shadows.regs[&(inst.rd as u32)];
        self.b.def_var(var, value);
        Ok(())
    }
}
