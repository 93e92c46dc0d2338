//! The interface every execution engine (interpreter, JIT) implements.

use crate::device::Device;
use crate::dispatch::Dispatch;
use crate::error::RunError;
use crate::stats::Stats;
use wave_isa::Kernel;

/// Runs a kernel over a dispatch on a device. Engines produce bit-for-bit the same device
/// memory for the same input: they follow the engine contract of the crate documentation
/// ([`crate`]: resolution, initial state, schedule, errors).
pub trait Engine {
    /// Short name (`interp`, `jit`).
    fn name(&self) -> &'static str;
    /// Resolve `dispatch` (rejecting impossible ones before anything runs), then run every
    /// workgroup. On error, device memory is left as it was at the failure.
    fn run(&self, kernel: &Kernel, dispatch: &Dispatch, device: &mut Device) -> Result<Stats, RunError>;
}
