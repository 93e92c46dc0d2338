//! What a user asks for ([`Dispatch`]), and what actually runs ([`Launch`]): kernel metadata
//! overrides applied and every limit checked before anything executes.

use crate::caps;
use crate::device::Device;
use std::fmt;
use wave_isa::{Kernel, ValidKernel};

/// A dispatch request. `Default` gives wave-emu's command-line defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dispatch {
    /// Workgroups in x, y, z.
    pub grid: [u32; 3],
    /// Threads per workgroup; a kernel's `.workgroup_size` with x > 0 replaces it.
    pub workgroup: [u32; 3],
    /// Lanes per wave: 4, 8, 16, 32 or 64.
    pub wave_width: u32,
    /// Registers per thread; a kernel's non-zero register count replaces it.
    pub registers: u32,
    /// Local memory bytes per workgroup; a kernel's non-zero `.local_memory` replaces it.
    pub local_memory: u32,
    /// `(register, value)` set in every thread before it starts (kernel arguments).
    pub initial_registers: Vec<(u8, u32)>,
    /// Wave-instructions per workgroup before the run stops with an error; 0 = unlimited.
    pub max_instructions: u64,
    /// JIT worker threads (0 = all cores). The interpreter is single-threaded.
    pub threads: usize,
    /// JIT only: pin worker thread i to core i (modulo the cores), so the operating system
    /// does not move workers between cores during a dispatch.
    pub pin_workers: bool,
    /// JIT only: drop bounds checks.
    pub unchecked: bool,
}

impl Default for Dispatch {
    fn default() -> Dispatch {
        Dispatch {
            grid: [1, 1, 1],
            workgroup: [32, 1, 1],
            wave_width: caps::WAVE_WIDTH,
            registers: 32,
            local_memory: caps::DEFAULT_LOCAL_MEMORY,
            initial_registers: Vec::new(),
            max_instructions: 10_000_000,
            threads: 0,
            pin_workers: false,
            unchecked: false,
        }
    }
}

impl Dispatch {
    /// Threads per workgroup for `kernel`: its `.workgroup_size` when x > 0, else the request.
    pub fn workgroup_for(&self, kernel: &Kernel) -> [u32; 3] {
        let meta = &kernel.meta;
        if meta.workgroup_size[0] > 0 {
            meta.workgroup_size
        } else {
            self.workgroup
        }
    }

    /// Registers per thread for `kernel`: its non-zero register count, else the request.
    pub fn registers_for(&self, kernel: &Kernel) -> u32 {
        if kernel.meta.registers > 0 {
            kernel.meta.registers
        } else {
            self.registers
        }
    }
}

/// A resolved dispatch: what runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    pub grid: [u32; 3],
    pub workgroup: [u32; 3],
    pub wave_width: u32,
    pub registers: u32,
    pub local_memory: u32,
    /// workgroup x·y·z.
    pub threads_per_workgroup: u32,
    /// ceil(threads_per_workgroup / wave_width).
    pub waves_per_workgroup: u32,
    /// grid x·y·z.
    pub workgroups: u64,
    pub initial_registers: Vec<(u8, u32)>,
    pub max_instructions: u64,
    pub threads: usize,
    pub pin_workers: bool,
    pub unchecked: bool,
    /// Bytes of device memory.
    pub device_size: u64,
}

impl Launch {
    /// The live-lane mask of wave `wave` at the start (the last wave may be partial).
    pub fn initial_live_mask(&self, wave: u32) -> u64 {
        let first = wave as u64 * self.wave_width as u64;
        let lanes = (self.threads_per_workgroup as u64).saturating_sub(first).min(self.wave_width as u64);
        if lanes >= 64 {
            u64::MAX
        } else {
            (1u64 << lanes) - 1
        }
    }

    /// Workgroup ids in execution order: z, then y, then x (x fastest).
    pub fn workgroup_ids(&self) -> impl Iterator<Item = [u32; 3]> + '_ {
        let [gx, gy, gz] = self.grid;
        (0..gz).flat_map(move |z| (0..gy).flat_map(move |y| (0..gx).map(move |x| [x, y, z])))
    }
}

/// Why a dispatch cannot run. Each names the limit and by how much it is missed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DispatchError {
    WaveWidth { width: u32 },
    EmptyGrid { grid: [u32; 3] },
    EmptyWorkgroup { workgroup: [u32; 3] },
    WorkgroupTooLarge { workgroup: [u32; 3], threads: u64 },
    TooManyRegisters { registers: u32 },
    TooFewRegisters { registers: u32, used: u32 },
    LocalMemoryTooLarge { bytes: u32 },
    InitialRegisterOutOfRange { register: u8, registers: u32 },
    // More waves than a u64 counts (the engines count workgroups and waves in u64).
    TooManyWorkgroups { grid: [u32; 3], waves_per_workgroup: u32 },
    // More worker threads than MAX_THREADS_PER_CORE per core of this host.
    TooManyThreads { threads: usize, cores: usize },
}

