//! Predicates kept as compare forms: `p = x < u` where `x` is `x0 + lane × stride` across the
//! wave and `u` is uniform, held as the scalars `x0` and `u` instead of W/4 mask vectors.
//!
//! A bounds guard (`ucmp_lt p0, i, n; if p0`) computed as vectors costs a compare per vector
//! and an AND per vector for the `if`'s all-lanes test, before the branch, although the fast
//! path of its coherent copy never reads the masks. As a form, the compare costs nothing where
//! it stands: the test "every lane takes the `then` side" is scalar code (the compare is
//! monotone in the lane, so one end of the wave decides unless the lanes wrap in the
//! compare's domain, see [`Translator::every_lane_holds`]), and the mask vectors are rebuilt
//! from the scalars where something reads them (the masked path).
//!
//! A form stands for every lane, so it is recorded only where every lane runs the compare
//! (wave-major code, unguarded, all lanes active: the wave analysis's strides then hold for
//! all of them). Its scalars are SSA values defined where the compare stands, so a form may
//! be read only where that point dominates: it is written into the predicate's variables
//! ("materialized") before any statement other than an op or an `if` (loops, calls,
//! barriers, exits: everything that reads the variables wholesale or joins control flow), at
//! the end of the statement list it was recorded in, before an `if` whose bodies write that
//! predicate or hold such a statement (a call may write any predicate), and before any write
//! to the predicate.

use super::Translator;
use cranelift_codegen::ir::condcodes::{CondCode, IntCC};
use cranelift_codegen::ir::types::{I32X4, I64};
use cranelift_codegen::ir::{InstBuilder, Value};
use std::collections::HashMap;
use wave_isa::opcodes::{Role, Slot};
use wave_isa::{Instruction, PredRef, StateRef, Stmt, StmtKind};

/// `p = cc(x, u)` (or `cc(u, x)`) with `x = x0 + lane × stride` across the wave, `u` uniform.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PredForm {
    cc: IntCC,
    /// The varying operand is the compare's left one.
    varying_left: bool,
    x0: Value,
    stride: u32,
    u: Value,
}

/// The forms in force, by predicate.
pub type PredForms = HashMap<u32, PredForm>;

/// Where compare `cc` of operands with these lane strides (left, right) is monotone in the
/// lane: an order (not `==`/`!=`) of a lane-affine operand with a positive stride (as i32)
/// and a uniform one. Returns whether the varying operand is the left one, and its stride.
pub(super) fn monotone_compare(cc: IntCC, left: Option<u32>, right: Option<u32>) -> Option<(bool, u32)> {
    if matches!(cc, IntCC::Equal | IntCC::NotEqual) {
        return None;
    }
    let (varying_left, stride) = match (left?, right?) {
        (s, 0) if s != 0 => (true, s),
        (0, s) if s != 0 => (false, s),
        _ => return None,
    };
    (stride as i32 > 0).then_some((varying_left, stride))
}

fn is_signed(cc: IntCC) -> bool {
    matches!(
        cc,
        IntCC::SignedLessThan
            | IntCC::SignedLessThanOrEqual
            | IntCC::SignedGreaterThan
            | IntCC::SignedGreaterThanOrEqual
    )
}

impl Translator<'_, '_> {
    /// Record integer compare `inst` (order `cc`, writing a predicate) as a form instead of
    /// computing its masks, where every lane runs it in wave-major code and one operand is
    /// lane-affine with a positive stride, the other uniform. False where it does not qualify
    /// (the caller computes the masks).
    pub fn record_pred_form(&mut self, inst: &Instruction, cc: IntCC, pc: u32) -> bool {
        if !self.full
            || inst.guard.is_some()
            || self.chunk_loop.is_some()
            || !self.shadows_are_empty()
            || self.wave.preds.get(inst.rd as usize).is_none()
        {
            return false;
        }
        let (left, right) =
            (self.wave_operand_stride(inst, pc, Slot::Rs1), self.wave_operand_stride(inst, pc, Slot::Rs2));
        let Some((varying_left, stride)) = monotone_compare(cc, left, right) else { return false };
        let (varying, uniform) = if varying_left { (inst.rs1, inst.rs2) } else { (inst.rs2, inst.rs1) };
        let x = self.reg(varying as u32)[0];
        let x0 = self.lane0(x);
        let v = self.reg(uniform as u32)[0];
        let u = self.lane0(v);
        self.pred_forms.insert(inst.rd as u32, PredForm { cc, varying_left, x0, stride, u });
        true
    }

