//! The memory-bound workloads: vector add, reduction, histogram, prefix sum, ReLU, bias add,
//! row softmax and transpose. Each runs on an engine or as native Rust on the same inputs, and
//! every result is checked against plain Rust.

use crate::data;
use crate::kernels::{self, load};
use crate::native::{streams as native, NativeThreads};
use crate::workloads::{
    new_device, read_u32s, time_native, time_steps, u32_bytes, write, Repeat, RunOptions, Timing,
};
use crate::BenchError;
use wave_runtime::{Device, Engine};

/// Row length of bias-add: not a multiple of the workgroup, so the guard matters.
pub const BIAS_ADD_COLUMNS: u32 = 1000;
/// Row length of softmax.
pub const SOFTMAX_COLUMNS: u32 = 1024;

/// The memory-bound workloads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    Vecadd,
    Reduction,
    Histogram,
    PrefixSum,
    Relu,
    BiasAdd,
    Softmax,
    Transpose,
}

impl Stream {
    pub const ALL: [Stream; 8] = [
        Stream::Vecadd,
        Stream::Reduction,
        Stream::Histogram,
        Stream::PrefixSum,
        Stream::Relu,
        Stream::BiasAdd,
        Stream::Softmax,
        Stream::Transpose,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Stream::Vecadd => "vecadd",
            Stream::Reduction => "reduction",
            Stream::Histogram => "histogram",
            Stream::PrefixSum => "prefix-sum",
            Stream::Relu => "relu",
            Stream::BiasAdd => "bias-add",
            Stream::Softmax => "softmax",
            Stream::Transpose => "transpose",
        }
    }

    pub fn from_name(name: &str) -> Option<Stream> {
        Stream::ALL.into_iter().find(|s| s.name() == name)
    }

    /// What is computed, for the head of the result table.
    pub fn describe(self) -> String {
        match self {
            Stream::Vecadd => "c = a + b over f32".into(),
            Stream::Reduction => "sum of u32 values: wave reduction + atomics".into(),
            Stream::Histogram => "256-bin histogram with local atomics".into(),
            Stream::PrefixSum => "exclusive prefix sum of u32 values, three kernels".into(),
            Stream::Relu => "y = max(x, 0) over f32, one element per thread, guarded".into(),
            Stream::BiasAdd => {
                format!("y = x + bias[column] over rows of {BIAS_ADD_COLUMNS} f32, one element per thread, guarded")
            }
            Stream::Softmax => format!(
                "softmax of rows of {SOFTMAX_COLUMNS} f32, one 256-thread workgroup per row (wave butterflies, local memory)"
            ),
            Stream::Transpose => "y = xᵀ for an N×N f32 matrix (n = N²), 32×32 tiles through local memory".into(),
        }
    }

    /// The native yardstick, for the head of the result table.
    pub fn native_yardstick(self) -> &'static str {
        match self {
            Stream::Softmax => "rayon over rows, plain slices, f32::exp",
            Stream::Transpose => "rayon over 32-row bands of y, 32×32 blocks, plain slices",
            Stream::BiasAdd => "rayon over chunks of rows, plain slices (auto-vectorised)",
            _ => "rayon over 16 Ki-element chunks, plain slices (auto-vectorised)",
        }
    }

    /// Its kernels: (source, file name, kernel name).
    pub fn kernels(self) -> Vec<(&'static str, &'static str, &'static str)> {
        match self {
            Stream::Vecadd => vec![(kernels::VECADD, "vecadd.wave", "vecadd")],
            Stream::Reduction => vec![(kernels::REDUCTION, "reduction.wave", "reduction")],
            Stream::Histogram => vec![(kernels::HISTOGRAM, "histogram.wave", "histogram")],
            Stream::PrefixSum => ["scan_blocks", "scan_sums", "scan_add"]
                .into_iter()
                .map(|name| (kernels::PREFIX_SUM, "prefix_sum.wave", name))
                .collect(),
            Stream::Relu => vec![(kernels::RELU, "relu.wave", "relu")],
            Stream::BiasAdd => vec![(kernels::BIAS_ADD, "bias_add.wave", "bias_add")],
            Stream::Softmax => vec![(kernels::SOFTMAX, "softmax.wave", "softmax")],
            Stream::Transpose => vec![(kernels::TRANSPOSE, "transpose.wave", "transpose")],
        }
    }

    /// Bytes one run must move at least: inputs read plus outputs written.
    pub fn bytes(self, n: u32) -> u64 {
        n as u64
            * match self {
                Stream::Vecadd => 12,
                Stream::Reduction | Stream::Histogram => 4,
                Stream::PrefixSum | Stream::Relu | Stream::BiasAdd | Stream::Softmax | Stream::Transpose => 8,
            }
    }

    /// Why `n` does not suit this workload, if it does not.
    pub fn check_size(self, n: u32) -> Result<(), BenchError> {
        if n == 0 {
            return Err(BenchError::Usage("n must be positive".into()));
        }
        if n > 1 << 28 {
            return Err(BenchError::Usage(format!("n = {n}: at most 2^28 elements fit the 4 GiB device")));
        }
        if self == Stream::Transpose && square_side(n).is_none() {
            return Err(BenchError::Usage(format!("transpose: n = {n} is not a square (n = N²)")));
        }
        Ok(())
    }
}

