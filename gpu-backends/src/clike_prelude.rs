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
#define WAVE_DFLOOR(x) floor(x)
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
#define WAVE_DFLOOR(x) sycl::floor(x)
#define WAVE_CLZ(x) ((u32)sycl::clz((u32)(x)))
#define WAVE_POPC(x) ((u32)sycl::popcount((u32)(x)))
#define WAVE_BREV(x) wave_sycl_brev((u32)(x))
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

// Bit reverse by multiplications (one byte at a time): __builtin_bitreverse32, and the usual
// shift-and-mask swaps that LLVM turns back into llvm.bitreverse, make the OpenCL CPU
// compiler fail ("Invalid LLVM module ... @llvm_bitreverse_i32").
WAVE_FN u32 wave_sycl_rev8(u32 b) {
  b &= 0xFFu;
  return (((b * 0x0802u & 0x22110u) | (b * 0x8020u & 0x88440u)) * 0x10101u >> 16) & 0xFFu;
}
WAVE_FN u32 wave_sycl_brev(u32 x) {
  return (wave_sycl_rev8(x) << 24) | (wave_sycl_rev8(x >> 8) << 16) | (wave_sycl_rev8(x >> 16) << 8) |
         wave_sycl_rev8(x >> 24);
}
"#;

/// Host C++ (any clang or g++ with `-ffp-contract=off`): the same helpers, for checking them
/// against the interpreter on the CPU.
pub(crate) const HOST_HEADER: &str = r#"#include <cmath>
#include <cstdint>
#include <cstring>
#pragma clang fp contract(off)

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef int32_t i32;
typedef uint64_t u64;
typedef float f32;
typedef double f64;

#define WAVE_FN static inline
static inline f32 wave_host_f(u32 x) { f32 f; std::memcpy(&f, &x, 4); return f; }
static inline u32 wave_host_u(f32 x) { u32 u; std::memcpy(&u, &x, 4); return u; }
static inline f64 wave_host_d(u64 x) { f64 f; std::memcpy(&f, &x, 8); return f; }
static inline u64 wave_host_dbits(f64 x) { u64 u; std::memcpy(&u, &x, 8); return u; }
#define WAVE_F(x) wave_host_f((u32)(x))
#define WAVE_U(x) wave_host_u((f32)(x))
#define WAVE_D(lo, hi) wave_host_d(((u64)(u32)(hi) << 32) | (u64)(u32)(lo))
#define WAVE_DBITS(x) wave_host_dbits((f64)(x))
#define WAVE_SQRTF(x) std::sqrt((f32)(x))
#define WAVE_DSQRT(x) std::sqrt((f64)(x))
#define WAVE_FMAF(a, b, c) std::fma((f32)(a), (f32)(b), (f32)(c))
#define WAVE_DFMA(a, b, c) std::fma((f64)(a), (f64)(b), (f64)(c))
#define WAVE_FLOORF(x) std::floor((f32)(x))
#define WAVE_CEILF(x) std::ceil((f32)(x))
#define WAVE_TRUNCF(x) std::trunc((f32)(x))
#define WAVE_DFLOOR(x) std::floor((f64)(x))
#define WAVE_CLZ(x) ((u32)__builtin_clz((u32)(x)))
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

// Metal has no 64-bit floats, so sin, cos and exp2 are Metal's precise functions, not the
// interpreter's algorithms (exact on HIP and SYCL): results can differ in the last bit. log2 is
// exact (helpers).
WAVE_FN u32 wave_fsin(u32 a) { return WAVE_U(precise::sin(WAVE_F(a))); }
WAVE_FN u32 wave_fcos(u32 a) { return WAVE_U(precise::cos(WAVE_F(a))); }
WAVE_FN u32 wave_fexp2(u32 a) { return WAVE_U(precise::exp2(WAVE_F(a))); }
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