    /// The masks of a predicate held as a form, rebuilt here.
    pub(super) fn pred_form_masks(&mut self, p: u32) -> Option<Vec<Value>> {
        let form = *self.pred_forms.get(&p)?;
        let u = self.b.ins().splat(I32X4, form.u);
        let xs = self.affine_vectors(form.x0, form.stride);
        Some(
            xs.into_iter()
                .map(|x| {
                    if form.varying_left {
                        self.b.ins().icmp(form.cc, x, u)
                    } else {
                        self.b.ins().icmp(form.cc, u, x)
                    }
                })
                .collect(),
        )
    }

    /// Write predicate `p`'s form, if it has one, into its variables; drop the form.
    pub fn materialize_pred_form(&mut self, p: u32) {
        if let Some(masks) = self.pred_form_masks(p) {
            self.pred_forms.remove(&p);
            let vars = self.pred_vars(p);
            self.set(&vars, &masks);
        }
    }

    /// Materialize every form.
    pub fn materialize_pred_forms(&mut self) {
        self.materialize_pred_forms_since(&PredForms::new());
    }

    /// Materialize the forms recorded since `before` was taken (at the start of a statement
    /// list: they do not dominate what follows it), in predicate order (the code should not
    /// depend on a map's).
    pub fn materialize_pred_forms_since(&mut self, before: &PredForms) {
        let mut preds: Vec<u32> =
            self.pred_forms.iter().filter(|(p, f)| before.get(p) != Some(f)).map(|(&p, _)| p).collect();
        preds.sort_unstable();
        for p in preds {
            self.materialize_pred_form(p);
        }
    }

    /// Before an `if` with these bodies: materialize the forms that translating a body may
    /// materialize (on that side only, leaving the other side's variables stale): those of
    /// the predicates the bodies write, or all of them where a body holds a statement that
    /// materializes every form (a call, whose callee may write any predicate, a loop, an
    /// exit).
    pub fn materialize_pred_forms_for_if(&mut self, bodies: &[&[Stmt]]) {
        if self.pred_forms.is_empty() {
            return;
        }
        let mut written = Vec::new();
        let mut all = false;
        for block in bodies {
            wave_isa::ir::walk_block(block, 0, &mut |s, _| match &s.kind {
                StmtKind::Op(inst) => {
                    for state in inst.named_state(Some(Role::Def)) {
                        if let StateRef::Pred(p) = state {
                            written.push(p as u32);
                        }
                    }
                }
                StmtKind::If { .. } => {}
                _ => all = true,
            });
        }
        if all {
            self.materialize_pred_forms();
            return;
        }
        written.sort_unstable();
        written.dedup();
        for p in written {
            self.materialize_pred_form(p);
        }
    }

