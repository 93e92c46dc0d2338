//! The fixed text at the top of HIP, SYCL and Metal kernels: per-dialect spellings as macros,
//! then helper functions written once over those macros, so every helper has one definition
//! shared by the three C-like targets.

/// Spellings that differ between the C-like targets.
pub(crate) const HIP_HEADER: &str = r#"#include <hip/hip_runtime.h>
#include <stdint.h>
// WAVE semantics need every float operation rounded on its own (no a*b+c contraction).
#pragma clang fp contract(off)

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef int32_t i32;
typedef uint64_t u64;
typedef float f32;
typedef double f64;

#define WAVE_FN static __device__ inline
#define WAVE_F(x) __uint_as_float((u32)(x))
#define WAVE_U(x) __float_as_uint(x)
#define WAVE_D(lo, hi) __hiloint2double((int)(hi), (int)(lo))
#define WAVE_DBITS(x) ((u64)__double_as_longlong(x))
#define WAVE_SQRTF(x) __fsqrt_rn(x)
#define WAVE_DSQRT(x) __dsqrt_rn(x)
#define WAVE_FMAF(a, b, c) fmaf(a, b, c)
#define WAVE_DFMA(a, b, c) fma(a, b, c)
#define WAVE_FLOORF(x) floorf(x)
#define WAVE_CEILF(x) ceilf(x)
#define WAVE_TRUNCF(x) truncf(x)
#define WAVE_SINF(x) sinf(x)
#define WAVE_COSF(x) cosf(x)
#define WAVE_EXP2F(x) exp2f(x)
#define WAVE_LOG2F(x) log2f(x)
#define WAVE_CLZ(x) ((u32)__clz((int)(x)))
#define WAVE_POPC(x) ((u32)__popc(x))
#define WAVE_BREV(x) ((u32)__brev(x))
#define WAVE_CTZ64(x) ((u32)(__ffsll((long long)(x)) - 1))
#define WAVE_DEV(T, addr) (*(T*)(device_mem + (u64)(u32)(addr)))
#define WAVE_LDS(T, addr) (*(T*)(wave_lds + (u32)(addr)))
#define WAVE_DEV_ATOMIC_PTR(addr) ((u32*)(device_mem + (u64)(u32)(addr)))
#define WAVE_LDS_ATOMIC_PTR(addr) ((u32*)(wave_lds + (u32)(addr)))
#define WAVE_BARRIER() __syncthreads()
// Wave operations: every lane of the wave calls them (the code runs the wave in lock step).
#define WAVE_ANY(b) (__any((int)(b)) != 0)
#define WAVE_BALLOT(b) ((u64)__ballot((int)(b)))
#define WAVE_SHFL(v, lane) ((u32)__shfl((int)(v), (int)(lane)))
#define WAVE_RED_ADD(v) wave_hip_reduce((v), 0, 0u, wave_lane, wave_n)
#define WAVE_RED_MIN(v) wave_hip_reduce((v), 1, 0xFFFFFFFFu, wave_lane, wave_n)
#define WAVE_RED_MAX(v) wave_hip_reduce((v), 2, 0u, wave_lane, wave_n)
#define WAVE_SCAN_EXCL_ADD(v) wave_hip_scan_excl((v), wave_lane)

// Reductions over the lanes that exist (wave_n of them, lanes 0..wave_n-1): a shift-down tree
// into lane 0, then a broadcast. Inactive lanes pass the operation's identity.
WAVE_FN u32 wave_hip_reduce(u32 v, int op, u32 identity, u32 lane, u32 n) {
  for (u32 off = (u32)warpSize / 2u; off > 0u; off >>= 1) {
    const u32 k = (u32)__shfl_down((int)v, off);
    const u32 o = lane + off < n ? k : identity;
    v = op == 0 ? v + o : (op == 1 ? (o < v ? o : v) : (o > v ? o : v));
  }
  return (u32)__shfl((int)v, 0);
}
WAVE_FN u32 wave_hip_scan_excl(u32 v, u32 lane) {
  u32 x = v;
  for (u32 d = 1u; d < (u32)warpSize; d <<= 1) {
    const u32 o = (u32)__shfl_up((int)x, d);
    if (lane >= d) x += o;
  }
  return x - v;
}
"#;

pub(crate) const SYCL_HEADER: &str = r#"#include <sycl/sycl.hpp>
#include <cstdint>
namespace syclexp = sycl::ext::oneapi::experimental;
// WAVE semantics need every float operation rounded on its own (no a*b+c contraction).
#pragma clang fp contract(off)

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef int32_t i32;
typedef uint64_t u64;
typedef float f32;
typedef double f64;

