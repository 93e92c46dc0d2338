//! Why a run stopped.

use crate::dispatch::DispatchError;
use std::fmt;

/// The memory an access went to (defined once, in the ISA crate).
pub use wave_isa::Space;

/// What went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunErrorKind {
    /// `address + bytes > size` in `space`.
    OutOfBounds { space: Space, address: u64, bytes: u32, size: u64 },
    /// More than `limit` wave-instructions in one workgroup.
    InstructionLimit { limit: u64 },
    /// A call chain deeper than `limit` (only unvalidated kernels get here).
    CallDepth { limit: u32 },
    /// The dispatch was rejected before anything ran.
    Dispatch(DispatchError),
    /// A feature this engine does not implement.
    Unsupported(String),
    /// Writing the trace failed.
    Trace(String),
}

/// A failed run: what happened and where. Device memory stays as it was at the failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunError {
    pub kernel: String,
    pub workgroup: [u32; 3],
    pub wave: u32,
    /// The first faulting lane, when one lane is to blame.
    pub lane: Option<u32>,
    /// Byte offset of the instruction in the kernel's code.
    pub pc: u32,
    pub kind: RunErrorKind,
}

impl RunError {
    /// An error that happened before any workgroup ran.
    pub fn before_run(kernel: &str, kind: RunErrorKind) -> RunError {
        RunError { kernel: kernel.to_string(), workgroup: [0; 3], wave: 0, lane: None, pc: 0, kind }
    }
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let RunErrorKind::Dispatch(e) = &self.kind {
            return write!(f, "kernel `{}`: dispatch rejected: {e}", self.kernel);
        }
        let [x, y, z] = self.workgroup;
        write!(f, "kernel `{}`, workgroup ({x},{y},{z}), wave {}", self.kernel, self.wave)?;
        if let Some(lane) = self.lane {
            write!(f, ", lane {lane}")?;
        }
        write!(f, ", pc 0x{:04x}: ", self.pc)?;
        match &self.kind {
            RunErrorKind::OutOfBounds { space, address, bytes, size } => write!(
                f,
                "{space} memory access out of bounds: address 0x{address:x} + {bytes} bytes > {space} memory size {size}"
            ),
            RunErrorKind::InstructionLimit { limit } => {
                write!(f, "instruction limit of {limit} wave-instructions per workgroup exceeded")
            }
            RunErrorKind::CallDepth { limit } => write!(f, "call chain deeper than {limit}"),
            RunErrorKind::Dispatch(e) => write!(f, "{e}"),
            RunErrorKind::Unsupported(what) => write!(f, "unsupported: {what}"),
            RunErrorKind::Trace(e) => write!(f, "cannot write the trace: {e}"),
        }
    }
}

impl std::error::Error for RunError {}
