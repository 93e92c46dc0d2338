//! C = A·B (row-major N×N, f32) with a 4×8 register-blocked micro-kernel on 128-bit vectors:
//! the shape of code Cranelift can emit (it has no 256-bit vectors), written as well as plain
//! Rust with intrinsics allows.
//!
//! B is packed once into panels of 8 columns (k-major, zero-padded), A per band of `MC`
//! rows and per `KC` slice of K into panels of 4 rows, so the micro-kernel reads both
//! contiguously: per k it broadcasts 4 values of A, loads 8 of B (two 128-bit vectors) and
//! updates 4 × 2 vector accumulators (8 `__m128`), with FMA where the CPU has it. Bands of
//! rows run in parallel on the [`NativeThreads`] pool. Elsewhere than x86-64 the same loops run
//! on a portable scalar micro-kernel.

use super::NativeThreads;
use rayon::prelude::*;

/// Rows of a micro-tile.
pub const MR: usize = 4;
/// Columns of a micro-tile.
pub const NR: usize = 8;
/// Rows of A per parallel task (its packed slice stays in L2).
const MC: usize = 64;
/// Length of a K slice (a packed B panel slice, KC × NR f32 = 8 KiB, stays in L1).
const KC: usize = 256;

/// Which micro-kernel runs on this CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MicroKernel {
    /// 128-bit SSE with fused multiply-add.
    SseFma,
    /// 128-bit SSE, multiply then add.
    Sse,
    /// Plain scalar Rust (other architectures).
    Scalar,
}

impl MicroKernel {
    pub fn detect() -> MicroKernel {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("fma") {
                MicroKernel::SseFma
            } else {
                MicroKernel::Sse
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            MicroKernel::Scalar
        }
    }

    /// The instructions it uses, for the result table.
    pub fn describe(self) -> &'static str {
        match self {
            MicroKernel::SseFma => "128-bit SSE + FMA",
            MicroKernel::Sse => "128-bit SSE, no FMA",
            MicroKernel::Scalar => "scalar",
        }
    }

    /// tile = A_panel · B_panel over `kc` steps: `a` holds kc × MR values (k-major), `b`
    /// kc × NR values (k-major).
    fn run(self, kc: usize, a: &[f32], b: &[f32], tile: &mut [[f32; NR]; MR]) {
        assert!(a.len() >= kc * MR && b.len() >= kc * NR);
        match self {
            // SAFETY: the lengths are checked above; `detect` chose the FMA kernel only where
            // the CPU has FMA (SSE is part of x86-64).
            #[cfg(target_arch = "x86_64")]
            MicroKernel::SseFma => unsafe { sse::tile_fma(kc, a.as_ptr(), b.as_ptr(), tile) },
            #[cfg(target_arch = "x86_64")]
            MicroKernel::Sse => unsafe { sse::tile_mul_add(kc, a.as_ptr(), b.as_ptr(), tile) },
            _ => scalar_tile(kc, a, b, tile),
        }
    }
}

fn scalar_tile(kc: usize, a: &[f32], b: &[f32], tile: &mut [[f32; NR]; MR]) {
    let mut acc = [[0f32; NR]; MR];
    for (a_k, b_k) in a.chunks_exact(MR).zip(b.chunks_exact(NR)).take(kc) {
        for (acc_row, &a_ik) in acc.iter_mut().zip(a_k) {
            for (acc_ij, &b_kj) in acc_row.iter_mut().zip(b_k) {
                *acc_ij = a_ik.mul_add(b_kj, *acc_ij);
            }
        }
    }
    *tile = acc;
}

#[cfg(target_arch = "x86_64")]
mod sse {
    use super::{MR, NR};
    use std::arch::x86_64::*;

    /// How an accumulator is updated: acc + a·b.
    trait MulAdd {
        unsafe fn mul_add(a: __m128, b: __m128, acc: __m128) -> __m128;
    }

    struct Fused;
    impl MulAdd for Fused {
        #[inline(always)]
        unsafe fn mul_add(a: __m128, b: __m128, acc: __m128) -> __m128 {
            _mm_fmadd_ps(a, b, acc)
        }
    }

    struct Separate;
    impl MulAdd for Separate {
        #[inline(always)]
        unsafe fn mul_add(a: __m128, b: __m128, acc: __m128) -> __m128 {
            _mm_add_ps(_mm_mul_ps(a, b), acc)
        }
    }

    /// The micro-kernel: 8 accumulators, rows i = 0..4 in `acc[2i]` (columns 0..4) and
    /// `acc[2i + 1]` (columns 4..8).
    #[inline(always)]
    unsafe fn tile<M: MulAdd>(kc: usize, a: *const f32, b: *const f32, out: &mut [[f32; NR]; MR]) {
        let mut acc = [_mm_setzero_ps(); 2 * MR];
        for k in 0..kc {
            let b_lo = _mm_loadu_ps(b.add(k * NR));
            let b_hi = _mm_loadu_ps(b.add(k * NR + 4));
            for i in 0..MR {
                let a_ik = _mm_set1_ps(*a.add(k * MR + i));
                acc[2 * i] = M::mul_add(a_ik, b_lo, acc[2 * i]);
                acc[2 * i + 1] = M::mul_add(a_ik, b_hi, acc[2 * i + 1]);
            }
        }
        for (i, row) in out.iter_mut().enumerate() {
            _mm_storeu_ps(row.as_mut_ptr(), acc[2 * i]);
            _mm_storeu_ps(row.as_mut_ptr().add(4), acc[2 * i + 1]);
        }
    }