#define WAVE_FN static inline
#define WAVE_F(x) sycl::bit_cast<f32>((u32)(x))
#define WAVE_U(x) sycl::bit_cast<u32>((f32)(x))
#define WAVE_D(lo, hi) sycl::bit_cast<f64>(((u64)(u32)(hi) << 32) | (u64)(u32)(lo))
#define WAVE_DBITS(x) sycl::bit_cast<u64>((f64)(x))
#define WAVE_SQRTF(x) sycl::sqrt(x)
#define WAVE_DSQRT(x) sycl::sqrt(x)
#define WAVE_FMAF(a, b, c) sycl::fma(a, b, c)
#define WAVE_DFMA(a, b, c) sycl::fma(a, b, c)
#define WAVE_FLOORF(x) sycl::floor(x)
#define WAVE_CEILF(x) sycl::ceil(x)
#define WAVE_TRUNCF(x) sycl::trunc(x)
#define WAVE_SINF(x) sycl::sin(x)
#define WAVE_COSF(x) sycl::cos(x)
#define WAVE_EXP2F(x) sycl::exp2(x)
#define WAVE_LOG2F(x) sycl::log2(x)
#define WAVE_CLZ(x) ((u32)sycl::clz((u32)(x)))
#define WAVE_POPC(x) ((u32)sycl::popcount((u32)(x)))
#define WAVE_BREV(x) ((u32)__builtin_bitreverse32((u32)(x)))
#define WAVE_CTZ64(x) ((u32)sycl::ctz((u64)(x)))
#define WAVE_DEV(T, addr) (*(T*)(device_mem + (u64)(u32)(addr)))
#define WAVE_LDS(T, addr) (*(T*)(wave_lds + (u32)(addr)))
#define WAVE_DEV_ATOMIC_PTR(addr) ((u32*)(device_mem + (u64)(u32)(addr)))
#define WAVE_LDS_ATOMIC_PTR(addr) ((u32*)(wave_lds + (u32)(addr)))
#define WAVE_BARRIER() sycl::group_barrier(wave_it.get_group())
// Wave operations: every lane of the sub-group calls them (the code runs the wave in lock step).
#define WAVE_ANY(b) sycl::any_of_group(wave_sg, (bool)(b))
#define WAVE_BALLOT(b) sycl::reduce_over_group(wave_sg, (b) ? ((u64)1 << wave_lane) : (u64)0, sycl::bit_or<u64>())
#define WAVE_SHFL(v, lane) sycl::select_from_group(wave_sg, (u32)(v), (size_t)(u32)(lane))
#define WAVE_RED_ADD(v) sycl::reduce_over_group(wave_sg, (u32)(v), sycl::plus<u32>())
#define WAVE_RED_MIN(v) sycl::reduce_over_group(wave_sg, (u32)(v), sycl::minimum<u32>())
#define WAVE_RED_MAX(v) sycl::reduce_over_group(wave_sg, (u32)(v), sycl::maximum<u32>())
#define WAVE_SCAN_EXCL_ADD(v) sycl::exclusive_scan_over_group(wave_sg, (u32)(v), sycl::plus<u32>())
"#;

pub(crate) const METAL_HEADER: &str = r#"#include <metal_stdlib>
using namespace metal;
// WAVE semantics need IEEE float behaviour: compile with fast math off
// (MTLCompileOptions.mathMode = MTLMathModeSafe, or -fno-fast-math).
#pragma METAL fp math_mode(safe)
#pragma METAL fp contract(off)

typedef uchar u8;
typedef ushort u16;
typedef uint u32;
typedef int i32;
typedef ulong u64;
typedef float f32;

#define WAVE_FN static inline
#define WAVE_W 32u
#define WAVE_F(x) as_type<f32>((u32)(x))
#define WAVE_U(x) as_type<u32>((f32)(x))
#define WAVE_SQRTF(x) precise::sqrt(x)
#define WAVE_FMAF(a, b, c) fma(a, b, c)
#define WAVE_FLOORF(x) floor(x)
#define WAVE_CEILF(x) ceil(x)
#define WAVE_TRUNCF(x) trunc(x)
#define WAVE_SINF(x) precise::sin(x)
#define WAVE_COSF(x) precise::cos(x)
#define WAVE_EXP2F(x) precise::exp2(x)
#define WAVE_LOG2F(x) precise::log2(x)
#define WAVE_CLZ(x) ((u32)clz((u32)(x)))
#define WAVE_POPC(x) ((u32)popcount((u32)(x)))
#define WAVE_BREV(x) ((u32)reverse_bits((u32)(x)))
#define WAVE_CTZ64(x) ((u32)ctz((u64)(x)))
#define WAVE_DEV(T, addr) (*(device T*)(device_mem + (u32)(addr)))
#define WAVE_LDS(T, addr) (*(threadgroup T*)(wave_lds + (u32)(addr)))
#define WAVE_DEV_ATOMIC_PTR(addr) ((device atomic_uint*)(device_mem + (u32)(addr)))
#define WAVE_LDS_ATOMIC_PTR(addr) ((threadgroup atomic_uint*)(wave_lds + (u32)(addr)))
#define WAVE_BARRIER() threadgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device)
// Wave operations: every lane of the SIMD-group calls them (the code runs the wave in lock step).
#define WAVE_ANY(b) simd_any((bool)(b))
#define WAVE_BALLOT(b) ((u64)(simd_vote::vote_t)simd_ballot((bool)(b)))
#define WAVE_SHFL(v, lane) simd_shuffle((u32)(v), (ushort)(lane))
#define WAVE_RED_ADD(v) simd_sum((u32)(v))
#define WAVE_RED_MIN(v) simd_min((u32)(v))
#define WAVE_RED_MAX(v) simd_max((u32)(v))
#define WAVE_SCAN_EXCL_ADD(v) simd_prefix_exclusive_sum((u32)(v))
"#;

