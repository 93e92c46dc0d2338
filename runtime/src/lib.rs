//! wave-runtime: device memory, dispatch resolution, capabilities, the lane semantics shared
//! by every engine ([`semantics`]), and the reference interpreter ([`Interpreter`]).
//!
//! The schedule every engine follows (bit-for-bit the same results): workgroups in z, y, x
//! order (x fastest); inside a workgroup, waves in order, each running until it reaches a
//! barrier or ends, then all released together; lanes in order 0..W-1 for memory effects.

pub mod caps;
pub mod device;
pub mod device_atomic;
pub mod dispatch;
pub mod engine;
pub mod error;
pub mod interp;
pub mod semantics;
pub mod stats;

pub use device::{Device, DeviceError};
pub use dispatch::{host_cores, resolve, Dispatch, DispatchError, Launch};
pub use engine::Engine;
pub use error::{RunError, RunErrorKind, Space};
pub use interp::Interpreter;
pub use stats::Stats;
