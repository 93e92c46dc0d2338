//! The benchmark workloads: device layout, dispatches, timing, and the check of every result
//! against plain Rust.

use crate::kernels::{self, GemmKernel};
use crate::native;
use crate::BenchError;
use std::time::{Duration, Instant};
use wave_isa::Kernel;
use wave_jit_codegen::difftest::rng::SplitMix64;
use wave_runtime::{Device, Dispatch, Engine};

/// How the engine runs (the same for every workload).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    pub wave_width: u32,
    /// JIT worker threads (0 = all cores).
    pub threads: usize,
    /// JIT: no bounds checks.
    pub unchecked: bool,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions { wave_width: 32, threads: 0, unchecked: false }
    }
}

impl RunOptions {
    fn dispatch(&self, grid: [u32; 3], args: &[(u8, u32)]) -> Dispatch {
        Dispatch {
            grid,
            wave_width: self.wave_width,
            threads: self.threads,
            unchecked: self.unchecked,
            max_instructions: 0,
            initial_registers: args.to_vec(),
            ..Dispatch::default()
        }
    }
}

/// How long repeated runs took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// The first run (includes the JIT's compilation on a cold cache).
    pub first: Duration,
    /// The fastest run.
    pub best: Duration,
    pub runs: u32,
}

/// When to stop repeating: after `max_runs`, or once the runs took `budget` (at least one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repeat {
    pub budget: Duration,
    pub max_runs: u32,
}

impl Repeat {
    pub const ONCE: Repeat = Repeat { budget: Duration::ZERO, max_runs: 1 };
}

fn new_device(bytes: u64) -> Result<Device, BenchError> {
    Device::new(bytes.div_ceil(4096).max(1) * 4096).map_err(|e| BenchError::Device(e.to_string()))
}

fn write(device: &mut Device, offset: u64, bytes: &[u8]) -> Result<(), BenchError> {
    device.write(offset, bytes).map_err(|e| BenchError::Device(e.to_string()))
}

