//! wave-jit-codegen: Cranelift lowering of the WAVE IR to host SIMD code with explicit
//! execution masks, and the JIT engine that runs it.
//!
//! One Cranelift function per (kernel, W, flags) runs one wave ([`compiler`]); the engine
//! ([`engine`]) schedules waves and workgroups exactly as the interpreter (the engine contract
//! in [`wave_runtime`]'s documentation).
//!
//! Layers, each importing only those below it:
//! - [`abi`]: the runtime calling convention (context layout, statuses, scratch slots, the list
//!   of helpers, the signatures); it imports nothing from the crate;
//! - [`translate`] (the lowering, reaching the runtime only through `abi`) and [`helpers`]
//!   (the Rust helpers compiled code calls; with `stacks`), side by side;
//! - [`compiler`]: codegen, turning the lowering into code with the helpers' addresses (one
//!   tier of an entry function at a time, loop functions compiled on first use), and owning
//!   that code's memory; it knows nothing of caching or of when tiers are compiled;
//! - the engine runtime: [`engine::tiers`] (which code runs a kernel: the interpreter for a
//!   small dispatch, the quick tier, the optimized one compiled in the background), then
//!   [`engine::cache`] (the compile cache), then [`engine`] itself (workers, fibers), which
//!   runs the waves; [`snapshot`] summarises the lowering (with `compiler`).
//!
//! [`error`] and `dead_params` (a pass over Cranelift IR) import nothing from the crate; any
//! layer may use them.

pub mod abi;
pub mod compiler;
mod dead_params;
pub mod engine;
pub mod error;
pub mod helpers;
pub mod snapshot;
mod stacks;
pub mod translate;

pub use compiler::{Compiled, Tiers};
pub use engine::cache::compile;
pub use engine::tiers::{compile_first_tier, compile_fresh, set_tiering, Tiering};
pub use engine::{jit_engine, JitEngine, TooLargePolicy};
pub use error::JitError;
pub use translate::Flags;
