//! The GEMM workloads (f32 and f16) and the launch cost: device layout, dispatches, timing,
//! and the check of every result against plain Rust; the timing helpers the memory-bound
//! workloads ([`crate::streams`]) share.

use crate::data;
use crate::kernels::{self, GemmKernel};
use crate::native;
use crate::BenchError;
use half::f16;
use rayon::prelude::*;
use std::time::{Duration, Instant};
use wave_isa::ValidKernel;
use wave_runtime::{Device, Dispatch, Engine};

/// How the engine runs (the same for every workload).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    pub wave_width: u32,
    /// JIT worker threads (0 = all cores).
    pub threads: usize,
    /// JIT: pin each worker thread to a core.
    pub pin_workers: bool,
    /// JIT: no bounds checks.
    pub unchecked: bool,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions { wave_width: 32, threads: 0, pin_workers: false, unchecked: false }
    }
}

impl RunOptions {
    pub(crate) fn dispatch(&self, grid: [u32; 3], args: &[(u8, u32)]) -> Dispatch {
        Dispatch {
            grid,
            wave_width: self.wave_width,
            threads: self.threads,
            pin_workers: self.pin_workers,
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

pub(crate) fn new_device(bytes: u64) -> Result<Device, BenchError> {
    Device::new(bytes.div_ceil(4096).max(1) * 4096).map_err(|e| BenchError::Device(e.to_string()))
}

pub(crate) fn write(device: &mut Device, offset: u64, bytes: &[u8]) -> Result<(), BenchError> {
    device.write(offset, bytes).map_err(|e| BenchError::Device(e.to_string()))
}

pub(crate) fn read_u32s(device: &Device, offset: u64, count: usize) -> Result<Vec<u32>, BenchError> {
    let bytes = device.read(offset, count as u64 * 4).map_err(|e| BenchError::Device(e.to_string()))?;
    Ok(bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

pub(crate) fn u32_bytes(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Run `steps` in order, `reset` before each repetition; time each repetition.
pub fn time_steps(
    engine: &dyn Engine,
    device: &mut Device,
    steps: &[(&ValidKernel, Dispatch)],
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

/// Time `run` like [`time_steps`] times an engine (native yardsticks): best of the runs.
pub fn time_native(repeat: Repeat, mut run: impl FnMut()) -> Timing {
    let mut timing = Timing { first: Duration::ZERO, best: Duration::MAX, runs: 0 };
    let start = Instant::now();
    while timing.runs < repeat.max_runs.max(1) && (timing.runs == 0 || start.elapsed() < repeat.budget) {
        let t = Instant::now();
        run();
        let took = t.elapsed();
        if timing.runs == 0 {
            timing.first = took;
        }
        timing.best = timing.best.min(took);
        timing.runs += 1;
    }
    timing
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
        let count = n as usize * n as usize;
        let a = data::unit_values(seed, count);
        let b = data::unit_values(!seed, count);
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
    if 3 * matrix > 1 << 32 {
        return Err(BenchError::Usage(format!("N = {n}: the matrices do not fit in 4 GiB")));
    }
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

/// An f16 GEMM problem: random A and B in [−1, 1), rounded to f16 (the values as bits).
#[derive(Clone, Debug, PartialEq)]
pub struct GemmF16Problem {
    pub n: u32,
    pub a: Vec<u16>,
    pub b: Vec<u16>,
}

/// Output tile edge of `gemm_f16`; N must be a multiple of it.
pub const GEMM_F16_TILE: u32 = 64;

impl GemmF16Problem {
    pub fn random(n: u32, seed: u64) -> GemmF16Problem {
        let count = n as usize * n as usize;
        let values = |seed| -> Vec<u16> {
            data::unit_values(seed, count).into_iter().map(|v| f16::from_f32(v).to_bits()).collect()
        };
        let a = values(seed);
        let b = values(!seed);
        GemmF16Problem { n, a, b }
    }

    pub fn flops(&self) -> f64 {
        2.0 * (self.n as f64).powi(3)
    }

    pub fn a_f32(&self) -> Vec<f32> {
        self.a.iter().map(|&h| f16::from_bits(h).to_f32()).collect()
    }

    pub fn b_f32(&self) -> Vec<f32> {
        self.b.iter().map(|&h| f16::from_bits(h).to_f32()).collect()
    }

    /// A·B in f64 (of the f16 inputs, exactly): for the accuracy column.
    pub fn reference(&self) -> Vec<f64> {
        native::gemm_f64(self.n as usize, &self.a_f32(), &self.b_f32())
    }

    /// The exact result of an HGEMM that sums over k in order, rounding to f16 at every step
    /// as `hma2` does (c = f16(fma_f32(a, b, c))): what `gemm_f16` must produce, bit for bit.
    pub fn stepwise_f16(&self) -> Vec<u16> {
        let n = self.n as usize;
        let (a, b) = (self.a_f32(), self.b_f32());
        let mut c = vec![0u16; n * n];
        c.par_chunks_mut(n.max(1)).enumerate().for_each(|(i, c_row)| {
            let mut acc = vec![f16::ZERO; n];
            for k in 0..n {
                let aik = a[i * n + k];
                for (acc, &bkj) in acc.iter_mut().zip(&b[k * n..k * n + n]) {
                    *acc = f16::from_f32(aik.mul_add(bkj, acc.to_f32()));
                }
            }
            for (c, acc) in c_row.iter_mut().zip(acc) {
                *c = acc.to_bits();
            }
        });
        c
    }
}

/// Run `gemm_f16`: returns C (f16 bits) and the timing. N must be a multiple of 64.
pub fn run_gemm_f16(
    engine: &dyn Engine,
    problem: &GemmF16Problem,
    options: &RunOptions,
    repeat: Repeat,
) -> Result<(Vec<u16>, Timing), BenchError> {
    let n = problem.n;
    if n == 0 || !n.is_multiple_of(GEMM_F16_TILE) {
        return Err(BenchError::Usage(format!("gemm_f16: N = {n} is not a multiple of {GEMM_F16_TILE}")));
    }
    let kernel = kernels::load(kernels::GEMM_F16, "gemm_f16.wave", "gemm_f16")?;
    let matrix = n as u64 * n as u64 * 2;
    if 3 * matrix > 1 << 32 {
        return Err(BenchError::Usage(format!("N = {n}: the matrices do not fit in 4 GiB")));
    }
    let (a_at, b_at, c_at) = (0u64, matrix, 2 * matrix);
    let mut device = new_device(3 * matrix)?;
    let halves = |values: &[u16]| -> Vec<u8> { values.iter().flat_map(|v| v.to_le_bytes()).collect() };
    write(&mut device, a_at, &halves(&problem.a))?;
    write(&mut device, b_at, &halves(&problem.b))?;
    let grid = [n / GEMM_F16_TILE, n / GEMM_F16_TILE, 1];
    let args = [(1, a_at as u32), (2, b_at as u32), (3, c_at as u32), (4, n)];
    let dispatch = options.dispatch(grid, &args);
    let timing = time_steps(engine, &mut device, &[(&kernel, dispatch)], &mut |_| Ok(()), repeat)?;
    let bytes = device.read(c_at, matrix).map_err(|e| BenchError::Device(e.to_string()))?;
    let c = bytes.chunks_exact(2).map(|h| u16::from_le_bytes([h[0], h[1]])).collect();
    Ok((c, timing))
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
