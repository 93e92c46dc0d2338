//! f32 ops. IEEE-exact ones are native vector ops; the ones whose rules differ from IEEE or
//! Cranelift (minNum with first-operand zeros, `fround` ties away, `fsat`, transcendentals)
//! go through the lane helper and `wave_runtime::semantics`.
//!
//! NaN operands: `semantics` returns the first NaN operand (quieted). x86 returns the NaN of
//! the first *source* operand, whatever either one signals, which is the same rule where the
//! machine operands keep the WAVE order. They do for `fadd` and `fmul` on x86-64: Cranelift
//! 0.135.8 (pinned) lowers `fadd x, y` / `fmul x, y` to `addps`/`mulps` with `x` first unless
//! `x` is a load it sinks into the instruction, and our operands are never loads (a register
//! is an `I32X4` value, bitcast to `F32X4` for the op); no egraph rule commutes them
//! (`jit/tests/nan_operand_order.rs` pins this with two NaN operands in every shape). So those
//! need no test there. For `fma` the machine order is the code generator's choice (the 132 and
//! 213 forms, by which operand it sinks), and elsewhere (AArch64 prefers a signalling NaN) so
//! is the rule: with at most one NaN operand every order gives the same bits, so runs of those
//! ops compute natively and test once whether any lane had a NaN where it could matter; if
//! so, a cold path redoes the run with the rule in vector code.

use super::Translator;
use crate::error::JitError;
use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::types::F32X4;
use cranelift_codegen::ir::{InstBuilder, Value};
use wave_isa::{Instruction, Op, Stmt, StmtKind};

impl Translator<'_, '_> {
    pub fn float_op(&mut self, inst: &Instruction, pc: u32) -> Result<(), JitError> {
        if super::rules::lowering(inst.op) == super::rules::Lowering::VectorOrHelper {
            return self.transcendental(inst, pc);
        }
        if !super::rules::is_native(inst.op) {
            return self.lane_helper(inst, pc);
        }
        let n = self.wave.n;
        let (a, b) = (inst.rs1 as u32, inst.rs2 as u32);
        let unary = |t: &mut Self, f: &dyn Fn(&mut Self, Value) -> Value| -> Vec<Value> {
            let x = t.reg(a);
            (0..n)
                .map(|k| {
                    let fx = t.as_f32(x[k]);
                    let r = f(t, fx);
                    t.as_i32(r)
                })
                .collect()
        };
        let binary = |t: &mut Self, f: &dyn Fn(&mut Self, Value, Value) -> Value| -> Vec<Value> {
            let x = t.reg(a);
            let y = t.reg(b);
            (0..n)
                .map(|k| {
                    let fx = t.as_f32(x[k]);
                    let fy = t.as_f32(y[k]);
                    let r = f(t, fx, fy);
                    t.as_i32(r)
                })
                .collect()
        };
        let result = match inst.op {
            // `semantics` pins the first NaN operand (rs1, rs2, rs3), quieted. `fsub` and
            // `fdiv` are not commutative: the machine keeps the operand order, so x86's
            // first-source NaN is `semantics`' first NaN operand.
            // Every `fadd`, `fmul` and `fma` statement is part of a run (`float_run`).
            Op::Fadd | Op::Fmul | Op::Fma => return self.lane_helper(inst, pc),
            Op::Fsub => binary(self, &|t, x, y| t.b.ins().fsub(x, y)),
            // B.12: IEEE division.
            Op::Fdiv => binary(self, &|t, x, y| t.b.ins().fdiv(x, y)),
            // Sign-bit operations, as Rust's `-x` and `abs`.
            Op::Fneg => unary(self, &|t, x| t.b.ins().fneg(x)),
            Op::Fabs => unary(self, &|t, x| t.b.ins().fabs(x)),
            // sqrtps gives the x86 default NaN for negatives and quiets NaNs, as `semantics`.
            Op::Fsqrt => unary(self, &|t, x| t.b.ins().sqrt(x)),
            Op::Frsqrt => unary(self, &|t, x| {
                let s = t.b.ins().sqrt(x);
                let one = t.b.ins().f32const(1.0);
                let one = t.b.ins().splat(F32X4, one);
                t.b.ins().fdiv(one, s)
            }),
            Op::Frcp => unary(self, &|t, x| {
                let one = t.b.ins().f32const(1.0);
                let one = t.b.ins().splat(F32X4, one);
                t.b.ins().fdiv(one, x)
            }),
            // `semantics` returns a NaN input unchanged (signalling NaNs too); roundps would
            // quiet it, so NaN lanes keep the input.
            Op::Ffloor => unary(self, &|t, x| {
                let r = t.b.ins().floor(x);
                t.keep_nan(x, r)
            }),
            Op::Fceil => unary(self, &|t, x| {
                let r = t.b.ins().ceil(x);
                t.keep_nan(x, r)
            }),
            Op::Ftrunc => unary(self, &|t, x| {
                let r = t.b.ins().trunc(x);
                t.keep_nan(x, r)
            }),
            // x − trunc(x) (§5.3).
            Op::Ffract => unary(self, &|t, x| {
                let tr = t.b.ins().trunc(x);
                t.b.ins().fsub(x, tr)
            }),
            Op::Fmin => binary(self, &|t, x, y| t.min_or_max_num(x, y, false)),
            Op::Fmax => binary(self, &|t, x, y| t.min_or_max_num(x, y, true)),
            Op::Fclamp => {
                let (x, lo, hi) = (self.reg(a), self.reg(b), self.reg(inst.rs3 as u32));
                (0..n)
                    .map(|k| {
                        let (fx, flo, fhi) = (self.as_f32(x[k]), self.as_f32(lo[k]), self.as_f32(hi[k]));
                        let at_least_lo = self.min_or_max_num(fx, flo, true);
                        let r = self.min_or_max_num(at_least_lo, fhi, false);
                        self.as_i32(r)
                    })
                    .collect()
            }
            _ => return Err(super::rules::no_lowering(inst.op)),
        };
        let mask = self.op_mask(inst.guard);
        self.set_reg(inst.rd as u32, &result, &mask);
        Ok(())
    }

