//! Why a kernel cannot be written for a target.

use crate::Target;
use thiserror::Error;
use wave_isa::opcodes::Op;

#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum EmitError {
    /// The target cannot express what an instruction needs.
    #[error("unsupported on {target}: {what} (instruction {mnemonic} at offset 0x{offset:x})")]
    UnsupportedOp { target: Target, what: String, mnemonic: &'static str, offset: u32 },
    /// The target cannot express a property of the whole kernel.
    #[error("unsupported on {target}: {what}")]
    Unsupported { target: Target, what: String },
    /// Too many instructions once calls are inlined (see
    /// [`crate::plan::MAX_INLINED_INSTRUCTIONS`]).
    #[error(
        "kernel `{kernel}` is too large for {target}: {inlined} instructions after inlining calls, limit {limit} (every writer inlines calls)"
    )]
    TooLarge { target: Target, kernel: String, inlined: u64, limit: u64 },
    /// The requested wave width is not one the target provides.
    #[error("unsupported on {target}: wave width {width} (the target provides {supported:?})")]
    WaveWidth { target: Target, width: u32, supported: &'static [u32] },
}

impl EmitError {
    /// [`EmitError::UnsupportedOp`] for `op` at `offset`.
    pub(crate) fn op(target: Target, what: &str, op: Op, offset: u32) -> EmitError {
        EmitError::UnsupportedOp { target, what: what.into(), mnemonic: op.mnemonic(), offset }
    }
}
