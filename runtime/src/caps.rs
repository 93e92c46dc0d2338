//! Device capabilities (spec §7). The API, the `mov_sr` special registers and `wave-jit info`
//! all answer from these constants.

/// Default wave width (lanes per wave); `Dispatch::wave_width` may choose another of
/// [`SUPPORTED_WAVE_WIDTHS`].
pub const WAVE_WIDTH: u32 = 32;
/// Wave widths accepted by a dispatch (B.19; 4 is below the spec minimum and exists for the
/// reference's own test programs).
pub const SUPPORTED_WAVE_WIDTHS: [u32; 5] = [4, 8, 16, 32, 64];
/// Registers per thread at most.
pub const MAX_REGISTERS: u32 = 255;
/// Local memory per workgroup at most, in bytes.
pub const LOCAL_MEMORY_SIZE: u32 = 1 << 20;
/// Local memory per workgroup when neither the kernel nor the dispatch says (wave-emu's default).
pub const DEFAULT_LOCAL_MEMORY: u32 = 16384;
/// Threads per workgroup at most.
pub const MAX_WORKGROUP_SIZE: u32 = 1024;
/// Waves of one workgroup resident on one core at most (a full workgroup at the smallest W).
pub const MAX_WAVES_PER_CORE: u32 = MAX_WORKGROUP_SIZE / SUPPORTED_WAVE_WIDTHS[0];
/// Cores per cluster (no clusters on the CPU).
pub const CLUSTER_SIZE: u32 = 1;
/// Deepest chain of calls.
pub const MAX_CALL_DEPTH: u32 = wave_isa::ir::MAX_CALL_DEPTH;
/// Deepest if/loop nesting the engines support.
pub const MIN_DIVERGENCE_DEPTH: u32 = wave_isa::ir::MAX_NESTING;
/// Double precision (the f64 pair ops) is supported.
pub const CAP_F64: bool = true;
/// The matrix unit is supported ...
pub const CAP_MMA: bool = true;
/// ... with M×N×K tiles of this shape (f32 only).
pub const MMA_M: u32 = 4;
pub const MMA_N: u32 = 4;
pub const MMA_K: u32 = 4;
/// Device memory when the dispatch does not say (wave-emu's default), in bytes.
pub const DEFAULT_DEVICE_MEMORY: u64 = 1 << 20;
/// Device memory at most: the whole 32-bit address space.
pub const MAX_DEVICE_MEMORY: u64 = 1 << 32;

/// Every capability as `(name, value)`, in the order `wave-jit info` prints them.
pub fn all() -> Vec<(&'static str, String)> {
    vec![
        ("WAVE_WIDTH", WAVE_WIDTH.to_string()),
        (
            "SUPPORTED_WAVE_WIDTHS",
            SUPPORTED_WAVE_WIDTHS.iter().map(u32::to_string).collect::<Vec<_>>().join(","),
        ),
        ("MAX_REGISTERS", MAX_REGISTERS.to_string()),
        ("LOCAL_MEMORY_SIZE", LOCAL_MEMORY_SIZE.to_string()),
        ("MAX_WORKGROUP_SIZE", MAX_WORKGROUP_SIZE.to_string()),
        ("MAX_WAVES_PER_CORE", MAX_WAVES_PER_CORE.to_string()),
        ("CLUSTER_SIZE", CLUSTER_SIZE.to_string()),
        ("MAX_CALL_DEPTH", MAX_CALL_DEPTH.to_string()),
        ("MIN_DIVERGENCE_DEPTH", MIN_DIVERGENCE_DEPTH.to_string()),
        ("MAX_DEVICE_MEMORY", MAX_DEVICE_MEMORY.to_string()),
        ("CAP_F64", u32::from(CAP_F64).to_string()),
        ("CAP_MMA", u32::from(CAP_MMA).to_string()),
        ("MMA_SHAPE", format!("{MMA_M}x{MMA_N}x{MMA_K}")),
    ]
}