/// Helpers shared by the three C-like targets, written over the macros above. Each one pins
/// down a WAVE semantic that the targets' native operations do not give (semantics.md).
pub(crate) const HELPERS: &str = r#"
// ---- integer (semantics.md 5.2): x/0 = 0, INT_MIN/-1 = INT_MIN, wrapping abs/neg.
WAVE_FN u32 wave_idiv(u32 a, u32 b) {
  if (b == 0u) return 0u;
  if (a == 0x80000000u && b == 0xFFFFFFFFu) return a;
  return (u32)((i32)a / (i32)b);
}
WAVE_FN u32 wave_imod(u32 a, u32 b) {
  if (b == 0u || (a == 0x80000000u && b == 0xFFFFFFFFu)) return 0u;
  return (u32)((i32)a % (i32)b);
}
WAVE_FN u32 wave_iabs(u32 a) { return (i32)a < 0 ? 0u - a : a; }
WAVE_FN u32 wave_imin(u32 a, u32 b) { return (i32)a < (i32)b ? a : b; }
WAVE_FN u32 wave_imax(u32 a, u32 b) { return (i32)a > (i32)b ? a : b; }
WAVE_FN u32 wave_iclamp(u32 x, u32 lo, u32 hi) { return wave_imin(wave_imax(x, lo), hi); }
WAVE_FN u32 wave_imul_hi(u32 a, u32 b) { return (u32)(((u64)a * (u64)b) >> 32); }
// bitfind = count of leading zeros, 0xFFFFFFFF for 0.
WAVE_FN u32 wave_bitfind(u32 a) { return a == 0u ? 0xFFFFFFFFu : WAVE_CLZ(a); }
WAVE_FN u32 wave_bfe(u32 src, u32 off, u32 width) {
  width &= 31u;
  return width == 0u ? 0u : (src >> (off & 31u)) & ((1u << width) - 1u);
}
WAVE_FN u32 wave_bfi(u32 base, u32 ins, u32 off, u32 width) {
  width &= 31u;
  off &= 31u;
  if (width == 0u) return base;
  const u32 m = ((1u << width) - 1u) << off;
  return (base & ~m) | ((ins << off) & m);
}

// ---- f32 (semantics.md 5.3): minNum with the first operand on equal zeros, half-away rounding.
WAVE_FN f32 wave_fmin(f32 a, f32 b) { return a != a ? b : (b != b ? a : (b < a ? b : a)); }
WAVE_FN f32 wave_fmax(f32 a, f32 b) { return a != a ? b : (b != b ? a : (b > a ? b : a)); }
WAVE_FN f32 wave_fsat(f32 a) { return a < 0.0f ? 0.0f : (a > 1.0f ? 1.0f : a); }
WAVE_FN f32 wave_fround(f32 a) {
  const f32 t = WAVE_TRUNCF(a);
  const f32 d = a - t;
  return d >= 0.5f ? t + 1.0f : (d <= -0.5f ? t - 1.0f : t);
}
// Saturating float -> int, NaN -> 0.
WAVE_FN u32 wave_cvt_i32_f32(f32 f) {
  if (f != f) return 0u;
  if (f >= 2147483648.0f) return 0x7FFFFFFFu;
  if (f <= -2147483648.0f) return 0x80000000u;
  return (u32)(i32)f;
}
WAVE_FN u32 wave_cvt_u32_f32(f32 f) {
  if (!(f > 0.0f)) return 0u;
  if (f >= 4294967296.0f) return 0xFFFFFFFFu;
  return (u32)f;
}

