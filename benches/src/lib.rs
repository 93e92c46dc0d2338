//! wave-jit-benches: the bundled benchmark kernels (`kernels/*.wave`), plain-Rust references and
//! native yardsticks, the workloads that run them on any [`wave_runtime::Engine`] and check the
//! results, the JIT's compile times over every kernel, and the `wave-jit bench` driver that
//! prints the comparison.

pub mod compile_times;
pub mod data;
pub mod driver;
pub mod kernels;
pub mod native;
pub mod streams;
pub mod workloads;

use std::fmt;

/// Why a benchmark could not run or produced a wrong result.
#[derive(Clone, Debug, PartialEq)]
pub enum BenchError {
    /// A bundled kernel failed to assemble or load (a bug in this crate).
    Kernel(String),
    Device(String),
    Run(String),
    /// The engine finished but the result differs from the plain-Rust reference.
    Wrong(String),
    Usage(String),
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BenchError::Kernel(m) => write!(f, "bundled kernel: {m}"),
            BenchError::Device(m) => write!(f, "device: {m}"),
            BenchError::Run(m) => write!(f, "run: {m}"),
            BenchError::Wrong(m) => write!(f, "wrong result: {m}"),
            BenchError::Usage(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for BenchError {}
