//! Per-lane semantics of every WAVE data operation, as pure functions on register bits.
//!
//! One function per lane operation, and one per whole-wave operation (the `wave_*` functions,
//! over every lane's value and the active mask), shared by the interpreter and the JIT (which
//! calls them from its whole-wave helpers), so the two engines cannot drift apart. Each
//! function cites the rule of `docs/semantics.md` it implements (Part A §5.x as measured on
//! the reference, or Part B.n where this project decided otherwise). Registers are `u32` bit patterns; f64
//! values travel as `u64` (low word in rN, high word in rN+1).

use half::f16;
use wave_isa::{Frag, Op};

// ---------------------------------------------------------------------------------------------
// Integer (§5.2)
// ---------------------------------------------------------------------------------------------

/// iadd: wraps mod 2^32 (§5.2).
#[inline]
pub fn iadd(a: u32, b: u32) -> u32 {
    a.wrapping_add(b)
}

/// isub: wraps mod 2^32 (§5.2).
#[inline]
pub fn isub(a: u32, b: u32) -> u32 {
    a.wrapping_sub(b)
}

/// imul: low 32 bits of the product (§5.2).
#[inline]
pub fn imul(a: u32, b: u32) -> u32 {
    a.wrapping_mul(b)
}

/// imul_hi: **unsigned** high 32 bits of the 64-bit product (§5.2, measured).
#[inline]
pub fn imul_hi(a: u32, b: u32) -> u32 {
    ((a as u64 * b as u64) >> 32) as u32
}

/// imad: a·b + c, wrapping (§5.2).
#[inline]
pub fn imad(a: u32, b: u32, c: u32) -> u32 {
    a.wrapping_mul(b).wrapping_add(c)
}

/// idiv: signed, truncating; x/0 = 0; INT_MIN/−1 = INT_MIN (§5.2).
#[inline]
pub fn idiv(a: u32, b: u32) -> u32 {
    if b == 0 {
        0
    } else {
        (a as i32).wrapping_div(b as i32) as u32
    }
}

/// imod: signed remainder with the dividend's sign; x%0 = 0; INT_MIN%−1 = 0 (§5.2).
#[inline]
pub fn imod(a: u32, b: u32) -> u32 {
    if b == 0 {
        0
    } else {
        (a as i32).wrapping_rem(b as i32) as u32
    }
}

/// ineg: two's complement negation; INT_MIN stays INT_MIN (§5.2).
#[inline]
pub fn ineg(a: u32) -> u32 {
    a.wrapping_neg()
}

/// iabs: absolute value; INT_MIN stays 0x80000000 (§5.2).
#[inline]
pub fn iabs(a: u32) -> u32 {
    (a as i32).unsigned_abs()
}

/// imin: signed (§5.2).
#[inline]
pub fn imin(a: u32, b: u32) -> u32 {
    (a as i32).min(b as i32) as u32
}

/// imax: signed (§5.2).
#[inline]
pub fn imax(a: u32, b: u32) -> u32 {
    (a as i32).max(b as i32) as u32
}

/// iclamp: signed `min(max(x, lo), hi)`; lo > hi gives hi, never panics (B.13).
#[inline]
pub fn iclamp(x: u32, lo: u32, hi: u32) -> u32 {
    imin(imax(x, lo), hi)
}

// ---------------------------------------------------------------------------------------------
// Bitwise (§5.2)
// ---------------------------------------------------------------------------------------------

#[inline]
pub fn and(a: u32, b: u32) -> u32 {
    a & b
}

#[inline]
pub fn or(a: u32, b: u32) -> u32 {
    a | b
}

#[inline]
pub fn xor(a: u32, b: u32) -> u32 {
    a ^ b
}

#[inline]
pub fn not(a: u32) -> u32 {
    !a
}

/// shl: shift amount masked to 5 bits (§5.2).
#[inline]
pub fn shl(a: u32, b: u32) -> u32 {
    a << (b & 31)
}

/// shr: logical, shift amount masked to 5 bits (§5.2).
#[inline]
pub fn shr(a: u32, b: u32) -> u32 {
    a >> (b & 31)
}

/// sar: arithmetic, shift amount masked to 5 bits (§5.2).
#[inline]
pub fn sar(a: u32, b: u32) -> u32 {
    ((a as i32) >> (b & 31)) as u32
}

/// bitcount: population count (§5.2).
#[inline]
pub fn bitcount(a: u32) -> u32 {
    a.count_ones()
}

/// bitfind: count of **leading zeros**, 0xFFFFFFFF for 0 (§5.2, measured).
#[inline]
pub fn bitfind(a: u32) -> u32 {
    if a == 0 {
        u32::MAX
    } else {
        a.leading_zeros()
    }
}

