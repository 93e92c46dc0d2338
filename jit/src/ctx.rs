//! The per-wave context the compiled code receives: the runtime layout the JIT reads.
//!
//! Compiled functions take `*mut WaveCtx` and read fields at fixed offsets (see [`offsets`]).
//! Everything the code cannot know at compile time (memory bases, sizes, ids, initial
//! registers) lives here; the engine fills it before running a wave.

use std::mem::offset_of;

/// Most lanes a wave can have (semantics.md B.19).
pub const MAX_LANES: usize = 64;
/// Number of helper operand slots in [`WaveCtx::scratch`].
pub const SCRATCH_SLOTS: usize = 16;
/// Access widths in bytes, indexed by `log2(bytes)`, for the bounds limits.
pub const ACCESS_WIDTHS: [u32; 5] = [1, 2, 4, 8, 16];

/// Indices of [`WaveCtx::counters`] (`--stats`): first one per `CostClass` (by its index),
/// then what depends on the lanes.
pub mod counter {
    use wave_isa::analysis::cost::CLASSES;
    /// Lanes that performed an atomic (wave-emu adds them to the atomic count).
    pub const ATOMIC_LANES: usize = CLASSES;
    pub const DEVICE_LOADS: usize = CLASSES + 1;
    pub const DEVICE_LOAD_BYTES: usize = CLASSES + 2;
    pub const DEVICE_STORES: usize = CLASSES + 3;
    pub const DEVICE_STORE_BYTES: usize = CLASSES + 4;
    pub const LOCAL_LOADS: usize = CLASSES + 5;
    pub const LOCAL_LOAD_BYTES: usize = CLASSES + 6;
    pub const LOCAL_STORES: usize = CLASSES + 7;
    pub const LOCAL_STORE_BYTES: usize = CLASSES + 8;
    /// `if`s where some executing lane took the else side.
    pub const DIVERGENT_BRANCHES: usize = CLASSES + 9;
    pub const COUNT: usize = CLASSES + 10;
}

/// Status the compiled function returns.
pub mod status {
    /// The wave ended (every lane halted or the code ended).
    pub const DONE: u32 = 0;
    /// An error was recorded in the wave's [`crate::helpers::WaveHost`].
    pub const ERROR: u32 = 1;
    /// The dispatch was stopped by another wave's error.
    pub const ABORTED: u32 = 2;
}

/// The context of one wave. `repr(C)`: compiled code reads it by offset.
#[repr(C)]
pub struct WaveCtx {
    /// Base of the device window (4 GiB + 64 KiB: every u32 address + 16 stays inside).
    pub device_base: *mut u8,
    /// Base of this worker's local memory buffer (power of two + 16 bytes of slack).
    pub local_base: *mut u8,
    /// Rust-side state of the wave (errors, fiber yielder, MMA fragments).
    pub host: *mut crate::helpers::WaveHost,
    /// Remaining instruction budget of the workgroup (shared by its waves).
    pub fuel: *mut i64,
    /// The compiled kernel's loop functions, compiled on first use (`helpers::wave_loop`).
    pub lazy_loops: *const crate::compiler::LazyLoops,
    /// Local buffer size − 1 (addresses are masked with it so inactive lanes stay inside).
    pub local_mask: u32,
    /// Number of lanes live at the start (threads of the workgroup in this wave).
    pub live_lanes: u32,
    /// Whether bounds are checked (helpers read it; compiled code has it baked in).
    pub checked: u32,
    /// Conservative fault limits for device accesses of 1,2,4,8,16 bytes: an active lane
    /// whose address is `>= limit` may fault; the cold path then checks exactly.
    pub device_limit: [u32; 5],
    /// The same for local memory.
    pub local_limit: [u32; 5],
    /// Exact sizes, for the exact check on the cold path.
    pub device_size: u64,
    pub local_size: u64,
    /// Values of the uniform special registers, indexed by `SpecialReg as usize`.
    pub special: [u32; 20],
    /// Per-lane thread ids x, y, z.
    pub thread_id: [[u32; MAX_LANES]; 3],
    /// Register values every thread starts with.
    pub init_regs: [u32; 256],
    /// Operand and result slots of helper calls, one u32 per lane.
    pub scratch: [[u32; MAX_LANES]; SCRATCH_SLOTS],
    /// What code compiled with `Flags::stats` counted (indexed by [`counter`]).
    pub counters: [u64; counter::COUNT],
}

