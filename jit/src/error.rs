//! Errors of the JIT compiler.

use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum JitError {
    /// A feature the JIT does not implement.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The host CPU lacks what the generated code needs.
    #[error("host CPU not supported by the JIT: {0}")]
    Host(String),
    /// Cranelift rejected the generated function (a JIT bug).
    #[error("code generation failed: {0}")]
    Codegen(String),
    /// The kernel is beyond what the JIT compiles (the message says what and the limit); the
    /// interpreter can run it.
    #[error("{0}")]
    TooLarge(String),
}
