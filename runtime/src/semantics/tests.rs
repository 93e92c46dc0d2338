//! Expected values are worked out by hand (or by plain f64 Rust), never recorded from a run.

use super::*;

fn fb(x: f32) -> u32 {
    x.to_bits()
}

#[test]
fn integer_edges() {
    assert_eq!(iadd(u32::MAX, 2), 1);
    assert_eq!(isub(0, 1), u32::MAX);
    assert_eq!(imul(0x1_0000, 0x1_0000), 0);
    assert_eq!(imul_hi(0xFFFF_FFFF, 0xFFFF_FFFF), 0xFFFF_FFFE);
    assert_eq!(imul_hi((-2i32) as u32, 3), 2, "unsigned: 0xFFFFFFFE * 3 >> 32 = 2");
    assert_eq!(imad(3, 4, 5), 17);
    assert_eq!(idiv(7, 0), 0);
    assert_eq!(imod(7, 0), 0);
    assert_eq!(idiv(0x8000_0000, u32::MAX), 0x8000_0000);
    assert_eq!(imod(0x8000_0000, u32::MAX), 0);
    assert_eq!(idiv((-7i32) as u32, 2) as i32, -3);
    assert_eq!(imod((-7i32) as u32, 2) as i32, -1);
    assert_eq!(ineg(0x8000_0000), 0x8000_0000);
    assert_eq!(iabs(0x8000_0000), 0x8000_0000);
    assert_eq!(iabs((-5i32) as u32), 5);
    assert_eq!(imin((-1i32) as u32, 1), (-1i32) as u32);
    assert_eq!(imax((-1i32) as u32, 1), 1);
    assert_eq!(iclamp(5, 0, 3), 3);
    assert_eq!(iclamp((-5i32) as u32, 0, 3), 0);
    // lo > hi: min(max(x, 10), 2) = 2, no panic.
    assert_eq!(iclamp(5, 10, 2), 2);
}

#[test]
fn bit_ops() {
    assert_eq!(shl(1, 33), 2);
    assert_eq!(shr(0x8000_0000, 63), 1);
    assert_eq!(sar(0x8000_0000, 31), u32::MAX);
    assert_eq!(bitcount(0xF0F0), 8);
    assert_eq!(bitfind(0x0001_0000), 15);
    assert_eq!(bitfind(0), u32::MAX);
    assert_eq!(bitfind(1), 31);
    assert_eq!(bitrev(1), 0x8000_0000);
    assert_eq!(bfe(0xABCD_1234, 8, 8), 0x12);
    assert_eq!(bfe(0xABCD_1234, 8, 0), 0);
    assert_eq!(bfe(0xABCD_1234, 0, 32), 0, "width 32 masks to 0");
    assert_eq!(bfe(0xABCD_1234, 36, 4), 0x3, "offset masked to 4");
    assert_eq!(bfi(0xFFFF_FFFF, 0, 4, 8), 0xFFFF_F00F);
    assert_eq!(bfi(0x1234_5678, 0xFF, 4, 0), 0x1234_5678);
    // 8 bits at offset 28: only 4 survive.
    assert_eq!(bfi(0, 0xAB, 28, 8), 0xB000_0000);
}

#[test]
fn f32_division_is_ieee() {
    assert_eq!(fdiv(fb(1.0), fb(0.0)), fb(f32::INFINITY));
    assert_eq!(fdiv(fb(-1.0), fb(0.0)), fb(f32::NEG_INFINITY));
    assert_eq!(fdiv(fb(1.0), fb(-0.0)), fb(f32::NEG_INFINITY));
    assert!(f32::from_bits(fdiv(fb(0.0), fb(0.0))).is_nan());
    assert_eq!(fdiv(fb(1.0), fb(4.0)), fb(0.25));
}

