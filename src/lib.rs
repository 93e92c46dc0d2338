//! # wave-jit: a WAVE device on the CPU
//!
//! Run WAVE GPU kernels on the CPU from a program: create a [`Device`], load a [`Module`]
//! (`.wbin` bytes or `.wave` text), pick a [`Kernel`], put data in [`Buffer`]s and
//! [`launch`](Device::launch). Kernels run on the Cranelift JIT (or, if asked, on the reference
//! interpreter); both give bit-for-bit the same results.
//!
//! ```
//! use wave_jit::{Device, Module};
//!
//! // c[i] = a[i] + b[i]; arguments: r0 = a, r1 = b, r2 = c (buffers), r3 = n.
//! let module = Module::from_source(
//!     ".kernel vector_add
//!          mov r4, sr_workgroup_id_x
//!          mov r5, sr_workgroup_size_x
//!          mov r6, sr_thread_id_x
//!          imad r4, r4, r5, r6
//!          icmp_lt p0, r4, r3
//!          if p0
//!              mov_imm r5, 2
//!              shl r5, r4, r5
//!              iadd r6, r0, r5
//!              device_load_u32 r6, r6
//!              iadd r7, r1, r5
//!              device_load_u32 r7, r7
//!              fadd r6, r6, r7
//!              iadd r7, r2, r5
//!              device_store_u32 r7, r6
//!          endif
//!          halt
//!      .end",
//!     "vector_add.wave",
//! )?;
//! let kernel = module.kernel("vector_add")?;
//!
//! let n = 1000;
//! let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
//! let b: Vec<f32> = (0..n).map(|i| 2.0 * i as f32).collect();
//!
//! let mut device = Device::new()?;
//! let (da, db) = (device.alloc_from(&a)?, device.alloc_from(&b)?);
//! let dc = device.alloc(4 * n as u64)?;
//! device.launch(&kernel, [4, 1, 1], [256, 1, 1], &[da.into(), db.into(), dc.into(), n.into()])?;
//!
//! let c: Vec<f32> = device.read(&dc)?;
//! assert_eq!(c[999], 2997.0);
//! # Ok::<(), wave_jit::Error>(())
//! ```
//!
//! ## Arguments
//!
//! WAVE kernels have no parameter table: they read their arguments from registers. Argument
//! `i` of a launch is the initial value of register `i` in every thread, the convention of the
//! reference runtime: a buffer's device address, a `u32` as it is, an `i32` as its bits, an
//! `f32` as its IEEE bits (see [`Arg`]). [`Device::launch_with_registers`] sets any registers.
//!
//! ## Device memory
//!
//! A device has one 32-bit address space of [`DeviceConfig::memory`] bytes (zero-filled; pages
//! are backed when first touched). [`Device::alloc`] hands out blocks of it first fit from
//! address 0, zero-filled and aligned ([`DEFAULT_ALIGN`], or any power of two with
//! [`Device::alloc_aligned`]); [`Device::free`] gives them back. Kernels may read and write
//! anywhere in device memory; an access outside it stops the launch with an error naming the
//! kernel, workgroup, wave, lane, pc and address ([`Error::Run`]).
//!
//! ## Launches
//!
//! Launches are synchronous. The schedule is fixed, so results do not depend on the engine or
//! the number of threads (except for races between workgroups, see [`wave_runtime`]): a failed
//! launch leaves device memory as it was at the failure. The JIT compiles a kernel on its first
//! launch and caches the code by kernel, wave width and flags: later launches of the same kernel
//! with the same shape reuse it, whatever their arguments.
//!
//! ## Errors
//!
//! Every call returns [`Result`]; [`Error`] says what went wrong and where (the file, line and
//! column of an assembly error; the kernel, workgroup, wave, lane and pc of a failed launch).
//! No valid kernel can crash the process or touch memory outside its device.
//!
//! ## Other languages
//!
//! The same API is a C ABI (`libwave_jit.so`, header `include/wave_jit.h`, module [`capi`]),
//! which also exports the reference runtime's `wave_emulate` entry. The Python package
//! `wave-jit` (`python/`) is a thin layer over that C ABI.
//!
//! ## The crates underneath
//!
//! [`isa`] (assembler, `.wbin` format, IR, validator), [`runtime`] (device memory, dispatch,
//! the interpreter) and [`codegen`] (the JIT) are re-exported for tools that need more than
//! this API.

mod alloc;
pub mod capi;
mod device;
mod error;
mod module;

pub use device::{
    Arg, Buffer, Device, DeviceConfig, Element, EngineKind, LaunchConfig, LaunchReport, DEFAULT_ALIGN,
    DEFAULT_MEMORY,
};
pub use error::{Error, Result};
pub use module::{assemble, Kernel, Module};
pub use wave_runtime::Stats;

pub use wave_isa as isa;
pub use wave_jit_codegen as codegen;
pub use wave_runtime as runtime;

/// `config` for random programs run on the JIT (`wave-jit fuzz-diff`): what the generator
/// must know of it, its size limit and the ops its chunk-major loops admit (lane-local loops
/// are made of those).
pub fn jit_fuzz_config(config: wave_difftest::gen::GenConfig) -> wave_difftest::gen::GenConfig {
    wave_difftest::gen::GenConfig {
        instruction_limit: Some(wave_jit_codegen::compiler::instruction_limit),
        favoured_ops: Some(wave_jit_codegen::translate::rules::is_native),
        ..config
    }
}
