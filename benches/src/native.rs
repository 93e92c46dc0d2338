//! Plain-Rust GEMM: the f64 reference every result is checked against, and two native f32
//! baselines compiled by rustc (what the JIT is compared with).

/// C = A·B in f64 (row-major N×N): the reference.
pub fn gemm_f64(n: usize, a: &[f32], b: &[f32]) -> Vec<f64> {
    let mut c = vec![0f64; n * n];
    for i in 0..n {
        for k in 0..n {
            let aik = a[i * n + k] as f64;
            let row = &b[k * n..k * n + n];
            for (cij, &bkj) in c[i * n..i * n + n].iter_mut().zip(row) {
                *cij += aik * bkj as f64;
            }
        }
    }
    c
}

/// The textbook triple loop (i, j, k), f32.
pub fn gemm_naive(n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    for i in 0..n {
        for j in 0..n {
            let mut acc = 0f32;
            for k in 0..n {
                acc += a[i * n + k] * b[k * n + j];
            }
            c[i * n + j] = acc;
        }
    }
}

/// Cache-blocked (64×64×64 blocks, i-k-j order inside so the inner loop vectorises), f32.
pub fn gemm_blocked(n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    const BLOCK: usize = 64;
    c.iter_mut().for_each(|x| *x = 0.0);
    for ii in (0..n).step_by(BLOCK) {
        for kk in (0..n).step_by(BLOCK) {
            for jj in (0..n).step_by(BLOCK) {
                let (i_end, k_end, j_end) = ((ii + BLOCK).min(n), (kk + BLOCK).min(n), (jj + BLOCK).min(n));
                for i in ii..i_end {
                    for k in kk..k_end {
                        let aik = a[i * n + k];
                        let b_row = &b[k * n + jj..k * n + j_end];
                        let c_row = &mut c[i * n + jj..i * n + j_end];
                        for (cij, &bkj) in c_row.iter_mut().zip(b_row) {
                            *cij += aik * bkj;
                        }
                    }
                }
            }
        }
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

    #[test]
    fn native_gemms_match_the_reference() {
        let n = 70; // not a multiple of the block: exercises the edges
        let a: Vec<f32> = (0..n * n).map(|i| ((i * 7 % 13) as f32 - 6.0) / 4.0).collect();
        let b: Vec<f32> = (0..n * n).map(|i| ((i * 5 % 11) as f32 - 5.0) / 8.0).collect();
        let reference = gemm_f64(n, &a, &b);
        let mut c = vec![0f32; n * n];
        gemm_naive(n, &a, &b, &mut c);
        assert!(max_relative_error(&c, &reference) < 1e-5);
        let mut c2 = vec![1f32; n * n];
        gemm_blocked(n, &a, &b, &mut c2);
        assert!(max_relative_error(&c2, &reference) < 1e-5);
        // A hand-checked element: row 0 · column 0.
        let c00: f64 = (0..n).map(|k| a[k] as f64 * b[k * n] as f64).sum();
        assert_eq!(reference[0], c00);
    }
}