#[test]
fn min_max_clamp() {
    let nan = fb(f32::NAN);
    assert_eq!(fmin(nan, fb(2.0)), fb(2.0));
    assert_eq!(fmin(fb(2.0), nan), fb(2.0));
    assert_eq!(fmax(nan, fb(-2.0)), fb(-2.0));
    assert_eq!(fmin(fb(0.0), fb(-0.0)), fb(0.0));
    assert_eq!(fmin(fb(-0.0), fb(0.0)), fb(-0.0));
    assert_eq!(fmax(fb(0.0), fb(-0.0)), fb(0.0));
    assert_eq!(fmax(fb(-0.0), fb(0.0)), fb(-0.0));
    assert_eq!(fmin(fb(1.0), fb(-3.0)), fb(-3.0));
    assert_eq!(fmax(fb(1.0), fb(-3.0)), fb(1.0));
    assert_eq!(fclamp(fb(5.0), fb(0.0), fb(1.0)), fb(1.0));
    assert_eq!(fclamp(fb(5.0), fb(3.0), fb(1.0)), fb(1.0), "lo > hi gives hi");
    assert_eq!(fclamp(fb(0.5), nan, nan), fb(0.5), "NaN bounds are ignored");
}

#[test]
fn unary_f32() {
    assert_eq!(fsqrt(fb(-1.0)), 0xFFC0_0000);
    assert_eq!(frsqrt(fb(-1.0)), 0xFFC0_0000);
    assert_eq!(fsqrt(fb(-0.0)), fb(-0.0));
    assert_eq!(fsqrt(fb(16.0)), fb(4.0));
    assert_eq!(frsqrt(fb(0.0)), fb(f32::INFINITY));
    assert_eq!(frsqrt(fb(4.0)), fb(0.5));
    // Two roundings: 1 / round(sqrt(2)).
    assert_eq!(frsqrt(fb(2.0)), fb(1.0 / 2f32.sqrt()));
    assert_eq!(frcp(fb(0.0)), fb(f32::INFINITY));
    assert_eq!(frcp(fb(-0.0)), fb(f32::NEG_INFINITY));
    assert_eq!(frcp(fb(4.0)), fb(0.25));
    assert_eq!(fround(fb(2.5)), fb(3.0));
    assert_eq!(fround(fb(-2.5)), fb(-3.0));
    assert_eq!(fround(fb(0.5)), fb(1.0));
    assert_eq!(ffract(fb(-1.25)), fb(-0.25));
    assert_eq!(ffract(fb(3.75)), fb(0.75));
    assert_eq!(ffloor(fb(-1.5)), fb(-2.0));
    assert_eq!(fceil(fb(-1.5)), fb(-1.0));
    assert_eq!(ftrunc(fb(-1.5)), fb(-1.0));
    assert_eq!(fsat(fb(-0.0)), fb(-0.0));
    assert_eq!(fsat(fb(-3.0)), fb(0.0));
    assert_eq!(fsat(fb(3.0)), fb(1.0));
    assert_eq!(fsat(0x7FC0_1234), 0x7FC0_1234, "NaN passes unchanged");
    assert_eq!(fneg(fb(1.0)), fb(-1.0));
    assert_eq!(fabs(fb(-0.0)), fb(0.0));
    assert_eq!(fma(fb(2.0), fb(3.0), fb(1.0)), fb(7.0));
    // Fused: (1 + 2^-23)^2 - 1 keeps the 2^-46 term that a separate multiply loses.
    let x = 1.0 + f32::EPSILON;
    assert_eq!(fma(fb(x), fb(x), fb(-1.0)), fb(2.0 * f32::EPSILON + f32::EPSILON * f32::EPSILON));
}

/// Distance in units in the last place between two finite f32 of the same sign.
fn ulps(a: f32, b: f64) -> f64 {
    let reference = b as f32;
    let spacing = (f32::from_bits(reference.abs().to_bits() + 1) - reference.abs()) as f64;
    ((a as f64) - b).abs() / spacing
}

