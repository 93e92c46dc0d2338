//! Where the compiled code finds the runtime state and the helpers: the environment trait
//! (wasmtime's `FuncEnvironment` in miniature), so the lowering never hard-codes the context
//! layout or where a helper is.

use crate::abi::{offsets, Helper};

/// Offsets of the runtime state in the context the compiled function receives.
pub trait WaveEnv {
    fn device_base_offset(&self) -> i32;
    fn local_base_offset(&self) -> i32;
    fn local_mask_offset(&self) -> i32;
    fn live_lanes_offset(&self) -> i32;
    fn fuel_offset(&self) -> i32;
    /// Conservative fault limit for an access of `1 << log2_bytes` bytes.
    fn limit_offset(&self, local: bool, log2_bytes: u32) -> i32;
    fn special_offset(&self, index: u8) -> i32;
    fn thread_id_offset(&self, dim: usize) -> i32;
    fn init_reg_offset(&self, reg: u8) -> i32;
    fn scratch_offset(&self, slot: usize) -> i32;
    /// Where `--stats` counter `index` ([`crate::abi::counter`]) is.
    fn counter_offset(&self, index: usize) -> i32;
    /// Where the 16 f64 entries of [`crate::abi::EXP2_TABLE`] are.
    fn exp2_table_offset(&self) -> i32;
    /// Where the pointer to the workgroup's next wave context is (null after the last).
    fn next_wave_offset(&self) -> i32;
    /// The address of `helper`'s code.
    fn helper_address(&self, helper: Helper) -> usize;
}

/// The layout of [`crate::abi::WaveCtx`], and the helpers where `helper_address` says: the
/// runtime's, given by whoever compiles (this layer does not depend on the runtime).
pub struct CtxEnv {
    helper_address: fn(Helper) -> usize,
}

impl CtxEnv {
    pub const fn new(helper_address: fn(Helper) -> usize) -> CtxEnv {
        CtxEnv { helper_address }
    }
}

impl WaveEnv for CtxEnv {
    fn device_base_offset(&self) -> i32 {
        offsets::DEVICE_BASE
    }
    fn local_base_offset(&self) -> i32 {
        offsets::LOCAL_BASE
    }
    fn local_mask_offset(&self) -> i32 {
        offsets::LOCAL_MASK
    }
    fn live_lanes_offset(&self) -> i32 {
        offsets::LIVE_LANES
    }
    fn fuel_offset(&self) -> i32 {
        offsets::FUEL
    }
    fn limit_offset(&self, local: bool, log2_bytes: u32) -> i32 {
        let base = if local { offsets::LOCAL_LIMIT } else { offsets::DEVICE_LIMIT };
        base + 4 * log2_bytes as i32
    }
    fn special_offset(&self, index: u8) -> i32 {
        offsets::SPECIAL + 4 * index as i32
    }
    fn thread_id_offset(&self, dim: usize) -> i32 {
        offsets::THREAD_ID + offsets::LANE_ROW * dim as i32
    }
    fn init_reg_offset(&self, reg: u8) -> i32 {
        offsets::INIT_REGS + 4 * reg as i32
    }
    fn scratch_offset(&self, slot: usize) -> i32 {
        offsets::SCRATCH + offsets::LANE_ROW * slot as i32
    }
    fn counter_offset(&self, index: usize) -> i32 {
        offsets::COUNTERS + 8 * index as i32
    }
    fn exp2_table_offset(&self) -> i32 {
        offsets::EXP2_TABLE
    }
    fn next_wave_offset(&self) -> i32 {
        offsets::NEXT_WAVE
    }
    fn helper_address(&self, helper: Helper) -> usize {
        (self.helper_address)(helper)
    }
}
