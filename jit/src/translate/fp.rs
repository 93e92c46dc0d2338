//! f32 ops. IEEE-exact ones are native vector ops; the ones whose rules differ from IEEE or
//! Cranelift (minNum with first-operand zeros, `fround` ties away, `fsat`, transcendentals)
//! go through the lane helper and `wave_runtime::semantics`.

use super::Translator;
use crate::error::JitError;
use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::types::F32X4;
use cranelift_codegen::ir::{InstBuilder, Value};
use wave_isa::{Instruction, Op};

impl Translator<'_, '_> {
    pub fn float_op(&mut self, inst: &Instruction, pc: u32) -> Result<(), JitError> {
        let n = self.n;
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
            // Which NaN x86 returns when both operands are NaN depends on operand order, which
            // Cranelift (and LLVM in the interpreter) may swap for commutative ops. The
            // interpreter's compiled `semantics::fadd`/`fmul` return the second operand's NaN
            // (measured); the fix-up pins that. `semantics` should make this explicit.
            Op::Fadd => binary(self, &|t, x, y| {
                let r = t.b.ins().fadd(x, y);
                t.first_nan(&[y, x], r)
            }),
            Op::Fsub => binary(self, &|t, x, y| t.b.ins().fsub(x, y)),
            Op::Fmul => binary(self, &|t, x, y| {
                let r = t.b.ins().fmul(x, y);
                t.first_nan(&[y, x], r)
            }),
            // B.12: IEEE division.
            Op::Fdiv => binary(self, &|t, x, y| t.b.ins().fdiv(x, y)),
            // fma goes to the helper: which NaN the host `fmaf` returns when several inputs
            // are NaN follows no simple operand order, and only calling it matches it.
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
            _ => return self.lane_helper(inst, pc),
        };
        let mask = self.op_mask(inst.guard);
        self.set_reg(inst.rd as u32, &result, &mask);
        Ok(())
    }

    /// The first NaN among `inputs`, quieted, where there is one; `r` elsewhere.
    fn first_nan(&mut self, inputs: &[Value], r: Value) -> Value {
        let quiet_bit = self.vconst4([0x0040_0000; 4]);
        let mut out = self.as_i32(r);
        for &x in inputs.iter().rev() {
            let nan = self.b.ins().fcmp(FloatCC::Unordered, x, x);
            let xi = self.as_i32(x);
            let q = self.b.ins().bor(xi, quiet_bit);
            out = self.b.ins().blendv(nan, q, out);
        }
        self.as_f32(out)
    }

    /// `isnan(x) ? x : r` on f32 vectors.
    fn keep_nan(&mut self, x: Value, r: Value) -> Value {
        let nan = self.b.ins().fcmp(FloatCC::Unordered, x, x);
        let xi = self.as_i32(x);
        let ri = self.as_i32(r);
        let v = self.b.ins().blendv(nan, xi, ri);
        self.as_f32(v)
    }
}