#[test]
fn transcendentals_within_two_ulps_of_f64() {
    let samples = [0.1f32, 0.5, 1.0, 2.0, 3.0, 10.0, 100.0, -7.25, 1e4, 1e10];
    for &x in &samples {
        let s = f32::from_bits(fsin(fb(x)));
        assert!(ulps(s, (x as f64).sin()) <= 2.0, "sin({x}) = {s}");
        let c = f32::from_bits(fcos(fb(x)));
        assert!(ulps(c, (x as f64).cos()) <= 2.0, "cos({x}) = {c}");
    }
    for &x in &[-10.0f32, -0.5, 0.0, 0.3, 1.0, 7.7, 100.0] {
        let e = f32::from_bits(fexp2(fb(x)));
        assert!(ulps(e, (x as f64).exp2()) <= 2.0, "exp2({x}) = {e}");
    }
    for &x in &[0.001f32, 0.5, 1.5, 3.0, 1000.0, 1e30] {
        let l = f32::from_bits(flog2(fb(x)));
        assert!(ulps(l, (x as f64).log2()) <= 2.0, "log2({x}) = {l}");
    }
    assert_eq!(flog2(fb(1.0)), fb(0.0));
    assert_eq!(fexp2(fb(3.0)), fb(8.0));
    assert_eq!(flog2(fb(0.0)), fb(f32::NEG_INFINITY));
}

#[test]
fn compares() {
    let nan = fb(f32::NAN);
    assert!(fcmp_ne(nan, nan));
    assert!(!fcmp_eq(nan, nan));
    assert!(fcmp_eq(fb(0.0), fb(-0.0)));
    assert!(!fcmp_lt(nan, fb(1.0)));
    assert!(fcmp_unord(nan, fb(1.0)) && !fcmp_ord(nan, fb(1.0)));
    assert!(icmp_lt(u32::MAX, 0));
    assert!(!ucmp_lt(u32::MAX, 0));
    assert_eq!(compare(Op::IcmpGe, 3, 3), Some(true));
    assert_eq!(compare(Op::Iadd, 3, 3), None);
}

#[test]
fn conversions() {
    assert_eq!(cvt_f32_i32((-3i32) as u32), fb(-3.0));
    // 2^24 + 1 rounds to even.
    assert_eq!(cvt_f32_u32(16_777_217), fb(16_777_216.0));
    assert_eq!(cvt_f32_u32(u32::MAX), fb(4_294_967_296.0));
    assert_eq!(cvt_i32_f32(fb(-2.9)), (-2i32) as u32);
    assert_eq!(cvt_i32_f32(fb(3e9)), i32::MAX as u32);
    assert_eq!(cvt_i32_f32(fb(-3e9)), i32::MIN as u32);
    assert_eq!(cvt_i32_f32(fb(f32::NAN)), 0);
    assert_eq!(cvt_u32_f32(fb(-1.0)), 0);
    assert_eq!(cvt_u32_f32(fb(5e9)), u32::MAX);
    assert_eq!(cvt_u32_f32(fb(f32::NAN)), 0);
    assert_eq!(cvt_f16_f32(fb(1.0)), 0x3C00);
    assert_eq!(cvt_f16_f32(fb(65520.0)), 0x7C00, "overflow to +Inf");
    assert_eq!(cvt_f16_f32(fb(f32::NAN)), 0x7E00);
    // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1.0).
    assert_eq!(cvt_f16_f32(fb(1.0 + 1.0 / 2048.0)), 0x3C00);
    assert_eq!(cvt_f16_f32(fb(2f32.powi(-24))), 0x0001, "smallest f16 subnormal");
    assert_eq!(cvt_f32_f16(0xFFFF_3C00), fb(1.0), "high bits ignored");
    assert_eq!(cvt_f32_bf16(0x3F80), fb(1.0));
    // bf16 RNE: 1 + 2^-8 is halfway between bf16 1.0 (0x3F80) and 0x3F81: ties to even.
    assert_eq!(cvt_bf16_f32(fb(1.0 + 1.0 / 256.0)), 0x3F80);
    // 1 + 3·2^-8 is halfway between 0x3F81 and 0x3F82: ties to even 0x3F82 (truncation: 0x3F81).
    assert_eq!(cvt_bf16_f32(fb(1.0 + 3.0 / 256.0)), 0x3F82);
    assert_eq!(cvt_bf16_f32(0x3F80_8001), 0x3F81, "above halfway rounds up");
    assert_eq!(cvt_bf16_f32(0x7F80_0001), 0x7FC0, "low-payload NaN stays a quiet NaN");
    assert_eq!(cvt_bf16_f32(0xFFC0_0000), 0xFFC0);
    assert_eq!(cvt_bf16_f32(fb(f32::MAX)), 0x7F80, "rounds up to +Inf");
    assert_eq!(cvt_f64_f32(fb(1.5)), 1.5f64.to_bits());
    assert_eq!(cvt_f32_f64(0.1f64.to_bits()), fb(0.1));
}