impl WaveCtx {
    /// A zeroed context (null pointers); the engine fills it.
    pub fn zeroed() -> Box<WaveCtx> {
        Box::new(WaveCtx {
            device_base: std::ptr::null_mut(),
            local_base: std::ptr::null_mut(),
            host: std::ptr::null_mut(),
            fuel: std::ptr::null_mut(),
            lazy_loops: std::ptr::null(),
            local_mask: 0,
            live_lanes: 0,
            checked: 0,
            device_limit: [0; 5],
            local_limit: [0; 5],
            device_size: 0,
            local_size: 0,
            special: [0; 20],
            thread_id: [[0; MAX_LANES]; 3],
            init_regs: [0; 256],
            scratch: [[0; MAX_LANES]; SCRATCH_SLOTS],
            counters: [0; counter::COUNT],
        })
    }

    /// Add what this wave's counters hold to `stats` (all but instructions, barriers,
    /// workgroups and waves, which the engine counts).
    pub fn add_counters_to(&self, stats: &mut wave_runtime::Stats) {
        use wave_isa::analysis::cost::CostClass;
        let c = &self.counters;
        for class in CostClass::ALL {
            stats.add_class(class, c[class.index()]);
        }
        stats.atomic_ops += c[counter::ATOMIC_LANES];
        stats.device_loads += c[counter::DEVICE_LOADS];
        stats.device_load_bytes += c[counter::DEVICE_LOAD_BYTES];
        stats.device_stores += c[counter::DEVICE_STORES];
        stats.device_store_bytes += c[counter::DEVICE_STORE_BYTES];
        stats.local_loads += c[counter::LOCAL_LOADS];
        stats.local_load_bytes += c[counter::LOCAL_LOAD_BYTES];
        stats.local_stores += c[counter::LOCAL_STORES];
        stats.local_store_bytes += c[counter::LOCAL_STORE_BYTES];
        stats.divergent_branches += c[counter::DIVERGENT_BRANCHES];
    }

    /// Set the size-dependent limits for a memory of `size` bytes.
    pub fn limits_for(size: u64) -> [u32; 5] {
        ACCESS_WIDTHS.map(|bytes| {
            // fault iff addr + bytes > size, i.e. addr >= size - bytes + 1; saturate into u32
            // (the one value that does not fit, 2^32, is rechecked exactly on the cold path).
            let lim = (size + 1).saturating_sub(bytes as u64);
            lim.min(u32::MAX as u64) as u32
        })
    }
}

/// Byte offsets of the fields compiled code reads.
pub mod offsets {
    use super::*;
    pub const DEVICE_BASE: i32 = offset_of!(WaveCtx, device_base) as i32;
    pub const LOCAL_BASE: i32 = offset_of!(WaveCtx, local_base) as i32;
    pub const FUEL: i32 = offset_of!(WaveCtx, fuel) as i32;
    pub const LOCAL_MASK: i32 = offset_of!(WaveCtx, local_mask) as i32;
    pub const LIVE_LANES: i32 = offset_of!(WaveCtx, live_lanes) as i32;
    pub const DEVICE_LIMIT: i32 = offset_of!(WaveCtx, device_limit) as i32;
    pub const LOCAL_LIMIT: i32 = offset_of!(WaveCtx, local_limit) as i32;
    pub const SPECIAL: i32 = offset_of!(WaveCtx, special) as i32;
    pub const THREAD_ID: i32 = offset_of!(WaveCtx, thread_id) as i32;
    pub const INIT_REGS: i32 = offset_of!(WaveCtx, init_regs) as i32;
    pub const SCRATCH: i32 = offset_of!(WaveCtx, scratch) as i32;
    pub const COUNTERS: i32 = offset_of!(WaveCtx, counters) as i32;
    /// Bytes of one scratch slot / one thread-id row.
    pub const LANE_ROW: i32 = (MAX_LANES * 4) as i32;
}