/// N with N² = n.
fn square_side(n: u32) -> Option<u32> {
    let side = (n as f64).sqrt().round() as u32;
    (side.checked_mul(side) == Some(n)).then_some(side)
}

/// The inputs of one workload at one size (the same for every engine and the native code).
struct Inputs {
    which: Stream,
    n: u32,
    /// Random u32 values (the integer workloads' input).
    words: Vec<u32>,
    /// f32 inputs: a and b of vecadd, x of the others (b empty then).
    a: Vec<f32>,
    b: Vec<f32>,
    bias: Vec<f32>,
}

impl Inputs {
    fn new(which: Stream, n: u32) -> Inputs {
        let words = data::words(0xBE7C_0000 + n as u64, n as usize);
        let (a, b) = match which {
            Stream::Vecadd => (
                words.iter().map(|&v| (v >> 8) as f32 / 1024.0).collect(),
                words.iter().map(|&v| (v & 0xFFFF) as f32 * 0.5).collect(),
            ),
            // Never zero (halves of odd numbers): ReLU's result does not hinge on the sign of 0.
            Stream::Relu | Stream::BiasAdd => {
                (words.iter().map(|&v| ((v >> 8) as f32 - 8_388_607.5) / 1024.0).collect(), Vec::new())
            }
            Stream::Softmax => {
                (words.iter().map(|&v| (v >> 8) as f32 / (1 << 21) as f32 - 4.0).collect(), Vec::new())
            }
            Stream::Transpose => (words.iter().map(|&v| (v >> 8) as f32).collect(), Vec::new()),
            Stream::Reduction | Stream::Histogram | Stream::PrefixSum => (Vec::new(), Vec::new()),
        };
        let bias = match which {
            Stream::BiasAdd => (0..BIAS_ADD_COLUMNS).map(|c| c as f32 * 0.25 - 100.0).collect(),
            _ => Vec::new(),
        };
        Inputs { which, n, words, a, b, bias }
    }

    /// Check `got` (what the workload wrote, as u32 bits) against plain Rust.
    fn check(&self, got: &[u32]) -> Result<(), BenchError> {
        let name = self.which.name();
        let first_difference = |want: &dyn Fn(usize) -> u32| -> Result<(), BenchError> {
            match (0..got.len()).find(|&i| got[i] != want(i)) {
                None => Ok(()),
                Some(i) => Err(BenchError::Wrong(format!(
                    "{name} [{i}] = {:#x} ({}), want {:#x} ({})",
                    got[i],
                    f32::from_bits(got[i]),
                    want(i),
                    f32::from_bits(want(i))
                ))),
            }
        };
        match self.which {
            Stream::Vecadd => first_difference(&|i| (self.a[i] + self.b[i]).to_bits()),
            Stream::Reduction => {
                let want = self.words.iter().fold(0u32, |s, &v| s.wrapping_add(v));
                first_difference(&|_| want)
            }
            Stream::Histogram => {
                let mut bins = vec![0u32; 256];
                for &v in &self.words {
                    bins[(v & 255) as usize] += 1;
                }
                first_difference(&|i| bins[i])
            }
            Stream::PrefixSum => {
                let mut sum = 0u32;
                let scan: Vec<u32> = self
                    .words
                    .iter()
                    .map(|&v| {
                        let before = sum;
                        sum = sum.wrapping_add(v);
                        before
                    })
                    .collect();
                first_difference(&|i| scan[i])
            }
            Stream::Relu => first_difference(&|i| if self.a[i] > 0.0 { self.a[i] } else { 0.0 }.to_bits()),
            Stream::BiasAdd => {
                let cols = BIAS_ADD_COLUMNS as usize;
                first_difference(&|i| (self.a[i] + self.bias[i % cols]).to_bits())
            }
            Stream::Transpose => {
                let side = square_side(self.n).unwrap_or(0) as usize;
                first_difference(&|i| self.a[(i % side) * side + i / side].to_bits())
            }
            Stream::Softmax => self.check_softmax(got),
        }
    }