    /// `semantics::fmax` (`max`) or `fmin` on f32 vectors: `y` where `x` is NaN or `y` lies
    /// strictly beyond `x`, else `x` (so a NaN `y`, and equal values such as ±0, give `x`).
    /// maxps/minps return the second operand for NaNs and zeros alike, hence the compares.
    fn min_or_max_num(&mut self, x: Value, y: Value, max: bool) -> Value {
        let beyond = if max {
            self.b.ins().fcmp(FloatCC::LessThan, x, y)
        } else {
            self.b.ins().fcmp(FloatCC::LessThan, y, x)
        };
        let x_nan = self.b.ins().fcmp(FloatCC::Unordered, x, x);
        let take_y = self.b.ins().bor(beyond, x_nan);
        let (xi, yi) = (self.as_i32(x), self.as_i32(y));
        let v = self.b.ins().blendv(take_y, yi, xi);
        self.as_f32(v)
    }

    /// `isnan(x) ? x : r` on f32 vectors.
    fn keep_nan(&mut self, x: Value, r: Value) -> Value {
        let nan = self.b.ins().fcmp(FloatCC::Unordered, x, x);
        let xi = self.as_i32(x);
        let ri = self.as_i32(r);
        let v = self.b.ins().blendv(nan, xi, ri);
        self.as_f32(v)
    }

    /// A run of `fadd`/`fmul`/`fma` statements (see the module doc): native vector ops, one
    /// test for NaNs among the operands that decide which NaN comes out (both of `fadd` and
    /// `fmul`, the two factors of `fma`: several NaN operands need one there), and on a hit a
    /// cold path that restores the registers the run wrote and redoes it with the exact rule.
    pub fn float_run(&mut self, run: &[Stmt]) -> Result<(), JitError> {
        let insts: Vec<(&Instruction, u32)> = run
            .iter()
            .filter_map(|s| match &s.kind {
                StmtKind::Op(inst) => Some((inst, s.offset)),
                _ => None,
            })
            .collect();
        let mut before: Vec<(u32, Vec<Value>)> = Vec::new();
        for &(inst, _) in &insts {
            let rd = inst.rd as u32;
            if !before.iter().any(|(r, _)| *r == rd) {
                let v = self.reg(rd);
                before.push((rd, v));
            }
        }
        let mut tested: Vec<Vec<Value>> = Vec::new();
        for &(inst, pc) in &insts {
            self.full = inst.guard.is_none() && self.exec_is_full(pc);
            let x = self.reg(inst.rs1 as u32);
            let y = self.reg(inst.rs2 as u32);
            let z = if inst.op == Op::Fma { Some(self.reg_f32(inst.rs3 as u32)) } else { None };
            let result: Vec<Value> = (0..self.wave.n)
                .map(|k| {
                    let (fx, fy) = (self.as_f32(x[k]), self.as_f32(y[k]));
                    let r = match (inst.op, &z) {
                        (Op::Fma, Some(z)) => self.b.ins().fma(fx, fy, z[k]),
                        (Op::Fmul, _) => self.b.ins().fmul(fx, fy),
                        _ => self.b.ins().fadd(fx, fy),
                    };
                    self.as_i32(r)
                })
                .collect();
            // A sticky accumulator in a chunk-major loop is tested once at the loop's end.
            let deferred =
                self.chunk_loop.as_ref().is_some_and(|c| c.nan_deferred.contains(&(inst.rd as u32)));
            let untested = deferred || keeps_operand_order(inst.op);
            for operand in [x, y].into_iter().filter(|_| !untested) {
                if !tested.contains(&operand) {
                    tested.push(operand);
                }
            }
            let mask = self.op_mask(inst.guard);
            self.at_op(inst, pc);
            self.set_reg(inst.rd as u32, &result, &mask);
        }
        let Some(nan_lanes) = self.nan_lanes(&tested) else { return Ok(()) };
        let any = self.any(&nan_lanes);
        let done = self.b.create_block();
        if let Some(bail) = self.bailout() {
            // Speculative loop: the wave-major copy redoes it with the rule.
            self.b.ins().brif(any, bail, &[], done, &[]);
            self.continue_in(done);
            return Ok(());
        }
        let exact = self.b.create_block();
        self.b.set_cold_block(exact);
        self.b.ins().brif(any, exact, &[], done, &[]);
        self.continue_in(exact);
        for (r, vals) in &before {
            self.restore_reg(*r, vals);
        }
        for &(inst, pc) in &insts {
            self.full = inst.guard.is_none() && self.exec_is_full(pc);
            let mut operands = vec![self.reg(inst.rs1 as u32), self.reg(inst.rs2 as u32)];
            if inst.op == Op::Fma {
                operands.push(self.reg(inst.rs3 as u32));
            }
            let result: Vec<Value> = (0..self.wave.n)
                .map(|k| {
                    let lanes: Vec<Value> = operands.iter().map(|o| o[k]).collect();
                    self.first_nan_rule(inst.op, &lanes)
                })
                .collect();
            let mask = self.op_mask(inst.guard);
            self.at_op(inst, pc);
            self.set_reg(inst.rd as u32, &result, &mask);
        }
        self.b.ins().jump(done, &[]);
        self.continue_in(done);
        Ok(())
    }

