//! Input data of the benchmarks: deterministic pseudo-random words, the same on every run and
//! machine. Word `i` of a stream is an integer hash of `i` and the stream's seed, so there is no
//! generator state and every word can be made on its own.

/// A 32-bit integer hash, a bijection (Chris Wellons' `lowbias32`: two multiply-xorshift
/// rounds).
fn hash32(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7FEB_352D);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846C_A68B);
    x ^ (x >> 16)
}

/// `count` pseudo-random words of the stream `seed` (`count` at most 2^32: inputs fit in device
/// memory).
pub fn words(seed: u64, count: usize) -> Vec<u32> {
    let key = hash32(seed as u32 ^ hash32((seed >> 32) as u32 ^ 0x5EED));
    (0..count).map(|i| hash32(hash32(i as u32) ^ key)).collect()
}

/// `count` values of the stream `seed`, uniform in [−1, 1) (multiples of 2^−23).
pub fn unit_values(seed: u64, count: usize) -> Vec<f32> {
    words(seed, count).into_iter().map(|w| (w >> 8) as f32 / (1u32 << 23) as f32 - 1.0).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_differ_by_seed() {
        assert_eq!(words(7, 1000), words(7, 1000));
        assert_eq!(words(7, 10), words(7, 1000)[..10]);
        let (a, b) = (words(7, 1000), words(8, 1000));
        assert!(a.iter().zip(&b).filter(|(x, y)| x == y).count() < 3);
        assert_ne!(words(1 << 32, 10), words(0, 10));
    }

    #[test]
    fn words_spread_over_every_bit_and_unit_values_over_the_interval() {
        let w = words(1, 4096);
        for bit in 0..32 {
            let ones = w.iter().filter(|&&v| v >> bit & 1 == 1).count();
            assert!((1800..2300).contains(&ones), "bit {bit}: {ones} of 4096 set");
        }
        let v = unit_values(2, 4096);
        assert!(v.iter().all(|x| (-1.0..1.0).contains(x)));
        let negative = v.iter().filter(|&&x| x < 0.0).count();
        assert!((1800..2300).contains(&negative), "{negative} of 4096 negative");
        let histogram = w.iter().fold([0u32; 256], |mut h, &x| {
            h[(x & 0xFF) as usize] += 1;
            h
        });
        assert!(histogram.iter().all(|&n| (4..40).contains(&n)), "{histogram:?}");
    }
}