    /// Softmax against f64, each value within a relative 1e-4 (the sums' rounding; a wrong
    /// maximum, a missing or doubled term, or an unscaled value is far beyond it).
    fn check_softmax(&self, got: &[u32]) -> Result<(), BenchError> {
        const TOLERANCE: f64 = 1e-4;
        for (r, (row, got_row)) in
            self.a.chunks(SOFTMAX_COLUMNS as usize).zip(got.chunks(SOFTMAX_COLUMNS as usize)).enumerate()
        {
            let max = row.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v as f64));
            let sum: f64 = row.iter().map(|&v| (v as f64 - max).exp()).sum();
            for (j, (&x, &y)) in row.iter().zip(got_row).enumerate() {
                let want = (x as f64 - max).exp() / sum;
                let y = f32::from_bits(y) as f64;
                // Written so that a NaN fails.
                let within = (y - want).abs() <= TOLERANCE * want;
                if !within {
                    return Err(BenchError::Wrong(format!("softmax row {r} [{j}] = {y}, want {want}")));
                }
            }
        }
        Ok(())
    }

    /// How many u32 the workload writes.
    fn output_len(&self) -> usize {
        match self.which {
            Stream::Reduction => 1,
            Stream::Histogram => 256,
            _ => self.n as usize,
        }
    }
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Run a memory-bound workload on an engine without checking it: what it wrote (as u32 bits)
/// and the timing.
pub fn run_stream_output(
    engine: &dyn Engine,
    which: Stream,
    n: u32,
    options: &RunOptions,
    repeat: Repeat,
) -> Result<(Vec<u32>, Timing), BenchError> {
    which.check_size(n)?;
    let inputs = Inputs::new(which, n);
    run_on_engine(engine, &inputs, options, repeat)
}

/// Run a memory-bound workload on `n` random values, check it against plain Rust, and time it.
pub fn run_stream(
    engine: &dyn Engine,
    which: Stream,
    n: u32,
    options: &RunOptions,
    repeat: Repeat,
) -> Result<Timing, BenchError> {
    which.check_size(n)?;
    let inputs = Inputs::new(which, n);
    let (got, timing) = run_on_engine(engine, &inputs, options, repeat)?;
    inputs.check(&got)?;
    Ok(timing)
}