/// bitrev: full 32-bit reversal (§5.2).
#[inline]
pub fn bitrev(a: u32) -> u32 {
    a.reverse_bits()
}

/// The low `width` bits set, for `width` in 0..32.
#[inline]
fn low_mask(width: u32) -> u32 {
    (1u32 << width).wrapping_sub(1)
}

/// bfe: unsigned extract `(src >> (off & 31)) & mask(width & 31)`; width 0 and 32 give 0 (§5.2).
#[inline]
pub fn bfe(src: u32, off: u32, width: u32) -> u32 {
    (src >> (off & 31)) & low_mask(width & 31)
}

/// bfi: `base` with `width & 31` bits at `off & 31` replaced by the low bits of `insert`;
/// width 0 leaves base unchanged; bits shifted past bit 31 are lost (§5.2).
#[inline]
pub fn bfi(base: u32, insert: u32, off: u32, width: u32) -> u32 {
    let off = off & 31;
    let mask = low_mask(width & 31) << off;
    (base & !mask) | ((insert << off) & mask)
}

// ---------------------------------------------------------------------------------------------
// F32 (§5.3)
// ---------------------------------------------------------------------------------------------

#[inline]
fn f(bits: u32) -> f32 {
    f32::from_bits(bits)
}

/// The x86 default NaN, produced by sqrt of a negative number (§5.3).
pub const DEFAULT_NAN_F32: u32 = 0xFFC0_0000;

/// The NaN rule of f32 arithmetic (README, "Differences from wave-emu"): the first NaN operand in WAVE operand order
/// (rs1, rs2, rs3), quieted; a NaN made from non-NaN operands (∞−∞, 0×∞, 0/0) is the x86
/// default NaN. Pinned here so the result never depends on how a compiler orders the operands
/// of a commutative instruction (x86 returns the first *source* operand's NaN).
#[inline]
fn f32_result(operands: &[u32], r: f32) -> u32 {
    match operands.iter().find(|&&x| f(x).is_nan()) {
        Some(&nan) => quiet(nan),
        None if r.is_nan() => DEFAULT_NAN_F32,
        None => r.to_bits(),
    }
}

#[inline]
pub fn fadd(a: u32, b: u32) -> u32 {
    f32_result(&[a, b], f(a) + f(b))
}

#[inline]
pub fn fsub(a: u32, b: u32) -> u32 {
    f32_result(&[a, b], f(a) - f(b))
}

#[inline]
pub fn fmul(a: u32, b: u32) -> u32 {
    f32_result(&[a, b], f(a) * f(b))
}

/// fma: fused multiply-add, a single rounding (§5.3).
#[inline]
pub fn fma(a: u32, b: u32, c: u32) -> u32 {
    f32_result(&[a, b, c], f(a).mul_add(f(b), f(c)))
}

/// fdiv: IEEE 754 division: x/±0 = ±Inf by sign, 0/0 = NaN (B.12).
#[inline]
pub fn fdiv(a: u32, b: u32) -> u32 {
    f32_result(&[a, b], f(a) / f(b))
}

/// fneg: flips the sign bit (NaN payload untouched).
#[inline]
pub fn fneg(a: u32) -> u32 {
    a ^ 0x8000_0000
}

/// fabs: clears the sign bit.
#[inline]
pub fn fabs(a: u32) -> u32 {
    a & 0x7FFF_FFFF
}

/// fmin: IEEE minNum (one NaN → the other operand); on equal values (±0) the **first**
/// operand (§5.3, measured).
#[inline]
pub fn fmin(a: u32, b: u32) -> u32 {
    let (x, y) = (f(a), f(b));
    if x.is_nan() {
        b
    } else if y.is_nan() || x <= y {
        a
    } else {
        b
    }
}

/// fmax: IEEE maxNum (one NaN → the other operand); on equal values (±0) the **first**
/// operand (§5.3, measured).
#[inline]
pub fn fmax(a: u32, b: u32) -> u32 {
    let (x, y) = (f(a), f(b));
    if x.is_nan() {
        b
    } else if y.is_nan() || x >= y {
        a
    } else {
        b
    }
}

/// fclamp: `fmin(fmax(x, lo), hi)` with minNum NaN rules; never panics (B.13).
#[inline]
pub fn fclamp(x: u32, lo: u32, hi: u32) -> u32 {
    fmin(fmax(x, lo), hi)
}

/// A NaN input with its quiet bit set (what the x86 FPU returns for a NaN operand).
#[inline]
fn quiet(a: u32) -> u32 {
    a | 0x0040_0000
}

