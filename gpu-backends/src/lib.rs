//! GPU source writers over the WAVE IR (naga style): one writer per target, each reading a
//! validated statement tree ([`wave_isa::ValidKernel`]) and returning source text.
//!
//! - [`Target::Ptx`]: PTX assembly (`.version 7.8`, `.target sm_75`, 64-bit addresses).
//! - [`Target::Hip`]: HIP C++ for `hipcc`/clang (wave width = `warpSize`).
//! - [`Target::Sycl`]: SYCL 2020 C++ free-function kernel (sub-group size = W).
//! - [`Target::Metal`]: Metal Shading Language (SIMD-group width 32; no f64).
//!
//! No writer decodes instructions or re-derives control flow: the tree gives the structure,
//! one walk of it (`walk.rs`: loop and call flags, inlining, masks) drives every writer,
//! [`ops::lowering`] gives the shared per-op description, and [`plan::Plan`] the facts every
//! writer needs (registers, fragments, local memory size, inlined call tree).
//!
//! Every generated kernel runs the WAVE wave in lock step: each lane walks every statement and
//! keeps WAVE's `exec`/`live` masks as per-lane booleans, loops repeat while any lane of the
//! wave still runs, and wave operations are called by all lanes with inactive lanes contributing
//! neutral values. This is what makes shuffles read the (stale) registers of inactive lanes,
//! barriers inside partially active `if`s, and `break`/`continue`/`return`/`halt` behave as
//! `wave_isa::ir` states, on every target. See README.md for the calling convention.

mod clike;
pub mod error;
pub mod ops;
pub mod plan;
mod ptx;
mod walk;

pub use error::EmitError;

use std::fmt;
use wave_isa::ValidKernel;

/// The GPU language to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    Ptx,
    Hip,
    Sycl,
    Metal,
}

impl Target {
    pub const ALL: [Target; 4] = [Target::Ptx, Target::Hip, Target::Sycl, Target::Metal];

    pub fn name(self) -> &'static str {
        match self {
            Target::Ptx => "ptx",
            Target::Hip => "hip",
            Target::Sycl => "sycl",
            Target::Metal => "metal",
        }
    }

    pub fn from_name(name: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Usual file extension of the written source.
    pub fn extension(self) -> &'static str {
        match self {
            Target::Ptx => "ptx",
            Target::Hip => "hip",
            Target::Sycl => "cpp",
            Target::Metal => "metal",
        }
    }

    /// Wave widths the target can give a kernel.
    pub fn wave_widths(self) -> &'static [u32] {
        match self {
            Target::Ptx | Target::Metal => &[32],
            // gfx10/11 run wave32, gfx9 (CDNA) wave64.
            Target::Hip => &[32, 64],
            // Sub-group sizes of Intel GPUs (8, 16, 32) and of the OpenCL CPU device (4..64).
            Target::Sycl => &[4, 8, 16, 32, 64],
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Default local memory when neither the kernel metadata nor the options give a size
/// (the runtime's default).
pub const DEFAULT_LOCAL_MEMORY: u32 = 16384;

/// What the caller may choose about the generated kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Wave width W. `None`: PTX and Metal 32; HIP uses `warpSize` of the architecture it is
    /// compiled for; SYCL 32 unless the build defines `WAVE_SUB_GROUP_SIZE`. With `Some(w)`
    /// a width the target cannot give is an error, and HIP code refuses to compile for an
    /// architecture with another wavefront size.
    pub wave_width: Option<u32>,
    /// Local memory bytes when the kernel metadata says 0 (default [`DEFAULT_LOCAL_MEMORY`]).
    pub local_memory: Option<u32>,
    /// Name of the generated entry point (default: the kernel name made into an identifier).
    pub entry_name: Option<String>,
}

/// The helper functions the HIP and SYCL writers put in every file (WAVE's semantics where the
/// targets' native operations differ: integer edge cases, the f32/f64 NaN rule, f16/bf16
/// rounding, and the interpreter's sin/cos/exp2/log2 algorithms), spelled for a host C++
/// compiler so they can be compared with the interpreter on the CPU.
pub fn host_helpers_source() -> String {
    clike::host_helpers()
}

/// Write `kernel` as source text for `target`.
pub fn write(kernel: &ValidKernel, target: Target, opts: &Options) -> Result<String, EmitError> {
    write_module(&[(kernel, opts)], target)
}

/// Write several kernels into one source file (shared header and helpers once). Every kernel
/// needs its own entry name ([`Options::entry_name`] or distinct kernel names), and HIP and
/// SYCL kernels of one file share one wave-width setting.
pub fn write_module(kernels: &[(&ValidKernel, &Options)], target: Target) -> Result<String, EmitError> {
    let mut out = String::new();
    let mut first: Option<plan::Plan> = None;
    let mut names = std::collections::HashSet::new();
    for (kernel, opts) in kernels {
        let plan = plan::Plan::new(kernel, target, opts)?;
        if !names.insert(plan.entry.clone()) {
            return Err(EmitError::Unsupported {
                target,
                what: format!("two kernels named `{}` in one file", plan.entry),
            });
        }
        match &first {
            None => {
                out.push_str(&match target {
                    Target::Ptx => ptx::HEADER.to_string(),
                    _ => clike::write_header(&plan, target),
                });
                first = Some(plan.clone());
            }
            Some(f) if f.wave_width != plan.wave_width => {
                return Err(EmitError::Unsupported {
                    target,
                    what: "kernels of one file with different wave widths".into(),
                })
            }
            Some(_) => {}
        }
        out.push_str(&match target {
            Target::Ptx => ptx::write_kernel(kernel, &plan)?,
            _ => clike::write_kernel(kernel, &plan, target)?,
        });
    }
    Ok(out)
}
