//! The bundled WAVE kernels, assembled from the sources in `benches/kernels/`.

use crate::BenchError;
use wave_isa::module::Module;
use wave_isa::ValidKernel;

/// One output per thread.
pub const GEMM_NAIVE: &str = include_str!("../kernels/gemm_naive.wave");
/// 64×64 workgroup tiles, K staged in local memory, 4×4 outputs per thread.
pub const GEMM_TILED: &str = include_str!("../kernels/gemm_tiled.wave");
/// GPU-style: 128×128 workgroup tiles, 256 threads, 8×8 outputs per thread, double-buffered
/// local-memory K tiles.
pub const GEMM_GPU: &str = include_str!("../kernels/gemm_gpu.wave");
/// f16 inputs, products and sums (hma2), 64×64 tiles, 4×4 outputs per thread.
pub const GEMM_F16: &str = include_str!("../kernels/gemm_f16.wave");
pub const RELU: &str = include_str!("../kernels/relu.wave");
pub const BIAS_ADD: &str = include_str!("../kernels/bias_add.wave");
pub const SOFTMAX: &str = include_str!("../kernels/softmax.wave");
pub const TRANSPOSE: &str = include_str!("../kernels/transpose.wave");
pub const VECADD: &str = include_str!("../kernels/vecadd.wave");
pub const REDUCTION: &str = include_str!("../kernels/reduction.wave");
pub const HISTOGRAM: &str = include_str!("../kernels/histogram.wave");
/// Three kernels: `scan_blocks`, `scan_sums`, `scan_add`.
pub const PREFIX_SUM: &str = include_str!("../kernels/prefix_sum.wave");
pub const EMPTY: &str = include_str!("../kernels/empty.wave");

/// Every bundled source: (file name, text).
pub const ALL_SOURCES: [(&str, &str); 13] = [
    ("empty.wave", EMPTY),
    ("gemm_naive.wave", GEMM_NAIVE),
    ("gemm_tiled.wave", GEMM_TILED),
    ("gemm_gpu.wave", GEMM_GPU),
    ("gemm_f16.wave", GEMM_F16),
    ("vecadd.wave", VECADD),
    ("reduction.wave", REDUCTION),
    ("histogram.wave", HISTOGRAM),
    ("prefix_sum.wave", PREFIX_SUM),
    ("relu.wave", RELU),
    ("bias_add.wave", BIAS_ADD),
    ("softmax.wave", SOFTMAX),
    ("transpose.wave", TRANSPOSE),
];

/// Assemble `source` and return its kernel called `name`.
pub fn load(source: &str, file_name: &str, name: &str) -> Result<ValidKernel, BenchError> {
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
    Gpu,
}

impl GemmKernel {
    pub const ALL: [GemmKernel; 3] = [GemmKernel::Naive, GemmKernel::Tiled, GemmKernel::Gpu];

    pub fn name(self) -> &'static str {
        match self {
            GemmKernel::Naive => "gemm_naive",
            GemmKernel::Tiled => "gemm_tiled",
            GemmKernel::Gpu => "gemm_gpu",
        }
    }

    pub fn kernel(self) -> Result<ValidKernel, BenchError> {
        match self {
            GemmKernel::Naive => load(GEMM_NAIVE, "gemm_naive.wave", "gemm_naive"),
            GemmKernel::Tiled => load(GEMM_TILED, "gemm_tiled.wave", "gemm_tiled"),
            GemmKernel::Gpu => load(GEMM_GPU, "gemm_gpu.wave", "gemm_gpu"),
        }
    }

    /// What it is, for the result table.
    pub fn describe(self) -> &'static str {
        match self {
            GemmKernel::Naive => "one output per thread",
            GemmKernel::Tiled => "64×64 tiles, K in local memory by 16, 4×4 outputs per thread",
            GemmKernel::Gpu => {
                "128×128 tiles, 256 threads, 8×8 outputs per thread, K by 8 in double-buffered local memory"
            }
        }
    }

    /// Output tile edge of one workgroup; N must be a multiple of it.
    pub fn tile(self) -> u32 {
        match self {
            GemmKernel::Naive => 16,
            GemmKernel::Tiled => 64,
            GemmKernel::Gpu => 128,
        }
    }
}
