//! wave-jit-codegen: Cranelift lowering of the WAVE IR to host SIMD code with explicit
//! execution masks, and the JIT engine that runs it.
//!
//! One Cranelift function per (kernel, W, flags) runs one wave ([`compiler`]); the engine
//! ([`engine`]) schedules waves and workgroups exactly as the interpreter (the engine contract
//! in [`wave_runtime`]'s documentation).

pub mod compiler;
pub mod ctx;
mod dead_params;
pub mod engine;
pub mod error;
pub mod helpers;
pub mod snapshot;
mod stacks;
pub mod translate;

pub use compiler::{compile, compile_first_tier, compile_fresh, set_tiering, Compiled, Tiering, Tiers};
pub use engine::{jit_engine, JitEngine, TooLargePolicy};
pub use error::JitError;
pub use translate::Flags;