    /// SAFETY: the CPU must have FMA; `a` must hold kc·MR values and `b` kc·NR.
    #[target_feature(enable = "fma")]
    pub(super) unsafe fn tile_fma(kc: usize, a: *const f32, b: *const f32, out: &mut [[f32; NR]; MR]) {
        tile::<Fused>(kc, a, b, out)
    }

    /// SAFETY: `a` must hold kc·MR values and `b` kc·NR.
    pub(super) unsafe fn tile_mul_add(kc: usize, a: *const f32, b: *const f32, out: &mut [[f32; NR]; MR]) {
        tile::<Separate>(kc, a, b, out)
    }
}

/// B (n × n) as panels of NR columns: panel p holds B[k][p·NR + j] at (p·n + k)·NR + j, zeros
/// past the last column.
fn pack_b(n: usize, b: &[f32], threads: &NativeThreads) -> Vec<f32> {
    let panels = n.div_ceil(NR);
    let mut packed = vec![0f32; panels * n * NR];
    threads.run(|| {
        packed.par_chunks_mut(n * NR).enumerate().for_each(|(p, panel)| {
            let columns = NR.min(n - p * NR);
            for (k, dst) in panel.chunks_exact_mut(NR).enumerate() {
                dst[..columns].copy_from_slice(&b[k * n + p * NR..k * n + p * NR + columns]);
            }
        })
    });
    packed
}

/// Rows `rows` of A, columns k0..k0 + kc, as panels of MR rows: panel q holds A[q·MR + i][k0 + k]
/// at (q·kc + k)·MR + i, zeros past the last row.
fn pack_a(n: usize, a: &[f32], rows: std::ops::Range<usize>, k0: usize, kc: usize, packed: &mut [f32]) {
    for (q, panel) in packed.chunks_exact_mut(kc * MR).enumerate() {
        for i in 0..MR {
            let row = rows.start + q * MR + i;
            if row < rows.end {
                let src = &a[row * n + k0..row * n + k0 + kc];
                for (k, &v) in src.iter().enumerate() {
                    panel[k * MR + i] = v;
                }
            } else {
                for k in 0..kc {
                    panel[k * MR + i] = 0.0;
                }
            }
        }
    }
}

/// C = A·B for row-major n × n matrices (any n), on `threads`, with `kernel`.
pub fn gemm_4x8_with(
    kernel: MicroKernel,
    n: usize,
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    threads: &NativeThreads,
) {
    assert!(a.len() >= n * n && b.len() >= n * n && c.len() >= n * n);
    if n == 0 {
        return;
    }
    let packed_b = pack_b(n, b, threads);
    let panels = n.div_ceil(NR);
    threads.run(|| {
        c[..n * n].par_chunks_mut(MC * n).enumerate().for_each(|(band, c_band)| {
            let row0 = band * MC;
            let rows = c_band.len() / n;
            c_band.fill(0.0);
            let mut packed_a = vec![0f32; rows.div_ceil(MR) * MR * KC];
            let mut tile = [[0f32; NR]; MR];
            for k0 in (0..n).step_by(KC) {
                let kc = KC.min(n - k0);
                let packed_a = &mut packed_a[..rows.div_ceil(MR) * MR * kc];
                pack_a(n, a, row0..row0 + rows, k0, kc, packed_a);
                for p in 0..panels {
                    let b_panel = &packed_b[(p * n + k0) * NR..(p * n + k0 + kc) * NR];
                    let columns = NR.min(n - p * NR);
                    for (q, a_panel) in packed_a.chunks_exact(kc * MR).enumerate() {
                        kernel.run(kc, a_panel, b_panel, &mut tile);
                        for (i, tile_row) in tile.iter().enumerate().take(rows.saturating_sub(q * MR).min(MR))
                        {
                            let start = (q * MR + i) * n + p * NR;
                            for (cij, &t) in c_band[start..start + columns].iter_mut().zip(tile_row) {
                                *cij += t;
                            }
                        }
                    }
                }
            }
        })
    });
}

/// [`gemm_4x8_with`] the micro-kernel [`MicroKernel::detect`] picks.
pub fn gemm_4x8(n: usize, a: &[f32], b: &[f32], c: &mut [f32], threads: &NativeThreads) {
    gemm_4x8_with(MicroKernel::detect(), n, a, b, c, threads)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::native::{gemm_f64, max_relative_error};

    #[test]
    fn every_micro_kernel_matches_the_reference_at_ragged_sizes() {
        let threads = NativeThreads::new(2).unwrap();
        let mut kernels = vec![MicroKernel::Scalar, MicroKernel::detect()];
        if cfg!(target_arch = "x86_64") {
            kernels.push(MicroKernel::Sse);
        }
        // 1 and 7: less than a tile; 70: ragged rows and columns; 300: more than one K slice
        // and more than one band of rows.
        for n in [1, 7, 70, 300] {
            let a: Vec<f32> = (0..n * n).map(|i| ((i * 7 % 13) as f32 - 6.0) / 4.0).collect();
            let b: Vec<f32> = (0..n * n).map(|i| ((i * 5 % 11) as f32 - 5.0) / 8.0).collect();
            let reference = gemm_f64(n, &a, &b);
            for &kernel in &kernels {
                let mut c = vec![f32::NAN; n * n];
                gemm_4x8_with(kernel, n, &a, &b, &mut c, &threads);
                let err = max_relative_error(&c, &reference);
                assert!(err < 1e-6, "{kernel:?} n={n}: error {err}");
            }
        }
    }
}