#[test]
fn half_arithmetic() {
    // 1.0 + 2.0 = 3.0 (0x4200); high half of the register ignored, result zero-extended.
    assert_eq!(hadd(0xABCD_3C00, 0x4000), 0x4200);
    assert_eq!(hsub(0x3C00, 0x4000), 0xBC00);
    assert_eq!(hmul(0x4000, 0x4200), 0x4600);
    assert_eq!(hma(0x4000, 0x4200, 0x3C00), 0x4700, "2*3+1 = 7");
    assert_eq!(hadd2(0x4000_3C00, 0x3C00_4000), 0x4200_4200);
    assert_eq!(hmul2(0x4000_4000, 0x4200_3C00), 0x4600_4000);
    assert_eq!(hma2(0x3C00_4000, 0x3C00_4200, 0x3C00_3C00), 0x4000_4700);
    assert_eq!(badd(0x3F80, 0x4000), 0x4040, "1 + 2 = 3");
    assert_eq!(bsub(0x3F80, 0x4000), 0xBF80);
    assert_eq!(bmul(0x4000, 0x4040), 0x40C0);
    assert_eq!(bma(0x4000, 0x4040, 0x3F80), 0x40E0);
    assert_eq!(badd2(0x4000_3F80, 0x3F80_4000), 0x4040_4040);
    assert_eq!(bmul2(0x4000_4000, 0x4040_3F80), 0x40C0_4000);
    assert_eq!(bma2(0x3F80_4000, 0x3F80_4040, 0x3F80_3F80), 0x4000_40E0);
    // bf16 rounding is RNE: 1 + 2^-7 (0x3F81) + 2^-9 → exact f32 1.0107421875, rounds to 0x3F81.
    assert_eq!(badd(0x3F81, 0x3B00), 0x3F81);
    // 1 + 3·2^-8 is a tie: even 0x3F82.
    assert_eq!(badd(0x3F80, 0x3C40), 0x3F82);
}

#[test]
fn f64_pairs() {
    let (lo, hi) = unpair(2.5f64.to_bits());
    assert_eq!(pair(lo, hi), 2.5f64.to_bits());
    assert_eq!(dadd(1.5f64.to_bits(), 2.0f64.to_bits()), 3.5f64.to_bits());
    assert_eq!(dsub(1.5f64.to_bits(), 2.0f64.to_bits()), (-0.5f64).to_bits());
    assert_eq!(dmul(1.5f64.to_bits(), 2.0f64.to_bits()), 3.0f64.to_bits());
    assert_eq!(ddiv(1.0f64.to_bits(), 4.0f64.to_bits()), 0.25f64.to_bits());
    assert_eq!(dsqrt(9.0f64.to_bits()), 3.0f64.to_bits());
    assert_eq!(dsqrt((-1.0f64).to_bits()), DEFAULT_NAN_F64);
    let x = 1.0 + f64::EPSILON;
    assert_eq!(
        dma(x.to_bits(), x.to_bits(), (-1.0f64).to_bits()),
        (2.0 * f64::EPSILON + f64::EPSILON * f64::EPSILON).to_bits()
    );
    assert_eq!(alu64(Op::Dsqrt, 4.0f64.to_bits(), 0, 0), Some(2.0f64.to_bits()));
    assert_eq!(alu64(Op::Iadd, 0, 0, 0), None);
}

