//! Plain Rust: the f64 GEMM reference every GEMM result is checked against, and the native
//! yardsticks the JIT is compared with — the strongest code a Rust user would otherwise write
//! or call: a 4×8 register-blocked GEMM on 128-bit vectors ([`gemm4x8`], the shape Cranelift
//! can emit), the `matrixmultiply` crate's `sgemm` ([`sgemm_rows`], 256-bit where the CPU has
//! it), and rayon over chunks of plain slices for the memory-bound workloads ([`streams`]).
//! All of them run on a [`NativeThreads`] pool of the JIT's thread count.

pub mod gemm4x8;
pub mod streams;

use crate::BenchError;
use rayon::prelude::*;

/// A rayon pool for the native yardsticks, as many threads as the JIT uses.
pub struct NativeThreads {
    pool: rayon::ThreadPool,
}

impl NativeThreads {
    /// `threads` workers; 0 = one per core (the JIT's meaning of 0).
    pub fn new(threads: usize) -> Result<NativeThreads, BenchError> {
        let count =
            if threads == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { threads };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(count)
            .thread_name(|i| format!("native yardstick {i}"))
            .build()
            .map_err(|e| BenchError::Device(format!("native thread pool: {e}")))?;
        Ok(NativeThreads { pool })
    }

    pub fn count(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// Run `work` inside the pool (its rayon calls use the pool's threads).
    pub fn run<R: Send>(&self, work: impl FnOnce() -> R + Send) -> R {
        self.pool.install(work)
    }
}

/// C = A·B in f64 (row-major N×N): the reference.
pub fn gemm_f64(n: usize, a: &[f32], b: &[f32]) -> Vec<f64> {
    let mut c = vec![0f64; n * n];
    c.par_chunks_mut(n.max(1)).enumerate().for_each(|(i, c_row)| {
        for k in 0..n {
            let aik = a[i * n + k] as f64;
            let row = &b[k * n..k * n + n];
            for (cij, &bkj) in c_row.iter_mut().zip(row) {
                *cij += aik * bkj as f64;
            }
        }
    });
    c
}

/// C = A·B (row-major N×N, f32) with `matrixmultiply::sgemm`, the rows of C split into one
/// band per thread (`sgemm` itself is single-threaded here; each band packs B on its own).
pub fn sgemm_rows(n: usize, a: &[f32], b: &[f32], c: &mut [f32], threads: &NativeThreads) {
    assert!(a.len() >= n * n && b.len() >= n * n && c.len() >= n * n);
    if n == 0 {
        return;
    }
    let band = n.div_ceil(threads.count()).next_multiple_of(8);
    threads.run(|| {
        c[..n * n].par_chunks_mut(band * n).zip(a[..n * n].par_chunks(band * n)).for_each(
            |(c_band, a_band)| {
                let rows = c_band.len() / n;
                // SAFETY: A's band is rows × n, B is n × n and C's band is rows × n, all row-major
                // with unit column stride, inside the slices (checked above); C does not alias them.
                unsafe {
                    matrixmultiply::sgemm(
                        rows,
                        n,
                        n,
                        1.0,
                        a_band.as_ptr(),
                        n as isize,
                        1,
                        b.as_ptr(),
                        n as isize,
                        1,
                        0.0,
                        c_band.as_mut_ptr(),
                        n as isize,
                        1,
                    )
                }
            },
        )
    });
}

/// C = A·B for f16 matrices (as bits) the way a Rust user would do it on a CPU: A and B
/// converted to f32, [`gemm4x8::gemm_4x8`], C rounded to f16.
pub fn gemm_f16_via_f32(n: usize, a: &[u16], b: &[u16], threads: &NativeThreads) -> Vec<u16> {
    use half::slice::{HalfBitsSliceExt, HalfFloatSliceExt};
    let to_f32 = |h: &[u16]| -> Vec<f32> {
        let mut f = vec![0f32; h.len()];
        h.reinterpret_cast::<half::f16>().convert_to_f32_slice(&mut f);
        f
    };
    let (a, b) = (to_f32(&a[..n * n]), to_f32(&b[..n * n]));
    let mut c = vec![0f32; n * n];
    gemm4x8::gemm_4x8(n, &a, &b, &mut c, threads);
    let mut c16 = vec![half::f16::ZERO; n * n];
    c16.convert_from_f32_slice(&c);
    c16.into_iter().map(|h| h.to_bits()).collect()
}

/// The instructions `matrixmultiply` picks for f32 on this CPU (its own run-time choice).
pub fn sgemm_instruction_set() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("fma") && std::arch::is_x86_feature_detected!("avx2") {
            return "256-bit AVX2 + FMA";
        }
        if std::arch::is_x86_feature_detected!("avx") {
            return "256-bit AVX";
        }
        "128-bit SSE2"
    }
    #[cfg(target_arch = "aarch64")]
    {
        "128-bit NEON"
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        "portable Rust"
    }
}

/// max |c − reference| / max |reference| (normwise relative error).
pub fn max_relative_error(c: &[f32], reference: &[f64]) -> f64 {
    let scale = reference.iter().fold(0f64, |m, &r| m.max(r.abs())).max(f64::MIN_POSITIVE);
    c.iter().zip(reference).fold(0f64, |m, (&x, &r)| m.max((x as f64 - r).abs())) / scale
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrices(n: usize) -> (Vec<f32>, Vec<f32>) {
        let a = (0..n * n).map(|i| ((i * 7 % 13) as f32 - 6.0) / 4.0).collect();
        let b = (0..n * n).map(|i| ((i * 5 % 11) as f32 - 5.0) / 8.0).collect();
        (a, b)
    }

    #[test]
    fn reference_is_the_textbook_product() {
        let n = 9;
        let (a, b) = matrices(n);
        let reference = gemm_f64(n, &a, &b);
        for (i, j) in [(0, 0), (3, 7), (8, 8)] {
            let want: f64 = (0..n).map(|k| a[i * n + k] as f64 * b[k * n + j] as f64).sum();
            assert_eq!(reference[i * n + j], want, "C[{i}][{j}]");
        }
    }

    #[test]
    fn sgemm_rows_matches_the_reference() {
        // 70 rows over 3 threads: bands of 24, 24 and 22 rows.
        let n = 70;
        let (a, b) = matrices(n);
        let mut c = vec![f32::NAN; n * n];
        sgemm_rows(n, &a, &b, &mut c, &NativeThreads::new(3).unwrap());
        assert!(max_relative_error(&c, &gemm_f64(n, &a, &b)) < 1e-6);
    }

    #[test]
    fn relative_error_sees_one_wrong_element() {
        let reference = [1.0, -4.0, 2.0];
        assert_eq!(max_relative_error(&[1.0, -4.0, 2.0], &reference), 0.0);
        assert_eq!(max_relative_error(&[1.0, -4.0, 3.0], &reference), 0.25);
    }
}
