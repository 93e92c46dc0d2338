//! `fexp2` and `flog2` in vector code, bit for bit the runtime's `semantics::fexp2` and
//! `flog2`, which are `libm::exp2f` and `libm::log2f` (FreeBSD's `s_exp2f.c` and
//! `e_log2f.c`). Every step is the same IEEE operation in the same order as there (Cranelift
//! never fuses a multiply and an add, nor does Rust), so every rounding is the same.
//!
//! - `exp2f`: x = k + i/16 + z, 2^x = 2^k · 2^(i/16) · p(z), with the table
//!   ([`crate::abi::EXP2_TABLE`], read from the context) and the degree-4 polynomial in f64.
//!   The vector code covers the common path (2^-25 < |x| <= 126) and `1 + x` for
//!   |x| <= 2^-25.
//! - `log2f`: x = 2^k · m with m in [sqrt(2)/2, sqrt(2)), and a polynomial in
//!   s = (m - 1)/(m + 1), in f32. The vector code covers positive normal x.
//!
//! A wave with a running lane outside what the vector code covers (libm's special cases:
//! infinities, NaN, and for `exp2f` |x| > 126, for `log2f` zero, subnormals and negative
//! numbers) runs the lane helper instead, on a cold path. `jit/tests/vector_transcendentals.rs`
//! compares the two on millions of inputs spread over every exponent of both signs.
//!
//! Softmax, log-softmax, GELU and attention kernels spend much of their time here: with one
//! helper call per wave and one libm call per lane, the bundled softmax spent about 40 % of
//! its time in `fexp2`.

use super::{lane_order, Translator};
use crate::error::JitError;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{F32X4, F64, F64X2, I64, I8X16};
use cranelift_codegen::ir::{ConstantData, InstBuilder, Value};
use wave_isa::{Instruction, Op};

/// |x| as bits above which libm takes its special cases (|x| > 126, infinities, NaN).
const SPECIAL_ABOVE: u32 = 0x42fc_0000;
/// |x| as bits at or below which `exp2f` returns `1 + x` (|x| <= 2^-25).
const TINY_UP_TO: u32 = 0x3300_0000;
/// `0x1.8p23 / 16` (f32 bits 0x4b40_0000 over the table size): adding it rounds x to a
/// multiple of 1/16, which the low bits of the sum's representation then hold.
const REDUX_BITS: u32 = 0x4940_0000;
/// The polynomial's coefficients, f32 constants that libm widens to f64.
const POLY: [u32; 4] = [0x3f31_7218, 0x3e75_fdf0, 0x3d63_59a4, 0x3c1d_964e];

/// `log2f` covers positive normal x: its bits minus this are below [`LOG2_NORMAL_SPAN`]
/// (unsigned) exactly then.
const LOG2_NORMAL_LOW: u32 = 0x0080_0000;
const LOG2_NORMAL_SPAN: u32 = 0x7f80_0000 - 0x0080_0000;
/// sqrt(2)/2 as f32 bits: the reduction puts the mantissa in [sqrt(2)/2, sqrt(2)).
const LOG2_SQRT_HALF: u32 = 0x3f35_04f3;
/// `log2f`'s constants as f32 bits: the polynomial Lg1..Lg4, then 1/ln 2 split into a high
/// part (its low bits zero) and the rest.
const LOG2_CONSTANTS: [u32; 6] =
    [0x3f2a_aaaa, 0x3ecc_ce13, 0x3e91_e9ee, 0x3e78_9e26, 0x3fb8_b000, 0xb938_9ad4];

/// The transcendental ops with vector code: which lanes the code does not cover, and the code.
#[derive(Clone, Copy)]
enum Transcendental {
    Exp2,
    Log2,
}