/// Worker threads a dispatch may ask for, per core of the host: more only cost memory and
/// switching (each JIT worker keeps its own stack, local memory and wave contexts; a pool of
/// a million threads could not even start).
pub const MAX_THREADS_PER_CORE: usize = 16;

/// The cores this process may use (at least 1), asked once: the answer costs file reads
/// under cgroups.
pub fn host_cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

impl fmt::Display for DispatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use DispatchError::*;
        match self {
            WaveWidth { width } => write!(
                f,
                "wave width {width} is not supported (choose one of {:?})",
                caps::SUPPORTED_WAVE_WIDTHS
            ),
            EmptyGrid { grid } => {
                write!(f, "grid {},{},{} has no workgroups (every dimension must be at least 1)", grid[0], grid[1], grid[2])
            }
            EmptyWorkgroup { workgroup: w } => write!(
                f,
                "workgroup {},{},{} has no threads (every dimension must be at least 1)",
                w[0], w[1], w[2]
            ),
            WorkgroupTooLarge { workgroup: w, threads } => write!(
                f,
                "workgroup {},{},{} has {threads} threads, {} more than MAX_WORKGROUP_SIZE {}",
                w[0],
                w[1],
                w[2],
                threads - caps::MAX_WORKGROUP_SIZE as u64,
                caps::MAX_WORKGROUP_SIZE
            ),
            TooManyRegisters { registers } => write!(
                f,
                "{registers} registers per thread is {} more than MAX_REGISTERS {}",
                registers - caps::MAX_REGISTERS,
                caps::MAX_REGISTERS
            ),
            TooFewRegisters { registers, used } => write!(
                f,
                "the kernel uses registers up to r{} but only {registers} registers are available ({} too few)",
                used - 1,
                used - registers
            ),
            LocalMemoryTooLarge { bytes } => write!(
                f,
                "{bytes} bytes of local memory is {} more than LOCAL_MEMORY_SIZE {}",
                bytes - caps::LOCAL_MEMORY_SIZE,
                caps::LOCAL_MEMORY_SIZE
            ),
            InitialRegisterOutOfRange { register, registers } => write!(
                f,
                "initial value for r{register}, but threads have only {registers} registers (r0..r{})",
                registers.saturating_sub(1)
            ),
            TooManyWorkgroups { grid: [x, y, z], waves_per_workgroup } => {
                let workgroups = u128::from(*x) * u128::from(*y) * u128::from(*z);
                let plural = if *waves_per_workgroup == 1 { "" } else { "s" };
                write!(
                    f,
                    "grid {x},{y},{z} has {workgroups} workgroups of {waves_per_workgroup} wave{plural}, {} waves: more than the {} a dispatch can count",
                    workgroups * u128::from(*waves_per_workgroup),
                    u64::MAX
                )
            }
            TooManyThreads { threads, cores } => write!(
                f,
                "{threads} worker threads is more than {MAX_THREADS_PER_CORE} per core ({} on this host's {cores} cores)",
                MAX_THREADS_PER_CORE * cores
            ),
        }
    }
}

impl std::error::Error for DispatchError {}

