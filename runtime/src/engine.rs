//! The interface every execution engine (interpreter, JIT) implements, and what a run reports.

use crate::device::Device;
use crate::dispatch::Dispatch;
use crate::error::RunError;
use crate::stats::Stats;
use std::time::Duration;
use wave_isa::ValidKernel;

/// Runs a kernel over a dispatch on a device. Engines produce bit-for-bit the same device
/// memory for the same input: they follow the engine contract of the crate documentation
/// ([`crate`]: resolution, initial state, schedule, errors).
pub trait Engine {
    /// Short name (`interp`, `jit`).
    fn name(&self) -> &'static str;
    /// Resolve `dispatch` (rejecting impossible ones before anything runs), then run every
    /// workgroup. On error, device memory is left as it was at the failure.
    fn run(
        &self,
        kernel: &ValidKernel,
        dispatch: &Dispatch,
        device: &mut Device,
    ) -> Result<RunReport, RunError>;
}

/// What a run did besides changing device memory: everything a caller prints about it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunReport {
    /// The counters (which of them an engine fills: see its `run`).
    pub stats: Stats,
    /// Set when another engine ran the kernel instead of the one asked (the JIT hands
    /// kernels it declines, and dispatches too small to be worth a compile, to the
    /// interpreter), and why.
    pub fallback: Option<String>,
    /// The compiled code the run used, for engines that compile.
    pub compile: Option<CompileReport>,
}

/// How the code a run used was compiled.
#[derive(Clone, Debug, PartialEq)]
pub struct CompileReport {
    /// From the start of the compile to the first runnable code.
    pub first_code: Duration,
    /// Whether this run compiled it (else it came from a cache).
    pub compiled_now: bool,
    pub tiers: Tiers,
}

/// Whether compiled code came in one tier or two, as of the end of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tiers {
    /// Compiled optimized at once.
    One,
    /// Quick first; the optimized code is still compiling.
    Pending,
    /// Quick first; the optimized code took over this long after the compile began.
    OptimizedAfter(Duration),
    /// Quick only, and why.
    QuickOnly(String),
}