impl Translator<'_, '_> {
    /// `fexp2`/`flog2 rd, rs1`: vector code where every running lane's input is in the range
    /// it covers, else the lane helper.
    pub fn transcendental(&mut self, inst: &Instruction, pc: u32) -> Result<(), JitError> {
        let op = match inst.op {
            Op::Fexp2 => Transcendental::Exp2,
            Op::Flog2 => Transcendental::Log2,
            _ => return Err(super::rules::no_lowering(inst.op)),
        };
        let mask = self.op_mask(inst.guard);
        let x = self.reg(inst.rs1 as u32);
        let special: Vec<Value> = (0..self.wave.n)
            .map(|k| {
                let uncovered = match op {
                    Transcendental::Exp2 => self.exp2_uncovered(x[k]),
                    Transcendental::Log2 => self.log2_uncovered(x[k]),
                };
                self.b.ins().band(uncovered, mask[k])
            })
            .collect();
        let any_special = self.any(&special);
        let helper = self.b.create_block();
        let vector = self.b.create_block();
        let join = self.b.create_block();
        self.b.set_cold_block(helper);
        self.b.ins().brif(any_special, helper, &[], vector, &[]);
        self.continue_in(helper);
        self.lane_helper(inst, pc)?;
        self.b.ins().jump(join, &[]);
        self.continue_in(vector);
        let result: Vec<Value> = x
            .iter()
            .map(|&v| match op {
                Transcendental::Exp2 => self.exp2_vector(v),
                Transcendental::Log2 => self.log2_vector(v),
            })
            .collect();
        self.set_reg(inst.rd as u32, &result, &mask);
        self.b.ins().jump(join, &[]);
        self.continue_in(join);
        Ok(())
    }

    /// Lanes of `exp2f`'s special cases: |x| > 126, infinities, NaN.
    fn exp2_uncovered(&mut self, xi: Value) -> Value {
        let magnitude = self.vconst4([0x7fff_ffff; 4]);
        let special_above = self.vconst4([SPECIAL_ABOVE; 4]);
        let ix = self.b.ins().band(xi, magnitude);
        self.b.ins().icmp(IntCC::SignedGreaterThan, ix, special_above)
    }