// ---- f16 / bf16 on bits (semantics.md 5.4, 5.5, B.14): exact round-to-nearest-even in
// software, so every target gives the same bits.
WAVE_FN u32 wave_f32_to_f16(f32 f) {
  const u32 x = WAVE_U(f);
  const u32 sign = (x >> 16) & 0x8000u;
  const u32 ax = x & 0x7FFFFFFFu;
  if (ax > 0x7F800000u) return 0x7E00u;
  if (ax >= 0x477FF000u) return sign | 0x7C00u;
  if (ax >= 0x38800000u) {
    const u32 r = ax - 0x38000000u;
    u32 h = r >> 13;
    const u32 rem = r & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u) != 0u)) h += 1u;
    return sign | h;
  }
  if (ax <= 0x33000000u) return sign;
  const u32 e = ax >> 23;
  const u32 m = (ax & 0x7FFFFFu) | 0x800000u;
  const u32 shift = 126u - e;
  u32 h = m >> shift;
  const u32 rem = m & ((1u << shift) - 1u);
  const u32 half_ulp = 1u << (shift - 1u);
  if (rem > half_ulp || (rem == half_ulp && (h & 1u) != 0u)) h += 1u;
  return sign | h;
}
WAVE_FN f32 wave_f16_to_f32(u32 h) {
  h &= 0xFFFFu;
  const u32 sign = (h & 0x8000u) << 16;
  const u32 e = (h >> 10) & 0x1Fu;
  const u32 m = h & 0x3FFu;
  if (e == 31u) return WAVE_F(sign | 0x7F800000u | (m << 13) | (m != 0u ? 0x400000u : 0u));
  if (e == 0u) {
    const f32 v = (f32)m * 5.9604644775390625e-8f;
    return sign != 0u ? -v : v;
  }
  return WAVE_F(sign | ((e + 112u) << 23) | (m << 13));
}
WAVE_FN u32 wave_f32_to_bf16(f32 f) {
  const u32 x = WAVE_U(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return ((x >> 16) | 0x40u) & 0xFFFFu;
  return ((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16) & 0xFFFFu;
}
WAVE_FN f32 wave_bf16_to_f32(u32 h) { return WAVE_F((h & 0xFFFFu) << 16); }
// Half arithmetic: computed in f32, rounded once to the narrow format; packed = two halves.
WAVE_FN u32 wave_hadd(u32 a, u32 b) { return wave_f32_to_f16(wave_f16_to_f32(a) + wave_f16_to_f32(b)); }
WAVE_FN u32 wave_hsub(u32 a, u32 b) { return wave_f32_to_f16(wave_f16_to_f32(a) - wave_f16_to_f32(b)); }
WAVE_FN u32 wave_hmul(u32 a, u32 b) { return wave_f32_to_f16(wave_f16_to_f32(a) * wave_f16_to_f32(b)); }
WAVE_FN u32 wave_hma(u32 a, u32 b, u32 c) {
  return wave_f32_to_f16(WAVE_FMAF(wave_f16_to_f32(a), wave_f16_to_f32(b), wave_f16_to_f32(c)));
}
WAVE_FN u32 wave_hadd2(u32 a, u32 b) { return wave_hadd(a, b) | (wave_hadd(a >> 16, b >> 16) << 16); }
WAVE_FN u32 wave_hmul2(u32 a, u32 b) { return wave_hmul(a, b) | (wave_hmul(a >> 16, b >> 16) << 16); }
WAVE_FN u32 wave_hma2(u32 a, u32 b, u32 c) { return wave_hma(a, b, c) | (wave_hma(a >> 16, b >> 16, c >> 16) << 16); }
WAVE_FN u32 wave_badd(u32 a, u32 b) { return wave_f32_to_bf16(wave_bf16_to_f32(a) + wave_bf16_to_f32(b)); }
WAVE_FN u32 wave_bsub(u32 a, u32 b) { return wave_f32_to_bf16(wave_bf16_to_f32(a) - wave_bf16_to_f32(b)); }
WAVE_FN u32 wave_bmul(u32 a, u32 b) { return wave_f32_to_bf16(wave_bf16_to_f32(a) * wave_bf16_to_f32(b)); }
WAVE_FN u32 wave_bma(u32 a, u32 b, u32 c) {
  return wave_f32_to_bf16(WAVE_FMAF(wave_bf16_to_f32(a), wave_bf16_to_f32(b), wave_bf16_to_f32(c)));
}
WAVE_FN u32 wave_badd2(u32 a, u32 b) { return wave_badd(a, b) | (wave_badd(a >> 16, b >> 16) << 16); }
WAVE_FN u32 wave_bmul2(u32 a, u32 b) { return wave_bmul(a, b) | (wave_bmul(a >> 16, b >> 16) << 16); }
WAVE_FN u32 wave_bma2(u32 a, u32 b, u32 c) { return wave_bma(a, b, c) | (wave_bma(a >> 16, b >> 16, c >> 16) << 16); }
"#;