#[test]
fn mma_accumulates_in_k_order() {
    // a = identity * 2, b = rows 1..16, c = all ones: c = 1 + 2*b.
    let mut a = [0u32; 16];
    for i in 0..4 {
        a[i * 4 + i] = fb(2.0);
    }
    let b: Tile = std::array::from_fn(|i| fb(i as f32 + 1.0));
    let mut c = [fb(1.0); 16];
    mma_tile(&a, &b, &mut c);
    for (i, v) in c.iter().enumerate() {
        assert_eq!(*v, fb(1.0 + 2.0 * (i as f32 + 1.0)));
    }
    // Not fused, k order: c = 1e8 starts the sum, then + 1 four times (each lost), vs a single
    // sum of 4 first.
    let a = [fb(1.0); 16];
    let b = [fb(1.0); 16];
    let mut c = [fb(1e8); 16];
    mma_tile(&a, &b, &mut c);
    assert_eq!(c[0], fb(1e8 + 1.0 + 1.0 + 1.0 + 1.0));
}

#[test]
fn atomics() {
    assert_eq!(atomic(Op::AtomicMin, 5, u32::MAX, 0), Some(5), "unsigned min");
    assert_eq!(atomic(Op::LocalAtomicMax, 5, u32::MAX, 0), Some(u32::MAX));
    assert_eq!(atomic(Op::AtomicSub, 0, 1, 0), Some(u32::MAX));
    assert_eq!(atomic(Op::AtomicCas, 7, 7, 9), Some(9));
    assert_eq!(atomic(Op::AtomicCas, 7, 8, 9), Some(7));
    assert_eq!(atomic(Op::LocalAtomicExchange, 7, 8, 0), Some(8));
    assert_eq!(atomic(Op::Iadd, 0, 0, 0), None);
}

#[test]
fn dispatcher_covers_every_single_register_op() {
    use wave_isa::opcodes::{Class, OPS};
    for info in OPS {
        let expected = matches!(
            info.class,
            Class::Integer | Class::Float | Class::Half | Class::BFloat | Class::Bitwise
        ) || matches!(
            info.op,
            Op::CvtF32I32
                | Op::CvtF32U32
                | Op::CvtI32F32
                | Op::CvtU32F32
                | Op::CvtF32F16
                | Op::CvtF16F32
                | Op::CvtF32Bf16
                | Op::CvtBf16F32
                | Op::Mov
        );
        assert_eq!(alu(info.op, 1, 2, 3, 4).is_some(), expected, "{}", info.mnemonic);
    }
    assert_eq!(alu(Op::Bfi, 0xFFFF_FFFF, 0, 4, 8), Some(0xFFFF_F00F));
}

#[test]
fn arithmetic_returns_the_first_nan_operand_quieted() {
    let (qa, sb, sc) = (0x7FC0_0001u32, 0xFF80_0002u32, 0x7F80_0003u32);
    // Second and third operands are signalling NaNs: quieted when chosen.
    assert_eq!(fadd(qa, sb), qa);
    assert_eq!(fadd(sb, qa), sb | 0x0040_0000);
    assert_eq!(fmul(fb(2.0), sc), sc | 0x0040_0000);
    assert_eq!(fsub(sc, sb), sc | 0x0040_0000);
    assert_eq!(fdiv(sb, qa), sb | 0x0040_0000);
    assert_eq!(fma(fb(1.0), sb, sc), sb | 0x0040_0000);
    assert_eq!(fma(fb(1.0), fb(1.0), sc), sc | 0x0040_0000);
    assert_eq!(fma(sc, sb, qa), sc | 0x0040_0000);
    // A NaN made from non-NaN operands is the default NaN.
    assert_eq!(fadd(fb(f32::INFINITY), fb(f32::NEG_INFINITY)), DEFAULT_NAN_F32);
    assert_eq!(fma(fb(0.0), fb(f32::INFINITY), fb(1.0)), DEFAULT_NAN_F32);
    let (da, db) = (0x7FF0_0000_0000_0001u64, 0x7FF8_0000_0000_0002u64);
    assert_eq!(dadd(db, da), db);
    assert_eq!(dadd(da, db), da | 0x0008_0000_0000_0000);
    assert_eq!(dmul(0, 0x7FF0_0000_0000_0000), DEFAULT_NAN_F64);
}

