//! The memory-bound workloads in plain Rust: rayon over chunks of slices, with inner loops
//! simple enough for rustc to vectorise (what a Rust user would write to reach memory
//! bandwidth). Every function runs on the pool it is given.

use super::NativeThreads;
use rayon::prelude::*;

/// Elements per rayon task: 64 KiB of f32.
const CHUNK: usize = 1 << 14;

/// c = a + b.
pub fn vecadd(a: &[f32], b: &[f32], c: &mut [f32], threads: &NativeThreads) {
    threads.run(|| {
        c.par_chunks_mut(CHUNK).zip(a.par_chunks(CHUNK)).zip(b.par_chunks(CHUNK)).for_each(|((c, a), b)| {
            for ((c, &a), &b) in c.iter_mut().zip(a).zip(b) {
                *c = a + b;
            }
        })
    });
}

/// The wrapping sum of `x`.
pub fn sum(x: &[u32], threads: &NativeThreads) -> u32 {
    threads.run(|| {
        x.par_chunks(CHUNK)
            .map(|chunk| chunk.iter().fold(0u32, |s, &v| s.wrapping_add(v)))
            .reduce(|| 0, u32::wrapping_add)
    })
}

/// Counts of the low byte of each value.
pub fn histogram(x: &[u32], threads: &NativeThreads) -> Vec<u32> {
    threads.run(|| {
        x.par_chunks(CHUNK)
            .map(|chunk| {
                let mut bins = vec![0u32; 256];
                for &v in chunk {
                    bins[(v & 255) as usize] += 1;
                }
                bins
            })
            .reduce(
                || vec![0u32; 256],
                |mut total, bins| {
                    total.iter_mut().zip(bins).for_each(|(t, b)| *t += b);
                    total
                },
            )
    })
}

/// y = the exclusive wrapping prefix sum of x: chunk totals in parallel, their scan, then each
/// chunk scanned from its offset in parallel.
pub fn exclusive_scan(x: &[u32], y: &mut [u32], threads: &NativeThreads) {
    threads.run(|| {
        let totals: Vec<u32> =
            x.par_chunks(CHUNK).map(|c| c.iter().fold(0u32, |s, &v| s.wrapping_add(v))).collect();
        let mut offsets = Vec::with_capacity(totals.len());
        let mut running = 0u32;
        for t in totals {
            offsets.push(running);
            running = running.wrapping_add(t);
        }
        y.par_chunks_mut(CHUNK).zip(x.par_chunks(CHUNK)).zip(offsets).for_each(|((y, x), offset)| {
            let mut running = offset;
            for (y, &v) in y.iter_mut().zip(x) {
                *y = running;
                running = running.wrapping_add(v);
            }
        })
    });
}

/// y = max(x, 0).
pub fn relu(x: &[f32], y: &mut [f32], threads: &NativeThreads) {
    threads.run(|| {
        y.par_chunks_mut(CHUNK).zip(x.par_chunks(CHUNK)).for_each(|(y, x)| {
            for (y, &x) in y.iter_mut().zip(x) {
                *y = x.max(0.0);
            }
        })
    });
}

/// `y[r][c] = x[r][c] + bias[c]` for rows of `bias.len()` values (the last row may be short).
pub fn bias_add(x: &[f32], bias: &[f32], y: &mut [f32], threads: &NativeThreads) {
    let cols = bias.len();
    let rows_per_task = CHUNK.div_ceil(cols).max(1) * cols;
    threads.run(|| {
        y.par_chunks_mut(rows_per_task).zip(x.par_chunks(rows_per_task)).for_each(|(y, x)| {
            for (y_row, x_row) in y.chunks_mut(cols).zip(x.chunks(cols)) {
                for ((y, &x), &b) in y_row.iter_mut().zip(x_row).zip(bias) {
                    *y = x + b;
                }
            }
        })
    });
}

