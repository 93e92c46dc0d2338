//! The bundled WAVE kernels, assembled from the sources in `benches/kernels/`.

use crate::BenchError;
use wave_isa::module::Module;
use wave_isa::Kernel;

/// One output per thread.
pub const GEMM_NAIVE: &str = include_str!("../kernels/gemm_naive.wave");
/// 64×64 workgroup tiles, K staged in local memory, 4×4 outputs per thread.
pub const GEMM_TILED: &str = include_str!("../kernels/gemm_tiled.wave");
pub const VECADD: &str = include_str!("../kernels/vecadd.wave");
pub const REDUCTION: &str = include_str!("../kernels/reduction.wave");
pub const HISTOGRAM: &str = include_str!("../kernels/histogram.wave");
/// Three kernels: `scan_blocks`, `scan_sums`, `scan_add`.
pub const PREFIX_SUM: &str = include_str!("../kernels/prefix_sum.wave");
pub const EMPTY: &str = include_str!("../kernels/empty.wave");

/// Assemble `source` and return its kernel called `name`.
pub fn load(source: &str, file_name: &str, name: &str) -> Result<Kernel, BenchError> {
    let assembled = wave_isa::asm::assemble(source, file_name)
        .map_err(|d| BenchError::Kernel(format!("{file_name}: {d}")))?;
    let module =
        Module::from_wbin(&assembled.file).map_err(|e| BenchError::Kernel(format!("{file_name}: {e}")))?;
    module.kernel(name).cloned().map_err(|e| BenchError::Kernel(format!("{file_name}: {e}")))
}

/// Which GEMM kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GemmKernel {
    Naive,
    Tiled,
}

impl GemmKernel {
    pub const ALL: [GemmKernel; 2] = [GemmKernel::Naive, GemmKernel::Tiled];

    pub fn name(self) -> &'static str {
        match self {
            GemmKernel::Naive => "gemm_naive",
            GemmKernel::Tiled => "gemm_tiled",
        }
    }

    pub fn kernel(self) -> Result<Kernel, BenchError> {
        match self {
            GemmKernel::Naive => load(GEMM_NAIVE, "gemm_naive.wave", "gemm_naive"),
            GemmKernel::Tiled => load(GEMM_TILED, "gemm_tiled.wave", "gemm_tiled"),
        }
    }

    /// Output tile edge of one workgroup; N must be a multiple of it.
    pub fn tile(self) -> u32 {
        match self {
            GemmKernel::Naive => 16,
            GemmKernel::Tiled => 64,
        }
    }
}