/// fsqrt: IEEE square root; a negative input (not −0) gives 0xFFC00000 as on x86, whatever
/// the host (§5.3).
#[inline]
pub fn fsqrt(a: u32) -> u32 {
    let x = f(a);
    if x.is_nan() {
        quiet(a)
    } else if x < 0.0 {
        DEFAULT_NAN_F32
    } else {
        x.sqrt().to_bits()
    }
}

/// frsqrt: `1 / sqrt(x)` with two roundings; 0 → +Inf, negative → 0xFFC00000 (§5.3).
#[inline]
pub fn frsqrt(a: u32) -> u32 {
    let s = fsqrt(a);
    if f(s).is_nan() {
        s
    } else {
        (1.0 / f(s)).to_bits()
    }
}

/// frcp: exact IEEE `1 / x` (frcp(+0) = +Inf, frcp(−0) = −Inf) (§5.3).
#[inline]
pub fn frcp(a: u32) -> u32 {
    (1.0 / f(a)).to_bits()
}

/// ffloor: IEEE (§5.3).
#[inline]
pub fn ffloor(a: u32) -> u32 {
    f(a).floor().to_bits()
}

/// fceil: IEEE (§5.3).
#[inline]
pub fn fceil(a: u32) -> u32 {
    f(a).ceil().to_bits()
}

/// fround: round half **away from zero** (2.5 → 3, −2.5 → −3) (§5.3).
#[inline]
pub fn fround(a: u32) -> u32 {
    f(a).round().to_bits()
}

/// ftrunc: IEEE (§5.3).
#[inline]
pub fn ftrunc(a: u32) -> u32 {
    f(a).trunc().to_bits()
}

/// ffract: `x − trunc(x)` (−1.25 → −0.25) (§5.3).
#[inline]
pub fn ffract(a: u32) -> u32 {
    let x = f(a);
    (x - x.trunc()).to_bits()
}

/// fsat: clamp to [0, 1]; NaN passes through unchanged, −0 stays −0 (§5.3).
#[inline]
pub fn fsat(a: u32) -> u32 {
    let x = f(a);
    if x < 0.0 {
        0
    } else if x > 1.0 {
        1.0f32.to_bits()
    } else {
        a
    }
}

/// fsin: `libm::sinf`, the same bits on every host (B, transcendentals).
#[inline]
pub fn fsin(a: u32) -> u32 {
    libm::sinf(f(a)).to_bits()
}

/// fcos: `libm::cosf` (B, transcendentals).
#[inline]
pub fn fcos(a: u32) -> u32 {
    libm::cosf(f(a)).to_bits()
}

/// fexp2: `libm::exp2f` (B, transcendentals).
#[inline]
pub fn fexp2(a: u32) -> u32 {
    libm::exp2f(f(a)).to_bits()
}

/// flog2: `libm::log2f` (B, transcendentals).
#[inline]
pub fn flog2(a: u32) -> u32 {
    libm::log2f(f(a)).to_bits()
}

// ---------------------------------------------------------------------------------------------
// Compares (§5.2, §5.3): results are predicate values
// ---------------------------------------------------------------------------------------------

#[inline]
pub fn icmp_eq(a: u32, b: u32) -> bool {
    a == b
}
#[inline]
pub fn icmp_ne(a: u32, b: u32) -> bool {
    a != b
}
#[inline]
pub fn icmp_lt(a: u32, b: u32) -> bool {
    (a as i32) < (b as i32)
}
#[inline]
pub fn icmp_le(a: u32, b: u32) -> bool {
    (a as i32) <= (b as i32)
}
#[inline]
pub fn icmp_gt(a: u32, b: u32) -> bool {
    (a as i32) > (b as i32)
}
#[inline]
pub fn icmp_ge(a: u32, b: u32) -> bool {
    (a as i32) >= (b as i32)
}
#[inline]
pub fn ucmp_lt(a: u32, b: u32) -> bool {
    a < b
}
#[inline]
pub fn ucmp_le(a: u32, b: u32) -> bool {
    a <= b
}
/// fcmp_eq: IEEE ordered; −0 == +0 (§5.3).
#[inline]
pub fn fcmp_eq(a: u32, b: u32) -> bool {
    f(a) == f(b)
}
/// fcmp_ne: true when either operand is NaN (§5.3).
#[inline]
pub fn fcmp_ne(a: u32, b: u32) -> bool {
    f(a) != f(b)
}
#[inline]
pub fn fcmp_lt(a: u32, b: u32) -> bool {
    f(a) < f(b)
}
#[inline]
pub fn fcmp_le(a: u32, b: u32) -> bool {
    f(a) <= f(b)
}
#[inline]
pub fn fcmp_gt(a: u32, b: u32) -> bool {
    f(a) > f(b)
}
#[inline]
pub fn fcmp_ord(a: u32, b: u32) -> bool {
    !f(a).is_nan() && !f(b).is_nan()
}
#[inline]
pub fn fcmp_unord(a: u32, b: u32) -> bool {
    f(a).is_nan() || f(b).is_nan()
}