    /// `exp2f` of four lanes (I32X4 bits in and out) on libm's common path, and `1 + x` where
    /// |x| <= 2^-25; other lanes get unspecified bits.
    fn exp2_vector(&mut self, xi: Value) -> Value {
        let x = self.as_f32(xi);
        let redux = self.f32_splat(f32::from_bits(REDUX_BITS));
        // x + redux rounds x to k + i/16; its bits hold 16k + i (plus the constant's).
        let rounded = self.b.ins().fadd(x, redux);
        let bits = self.as_i32(rounded);
        let eight = self.vconst4([8; 4]);
        let i0 = self.b.ins().iadd(bits, eight);
        let k = self.b.ins().ushr_imm_s(i0, 4);
        let fifteen = self.vconst4([15; 4]);
        let index = self.b.ins().band(i0, fifteen);
        // z = x - (k + i/16), exact in f32.
        let uf = self.b.ins().fsub(rounded, redux);
        let z32 = self.b.ins().fsub(x, uf);
        // 2^k as f64 bits: (0x3ff + k) << 52 (u32 arithmetic, high bits shifted out).
        let bias = self.vconst4([0x3ff; 4]);
        let biased = self.b.ins().iadd(k, bias);
        let z32_high = {
            let zi = self.as_i32(z32);
            let swapped = self.shuffle_lanes(zi, [2, 3, 0, 1]);
            self.as_f32(swapped)
        };
        let halves: Vec<Value> = [(0u8, z32), (1, z32_high)]
            .into_iter()
            .map(|(half, z32)| {
                let z = self.b.ins().fvpromote_low(z32);
                let r = self.exp2_table_pair(index, 2 * half);
                let wide = if half == 0 {
                    self.b.ins().uwiden_low(biased)
                } else {
                    self.b.ins().uwiden_high(biased)
                };
                let scale_bits = self.b.ins().ishl_imm_s(wide, 52);
                let scale = self.b.ins().bitcast(F64X2, lane_order(), scale_bits);
                let [p1, p2, p3, p4] = POLY.map(|c| self.f64_splat(f64::from(f32::from_bits(c))));
                // r + t·(p1 + z·p2) + t·z²·(p3 + z·p4), t = r·z, left to right as libm.
                let t = self.b.ins().fmul(r, z);
                let zp2 = self.b.ins().fmul(z, p2);
                let low = self.b.ins().fadd(p1, zp2);
                let t_low = self.b.ins().fmul(t, low);
                let sum = self.b.ins().fadd(r, t_low);
                let zz = self.b.ins().fmul(z, z);
                let tzz = self.b.ins().fmul(t, zz);
                let zp4 = self.b.ins().fmul(z, p4);
                let high = self.b.ins().fadd(p3, zp4);
                let t_high = self.b.ins().fmul(tzz, high);
                let sum = self.b.ins().fadd(sum, t_high);
                let scaled = self.b.ins().fmul(sum, scale);
                self.b.ins().fvdemote(scaled)
            })
            .collect();
        let main = self.low_halves(halves[0], halves[1]);
        // |x| <= 2^-25: 1 + x.
        let magnitude = self.vconst4([0x7fff_ffff; 4]);
        let ix = self.b.ins().band(xi, magnitude);
        let tiny_up_to = self.vconst4([TINY_UP_TO; 4]);
        let tiny = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, ix, tiny_up_to);
        let one = self.f32_splat(1.0);
        let one_plus_x = self.b.ins().fadd(one, x);
        let one_plus_x = self.as_i32(one_plus_x);
        self.b.ins().bitselect(tiny, one_plus_x, main)
    }

    /// Table entries `index[lane]`, `index[lane + 1]` as an F64X2 (indices are 0..16).
    fn exp2_table_pair(&mut self, index: Value, lane: u8) -> Value {
        let table = self.env.exp2_table_offset();
        let entries: Vec<Value> = [lane, lane + 1]
            .into_iter()
            .map(|l| {
                let i = self.b.ins().extractlane(index, l);
                let i = self.b.ins().uextend(I64, i);
                let byte = self.b.ins().ishl_imm_s(i, 3);
                let at = self.b.ins().iadd(self.ctx, byte);
                self.load_ctx_at(F64, at, table)
            })
            .collect();
        let pair = self.b.ins().scalar_to_vector(F64X2, entries[0]);
        self.b.ins().insertlane(pair, entries[1], 1)
    }

    /// Lanes 0 and 1 of `low`, then lanes 0 and 1 of `high` (F32X4s), as an I32X4.
    fn low_halves(&mut self, low: Value, high: Value) -> Value {
        let bytes: Vec<u8> = (0..8).chain(16..24).collect();
        let order = self.b.func.dfg.immediates.push(ConstantData::from(bytes));
        let low = self.b.ins().bitcast(I8X16, lane_order(), low);
        let high = self.b.ins().bitcast(I8X16, lane_order(), high);
        let both = self.b.ins().shuffle(low, high, order);
        self.as_i32(both)
    }

    /// Lanes `log2f` does not reach its common path for: zero, subnormals, negative numbers,
    /// infinities and NaN (x outside [2^-126, 2^128)).
    fn log2_uncovered(&mut self, xi: Value) -> Value {
        let low = self.vconst4([LOG2_NORMAL_LOW; 4]);
        let span = self.vconst4([LOG2_NORMAL_SPAN; 4]);
        let from_low = self.b.ins().isub(xi, low);
        self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, from_low, span)
    }

    /// `log2f` of four lanes (I32X4 bits in and out) for positive normal x: x = 2^k · m with
    /// m in [sqrt(2)/2, sqrt(2)), f = m - 1, s = f / (2 + f), the polynomial in s² and the
    /// split of f into a high part (its low 12 bits cleared) and the rest, in f32 as libm;
    /// exactly 0 for x = 1. Other lanes get unspecified bits.
    fn log2_vector(&mut self, xi: Value) -> Value {
        let [lg1, lg2, lg3, lg4, ivln2hi, ivln2lo] =
            LOG2_CONSTANTS.map(|c| self.f32_splat(f32::from_bits(c)));
        // Offset so that the exponent field gives k and the mantissa, put back under the
        // exponent of sqrt(2)/2, gives m in [sqrt(2)/2, sqrt(2)).
        let offset = self.vconst4([0x3f80_0000 - LOG2_SQRT_HALF; 4]);
        let ix = self.b.ins().iadd(xi, offset);
        let exponent = self.b.ins().ushr_imm_s(ix, 23);
        let bias = self.vconst4([0x7f; 4]);
        let k = self.b.ins().isub(exponent, bias);
        let mantissa_mask = self.vconst4([0x007f_ffff; 4]);
        let mantissa = self.b.ins().band(ix, mantissa_mask);
        let sqrt_half = self.vconst4([LOG2_SQRT_HALF; 4]);
        let m = self.b.ins().iadd(mantissa, sqrt_half);
        let m = self.as_f32(m);
        let one = self.f32_splat(1.0);
        let two = self.f32_splat(2.0);
        let half = self.f32_splat(0.5);
        let f = self.b.ins().fsub(m, one);
        let two_f = self.b.ins().fadd(two, f);
        let s = self.b.ins().fdiv(f, two_f);
        let z = self.b.ins().fmul(s, s);
        let w = self.b.ins().fmul(z, z);
        // t1 = w·(lg2 + w·lg4), t2 = z·(lg1 + w·lg3), r = t2 + t1.
        let w_lg4 = self.b.ins().fmul(w, lg4);
        let t1 = self.b.ins().fadd(lg2, w_lg4);
        let t1 = self.b.ins().fmul(w, t1);
        let w_lg3 = self.b.ins().fmul(w, lg3);
        let t2 = self.b.ins().fadd(lg1, w_lg3);
        let t2 = self.b.ins().fmul(z, t2);
        let r = self.b.ins().fadd(t2, t1);
        // hfsq = 0.5·f·f; hi = f - hfsq with its low 12 bits cleared.
        let half_f = self.b.ins().fmul(half, f);
        let hfsq = self.b.ins().fmul(half_f, f);
        let hi = self.b.ins().fsub(f, hfsq);
        let hi = self.as_i32(hi);
        let high_bits = self.vconst4([0xffff_f000; 4]);
        let hi = self.b.ins().band(hi, high_bits);
        let hi = self.as_f32(hi);
        // lo = f - hi - hfsq + s·(hfsq + r).
        let lo = self.b.ins().fsub(f, hi);
        let lo = self.b.ins().fsub(lo, hfsq);
        let hfsq_r = self.b.ins().fadd(hfsq, r);
        let s_part = self.b.ins().fmul(s, hfsq_r);
        let lo = self.b.ins().fadd(lo, s_part);
        // (lo + hi)·ivln2lo + lo·ivln2hi + hi·ivln2hi + k, left to right.
        let lo_hi = self.b.ins().fadd(lo, hi);
        let sum = self.b.ins().fmul(lo_hi, ivln2lo);
        let lo_part = self.b.ins().fmul(lo, ivln2hi);
        let sum = self.b.ins().fadd(sum, lo_part);
        let hi_part = self.b.ins().fmul(hi, ivln2hi);
        let sum = self.b.ins().fadd(sum, hi_part);
        let kf = self.b.ins().fcvt_from_sint(F32X4, k);
        let sum = self.b.ins().fadd(sum, kf);
        let result = self.as_i32(sum);
        // log2f(1) is +0 (libm returns it before the polynomial).
        let one_bits = self.vconst4([0x3f80_0000; 4]);
        let is_one = self.b.ins().icmp(IntCC::Equal, xi, one_bits);
        let zero = self.vconst4([0; 4]);
        self.b.ins().bitselect(is_one, zero, result)
    }

    fn f32_splat(&mut self, x: f32) -> Value {
        let c = self.b.ins().f32const(x);
        self.b.ins().splat(F32X4, c)
    }

    fn f64_splat(&mut self, x: f64) -> Value {
        let c = self.b.ins().f64const(x);
        self.b.ins().splat(F64X2, c)
    }
}