// ---- f32 NaN rule (as the interpreter): the first NaN operand (rs1, rs2, rs3) quieted; a NaN
// made from non-NaN operands (inf - inf, 0 * inf, 0 / 0) is 0xFFC00000. Targets differ here
// (operand order of commutative ops, AMD's canonical NaN), so it is pinned in software.
WAVE_FN bool wave_is_nan(u32 a) { return (a & 0x7FFFFFFFu) > 0x7F800000u; }
WAVE_FN u32 wave_nan3(u32 a, u32 b, u32 c) {
  return wave_is_nan(a) ? (a | 0x400000u) : (wave_is_nan(b) ? (b | 0x400000u) : (wave_is_nan(c) ? (c | 0x400000u) : 0xFFC00000u));
}
WAVE_FN u32 wave_fresult(f32 r, u32 a, u32 b, u32 c) { return r == r ? WAVE_U(r) : wave_nan3(a, b, c); }
WAVE_FN u32 wave_fadd(u32 a, u32 b) { return wave_fresult(WAVE_F(a) + WAVE_F(b), a, b, 0u); }
WAVE_FN u32 wave_fsub(u32 a, u32 b) { return wave_fresult(WAVE_F(a) - WAVE_F(b), a, b, 0u); }
WAVE_FN u32 wave_fmul(u32 a, u32 b) { return wave_fresult(WAVE_F(a) * WAVE_F(b), a, b, 0u); }
WAVE_FN u32 wave_fdiv(u32 a, u32 b) { return wave_fresult(WAVE_F(a) / WAVE_F(b), a, b, 0u); }
WAVE_FN u32 wave_fma(u32 a, u32 b, u32 c) { return wave_fresult(WAVE_FMAF(WAVE_F(a), WAVE_F(b), WAVE_F(c)), a, b, c); }
// sqrt: NaN quieted, negative (not -0) -> 0xFFC00000; rsqrt = 1 / sqrt.
WAVE_FN u32 wave_fsqrt(u32 a) {
  if (wave_is_nan(a)) return a | 0x400000u;
  if (WAVE_F(a) < 0.0f) return 0xFFC00000u;
  return WAVE_U(WAVE_SQRTF(WAVE_F(a)));
}
WAVE_FN u32 wave_frsqrt(u32 a) {
  const u32 s = wave_fsqrt(a);
  return wave_is_nan(s) ? s : WAVE_U(1.0f / WAVE_F(s));
}

