//! The reference interpreter: runs the lowered statement tree (see `lower`) wave by wave,
//! with every lane operation taken from [`crate::semantics`].
//!
//! Schedule (the engine contract in the crate documentation): workgroups in z, y, x order; inside a workgroup the waves run
//! in order, each until it reaches a barrier or ends; when every wave that has not ended
//! waits at the barrier, all are released and run again in order.

mod exec;
mod lower;

use crate::device::Device;
use crate::dispatch::{resolve, Dispatch, Launch};
use crate::engine::{Engine, RunReport};
use crate::error::{RunError, RunErrorKind};
use crate::stats::Stats;
use exec::{Status, Wave, WorkgroupCtx};
use lower::Program;
use std::io::Write;
use std::sync::Mutex;
use wave_isa::{Kernel, ValidKernel};

/// The single-threaded reference engine.
#[derive(Default)]
pub struct Interpreter {
    /// Where `--trace` lines go: one per executed wave-instruction.
    trace: Option<Mutex<Box<dyn Write + Send>>>,
}

impl std::fmt::Debug for Interpreter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interpreter").field("trace", &self.trace.is_some()).finish()
    }
}

impl Interpreter {
    pub fn new() -> Interpreter {
        Interpreter::default()
    }

    /// An interpreter that writes `wg(x,y,z) wave[i] pc=0x....: <disassembly>` to `out` for
    /// every executed wave-instruction.
    pub fn with_trace(out: Box<dyn Write + Send>) -> Interpreter {
        Interpreter { trace: Some(Mutex::new(out)) }
    }

    /// Run an already resolved launch.
    pub fn run_launch(
        &self,
        kernel: &Kernel,
        launch: &Launch,
        device: &mut Device,
    ) -> Result<Stats, RunError> {
        let program = Program::lower(kernel);
        let mut stats = Stats::default();
        let mut guard =
            self.trace.as_ref().map(|m| m.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
        let mut local = vec![0u8; launch.local_memory as usize];
        let mut waves: Vec<Wave> = (0..launch.waves_per_workgroup).map(|i| Wave::new(i, launch)).collect();
        for wg in launch.workgroup_ids() {
            local.fill(0);
            for wave in &mut waves {
                wave.reset(launch);
            }
            let mut ctx = WorkgroupCtx {
                program: &program,
                launch,
                kernel: &kernel.meta.name,
                workgroup: wg,
                device: device.bytes_mut(),
                local: &mut local,
                stats: &mut stats,
                executed: 0,
                trace: guard.as_mut().map(|g| &mut ***g as &mut dyn Write),
            };
            run_workgroup(&mut waves, &mut ctx)?;
            stats.instructions += ctx.executed;
            stats.workgroups += 1;
            stats.waves += launch.waves_per_workgroup as u64;
        }
        if let Some(g) = guard.as_mut() {
            g.flush()
                .map_err(|e| RunError::before_run(&kernel.meta.name, RunErrorKind::Trace(e.to_string())))?;
        }
        Ok(stats)
    }
}

/// Run every wave of one workgroup to the end, releasing barriers as they fill.
fn run_workgroup(waves: &mut [Wave], ctx: &mut WorkgroupCtx) -> Result<(), RunError> {
    loop {
        for wave in waves.iter_mut() {
            if wave.status == Status::Running {
                wave.run(ctx)?;
            }
        }
        // Every wave has now ended or waits at a barrier (ended waves count as arrived, B.16).
        let mut waiting = false;
        for wave in waves.iter_mut() {
            if wave.status == Status::AtBarrier {
                wave.status = Status::Running;
                waiting = true;
            }
        }
        if !waiting {
            return Ok(());
        }
        ctx.stats.barriers += 1;
    }
}

impl Engine for Interpreter {
    fn name(&self) -> &'static str {
        "interp"
    }

    /// Fills every counter of the report's `stats`.
    fn run(
        &self,
        kernel: &ValidKernel,
        dispatch: &Dispatch,
        device: &mut Device,
    ) -> Result<RunReport, RunError> {
        let launch = resolve(kernel, dispatch, device)
            .map_err(|e| RunError::before_run(&kernel.meta.name, RunErrorKind::Dispatch(e)))?;
        let stats = self.run_launch(kernel, &launch, device)?;
        Ok(RunReport { stats, ..RunReport::default() })
    }
}

#[cfg(test)]
mod tests;