/// Lanes 10, 11, .., one value per lane of a `width`-lane wave.
fn lane_numbers(width: usize) -> Vec<u32> {
    (0..width as u32).map(|l| 10 + l).collect()
}

#[test]
fn shuffles_read_inactive_source_lanes_and_zero_out_of_range() {
    let src = lane_numbers(8);
    let mask = 0b0000_1111; // lanes 0..3 execute, 4..7 do not
                            // wave_shuffle: lane 0 reads inactive lane 5, lane 1 reads lane 8 (out of range).
    let out = wave_shuffle(Op::WaveShuffle, 8, mask, &src, &[5, 8, 0, 3, 0, 0, 0, 0]);
    assert_eq!(out[..8], [15, 0, 10, 13, 0, 0, 0, 0], "inactive lanes are not results");
    // _up by 2: lanes 0 and 1 have no source lane (lane < delta).
    let out = wave_shuffle(Op::WaveShuffleUp, 8, mask, &src, &[2; 8]);
    assert_eq!(out[..4], [0, 0, 10, 11]);
    // _down by 4: lanes 4..7 are inactive but still read; lane 3 + 5 = 8 is out of range.
    let out = wave_shuffle(Op::WaveShuffleDown, 8, mask, &src, &[4, 4, 4, 5, 0, 0, 0, 0]);
    assert_eq!(out[..4], [14, 15, 16, 0]);
    // _xor with 6: 0 → 6, 1 → 7, 2 → 4, 3 → 5; with 8: out of range.
    let out = wave_shuffle(Op::WaveShuffleXor, 8, mask, &src, &[6, 6, 6, 8, 0, 0, 0, 0]);
    assert_eq!(out[..4], [16, 17, 14, 0]);
    // Up/down at the W = 64 edge, and an up by more than the lane number.
    let src = lane_numbers(64);
    let out = wave_shuffle(Op::WaveShuffleDown, 64, u64::MAX, &src, &[1; 64]);
    assert_eq!((out[62], out[63]), (73, 0));
    let out = wave_shuffle(Op::WaveShuffleUp, 64, u64::MAX, &src, &[u32::MAX; 64]);
    assert_eq!(out, [0; 64]);
    assert_eq!(wave_shuffle_source(Op::WaveShuffleUp, 64, 63, 63), Some(0));
    assert_eq!(wave_shuffle_source(Op::WaveBroadcast, 64, 0, 0), None, "not a shuffle");
}

#[test]
fn broadcast_takes_the_source_lane_from_the_first_active_lane() {
    let src = lane_numbers(8);
    // Lanes 2 and 3 execute: lane 2's selector (6) counts, lane 0's (1) and lane 3's (7) do not.
    let sel = [1, 1, 6, 7, 0, 0, 0, 0];
    assert_eq!(wave_broadcast(8, 0b1100, &src, &sel), 16, "reads inactive lane 6");
    assert_eq!(wave_broadcast(8, 0b1000, &src, &sel), 17);
    assert_eq!(wave_broadcast(8, 0b0100, &src, &[0, 0, 8, 0, 0, 0, 0, 0]), 0, "out of range");
    assert_eq!(wave_broadcast(8, 0, &src, &sel), 0, "no active lane");
    // Mask bits at or above the width name no lane.
    assert_eq!(wave_broadcast(8, 1 << 8, &src, &sel), 0);
}