// ---- flog2: the interpreter's algorithm (FreeBSD msun e_log2f.c, as in the `libm` crate),
// f32 only, so every target gives the same bits.
WAVE_FN u32 wave_flog2(u32 ui) {
  u32 ix = ui;
  i32 k = 0;
  if (ix < 0x00800000u || (ix >> 31) != 0u) {
    if ((ix << 1) == 0u) return 0xFF800000u; // log2(+-0) = -inf
    if ((ix >> 31) != 0u) return wave_is_nan(ix) ? (ix | 0x400000u) : 0xFFC00000u; // log2(-x) = NaN
    k -= 25; // subnormal: scale up by 2^25
    ix = WAVE_U(WAVE_F(ix) * 33554432.0f);
  } else if (ix >= 0x7F800000u) {
    return ix; // +inf, positive NaN: unchanged
  } else if (ix == 0x3F800000u) {
    return 0u;
  }
  ix += 0x3F800000u - 0x3F3504F3u;
  k += (i32)(ix >> 23) - 0x7F;
  ix = (ix & 0x007FFFFFu) + 0x3F3504F3u;
  const f32 f = WAVE_F(ix) - 1.0f;
  const f32 s = f / (2.0f + f);
  const f32 z = s * s;
  const f32 w = z * z;
  const f32 t1 = w * (0.40000972152f + w * 0.24279078841f);
  const f32 t2 = z * (0.66666662693f + w * 0.28498786688f);
  const f32 r = t2 + t1;
  const f32 hfsq = 0.5f * f * f;
  const f32 hi = WAVE_F(WAVE_U(f - hfsq) & 0xFFFFF000u);
  const f32 lo = f - hi - hfsq + s * (hfsq + r);
  return WAVE_U((lo + hi) * -1.7605285393e-04f + lo * 1.4428710938e+00f + hi * 1.4428710938e+00f + (f32)k);
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

/// HIP and SYCL (targets with f64): the interpreter's f64 NaN rule, and its sin, cos and exp2
/// (FreeBSD msun, as the `libm` crate computes them, in f64), so results are bit-identical.
pub(crate) const HELPERS_F64: &str = r#"
// ---- f64 NaN rule (as f32): first NaN operand quieted, else 0xFFF8000000000000.
#define WAVE_PAIR(lo, hi) (((u64)(u32)(hi) << 32) | (u64)(u32)(lo))
WAVE_FN bool wave_is_dnan(u64 a) { return (a & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull; }
WAVE_FN u64 wave_dresult(f64 r, u64 a, u64 b, u64 c) {
  if (r == r) return WAVE_DBITS(r);
  const u64 q = 0x0008000000000000ull;
  return wave_is_dnan(a) ? (a | q) : (wave_is_dnan(b) ? (b | q) : (wave_is_dnan(c) ? (c | q) : 0xFFF8000000000000ull));
}
WAVE_FN f64 wave_d(u64 a) { return WAVE_D((u32)a, (u32)(a >> 32)); }
WAVE_FN u64 wave_dadd(u64 a, u64 b) { return wave_dresult(wave_d(a) + wave_d(b), a, b, 0u); }
WAVE_FN u64 wave_dsub(u64 a, u64 b) { return wave_dresult(wave_d(a) - wave_d(b), a, b, 0u); }
WAVE_FN u64 wave_dmul(u64 a, u64 b) { return wave_dresult(wave_d(a) * wave_d(b), a, b, 0u); }
WAVE_FN u64 wave_ddiv(u64 a, u64 b) { return wave_dresult(wave_d(a) / wave_d(b), a, b, 0u); }
WAVE_FN u64 wave_dma(u64 a, u64 b, u64 c) { return wave_dresult(WAVE_DFMA(wave_d(a), wave_d(b), wave_d(c)), a, b, c); }
WAVE_FN u64 wave_dsqrt(u64 a) {
  if (wave_is_dnan(a)) return a | 0x0008000000000000ull;
  if (wave_d(a) < 0.0) return 0xFFF8000000000000ull;
  return WAVE_DBITS(WAVE_DSQRT(wave_d(a)));
}

// ---- fsin / fcos (msun s_sinf.c, s_cosf.c, k_sinf.c, k_cosf.c, e_rem_pio2f.c).
WAVE_FN f32 wave_k_sinf(f64 x) {
  const f64 z = x * x;
  const f64 w = z * z;
  const f64 r = -0.000198393348360966317347 + z * 0.0000027183114939898219064;
  const f64 s = z * x;
  return (f32)((x + s * (-0.166666666416265235595 + z * 0.0083333293858894631756)) + s * w * r);
}
WAVE_FN f32 wave_k_cosf(f64 x) {
  const f64 z = x * x;
  const f64 w = z * z;
  const f64 r = -0.00138867637746099294692 + z * 0.0000243904487962774090654;
  return (f32)(((1.0 + z * -0.499999997251031003120) + w * 0.0416666233237390631894) + (w * z) * r);
}
// 2^e for -1022 <= e <= 1023.
WAVE_FN f64 wave_pow2(i32 e) { return WAVE_D(0u, (u32)(1023 + e) << 20); }
// msun k_rem_pio2.c for one 24-bit input word x (a float scaled by 2^-e0) and 53-bit output
// (prec 0: jk = jp = 3): y = (x * 2^e0) mod pi/2, return value = quadrant mod 8.
WAVE_FN i32 wave_rem_pio2_large(f64 x, i32 e0, f64* y) {
  const i32 ipio2[36] = {
    0xA2F983, 0x6E4E44, 0x1529FC, 0x2757D1, 0xF534DD, 0xC0DB62, 0x95993C, 0x439041, 0xFE5163,
    0xABDEBB, 0xC561B7, 0x246E3A, 0x424DD2, 0xE00649, 0x2EEA09, 0xD1921C, 0xFE1DEB, 0x1CB129,
    0xA73EE8, 0x8235F5, 0x2EBB44, 0x84E99C, 0x7026B4, 0x5F7E41, 0x3991D6, 0x398353, 0x39F49C,
    0x845F8B, 0xBDF928, 0x3B1FF8, 0x97FFDE, 0x05980F, 0xEF2F11, 0x8B5A0A, 0x6D1F6D, 0x367ECF};
  const f64 pio2[4] = {1.57079625129699707031e+00, 7.54978941586159635335e-08,
                       5.39030252995776476554e-15, 3.28200341580791294123e-22};
  const f64 two24 = 16777216.0, twon24 = 5.9604644775390625e-08;
  const i32 jk = 3, jp = 3;
  f64 q[20], fq[20];
  i32 iq[20];
  i32 jv = (e0 - 3) / 24;
  if (jv < 0) jv = 0;
  i32 q0 = e0 - 24 * (jv + 1);
  for (i32 i = 0; i <= jk; ++i) q[i] = x * (f64)ipio2[jv + i];
  i32 jz = jk, n = 0, ih = 0;
  f64 z, fw;
  for (;;) {
    // Distill q[] into 24-bit chunks iq[], most significant last.
    z = q[jz];
    for (i32 j = jz, i = 0; j >= 1; --j, ++i) {
      fw = (f64)(i32)(twon24 * z);
      iq[i] = (i32)(z - two24 * fw);
      z = q[j - 1] + fw;
    }
    z = z * wave_pow2(q0);
    z -= 8.0 * WAVE_DFLOOR(z * 0.125);
    n = (i32)z;
    z -= (f64)n;
    ih = 0;
    if (q0 > 0) {
      const i32 i = iq[jz - 1] >> (24 - q0);
      n += i;
      iq[jz - 1] -= i << (24 - q0);
      ih = iq[jz - 1] >> (23 - q0);
    } else if (q0 == 0) {
      ih = iq[jz - 1] >> 23;
    } else if (z >= 0.5) {
      ih = 2;
    }
    if (ih > 0) { // q > 0.5: use 1 - q
      n += 1;
      i32 carry = 0;
      for (i32 i = 0; i < jz; ++i) {
        const i32 j = iq[i];
        if (carry == 0) {
          if (j != 0) { carry = 1; iq[i] = 0x1000000 - j; }
        } else {
          iq[i] = 0xFFFFFF - j;
        }
      }
      if (q0 == 1) iq[jz - 1] &= 0x7FFFFF;
      else if (q0 == 2) iq[jz - 1] &= 0x3FFFFF;
      if (ih == 2) {
        z = 1.0 - z;
        if (carry != 0) z -= wave_pow2(q0);
      }
    }
    if (z == 0.0) { // all bits cancelled: take more terms of 2/pi
      i32 j = 0;
      for (i32 i = jz - 1; i >= jk; --i) j |= iq[i];
      if (j == 0) {
        i32 k = 1;
        while (k <= jk && iq[jk - k] == 0) ++k;
        if (jz + k >= 20 || jv + jz + k >= 36) break; // never for f32 inputs
        for (i32 i = jz + 1; i <= jz + k; ++i) q[i] = x * (f64)ipio2[jv + i];
        jz += k;
        continue;
      }
    }
    break;
  }
  if (z == 0.0) { // chop off zero terms
    jz -= 1;
    q0 -= 24;
    while (jz > 0 && iq[jz] == 0) { jz -= 1; q0 -= 24; }
  } else { // break z into 24-bit chunks if needed
    z = z * wave_pow2(-q0);
    if (z >= two24) {
      fw = (f64)(i32)(twon24 * z);
      iq[jz] = (i32)(z - two24 * fw);
      jz += 1;
      q0 += 24;
      iq[jz] = (i32)fw;
    } else {
      iq[jz] = (i32)z;
    }
  }
  fw = wave_pow2(q0);
  for (i32 i = jz; i >= 0; --i) { q[i] = fw * (f64)iq[i]; fw *= twon24; }
  for (i32 i = jz; i >= 0; --i) {
    fw = 0.0;
    for (i32 k = 0; k <= jp && k <= jz - i; ++k) fw += pio2[k] * q[i + k];
    fq[jz - i] = fw;
  }
  fw = 0.0;
  for (i32 i = jz; i >= 0; --i) fw += fq[i];
  *y = ih == 0 ? fw : -fw;
  return n & 7;
}
// msun e_rem_pio2f.c: x = n * pi/2 + y.
WAVE_FN i32 wave_rem_pio2f(u32 u, f64* y) {
  const f64 x = (f64)WAVE_F(u);
  const u32 ix = u & 0x7FFFFFFFu;
  if (ix < 0x4DC90FDBu) { // |x| < 2^28 * pi/2: 25 + 53 bits of pi/2 suffice
    const f64 toint = 6755399441055744.0; // 1.5 / DBL_EPSILON: adding it rounds to an integer
    const f64 fn = (x * 6.36619772367581382433e-01 + toint) - toint;
    *y = x - fn * 1.57079631090164184570e+00 - fn * 1.58932547735281966916e-08;
    return (i32)fn;
  }
  const i32 e0 = (i32)(ix >> 23) - (0x7F + 23); // scale |x| into [2^23, 2^24)
  f64 t;
  const i32 n = wave_rem_pio2_large((f64)WAVE_F(ix - ((u32)e0 << 23)), e0, &t);
  *y = (u >> 31) != 0u ? -t : t;
  return (u >> 31) != 0u ? -n : n;
}
#define WAVE_PIO2_1 0x1.921fb54442d18p+0
#define WAVE_PIO2_2 0x1.921fb54442d18p+1
#define WAVE_PIO2_3 0x1.2d97c7f3321d2p+2
#define WAVE_PIO2_4 0x1.921fb54442d18p+2
WAVE_FN u32 wave_fsin(u32 u) {
  const f32 x = WAVE_F(u);
  const f64 x64 = (f64)x;
  const u32 ix = u & 0x7FFFFFFFu;
  const bool sign = (u >> 31) != 0u;
  if (ix <= 0x3F490FDAu) return ix < 0x39800000u ? u : WAVE_U(wave_k_sinf(x64));
  if (ix <= 0x407B53D1u) {
    if (ix <= 0x4016CBE3u) return WAVE_U(sign ? -wave_k_cosf(x64 + WAVE_PIO2_1) : wave_k_cosf(x64 - WAVE_PIO2_1));
    return WAVE_U(wave_k_sinf(sign ? -(x64 + WAVE_PIO2_2) : -(x64 - WAVE_PIO2_2)));
  }
  if (ix <= 0x40E231D5u) {
    if (ix <= 0x40AFEDDFu) return WAVE_U(sign ? wave_k_cosf(x64 + WAVE_PIO2_3) : -wave_k_cosf(x64 - WAVE_PIO2_3));
    return WAVE_U(wave_k_sinf(sign ? x64 + WAVE_PIO2_4 : x64 - WAVE_PIO2_4));
  }
  if (ix >= 0x7F800000u) return ix == 0x7F800000u ? 0xFFC00000u : (u | 0x400000u);
  f64 y;
  const i32 n = wave_rem_pio2f(u, &y);
  switch (n & 3) {
    case 0: return WAVE_U(wave_k_sinf(y));
    case 1: return WAVE_U(wave_k_cosf(y));
    case 2: return WAVE_U(wave_k_sinf(-y));
    default: return WAVE_U(-wave_k_cosf(y));
  }
}
WAVE_FN u32 wave_fcos(u32 u) {
  const f32 x = WAVE_F(u);
  const f64 x64 = (f64)x;
  const u32 ix = u & 0x7FFFFFFFu;
  const bool sign = (u >> 31) != 0u;
  if (ix <= 0x3F490FDAu) return ix < 0x39800000u ? 0x3F800000u : WAVE_U(wave_k_cosf(x64));
  if (ix <= 0x407B53D1u) {
    if (ix > 0x4016CBE3u) return WAVE_U(-wave_k_cosf(sign ? x64 + WAVE_PIO2_2 : x64 - WAVE_PIO2_2));
    return WAVE_U(sign ? wave_k_sinf(x64 + WAVE_PIO2_1) : wave_k_sinf(WAVE_PIO2_1 - x64));
  }
  if (ix <= 0x40E231D5u) {
    if (ix > 0x40AFEDDFu) return WAVE_U(wave_k_cosf(sign ? x64 + WAVE_PIO2_4 : x64 - WAVE_PIO2_4));
    return WAVE_U(sign ? wave_k_sinf(-x64 - WAVE_PIO2_3) : wave_k_sinf(x64 - WAVE_PIO2_3));
  }
  if (ix >= 0x7F800000u) return ix == 0x7F800000u ? 0xFFC00000u : (u | 0x400000u);
  f64 y;
  const i32 n = wave_rem_pio2f(u, &y);
  switch (n & 3) {
    case 0: return WAVE_U(wave_k_cosf(y));
    case 1: return WAVE_U(wave_k_sinf(-y));
    case 2: return WAVE_U(-wave_k_cosf(y));
    default: return WAVE_U(wave_k_sinf(y));
  }
}

// ---- fexp2 (msun s_exp2f.c): 16-entry table of 2^(i/16 - 1/2), degree-4 polynomial in f64.
WAVE_FN f64 wave_exp2_table(u32 i) {
  switch (i & 15u) {
    case 0: return 0x1.6a09e667f3bcdp-1;
    case 1: return 0x1.7a11473eb0187p-1;
    case 2: return 0x1.8ace5422aa0dbp-1;
    case 3: return 0x1.9c49182a3f090p-1;
    case 4: return 0x1.ae89f995ad3adp-1;
    case 5: return 0x1.c199bdd85529cp-1;
    case 6: return 0x1.d5818dcfba487p-1;
    case 7: return 0x1.ea4afa2a490dap-1;
    case 8: return 0x1.0000000000000p+0;
    case 9: return 0x1.0b5586cf9890fp+0;
    case 10: return 0x1.172b83c7d517bp+0;
    case 11: return 0x1.2387a6e756238p+0;
    case 12: return 0x1.306fe0a31b715p+0;
    case 13: return 0x1.3dea64c123422p+0;
    case 14: return 0x1.4bfdad5362a27p+0;
    default: return 0x1.5ab07dd485429p+0;
  }
}
WAVE_FN u32 wave_fexp2(u32 u) {
  const f32 x = WAVE_F(u);
  const u32 ix = u & 0x7FFFFFFFu;
  if (ix > 0x42FC0000u) { // |x| > 126
    if (ix > 0x7F800000u) return u; // NaN unchanged
    if (u >= 0x43000000u && u < 0x80000000u) return WAVE_U(x * 0x1p127f); // x >= 128: overflow
    if (u >= 0xC3160000u) return 0u; // x <= -150
  } else if (ix <= 0x33000000u) {
    return WAVE_U(1.0f + x); // |x| <= 2^-25
  }
  const f32 redux = 786432.0f; // 0x1.8p23 / 16
  const u32 ui = WAVE_U(x + redux);
  const u32 i0 = ui + 8u;
  const u32 k = i0 / 16u;
  const f64 ukf = WAVE_D(0u, (0x3FFu + k) << 20); // 2^k (exponent field wraps as in msun)
  const f32 uf = WAVE_F(ui) - redux;
  const f64 z = (f64)(x - uf);
  const f64 r0 = wave_exp2_table(i0);
  const f64 t = r0 * z;
  const f64 p1 = (f64)WAVE_F(0x3F317218u), p2 = (f64)WAVE_F(0x3E75FDF0u);
  const f64 p3 = (f64)WAVE_F(0x3D6359A4u), p4 = (f64)WAVE_F(0x3C1D964Eu);
  const f64 r = r0 + t * (p1 + z * p2) + t * (z * z) * (p3 + z * p4);
  return WAVE_U((f32)(r * ukf));
}
"#;