fn read_u32s(device: &Device, offset: u64, count: usize) -> Result<Vec<u32>, BenchError> {
    let bytes = device.read(offset, count as u64 * 4).map_err(|e| BenchError::Device(e.to_string()))?;
    Ok(bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

fn u32_bytes(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Run `steps` in order, `reset` before each repetition; time each repetition.
pub fn time_steps(
    engine: &dyn Engine,
    device: &mut Device,
    steps: &[(&Kernel, Dispatch)],
    reset: &mut dyn FnMut(&mut Device) -> Result<(), BenchError>,
    repeat: Repeat,
) -> Result<Timing, BenchError> {
    let mut timing = Timing { first: Duration::ZERO, best: Duration::MAX, runs: 0 };
    let start = Instant::now();
    while timing.runs < repeat.max_runs.max(1) && (timing.runs == 0 || start.elapsed() < repeat.budget) {
        reset(device)?;
        let t = Instant::now();
        for (kernel, dispatch) in steps {
            engine.run(kernel, dispatch, device).map_err(|e| BenchError::Run(e.to_string()))?;
        }
        let took = t.elapsed();
        if timing.runs == 0 {
            timing.first = took;
        }
        timing.best = timing.best.min(took);
        timing.runs += 1;
    }
    Ok(timing)
}

/// A GEMM problem: random A and B in [−1, 1).
#[derive(Clone, Debug, PartialEq)]
pub struct GemmProblem {
    pub n: u32,
    pub a: Vec<f32>,
    pub b: Vec<f32>,
}

impl GemmProblem {
    pub fn random(n: u32, seed: u64) -> GemmProblem {
        let mut rng = SplitMix64::new(seed);
        let mut values = |count: usize| -> Vec<f32> {
            (0..count).map(|_| (rng.next_u32() >> 8) as f32 / (1u32 << 23) as f32 - 1.0).collect()
        };
        let count = n as usize * n as usize;
        let a = values(count);
        let b = values(count);
        GemmProblem { n, a, b }
    }

    /// Floating-point operations of one C = A·B.
    pub fn flops(&self) -> f64 {
        2.0 * (self.n as f64).powi(3)
    }

    pub fn reference(&self) -> Vec<f64> {
        native::gemm_f64(self.n as usize, &self.a, &self.b)
    }
}

/// Run a GEMM kernel: returns C and the timing. N must be a multiple of the kernel's tile.
pub fn run_gemm(
    engine: &dyn Engine,
    which: GemmKernel,
    problem: &GemmProblem,
    options: &RunOptions,
    repeat: Repeat,
) -> Result<(Vec<f32>, Timing), BenchError> {
    let n = problem.n;
    if n == 0 || !n.is_multiple_of(which.tile()) {
        return Err(BenchError::Usage(format!(
            "{}: N = {n} is not a multiple of {}",
            which.name(),
            which.tile()
        )));
    }
    let kernel = which.kernel()?;
    let matrix = n as u64 * n as u64 * 4;
    let (a_at, b_at, c_at) = (0u64, matrix, 2 * matrix);
    let mut device = new_device(3 * matrix)?;
    let a_bytes: Vec<u8> = problem.a.iter().flat_map(|v| v.to_le_bytes()).collect();
    let b_bytes: Vec<u8> = problem.b.iter().flat_map(|v| v.to_le_bytes()).collect();
    write(&mut device, a_at, &a_bytes)?;
    write(&mut device, b_at, &b_bytes)?;
    let grid = [n / which.tile(), n / which.tile(), 1];
    let args = [(1, a_at as u32), (2, b_at as u32), (3, c_at as u32), (4, n)];
    let dispatch = options.dispatch(grid, &args);
    let timing = time_steps(engine, &mut device, &[(&kernel, dispatch)], &mut |_| Ok(()), repeat)?;
    let c = read_u32s(&device, c_at, (n * n) as usize)?.into_iter().map(f32::from_bits).collect();
    Ok((c, timing))
}

/// The memory-bound workloads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    Vecadd,
    Reduction,
    Histogram,
    PrefixSum,
}

impl Stream {
    pub const ALL: [Stream; 4] = [Stream::Vecadd, Stream::Reduction, Stream::Histogram, Stream::PrefixSum];

    pub fn name(self) -> &'static str {
        match self {
            Stream::Vecadd => "vecadd",
            Stream::Reduction => "reduction",
            Stream::Histogram => "histogram",
            Stream::PrefixSum => "prefix-sum",
        }
    }

    pub fn from_name(name: &str) -> Option<Stream> {
        Stream::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Bytes one run must move at least: inputs read plus outputs written.
    pub fn bytes(self, n: u32) -> u64 {
        n as u64
            * match self {
                Stream::Vecadd => 12,
                Stream::Reduction | Stream::Histogram => 4,
                Stream::PrefixSum => 8,
            }
    }
}

/// Grid of the grid-stride kernels: enough 256-thread workgroups to cover n, at most 64.
fn strided_grid(n: u32) -> u32 {
    n.div_ceil(256).clamp(1, 64)
}

/// Run a memory-bound workload on `n` random values, check it against plain Rust, and time it.
pub fn run_stream(
    engine: &dyn Engine,
    which: Stream,
    n: u32,
    options: &RunOptions,
    repeat: Repeat,
) -> Result<Timing, BenchError> {
    if n == 0 {
        return Err(BenchError::Usage("n must be positive".into()));
    }
    let mut rng = SplitMix64::new(0xBE7C_0000 + n as u64);
    let input: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
    let bytes = n as u64 * 4;
    match which {
        Stream::Vecadd => {
            let kernel = kernels::load(kernels::VECADD, "vecadd.wave", "vecadd")?;
            let a: Vec<f32> = input.iter().map(|&v| (v >> 8) as f32 / 1024.0).collect();
            let b: Vec<f32> = input.iter().map(|&v| (v & 0xFFFF) as f32 * 0.5).collect();
            let mut device = new_device(3 * bytes)?;
            write(&mut device, 0, &a.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>())?;
            write(&mut device, bytes, &b.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>())?;
            let args = [(1, 0), (2, bytes as u32), (3, 2 * bytes as u32), (4, n)];
            let d = options.dispatch([n.div_ceil(256), 1, 1], &args);
            let timing = time_steps(engine, &mut device, &[(&kernel, d)], &mut |_| Ok(()), repeat)?;
            let c = read_u32s(&device, 2 * bytes, n as usize)?;
            for i in 0..n as usize {
                let want = a[i] + b[i];
                if c[i] != want.to_bits() {
                    return Err(BenchError::Wrong(format!(
                        "vecadd c[{i}] = {}, want {want}",
                        f32::from_bits(c[i])
                    )));
                }
            }
            Ok(timing)
        }
        Stream::Reduction => {
            let kernel = kernels::load(kernels::REDUCTION, "reduction.wave", "reduction")?;
            let mut device = new_device(bytes + 4)?;
            write(&mut device, 0, &u32_bytes(&input))?;
            let args = [(1, 0), (2, bytes as u32), (4, n)];
            let d = options.dispatch([strided_grid(n), 1, 1], &args);
            let mut reset = |dev: &mut Device| write(dev, bytes, &[0; 4]);
            let timing = time_steps(engine, &mut device, &[(&kernel, d)], &mut reset, repeat)?;
            let got = read_u32s(&device, bytes, 1)?[0];
            let want = input.iter().fold(0u32, |s, &v| s.wrapping_add(v));
            if got != want {
                return Err(BenchError::Wrong(format!("reduction = {got}, want {want}")));
            }
            Ok(timing)
        }
        Stream::Histogram => {
            let kernel = kernels::load(kernels::HISTOGRAM, "histogram.wave", "histogram")?;
            let mut device = new_device(bytes + 1024)?;
            write(&mut device, 0, &u32_bytes(&input))?;
            let args = [(1, 0), (2, bytes as u32), (4, n)];
            let d = options.dispatch([strided_grid(n), 1, 1], &args);
            let mut reset = |dev: &mut Device| write(dev, bytes, &[0; 1024]);
            let timing = time_steps(engine, &mut device, &[(&kernel, d)], &mut reset, repeat)?;
            let got = read_u32s(&device, bytes, 256)?;
            let mut want = vec![0u32; 256];
            for &v in &input {
                want[(v & 255) as usize] += 1;
            }
            if got != want {
                let bin = (0..256).find(|&i| got[i] != want[i]).unwrap_or(0);
                return Err(BenchError::Wrong(format!(
                    "histogram bin {bin} = {}, want {}",
                    got[bin], want[bin]
                )));
            }
            Ok(timing)
        }
        Stream::PrefixSum => {
            let blocks_k = kernels::load(kernels::PREFIX_SUM, "prefix_sum.wave", "scan_blocks")?;
            let sums_k = kernels::load(kernels::PREFIX_SUM, "prefix_sum.wave", "scan_sums")?;
            let add_k = kernels::load(kernels::PREFIX_SUM, "prefix_sum.wave", "scan_add")?;
            let blocks = n.div_ceil(256);
            let mut device = new_device(2 * bytes + blocks as u64 * 4)?;
            write(&mut device, 0, &u32_bytes(&input))?;
            let args = [(1, 0), (2, bytes as u32), (3, 2 * bytes as u32), (4, n), (5, blocks)];
            let steps = [
                (&blocks_k, options.dispatch([blocks, 1, 1], &args)),
                (&sums_k, options.dispatch([1, 1, 1], &args)),
                (&add_k, options.dispatch([blocks, 1, 1], &args)),
            ];
            let timing = time_steps(engine, &mut device, &steps, &mut |_| Ok(()), repeat)?;
            let got = read_u32s(&device, bytes, n as usize)?;
            let mut sum = 0u32;
            for (i, &v) in input.iter().enumerate() {
                if got[i] != sum {
                    return Err(BenchError::Wrong(format!("prefix sum [{i}] = {}, want {sum}", got[i])));
                }
                sum = sum.wrapping_add(v);
            }
            Ok(timing)
        }
    }
}

/// Time of one dispatch of the empty kernel over `groups` workgroups (best of the runs).
pub fn time_launch(
    engine: &dyn Engine,
    groups: u32,
    options: &RunOptions,
    repeat: Repeat,
) -> Result<Timing, BenchError> {
    let kernel = kernels::load(kernels::EMPTY, "empty.wave", "empty")?;
    let mut device = new_device(4096)?;
    let d = options.dispatch([groups.max(1), 1, 1], &[]);
    time_steps(engine, &mut device, &[(&kernel, d)], &mut |_| Ok(()), repeat)
}