/// Softmax of each row of `cols` values (the last row may be short), with `f32::exp`.
pub fn softmax(x: &[f32], cols: usize, y: &mut [f32], threads: &NativeThreads) {
    threads.run(|| {
        y.par_chunks_mut(cols).zip(x.par_chunks(cols)).for_each(|(y, x)| {
            let max = x.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
            let mut sum = 0f32;
            for (y, &x) in y.iter_mut().zip(x) {
                *y = (x - max).exp();
                sum += *y;
            }
            let scale = 1.0 / sum;
            for y in y.iter_mut() {
                *y *= scale;
            }
        })
    });
}

/// y = xᵀ for an n × n matrix, by 32 × 32 blocks; a task writes 32 rows of y.
pub fn transpose(n: usize, x: &[f32], y: &mut [f32], threads: &NativeThreads) {
    const BLOCK: usize = 32;
    if n == 0 {
        return;
    }
    threads.run(|| {
        y.par_chunks_mut(BLOCK * n).enumerate().for_each(|(band, y_band)| {
            let rows = y_band.len() / n;
            for j0 in (0..n).step_by(BLOCK) {
                for r in 0..rows {
                    let x_col = band * BLOCK + r;
                    let y_row = &mut y_band[r * n + j0..r * n + (j0 + BLOCK).min(n)];
                    for (k, y) in y_row.iter_mut().enumerate() {
                        *y = x[(j0 + k) * n + x_col];
                    }
                }
            }
        })
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_match_serial_loops() {
        let threads = NativeThreads::new(3).unwrap();
        let n = 3 * CHUNK + 17;
        let x: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
        assert_eq!(sum(&x, &threads), x.iter().fold(0u32, |s, &v| s.wrapping_add(v)));
        let bins = histogram(&x, &threads);
        assert_eq!(bins.iter().sum::<u32>(), n as u32);
        assert_eq!(bins[7], x.iter().filter(|&&v| v & 255 == 7).count() as u32);
        let mut scan = vec![0u32; n];
        exclusive_scan(&x, &mut scan, &threads);
        assert_eq!(scan[0], 0);
        assert_eq!(scan[n - 1], x[..n - 1].iter().fold(0u32, |s, &v| s.wrapping_add(v)));
        assert_eq!(scan[CHUNK + 1], x[..=CHUNK].iter().fold(0u32, |s, &v| s.wrapping_add(v)));

        let f: Vec<f32> = x.iter().map(|&v| (v >> 8) as f32 / 4096.0 - 2048.0).collect();
        let mut y = vec![0f32; n];
        relu(&f, &mut y, &threads);
        assert!(y.iter().zip(&f).all(|(&y, &f)| y == if f > 0.0 { f } else { 0.0 }));
        let mut sums = vec![0f32; n];
        vecadd(&f, &y, &mut sums, &threads);
        assert!(sums.iter().zip(&f).zip(&y).all(|((&s, &a), &b)| s == a + b));
        let bias = [1.0, 2.0, 4.0];
        bias_add(&f, &bias, &mut y, &threads);
        assert_eq!(y[n - 1], f[n - 1] + bias[(n - 1) % 3]);
        assert_eq!(y[CHUNK + 1], f[CHUNK + 1] + bias[(CHUNK + 1) % 3]);
    }

    #[test]
    fn softmax_rows_sum_to_one_and_transpose_swaps() {
        let threads = NativeThreads::new(2).unwrap();
        let x: Vec<f32> = (0..25).map(|i| (i % 7) as f32 - 3.0).collect();
        let mut y = vec![0f32; 25];
        softmax(&x, 10, &mut y, &threads); // rows of 10, 10 and 5
        for row in y.chunks(10) {
            assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        }
        assert!((y[0] / y[1] - (-1f32).exp()).abs() < 1e-6);
        let n = 45;
        let m: Vec<f32> = (0..n * n).map(|i| i as f32).collect();
        let mut t = vec![0f32; n * n];
        transpose(n, &m, &mut t, &threads);
        assert!((0..n).all(|i| (0..n).all(|j| t[i * n + j] == m[j * n + i])));
    }
}
