//! wave-jit-runtime: device memory, dispatch resolution, capabilities, the lane semantics shared
//! by every engine ([`semantics`]), and the reference interpreter ([`Interpreter`]).
//!
//! # The engine contract
//!
//! Every [`Engine`] (the interpreter here, the JIT in `wave-jit-codegen`) runs a kernel by
//! these rules, so that all of them leave bit-for-bit the same device memory:
//!
//! - **Input**: a kernel that passed validation ([`wave_isa::ValidKernel`], which carries what
//!   validation learned); **output**: a [`RunReport`] (the counters, whether another engine ran
//!   the kernel instead, and how the code was compiled) or a [`RunError`].
//! - **Before anything runs**, the [`Dispatch`] is resolved ([`resolve`]): the kernel's
//!   `.workgroup_size`, register count and `.local_memory` replace the dispatch's, and every
//!   limit of [`caps`] is checked. A rejected dispatch is a [`RunError`] of kind
//!   [`RunErrorKind::Dispatch`] and touches nothing.
//! - **Initial state of a thread**: its registers are 0 except the dispatch's
//!   `initial_registers` (the kernel arguments); predicates are false. Each workgroup starts
//!   with zero-filled local memory. Device memory is whatever the caller left in it.
//! - **Schedule**: workgroups in z, y, x order (x fastest). Inside a workgroup, waves run in
//!   order, each until it reaches a barrier or ends; when every wave that has not ended waits
//!   at the barrier (ended waves count as arrived), all are released and run again in order.
//!   Inside one instruction, lanes take effect in order 0..W-1 (the last lane's store to an
//!   address wins; atomics see the lanes before them).
//! - **Threads**: an engine may run workgroups in parallel (the JIT with
//!   [`Dispatch::threads`] > 1). Results are then the same except where workgroups race:
//!   atomics returning old values, exchanges or compare-and-swap across workgroups, overlapping
//!   plain stores.
//! - **Errors**: a run stops at the first error in schedule order (in parallel: the error of
//!   the lowest-numbered failing workgroup among those that ran), naming kernel, workgroup,
//!   wave, lane and pc ([`RunError`]). Device memory is left as it was at the failure: writes before it
//!   stay. The instruction limit counts wave-instructions per workgroup.

pub mod caps;
pub mod device;
pub mod device_atomic;
pub mod dispatch;
pub mod engine;
pub mod error;
pub mod interp;
pub mod semantics;
pub mod special;
pub mod stats;

pub use device::{Device, DeviceError};
pub use dispatch::{host_cores, resolve, Dispatch, DispatchError, Launch};
pub use engine::{CompileReport, Engine, RunReport, Tiers};
pub use error::{RunError, RunErrorKind, Space};
pub use interp::Interpreter;
pub use stats::Stats;