#[test]
fn ballot_splits_at_w64_and_keeps_only_active_lanes() {
    let pred = 1 << 40 | 1 << 3 | 1;
    // W = 64: the high half (lane 40 → bit 8) is rd+1's word.
    let b = wave_ballot(64, u64::MAX, pred);
    assert_eq!(b, Ballot { low: 0b1001, high: Some(1 << 8) });
    // Inactive lanes do not vote, whatever their predicate.
    assert_eq!(wave_ballot(64, !1, pred), Ballot { low: 0b1000, high: Some(1 << 8) });
    // Below W = 64 there is no second word, and lanes past the width do not exist.
    assert_eq!(wave_ballot(32, u64::MAX, pred), Ballot { low: 0b1001, high: None });
    assert_eq!(wave_ballot(4, u64::MAX, pred), Ballot { low: 0b1001, high: None });
    assert_eq!(wave_ballot(4, u64::MAX, 1 << 4), Ballot { low: 0, high: None });
}

#[test]
fn any_and_all_look_at_active_lanes_only() {
    let pred = 0b0110;
    assert!(wave_any(8, 0b0011, pred));
    assert!(!wave_any(8, 0b1001, pred), "lanes 1 and 2 hold but do not execute");
    assert!(wave_all(8, 0b0110, pred), "lanes 0 and 3 fail but do not execute");
    assert!(!wave_all(8, 0b0111, pred));
    // No active lane: nothing holds somewhere, everything holds everywhere.
    assert!(!wave_any(8, 0, u64::MAX));
    assert!(wave_all(8, 0, 0));
    // Lanes past the width do not count.
    assert!(wave_all(8, u64::MAX, 0xFF));
    assert!(!wave_any(8, u64::MAX, !0xFF));
}

#[test]
fn prefix_sum_is_exclusive_over_active_lanes_and_wraps() {
    let src = [1, 2, 4, 8, 16, 32, 64, 128];
    let out = wave_prefix_sum(8, 0b1011_0101, &src);
    // Active lanes 0, 2, 4, 5, 7 get the sum of the active lanes below them.
    assert_eq!(out[..8], [0, 0, 1, 0, 5, 21, 0, 53]);
    let out = wave_prefix_sum(4, 0b1111, &[u32::MAX, 2, 3, 0]);
    assert_eq!(out[..4], [0, u32::MAX, 1, 4], "wrapping mod 2^32");
    assert_eq!(wave_prefix_sum(4, 0, &[1, 2, 3, 4]), [0; 64]);
}

#[test]
fn reductions_over_active_lanes_unsigned_and_zero_when_empty() {
    let src = [0x8000_0000, 1, 7, u32::MAX];
    assert_eq!(wave_reduce_add(4, 0b1111, &src), 0x8000_0007, "wrapping");
    assert_eq!(wave_reduce_min(4, 0b1111, &src), 1);
    assert_eq!(wave_reduce_max(4, 0b1111, &src), u32::MAX);
    // Only active lanes: lanes 0 and 2.
    assert_eq!(wave_reduce_add(4, 0b0101, &src), 0x8000_0007);
    assert_eq!(wave_reduce_min(4, 0b0101, &src), 7, "unsigned: 0x80000000 > 7");
    assert_eq!(wave_reduce_max(4, 0b0101, &src), 0x8000_0000);
    for f in [wave_reduce_add, wave_reduce_min, wave_reduce_max] {
        assert_eq!(f(4, 0, &src), 0, "no active lane");
    }
}

#[test]
fn wave_row_dispatches_register_wave_ops() {
    let src = lane_numbers(8);
    let sel = [3; 8];
    let row = |op| wave_row(op, 8, 0b0110, &src, &sel);
    assert_eq!(row(Op::WaveShuffleXor), Some(wave_shuffle(Op::WaveShuffleXor, 8, 0b0110, &src, &sel)));
    assert_eq!(row(Op::WaveBroadcast), Some([13; 64]));
    assert_eq!(row(Op::WaveReduceAdd), Some([23; 64]));
    assert_eq!(row(Op::WaveReduceMin), Some([11; 64]));
    assert_eq!(row(Op::WaveReduceMax), Some([12; 64]));
    assert_eq!(row(Op::WavePrefixSum), Some(wave_prefix_sum(8, 0b0110, &src)));
    for op in [Op::WaveBallot, Op::WaveAny, Op::WaveAll, Op::Iadd] {
        assert_eq!(row(op), None, "{op:?}");
    }
}
