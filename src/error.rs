//! [`Error`]: everything the API can fail with, each saying what and where.

use std::fmt;
use wave_isa::LoadError;
use wave_runtime::{DeviceError, RunError};

/// Why an API call failed.
///
/// Every variant's message (its `Display`) names what failed and where: the file and line of an
/// assembly error, the kernel, workgroup, wave, lane and pc of a failed launch, the offsets and
/// sizes of a bad memory access.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The module did not load: unreadable file, malformed `.wbin`, assembly errors (each with
    /// file:line:column), or kernels that fail validation.
    Load(LoadError),
    /// No kernel with that name or index in the module.
    NoSuchKernel {
        /// The name or index asked for.
        selector: String,
        /// The module's kernels, in index order.
        available: Vec<String>,
    },
    /// Device memory could not be created (bad size, or the host refused the mapping).
    DeviceMemory(DeviceError),
    /// No free block of device memory is large enough.
    OutOfMemory {
        /// Bytes asked for.
        requested: u64,
        /// Alignment asked for.
        align: u64,
        /// The largest free block, in bytes.
        largest_free: u64,
        /// Bytes of device memory in all.
        memory_size: u64,
    },
    /// An alignment that is not a power of two (or is above 4 GiB).
    BadAlignment {
        /// The alignment asked for.
        align: u64,
    },
    /// A buffer that this device did not allocate, or that was freed.
    UnknownBuffer {
        /// The buffer's device address.
        address: u32,
        /// The buffer's length in bytes.
        len: u64,
    },
    /// A read or write past the end of a buffer.
    BufferRange {
        /// The buffer's device address.
        address: u32,
        /// The buffer's length in bytes.
        buffer_len: u64,
        /// Byte offset of the access inside the buffer.
        offset: u64,
        /// Bytes accessed.
        len: u64,
    },
    /// A typed read of a buffer whose length is not a whole number of elements.
    PartialElement {
        /// The buffer's length in bytes.
        buffer_len: u64,
        /// Bytes per element.
        element_size: usize,
    },
    /// More arguments than the kernel has registers (argument i goes to register i).
    TooManyArguments {
        /// The kernel's name.
        kernel: String,
        /// Arguments given.
        given: usize,
        /// Registers per thread of the kernel.
        registers: u32,
    },
    /// The launch was rejected before it ran (impossible grid, workgroup, wave width...) or
    /// stopped with an error (out-of-bounds access, instruction limit...). Device memory is
    /// left as it was at the failure.
    Run(RunError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Load(e) => write!(f, "{e}"),
            Error::NoSuchKernel { selector, available } => {
                write!(f, "no kernel `{selector}`; ")?;
                if available.is_empty() {
                    return write!(f, "the module has no kernels");
                }
                let list: Vec<String> =
                    available.iter().enumerate().map(|(i, name)| format!("{i}: {name}")).collect();
                write!(f, "available kernels (name or index): {}", list.join(", "))
            }
            Error::DeviceMemory(e) => write!(f, "{e}"),
            Error::OutOfMemory { requested, align, largest_free, memory_size } => write!(
                f,
                "out of device memory: {requested} bytes (aligned to {align}) asked for, the largest free \
                 block is {largest_free} bytes of {memory_size} (free buffers, or make the device larger)"
            ),
            Error::BadAlignment { align } => {
                write!(f, "alignment {align} is not a power of two between 1 and 2^31")
            }
            Error::UnknownBuffer { address, len } => write!(
                f,
                "buffer at device address 0x{address:x} ({len} bytes) was freed or belongs to another device"
            ),
            Error::BufferRange { address, buffer_len, offset, len } => write!(
                f,
                "bytes {offset}..{} are outside the {buffer_len}-byte buffer at device address 0x{address:x}",
                offset.saturating_add(*len)
            ),
            Error::PartialElement { buffer_len, element_size } => {
                write!(f, "a {buffer_len}-byte buffer is not a whole number of {element_size}-byte elements")
            }
            Error::TooManyArguments { kernel, given, registers } => write!(
                f,
                "kernel `{kernel}`: {given} arguments, but its threads have only {registers} registers \
                 (argument i goes to register i)"
            ),
            Error::Run(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Load(e) => Some(e),
            Error::DeviceMemory(e) => Some(e),
            Error::Run(e) => Some(e),
            _ => None,
        }
    }
}

impl From<LoadError> for Error {
    fn from(e: LoadError) -> Error {
        Error::Load(e)
    }
}

impl From<DeviceError> for Error {
    fn from(e: DeviceError) -> Error {
        Error::DeviceMemory(e)
    }
}

impl From<RunError> for Error {
    fn from(e: RunError) -> Error {
        Error::Run(e)
    }
}

/// The result of every API call.
pub type Result<T, E = Error> = std::result::Result<T, E>;