fn run_on_engine(
    engine: &dyn Engine,
    inputs: &Inputs,
    options: &RunOptions,
    repeat: Repeat,
) -> Result<(Vec<u32>, Timing), BenchError> {
    let n = inputs.n;
    let bytes = n as u64 * 4;
    let b32 = bytes as u32;
    let no_reset = &mut |_: &mut Device| Ok(());
    let (timing, device, out_at) = match inputs.which {
        Stream::Vecadd => {
            let kernel = load(kernels::VECADD, "vecadd.wave", "vecadd")?;
            let mut device = new_device(3 * bytes)?;
            write(&mut device, 0, &f32_bytes(&inputs.a))?;
            write(&mut device, bytes, &f32_bytes(&inputs.b))?;
            let args = [(1, 0), (2, b32), (3, 2 * b32), (4, n)];
            let d = options.dispatch([n.div_ceil(256), 1, 1], &args);
            (time_steps(engine, &mut device, &[(&kernel, d)], no_reset, repeat)?, device, 2 * bytes)
        }
        Stream::Reduction => {
            let kernel = load(kernels::REDUCTION, "reduction.wave", "reduction")?;
            let mut device = new_device(bytes + 4)?;
            write(&mut device, 0, &u32_bytes(&inputs.words))?;
            let args = [(1, 0), (2, b32), (4, n)];
            let d = options.dispatch([strided_grid(n), 1, 1], &args);
            let mut reset = |dev: &mut Device| write(dev, bytes, &[0; 4]);
            (time_steps(engine, &mut device, &[(&kernel, d)], &mut reset, repeat)?, device, bytes)
        }
        Stream::Histogram => {
            let kernel = load(kernels::HISTOGRAM, "histogram.wave", "histogram")?;
            let mut device = new_device(bytes + 1024)?;
            write(&mut device, 0, &u32_bytes(&inputs.words))?;
            let args = [(1, 0), (2, b32), (4, n)];
            let d = options.dispatch([strided_grid(n), 1, 1], &args);
            let mut reset = |dev: &mut Device| write(dev, bytes, &[0; 1024]);
            (time_steps(engine, &mut device, &[(&kernel, d)], &mut reset, repeat)?, device, bytes)
        }
        Stream::PrefixSum => {
            let blocks_k = load(kernels::PREFIX_SUM, "prefix_sum.wave", "scan_blocks")?;
            let sums_k = load(kernels::PREFIX_SUM, "prefix_sum.wave", "scan_sums")?;
            let add_k = load(kernels::PREFIX_SUM, "prefix_sum.wave", "scan_add")?;
            let blocks = n.div_ceil(256);
            let mut device = new_device(2 * bytes + blocks as u64 * 4)?;
            write(&mut device, 0, &u32_bytes(&inputs.words))?;
            let args = [(1, 0), (2, b32), (3, 2 * b32), (4, n), (5, blocks)];
            let steps = [
                (&blocks_k, options.dispatch([blocks, 1, 1], &args)),
                (&sums_k, options.dispatch([1, 1, 1], &args)),
                (&add_k, options.dispatch([blocks, 1, 1], &args)),
            ];
            (time_steps(engine, &mut device, &steps, no_reset, repeat)?, device, bytes)
        }
        Stream::Relu => {
            let kernel = load(kernels::RELU, "relu.wave", "relu")?;
            let mut device = new_device(2 * bytes)?;
            write(&mut device, 0, &f32_bytes(&inputs.a))?;
            let d = options.dispatch([n.div_ceil(256), 1, 1], &[(1, 0), (2, b32), (4, n)]);
            (time_steps(engine, &mut device, &[(&kernel, d)], no_reset, repeat)?, device, bytes)
        }
        Stream::BiasAdd => {
            let kernel = load(kernels::BIAS_ADD, "bias_add.wave", "bias_add")?;
            let bias_bytes = BIAS_ADD_COLUMNS as u64 * 4;
            let mut device = new_device(2 * bytes + bias_bytes)?;
            write(&mut device, 0, &f32_bytes(&inputs.a))?;
            write(&mut device, bytes, &f32_bytes(&inputs.bias))?;
            let y_at = bytes + bias_bytes;
            let args = [(1, 0), (2, b32), (3, y_at as u32), (4, n), (5, BIAS_ADD_COLUMNS)];
            let grid = [BIAS_ADD_COLUMNS.div_ceil(256), n.div_ceil(BIAS_ADD_COLUMNS), 1];
            let d = options.dispatch(grid, &args);
            (time_steps(engine, &mut device, &[(&kernel, d)], no_reset, repeat)?, device, y_at)
        }
        Stream::Softmax => {
            let kernel = load(kernels::SOFTMAX, "softmax.wave", "softmax")?;
            let mut device = new_device(2 * bytes)?;
            write(&mut device, 0, &f32_bytes(&inputs.a))?;
            let args = [(1, 0), (2, b32), (4, n), (5, SOFTMAX_COLUMNS)];
            let d = options.dispatch([n.div_ceil(SOFTMAX_COLUMNS), 1, 1], &args);
            (time_steps(engine, &mut device, &[(&kernel, d)], no_reset, repeat)?, device, bytes)
        }
        Stream::Transpose => {
            let kernel = load(kernels::TRANSPOSE, "transpose.wave", "transpose")?;
            let side = square_side(n).unwrap_or(0);
            let mut device = new_device(2 * bytes)?;
            write(&mut device, 0, &f32_bytes(&inputs.a))?;
            let tiles = side.div_ceil(32);
            let d = options.dispatch([tiles, tiles, 1], &[(1, 0), (2, b32), (4, side)]);
            (time_steps(engine, &mut device, &[(&kernel, d)], no_reset, repeat)?, device, bytes)
        }
    };
    Ok((read_u32s(&device, out_at, inputs.output_len())?, timing))
}