/// Apply the kernel's metadata overrides to `d` and check every limit.
pub fn resolve(kernel: &ValidKernel, d: &Dispatch, device: &Device) -> Result<Launch, DispatchError> {
    let meta = &kernel.meta;
    if !caps::SUPPORTED_WAVE_WIDTHS.contains(&d.wave_width) {
        return Err(DispatchError::WaveWidth { width: d.wave_width });
    }
    if d.grid.contains(&0) {
        return Err(DispatchError::EmptyGrid { grid: d.grid });
    }
    let workgroup = d.workgroup_for(kernel);
    if workgroup.contains(&0) {
        return Err(DispatchError::EmptyWorkgroup { workgroup });
    }
    let threads: u64 = workgroup.iter().map(|&v| v as u64).product();
    if threads > caps::MAX_WORKGROUP_SIZE as u64 {
        return Err(DispatchError::WorkgroupTooLarge { workgroup, threads });
    }
    let registers = d.registers_for(kernel);
    if registers > caps::MAX_REGISTERS {
        return Err(DispatchError::TooManyRegisters { registers });
    }
    let used = kernel.info().registers_used;
    if used > registers {
        return Err(DispatchError::TooFewRegisters { registers, used });
    }
    let local_memory = if meta.local_memory > 0 { meta.local_memory } else { d.local_memory };
    if local_memory > caps::LOCAL_MEMORY_SIZE {
        return Err(DispatchError::LocalMemoryTooLarge { bytes: local_memory });
    }
    if let Some(&(register, _)) = d.initial_registers.iter().find(|(r, _)| *r as u32 >= registers) {
        return Err(DispatchError::InitialRegisterOutOfRange { register, registers });
    }
    let threads_per_workgroup = threads as u32;
    let waves_per_workgroup = threads_per_workgroup.div_ceil(d.wave_width);
    // Both engines count workgroups and waves in u64: a grid whose count wraps would run
    // nothing (2^31 x 2^31 x 4 workgroups made 0).
    let workgroups = d
        .grid
        .iter()
        .try_fold(1u64, |n, &g| n.checked_mul(u64::from(g)))
        .filter(|n| n.checked_mul(u64::from(waves_per_workgroup)).is_some())
        .ok_or(DispatchError::TooManyWorkgroups { grid: d.grid, waves_per_workgroup })?;
    let cores = host_cores();
    if d.threads > MAX_THREADS_PER_CORE.saturating_mul(cores) {
        return Err(DispatchError::TooManyThreads { threads: d.threads, cores });
    }
    Ok(Launch {
        grid: d.grid,
        workgroup,
        wave_width: d.wave_width,
        registers,
        local_memory,
        threads_per_workgroup,
        waves_per_workgroup,
        workgroups,
        initial_registers: d.initial_registers.clone(),
        max_instructions: d.max_instructions,
        threads: d.threads,
        pin_workers: d.pin_workers,
        unchecked: d.unchecked,
        device_size: device.size(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel() -> ValidKernel {
        let (module, _) = wave_isa::module::load_bytes(b".kernel k\n    nop\n.end\n", "k.wave").unwrap();
        module.kernels.into_iter().next().unwrap()
    }

    #[test]
    fn grids_beyond_a_64_bit_count_are_rejected() {
        let (k, device) = (kernel(), Device::new(1 << 16).unwrap());
        let at = |grid, workgroup| resolve(&k, &Dispatch { grid, workgroup, ..Dispatch::default() }, &device);
        // 2^31 x 2^31 x 4 = 2^64 workgroups: the count wrapped to 0 and nothing ran.
        let e = at([1 << 31, 1 << 31, 4], [1, 1, 1]).unwrap_err();
        assert_eq!(
            e,
            DispatchError::TooManyWorkgroups { grid: [1 << 31, 1 << 31, 4], waves_per_workgroup: 1 }
        );
        assert_eq!(
            e.to_string(),
            "grid 2147483648,2147483648,4 has 18446744073709551616 workgroups of 1 wave, 18446744073709551616 waves: \
             more than the 18446744073709551615 a dispatch can count"
        );
        assert!(matches!(at([u32::MAX; 3], [1, 1, 1]), Err(DispatchError::TooManyWorkgroups { .. })));
        // (2^32 - 1)^2 workgroups fit in 64 bits, and so do their waves at one per workgroup...
        let launch = at([u32::MAX, u32::MAX, 1], [32, 1, 1]).unwrap();
        assert_eq!(launch.workgroups, u64::from(u32::MAX) * u64::from(u32::MAX));
        // ... but not at two.
        assert!(matches!(
            at([u32::MAX, u32::MAX, 1], [64, 1, 1]),
            Err(DispatchError::TooManyWorkgroups { waves_per_workgroup: 2, .. })
        ));
    }

    #[test]
    fn worker_threads_are_capped_per_core() {
        let (k, device) = (kernel(), Device::new(1 << 16).unwrap());
        let cores = host_cores();
        let limit = MAX_THREADS_PER_CORE * cores;
        let with = |threads| resolve(&k, &Dispatch { threads, ..Dispatch::default() }, &device);
        assert_eq!(with(limit).unwrap().threads, limit);
        let e = with(limit + 1).unwrap_err();
        assert_eq!(e, DispatchError::TooManyThreads { threads: limit + 1, cores });
        assert_eq!(
            e.to_string(),
            format!(
                "{} worker threads is more than 16 per core ({limit} on this host's {cores} cores)",
                limit + 1
            )
        );
        assert!(matches!(with(usize::MAX), Err(DispatchError::TooManyThreads { .. })));
    }
}