    /// Whether every lane takes the `then` side of `if pred`, decided on its form's scalars,
    /// conservatively (false may also mean "cannot tell"); `None` without a form. Only where
    /// every lane runs the `if`. The lanes' values rise with the lane unless they wrap, so
    /// `x < u` holds in every lane when it holds in the last (a 64-bit compare that also fails
    /// where they wrap), `x > u` when it holds in the first and they do not wrap: one or two
    /// compares, where testing both ends and the wrap was three.
    pub fn every_lane_holds(&mut self, pred: PredRef) -> Option<Value> {
        let form = *self.pred_forms.get(&(pred.index as u32))?;
        let holds = if pred.negated { form.cc.complement() } else { form.cc };
        // As `x cc u`, `x` rising with the lane where the lanes do not wrap.
        let cc = if form.varying_left { holds } else { holds.swap_args() };
        let signed = is_signed(cc);
        let last_wide = self.last_lane_wide(signed, form.x0, form.stride, 4 * self.wave.n);
        let every = if matches!(
            cc,
            IntCC::SignedLessThan
                | IntCC::SignedLessThanOrEqual
                | IntCC::UnsignedLessThan
                | IntCC::UnsignedLessThanOrEqual
        ) {
            // The last lane is the largest: one 64-bit compare, which fails where the lanes
            // wrap (the last lane then lies past every value `u` can have).
            let u_wide = self.widen(signed, form.u);
            self.b.ins().icmp(cc, last_wide, u_wide)
        } else {
            // The first lane is the smallest, where the lanes do not wrap.
            let wraps = self.lanes_wrap(signed, last_wide);
            let at_first = self.b.ins().icmp(cc, form.x0, form.u);
            self.b.ins().band_not(at_first, wraps)
        };
        Some(every)
    }

    /// Whether `cc(x, u)` (or `cc(u, x)` when not `varying_left`) holds in some of `lanes`
    /// lanes where `x = x0 + lane × stride` (stride positive as i32) and `u` is uniform, as an
    /// i8, conservatively (true may also mean "cannot tell"). Where the lanes' values do not
    /// wrap in the compare's domain they increase with the lane, so an order compare is
    /// monotone in the lane: `x > u` holds somewhere exactly when it holds in the last lane
    /// (one 64-bit compare, which also holds where the lanes wrap, the last lane then lying
    /// past every value `u` can have), `x < u` when it holds in the first or the lanes wrap.
    /// This test runs once per trip of a grid-stride loop, so its length is the loop's.
    pub fn some_lane_satisfies(
        &mut self,
        cc: IntCC,
        varying_left: bool,
        x0: Value,
        stride: u32,
        u: Value,
        lanes: usize,
    ) -> Value {
        // As `x cc u`, `x` rising with the lane where the lanes do not wrap.
        let cc = if varying_left { cc } else { cc.swap_args() };
        let signed = is_signed(cc);
        let last_wide = self.last_lane_wide(signed, x0, stride, lanes);
        if matches!(
            cc,
            IntCC::SignedGreaterThan
                | IntCC::SignedGreaterThanOrEqual
                | IntCC::UnsignedGreaterThan
                | IntCC::UnsignedGreaterThanOrEqual
        ) {
            let u_wide = self.widen(signed, u);
            return self.b.ins().icmp(cc, last_wide, u_wide);
        }
        // `<` or `<=` (callers pass order compares only, see `monotone_compare`).
        debug_assert!(!matches!(cc, IntCC::Equal | IntCC::NotEqual));
        let wraps = self.lanes_wrap(signed, last_wide);
        let at_first = self.b.ins().icmp(cc, x0, u);
        self.b.ins().bor(at_first, wraps)
    }

    /// `v` in 64 bits, extended as a compare of the given signedness reads it.
    fn widen(&mut self, signed: bool, v: Value) -> Value {
        if signed {
            self.b.ins().sextend(I64, v)
        } else {
            self.b.ins().uextend(I64, v)
        }
    }

    /// The last of `lanes` lanes of `x0 + lane × stride` (stride positive as i32), computed
    /// in 64 bits from `x0` widened for the compare's signedness: it lies past that domain's
    /// top exactly where the lanes wrap.
    fn last_lane_wide(&mut self, signed: bool, x0: Value, stride: u32, lanes: usize) -> Value {
        let first = self.widen(signed, x0);
        self.b.ins().iadd_imm_s(first, (lanes as i64 - 1) * stride as i64)
    }

    /// Whether lanes ending at `last_wide` (see [`Self::last_lane_wide`]) wrap, as an i8.
    fn lanes_wrap(&mut self, signed: bool, last_wide: Value) -> Value {
        let top = if signed { i32::MAX as i64 } else { u32::MAX as i64 };
        self.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, last_wide, top)
    }
}