/// Grid of the grid-stride kernels: enough 256-thread workgroups to cover n, at most 64.
fn strided_grid(n: u32) -> u32 {
    n.div_ceil(256).clamp(1, 64)
}

/// Run the native yardstick of a workload on the same inputs, check it, and time it.
pub fn run_stream_native(
    which: Stream,
    n: u32,
    threads: &NativeThreads,
    repeat: Repeat,
) -> Result<Timing, BenchError> {
    which.check_size(n)?;
    let inputs = Inputs::new(which, n);
    let bits = |v: &[f32]| -> Vec<u32> { v.iter().map(|x| x.to_bits()).collect() };
    let mut y = vec![0f32; n as usize];
    let (timing, got) = match which {
        Stream::Vecadd => {
            let t = time_native(repeat, || native::vecadd(&inputs.a, &inputs.b, &mut y, threads));
            (t, bits(&y))
        }
        Stream::Reduction => {
            let mut sum = 0;
            let t = time_native(repeat, || sum = native::sum(&inputs.words, threads));
            (t, vec![sum])
        }
        Stream::Histogram => {
            let mut bins = Vec::new();
            let t = time_native(repeat, || bins = native::histogram(&inputs.words, threads));
            (t, bins)
        }
        Stream::PrefixSum => {
            let mut scan = vec![0u32; n as usize];
            let t = time_native(repeat, || native::exclusive_scan(&inputs.words, &mut scan, threads));
            (t, scan)
        }
        Stream::Relu => (time_native(repeat, || native::relu(&inputs.a, &mut y, threads)), bits(&y)),
        Stream::BiasAdd => {
            let t = time_native(repeat, || native::bias_add(&inputs.a, &inputs.bias, &mut y, threads));
            (t, bits(&y))
        }
        Stream::Softmax => {
            let cols = SOFTMAX_COLUMNS as usize;
            (time_native(repeat, || native::softmax(&inputs.a, cols, &mut y, threads)), bits(&y))
        }
        Stream::Transpose => {
            let side = square_side(n).unwrap_or(0) as usize;
            (time_native(repeat, || native::transpose(side, &inputs.a, &mut y, threads)), bits(&y))
        }
    };
    inputs.check(&got)?;
    Ok(timing)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn square_sides() {
        assert_eq!(square_side(1 << 20), Some(1024));
        assert_eq!(square_side(10_000), Some(100));
        assert_eq!(square_side(10_001), None);
        assert!(Stream::Transpose.check_size(1000).is_err());
        assert!(Stream::Relu.check_size(0).is_err());
    }

    #[test]
    fn the_checks_catch_a_wrong_value() {
        let threads = NativeThreads::new(2).unwrap();
        for which in Stream::ALL {
            let n = 4096;
            // The native code passes the check ...
            run_stream_native(which, n, &threads, Repeat::ONCE)
                .unwrap_or_else(|e| panic!("{}: {e}", which.name()));
            // ... and one flipped bit in an output does not.
            let inputs = Inputs::new(which, n);
            let mut wrong: Vec<u32> = match which {
                Stream::Reduction => vec![inputs.words.iter().fold(0u32, |s, &v| s.wrapping_add(v))],
                _ => vec![0; inputs.output_len()],
            };
            wrong[0] ^= 1 << 30;
            assert!(
                matches!(inputs.check(&wrong), Err(BenchError::Wrong(_))),
                "{}: a wrong output passed",
                which.name()
            );
        }
    }
}