/// The compare of a `Compare`-class op, `None` for any other op.
#[inline]
pub fn compare(op: Op, a: u32, b: u32) -> Option<bool> {
    Some(match op {
        Op::IcmpEq => icmp_eq(a, b),
        Op::IcmpNe => icmp_ne(a, b),
        Op::IcmpLt => icmp_lt(a, b),
        Op::IcmpLe => icmp_le(a, b),
        Op::IcmpGt => icmp_gt(a, b),
        Op::IcmpGe => icmp_ge(a, b),
        Op::UcmpLt => ucmp_lt(a, b),
        Op::UcmpLe => ucmp_le(a, b),
        Op::FcmpEq => fcmp_eq(a, b),
        Op::FcmpNe => fcmp_ne(a, b),
        Op::FcmpLt => fcmp_lt(a, b),
        Op::FcmpLe => fcmp_le(a, b),
        Op::FcmpGt => fcmp_gt(a, b),
        Op::FcmpOrd => fcmp_ord(a, b),
        Op::FcmpUnord => fcmp_unord(a, b),
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------------
// Conversions (§5.4; cvt_DST_SRC, destination first)
// ---------------------------------------------------------------------------------------------

/// cvt_f32_i32: signed integer to f32, round to nearest even (§5.4).
#[inline]
pub fn cvt_f32_i32(a: u32) -> u32 {
    (a as i32 as f32).to_bits()
}

/// cvt_f32_u32: unsigned integer to f32, round to nearest even (§5.4).
#[inline]
pub fn cvt_f32_u32(a: u32) -> u32 {
    (a as f32).to_bits()
}

/// cvt_i32_f32: truncate toward zero, saturate to INT_MIN/INT_MAX, NaN → 0 (§5.4).
#[inline]
pub fn cvt_i32_f32(a: u32) -> u32 {
    f(a) as i32 as u32
}

/// cvt_u32_f32: truncate, negative → 0, saturate to 0xFFFFFFFF, NaN → 0 (§5.4).
#[inline]
pub fn cvt_u32_f32(a: u32) -> u32 {
    f(a) as u32
}

/// f16 bits (low 16 bits of `a`) to f32, exact (§5.4).
#[inline]
pub fn f16_to_f32(a: u32) -> f32 {
    f16::from_bits(a as u16).to_f32()
}

/// f32 to f16 bits, round to nearest even; overflow → ±Inf; subnormals produced (§5.4).
#[inline]
pub fn f32_to_f16(x: f32) -> u16 {
    f16::from_f32(x).to_bits()
}

/// bf16 bits (low 16 bits of `a`) to f32: shift left 16, exact (§5.4).
#[inline]
pub fn bf16_to_f32(a: u32) -> f32 {
    f32::from_bits((a & 0xFFFF) << 16)
}

/// f32 to bf16 bits, **round to nearest even**; a NaN stays a quiet NaN with its sign (B.14).
#[inline]
pub fn f32_to_bf16(x: f32) -> u16 {
    let bits = x.to_bits();
    if x.is_nan() {
        return ((bits >> 16) | 0x0040) as u16;
    }
    let round = 0x7FFF + ((bits >> 16) & 1);
    (bits.wrapping_add(round) >> 16) as u16
}

/// cvt_f32_f16: low 16 bits as f16, to f32 exactly (§5.4).
#[inline]
pub fn cvt_f32_f16(a: u32) -> u32 {
    f16_to_f32(a).to_bits()
}

/// cvt_f16_f32: to f16 RNE, zero-extended into the register (§5.4).
#[inline]
pub fn cvt_f16_f32(a: u32) -> u32 {
    f32_to_f16(f(a)) as u32
}

/// cvt_f32_bf16: low 16 bits shifted left 16 (§5.4).
#[inline]
pub fn cvt_f32_bf16(a: u32) -> u32 {
    bf16_to_f32(a).to_bits()
}

/// cvt_bf16_f32: to bf16 RNE, zero-extended into the register (B.14).
#[inline]
pub fn cvt_bf16_f32(a: u32) -> u32 {
    f32_to_bf16(f(a)) as u32
}

/// cvt_f32_f64: f64 (register pair) to f32, round to nearest (§5.4).
#[inline]
pub fn cvt_f32_f64(a: u64) -> u32 {
    (f64::from_bits(a) as f32).to_bits()
}

/// cvt_f64_f32: f32 to f64, exact; the result fills a register pair (§5.4).
#[inline]
pub fn cvt_f64_f32(a: u32) -> u64 {
    (f(a) as f64).to_bits()
}

// ---------------------------------------------------------------------------------------------
// F16 and BF16 arithmetic (§5.5, B.14): operands are the low 16 bits (or both halves for the
// packed ops), computed in f32, rounded once to the narrow type.
// ---------------------------------------------------------------------------------------------

/// Apply a scalar half op to both 16-bit halves of the operands independently.
#[inline]
fn packed(a: u32, b: u32, c: u32, op: impl Fn(u32, u32, u32) -> u32) -> u32 {
    let lo = op(a & 0xFFFF, b & 0xFFFF, c & 0xFFFF);
    let hi = op(a >> 16, b >> 16, c >> 16);
    (lo & 0xFFFF) | (hi << 16)
}

/// hadd: f16 add, computed in f32, rounded to f16 RNE, zero-extended (§5.5).
#[inline]
pub fn hadd(a: u32, b: u32) -> u32 {
    f32_to_f16(f16_to_f32(a) + f16_to_f32(b)) as u32
}
/// hsub (§5.5).
#[inline]
pub fn hsub(a: u32, b: u32) -> u32 {
    f32_to_f16(f16_to_f32(a) - f16_to_f32(b)) as u32
}
/// hmul (§5.5).
#[inline]
pub fn hmul(a: u32, b: u32) -> u32 {
    f32_to_f16(f16_to_f32(a) * f16_to_f32(b)) as u32
}
/// hma: fused f32 fma of the f16 operands, rounded to f16 (§5.5).
#[inline]
pub fn hma(a: u32, b: u32, c: u32) -> u32 {
    f32_to_f16(f16_to_f32(a).mul_add(f16_to_f32(b), f16_to_f32(c))) as u32
}
/// hadd2: hadd on each half (§5.5).
#[inline]
pub fn hadd2(a: u32, b: u32) -> u32 {
    packed(a, b, 0, |x, y, _| hadd(x, y))
}
/// hmul2: hmul on each half (§5.5).
#[inline]
pub fn hmul2(a: u32, b: u32) -> u32 {
    packed(a, b, 0, |x, y, _| hmul(x, y))
}
/// hma2: hma on each half (§5.5).
#[inline]
pub fn hma2(a: u32, b: u32, c: u32) -> u32 {
    packed(a, b, c, hma)
}

/// badd: bf16 add, computed in f32, rounded to bf16 RNE (B.14).
#[inline]
pub fn badd(a: u32, b: u32) -> u32 {
    f32_to_bf16(bf16_to_f32(a) + bf16_to_f32(b)) as u32
}
/// bsub (B.14).
#[inline]
pub fn bsub(a: u32, b: u32) -> u32 {
    f32_to_bf16(bf16_to_f32(a) - bf16_to_f32(b)) as u32
}
/// bmul (B.14).
#[inline]
pub fn bmul(a: u32, b: u32) -> u32 {
    f32_to_bf16(bf16_to_f32(a) * bf16_to_f32(b)) as u32
}
/// bma: fused f32 fma of the bf16 operands, rounded to bf16 RNE (§5.5, B.14).
#[inline]
pub fn bma(a: u32, b: u32, c: u32) -> u32 {
    f32_to_bf16(bf16_to_f32(a).mul_add(bf16_to_f32(b), bf16_to_f32(c))) as u32
}
/// badd2: badd on each half.
#[inline]
pub fn badd2(a: u32, b: u32) -> u32 {
    packed(a, b, 0, |x, y, _| badd(x, y))
}
/// bmul2: bmul on each half.
#[inline]
pub fn bmul2(a: u32, b: u32) -> u32 {
    packed(a, b, 0, |x, y, _| bmul(x, y))
}
/// bma2: bma on each half.
#[inline]
pub fn bma2(a: u32, b: u32, c: u32) -> u32 {
    packed(a, b, c, bma)
}

// ---------------------------------------------------------------------------------------------
// F64 on register pairs (§5.5): IEEE f64, dma fused
// ---------------------------------------------------------------------------------------------

#[inline]
fn d(bits: u64) -> f64 {
    f64::from_bits(bits)
}

/// Join a register pair (low word first) into f64 bits.
#[inline]
pub fn pair(lo: u32, hi: u32) -> u64 {
    (hi as u64) << 32 | lo as u64
}

/// Split f64 bits into (low, high) register words.
#[inline]
pub fn unpair(v: u64) -> (u32, u32) {
    (v as u32, (v >> 32) as u32)
}

/// The NaN rule of f64 arithmetic: as [`f32_result`] (first NaN operand quieted, else the
/// default NaN).
#[inline]
fn f64_result(operands: &[u64], r: f64) -> u64 {
    match operands.iter().find(|&&x| d(x).is_nan()) {
        Some(&nan) => nan | 0x0008_0000_0000_0000,
        None if r.is_nan() => DEFAULT_NAN_F64,
        None => r.to_bits(),
    }
}

#[inline]
pub fn dadd(a: u64, b: u64) -> u64 {
    f64_result(&[a, b], d(a) + d(b))
}
#[inline]
pub fn dsub(a: u64, b: u64) -> u64 {
    f64_result(&[a, b], d(a) - d(b))
}
#[inline]
pub fn dmul(a: u64, b: u64) -> u64 {
    f64_result(&[a, b], d(a) * d(b))
}
/// dma: fused multiply-add in f64 (§5.5).
#[inline]
pub fn dma(a: u64, b: u64, c: u64) -> u64 {
    f64_result(&[a, b, c], d(a).mul_add(d(b), d(c)))
}
/// ddiv: IEEE f64 division.
#[inline]
pub fn ddiv(a: u64, b: u64) -> u64 {
    f64_result(&[a, b], d(a) / d(b))
}

/// The x86 default NaN in f64.
pub const DEFAULT_NAN_F64: u64 = 0xFFF8_0000_0000_0000;

/// dsqrt: IEEE f64 square root; negative → the x86 default NaN, as fsqrt.
#[inline]
pub fn dsqrt(a: u64) -> u64 {
    let x = d(a);
    if x.is_nan() {
        a | 0x0008_0000_0000_0000
    } else if x < 0.0 {
        DEFAULT_NAN_F64
    } else {
        x.sqrt().to_bits()
    }
}

// ---------------------------------------------------------------------------------------------
// MMA (§5.8): fixed 4×4×4 f32 tiles, row-major, per lane, in three fragment tables
// ---------------------------------------------------------------------------------------------

/// Tile edge of the MMA unit (M = N = K = 4).
pub const MMA_DIM: usize = 4;

/// A 4×4 f32 tile, row-major, as bits.
pub type Tile = [u32; MMA_DIM * MMA_DIM];

/// mma_compute: `c += a · b`, each element accumulated from `c[i][j]` with a separate multiply
/// and add for k = 0..3 in order (not fused) (§5.8).
#[inline]
pub fn mma_tile(a: &Tile, b: &Tile, c: &mut Tile) {
    for i in 0..MMA_DIM {
        for j in 0..MMA_DIM {
            let mut acc = f(c[i * MMA_DIM + j]);
            for k in 0..MMA_DIM {
                let prod = f(a[i * MMA_DIM + k]) * f(b[k * MMA_DIM + j]);
                acc += prod;
            }
            c[i * MMA_DIM + j] = acc.to_bits();
        }
    }
}

/// Local-memory address of element `index` (row-major) of a tile at `base` with a row stride
/// of `stride` bytes: `base + row·stride + 4·column`, without wrapping (an address past
/// 2^32 is out of bounds like any other, §5.6).
#[inline]
pub fn mma_element_address(base: u32, stride: u32, index: usize) -> u64 {
    base as u64 + (index / MMA_DIM) as u64 * stride as u64 + (index % MMA_DIM) as u64 * 4
}

/// Fragment ids are register numbers (u8).
const FRAGMENT_IDS: usize = 256;

/// One wave's MMA fragments (§5.8): three separate tables, A, B and C, each keyed by a
/// register number, holding one tile per lane. The same number may name an A, a B and a C
/// fragment at once; a fragment never written reads as zeros, whichever the table.
#[derive(Clone, Debug)]
pub struct Fragments {
    width: usize,
    /// `tables[table][id]`: fragment `id`'s tiles, one per lane, once written.
    tables: [Vec<Option<Box<[Tile]>>>; 3],
}

impl Fragments {
    /// No fragments yet, for a wave of `width` lanes.
    pub fn new(width: usize) -> Fragments {
        Fragments { width, tables: [Vec::new(), Vec::new(), Vec::new()] }
    }

    /// Every fragment back to zeros (the start of a workgroup); storage is kept. Inlined: the
    /// JIT resets every wave's fragments per workgroup, and most kernels have none.
    #[inline]
    pub fn clear(&mut self) {
        for tile in self.tables.iter_mut().flatten().flatten() {
            tile.fill([0; MMA_DIM * MMA_DIM]);
        }
    }

    /// Lane `lane`'s tile of fragment `id` in `table` (zeros if never written).
    #[inline]
    pub fn tile(&self, table: Frag, id: u8, lane: usize) -> Tile {
        match self.tables[table.index()].get(id as usize) {
            Some(Some(tiles)) => tiles[lane],
            _ => [0; MMA_DIM * MMA_DIM],
        }
    }

    /// Lane `lane`'s tile of fragment `id` in `table`, to write.
    pub fn tile_mut(&mut self, table: Frag, id: u8, lane: usize) -> &mut Tile {
        let width = self.width;
        let ids = &mut self.tables[table.index()];
        if ids.is_empty() {
            ids.resize_with(FRAGMENT_IDS, || None);
        }
        let tiles =
            ids[id as usize].get_or_insert_with(|| vec![[0; MMA_DIM * MMA_DIM]; width].into_boxed_slice());
        &mut tiles[lane]
    }

    /// `mma_compute a, b, c` on `lanes`: `C[c] += A[a] · B[b]` ([`mma_tile`]). The three ids
    /// index three different tables, so equal numbers never alias.
    pub fn compute(&mut self, a: u8, b: u8, c: u8, lanes: impl IntoIterator<Item = usize>) {
        for lane in lanes {
            let (ta, tb) = (self.tile(Frag::A, a, lane), self.tile(Frag::B, b, lane));
            mma_tile(&ta, &tb, self.tile_mut(Frag::C, c, lane));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Whole-wave operations (§5.8, B.15): functions of every lane's value and the active mask
// ---------------------------------------------------------------------------------------------

mod wave;
pub use wave::{
    wave_all, wave_any, wave_ballot, wave_broadcast, wave_prefix_sum, wave_reduce_add, wave_reduce_max,
    wave_reduce_min, wave_row, wave_shuffle, wave_shuffle_source, Ballot, WaveRow, MAX_WAVE_WIDTH,
};

// ---------------------------------------------------------------------------------------------
// Atomics (§5.6): the new memory value from the old one; the old one is what rd receives
// ---------------------------------------------------------------------------------------------

/// New memory value of an atomic read-modify-write (`desired` used by CAS only; min/max are
/// unsigned; add/sub wrap). `None` for a non-atomic op.
#[inline]
pub fn atomic(op: Op, old: u32, value: u32, desired: u32) -> Option<u32> {
    use Op::*;
    Some(match op {
        LocalAtomicAdd | AtomicAdd => old.wrapping_add(value),
        LocalAtomicSub | AtomicSub => old.wrapping_sub(value),
        LocalAtomicMin | AtomicMin => old.min(value),
        LocalAtomicMax | AtomicMax => old.max(value),
        LocalAtomicAnd | AtomicAnd => old & value,
        LocalAtomicOr | AtomicOr => old | value,
        LocalAtomicXor | AtomicXor => old ^ value,
        LocalAtomicExchange | AtomicExchange => value,
        // B.3: if mem == expected then mem = desired.
        LocalAtomicCas | AtomicCas => {
            if old == value {
                desired
            } else {
                old
            }
        }
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------------
// Dispatcher for single-register ALU ops
// ---------------------------------------------------------------------------------------------

/// mov: the operand itself.
#[inline]
pub fn mov(a: u32) -> u32 {
    a
}

// ---------------------------------------------------------------------------------------------
// The table: which function of this module each lane operation is
// ---------------------------------------------------------------------------------------------

/// Calls macro `$then` with every lane operation of the ISA (an op whose result in a lane is
/// a function of that lane's operands alone), grouped by shape, each written `Variant
/// function` (an [`Op`] variant and a function of this module). It is the only list of which
/// function an op is: [`lane_fn`] (and so the JIT's lane helper) and the interpreter's
/// dispatch are made from it, and the checklist test of `isa/README.md` reads [`lane_fn`].
/// `pair_*` ops take and give f64 register pairs.
#[macro_export]
macro_rules! lane_ops {
    ($then:ident) => {
        $then! {
            unary: [
                Ineg ineg, Iabs iabs, Fneg fneg, Fabs fabs, Fsqrt fsqrt, Frsqrt frsqrt, Frcp frcp,
                Ffloor ffloor, Fceil fceil, Fround fround, Ftrunc ftrunc, Ffract ffract, Fsat fsat,
                Fsin fsin, Fcos fcos, Fexp2 fexp2, Flog2 flog2, Not not, Bitcount bitcount,
                Bitfind bitfind, Bitrev bitrev, CvtF32I32 cvt_f32_i32, CvtF32U32 cvt_f32_u32,
                CvtI32F32 cvt_i32_f32, CvtU32F32 cvt_u32_f32, CvtF32F16 cvt_f32_f16,
                CvtF16F32 cvt_f16_f32, CvtF32Bf16 cvt_f32_bf16, CvtBf16F32 cvt_bf16_f32, Mov mov
            ],
            binary: [
                Iadd iadd, Isub isub, Imul imul, ImulHi imul_hi, Idiv idiv, Imod imod, Imin imin,
                Imax imax, Fadd fadd, Fsub fsub, Fmul fmul, Fdiv fdiv, Fmin fmin, Fmax fmax,
                Hadd hadd, Hsub hsub, Hmul hmul, Hadd2 hadd2, Hmul2 hmul2, Badd badd, Bsub bsub,
                Bmul bmul, Badd2 badd2, Bmul2 bmul2, And and, Or or, Xor xor, Shl shl, Shr shr,
                Sar sar
            ],
            ternary: [
                Imad imad, Iclamp iclamp, Fma fma, Fclamp fclamp, Hma hma, Hma2 hma2, Bma bma,
                Bma2 bma2, Bfe bfe
            ],
            quaternary: [Bfi bfi],
            compare: [
                IcmpEq icmp_eq, IcmpNe icmp_ne, IcmpLt icmp_lt, IcmpLe icmp_le, IcmpGt icmp_gt,
                IcmpGe icmp_ge, UcmpLt ucmp_lt, UcmpLe ucmp_le, FcmpEq fcmp_eq, FcmpNe fcmp_ne,
                FcmpLt fcmp_lt, FcmpLe fcmp_le, FcmpGt fcmp_gt, FcmpOrd fcmp_ord,
                FcmpUnord fcmp_unord
            ],
            pair_unary: [Dsqrt dsqrt],
            pair_binary: [Dadd dadd, Dsub dsub, Dmul dmul, Ddiv ddiv],
            pair_ternary: [Dma dma],
        }
    };
}

/// The shape and function of a lane operation (see [`lane_ops!`]).
#[derive(Clone, Copy, Debug)]
pub enum LaneFn {
    Unary(fn(u32) -> u32),
    Binary(fn(u32, u32) -> u32),
    Ternary(fn(u32, u32, u32) -> u32),
    Quaternary(fn(u32, u32, u32, u32) -> u32),
    /// A predicate result.
    Compare(fn(u32, u32) -> bool),
    PairUnary(fn(u64) -> u64),
    PairBinary(fn(u64, u64) -> u64),
    PairTernary(fn(u64, u64, u64) -> u64),
}

macro_rules! lane_fn_table {
    (
        unary: [$($u:ident $uf:ident),* $(,)?],
        binary: [$($b:ident $bf:ident),* $(,)?],
        ternary: [$($t:ident $tf:ident),* $(,)?],
        quaternary: [$($q:ident $qf:ident),* $(,)?],
        compare: [$($c:ident $cf:ident),* $(,)?],
        pair_unary: [$($pu:ident $puf:ident),* $(,)?],
        pair_binary: [$($pb:ident $pbf:ident),* $(,)?],
        pair_ternary: [$($pt:ident $ptf:ident),* $(,)?] $(,)?
    ) => {
        /// The lane function of `op`, or `None` for an op that is not a lane operation
        /// (memory, atomics, wave ops, MMA, control, `select`, moves of immediates and
        /// special registers, and the f32/f64 conversions, which change register counts).
        pub fn lane_fn(op: Op) -> Option<LaneFn> {
            Some(match op {
                $(Op::$u => LaneFn::Unary($uf),)*
                $(Op::$b => LaneFn::Binary($bf),)*
                $(Op::$t => LaneFn::Ternary($tf),)*
                $(Op::$q => LaneFn::Quaternary($qf),)*
                $(Op::$c => LaneFn::Compare($cf),)*
                $(Op::$pu => LaneFn::PairUnary($puf),)*
                $(Op::$pb => LaneFn::PairBinary($pbf),)*
                $(Op::$pt => LaneFn::PairTernary($ptf),)*
                _ => return None,
            })
        }
    };
}
lane_ops!(lane_fn_table);

/// One lane of a 32-bit lane operation on operands `a`..`d` (those it does not take are
/// ignored); `None` for ops that are not (compares give predicates, pair ops f64: see
/// [`alu64`]).
pub fn alu(op: Op, a: u32, b: u32, c: u32, d: u32) -> Option<u32> {
    Some(match lane_fn(op)? {
        LaneFn::Unary(f) => f(a),
        LaneFn::Binary(f) => f(a, b),
        LaneFn::Ternary(f) => f(a, b, c),
        LaneFn::Quaternary(f) => f(a, b, c, d),
        _ => return None,
    })
}

/// One lane of an f64 operation on register pairs (as u64); `None` for other ops.
pub fn alu64(op: Op, a: u64, b: u64, c: u64) -> Option<u64> {
    Some(match lane_fn(op)? {
        LaneFn::PairUnary(f) => f(a),
        LaneFn::PairBinary(f) => f(a, b),
        LaneFn::PairTernary(f) => f(a, b, c),
        _ => return None,
    })
}

#[cfg(test)]
mod tests;