    /// The lanes where some of the `values` (registers' vectors) is NaN; `None` for none given.
    /// Two values per unordered compare: it is true when either is NaN.
    pub fn nan_lanes(&mut self, values: &[Vec<Value>]) -> Option<Vec<Value>> {
        let mut nan_lanes: Option<Vec<Value>> = None;
        for pair in values.chunks(2) {
            let (x, y) = (&pair[0], pair.get(1).unwrap_or(&pair[0]));
            let unordered: Vec<Value> = (0..self.wave.n)
                .map(|k| {
                    let (fx, fy) = (self.as_f32(x[k]), self.as_f32(y[k]));
                    self.b.ins().fcmp(FloatCC::Unordered, fx, fy)
                })
                .collect();
            nan_lanes = Some(match nan_lanes {
                Some(acc) => self.or(&acc, &unordered),
                None => unordered,
            });
        }
        nan_lanes
    }

    /// `fadd`/`fmul`/`fma` of one vector with `semantics`' NaN rule, in vector code (no call,
    /// so the hot path around it keeps its registers): the native result, then each NaN
    /// operand quieted, the last operand first so that the first NaN operand wins. x86 makes
    /// 0xFFC00000 from non-NaN operands, as the rule asks.
    fn first_nan_rule(&mut self, op: Op, operands: &[Value]) -> Value {
        let f: Vec<Value> = operands.iter().map(|&v| self.as_f32(v)).collect();
        let native = match op {
            Op::Fma => self.b.ins().fma(f[0], f[1], f[2]),
            Op::Fmul => self.b.ins().fmul(f[0], f[1]),
            _ => self.b.ins().fadd(f[0], f[1]),
        };
        let mut r = self.as_i32(native);
        let quiet_bit = self.vconst4([0x0040_0000; 4]);
        for (&x, &fx) in operands.iter().zip(&f).rev() {
            // An I32X4 of all-ones where x is NaN.
            let nan = self.b.ins().fcmp(FloatCC::Unordered, fx, fx);
            let quieted = self.b.ins().bor(x, quiet_bit);
            r = self.b.ins().bitselect(nan, quieted, r);
        }
        r
    }
}

/// Whether the native op returns the NaN `semantics` does whatever the operands (see the
/// module doc): `fadd` and `fmul` on x86-64.
fn keeps_operand_order(op: Op) -> bool {
    cfg!(target_arch = "x86_64") && matches!(op, Op::Fadd | Op::Fmul)
}

/// `fadd`, `fmul` and `fma`: ops whose NaN result depends on machine operand order.
pub fn is_nan_order_sensitive(s: &Stmt) -> bool {
    matches!(&s.kind, StmtKind::Op(inst) if matches!(inst.op, Op::Fadd | Op::Fmul | Op::Fma))
}
