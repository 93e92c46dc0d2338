//! The JIT's runtime calling convention: what compiled code and the runtime agree on.
//!
//! - the per-wave context compiled functions receive ([`WaveCtx`], read by offset: [`offsets`]);
//! - the statuses they return ([`status`]) and the `--stats` counters they keep ([`counter`]);
//! - the scratch-slot protocol of helper calls ([`OUT_SLOT`], [`ADDR_SLOT`], [`helper_op`]);
//! - the one list of Rust helpers compiled code calls ([`Helper`], [`HelperFn`]);
//! - the signatures of entry functions, helpers and loop functions, and the stack they need
//!   ([`STACK_MARGIN`], [`MAX_FRAME`]);
//! - how a helper reaches the running kernel's loop functions ([`LoopTable`]).
//!
//! This is the crate's bottom layer: it imports nothing from the rest of the crate, so the
//! code generator (`translate`) and the runtime helpers (`helpers`) both build on it without
//! depending on each other. Everything the code cannot know at compile time (memory bases,
//! sizes, ids, initial registers) lives in the context; the engine fills it before running a
//! wave.

use cranelift_codegen::ir::types::{I32, I64};
use cranelift_codegen::ir::{AbiParam, Signature};
use cranelift_codegen::isa::CallConv;
use std::mem::offset_of;
use wave_isa::Instruction;

/// Most lanes a wave can have (semantics.md B.19).
pub const MAX_LANES: usize = 64;
/// Number of helper operand slots in [`WaveCtx::scratch`].
pub const SCRATCH_SLOTS: usize = 16;
/// Access widths in bytes, indexed by `log2(bytes)`, for the bounds limits.
pub const ACCESS_WIDTHS: [u32; 5] = [1, 2, 4, 8, 16];

/// First scratch slot of helper results (inputs use slots 0..8, in assembly order; a pair or
/// quad takes consecutive slots).
pub const OUT_SLOT: usize = 8;
/// Scratch slot holding addresses for the exact bounds check on the cold path.
pub const ADDR_SLOT: usize = 15;

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
    /// An error was recorded in the wave's host state ([`super::HostState`]).
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
    pub host: *mut HostState,
    /// Remaining instruction budget of the workgroup (shared by its waves).
    pub fuel: *mut i64,
    /// The compiled kernel's loop functions, compiled on first use ([`Helper::WaveLoop`]).
    pub lazy_loops: *const LoopTable,
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
    /// The table vector `fexp2` reads ([`EXP2_TABLE`]), here so that compiled code reaches
    /// it from the context and holds no host address.
    pub exp2_table: [u64; 16],
    /// The context of the workgroup's next wave, or null: the entry function runs the waves
    /// of a workgroup one after another, from the first one's context to the one whose
    /// `next_wave` is null (each wave alone, on fibers, where the kernel has barriers).
    pub next_wave: *mut WaveCtx,
}

/// `2^(i/16 - 1/2)` for `i` in 0..16, as f64 bits: the table of `libm::exp2f`'s reduction
/// (FreeBSD's `s_exp2f.c`), which the runtime's `fexp2` is and vector `fexp2` redoes
/// (`translate::transcendental`).
pub const EXP2_TABLE: [u64; 16] = [
    0x3fe6a09e667f3bcd,
    0x3fe7a11473eb0187,
    0x3fe8ace5422aa0db,
    0x3fe9c49182a3f090,
    0x3feae89f995ad3ad,
    0x3fec199bdd85529c,
    0x3fed5818dcfba487,
    0x3feea4afa2a490da,
    0x3ff0000000000000,
    0x3ff0b5586cf9890f,
    0x3ff172b83c7d517b,
    0x3ff2387a6e756238,
    0x3ff306fe0a31b715,
    0x3ff3dea64c123422,
    0x3ff4bfdad5362a27,
    0x3ff5ab07dd485429,
];

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
            exp2_table: EXP2_TABLE,
            next_wave: std::ptr::null_mut(),
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
    pub const EXP2_TABLE: i32 = offset_of!(WaveCtx, exp2_table) as i32;
    pub const NEXT_WAVE: i32 = offset_of!(WaveCtx, next_wave) as i32;
    /// Bytes of one scratch slot / one thread-id row.
    pub const LANE_ROW: i32 = (MAX_LANES * 4) as i32;
}

/// The runtime's state of one wave (fault, fiber yielder, MMA fragments), opaque at this
/// layer: compiled code only passes the context on, and the runtime helpers, whose type it is
/// (`helpers::WaveHost`), cast [`WaveCtx::host`] back.
#[repr(C)]
pub struct HostState {
    _private: [u8; 0],
}

/// The compiled entry: runs one wave to its end (or to an error); returns a [`status`].
pub type WaveFn = unsafe extern "C" fn(*mut WaveCtx) -> u32;

/// The Cranelift signature of an entry function ([`WaveFn`]): `(ctx) -> status`.
pub fn entry_signature(call_conv: CallConv) -> Signature {
    let mut sig = Signature::new(call_conv);
    sig.params.push(AbiParam::new(I64));
    sig.returns.push(AbiParam::new(I32));
    sig
}

/// The signature every helper shares: `extern "C" fn(ctx, op, exec_bits, pc) -> status`.
/// Operands sit in the context's scratch slots (one u32 per lane), `op` is [`helper_op`]'s
/// encoding unless the [`Helper`] says otherwise, `exec_bits` has bit `i` set for each
/// active lane, and `pc` is the byte offset of the instruction, for faults.
pub type HelperFn = extern "C" fn(*mut WaveCtx, u32, u64, u32) -> u32;

/// The Cranelift signature of a [`HelperFn`].
pub fn helper_signature(call_conv: CallConv) -> Signature {
    let mut sig = Signature::new(call_conv);
    sig.params.extend([AbiParam::new(I64), AbiParam::new(I32), AbiParam::new(I64), AbiParam::new(I32)]);
    sig.returns.push(AbiParam::new(I32));
    sig
}

/// The `op` argument passed to helpers: the op index, with the raw `rd`, `rs1` and `rs2`
/// fields in the bytes above it.
pub fn helper_op(inst: &Instruction) -> u32 {
    inst.op as u32 | (inst.rd as u32) << 8 | (inst.rs1 as u32) << 16 | (inst.rs2 as u32) << 24
}

/// Every Rust helper compiled code may call (each a [`HelperFn`]). The code generator names
/// them by this list; where each one is comes from the runtime (`helpers::address`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Helper {
    /// Per-lane ALU ops without a native lowering, on every lane: operands in slots 0..,
    /// results from [`OUT_SLOT`] (a 64-bit result takes two slots).
    Lanes,
    /// Cold path of a checked load: the lanes of `exec_bits` may fault; their addresses are
    /// in [`ADDR_SLOT`]. Records the first real fault, in lane order.
    Bounds,
    /// [`Helper::Bounds`] where the code has already found a faulting lane and will not go on:
    /// finding none is reported as a JIT bug.
    BoundsFault,
    /// Stores and atomics on the lanes of `exec_bits`, in lane order: addresses in slot 0,
    /// values from slot 1; atomics leave the old values in [`OUT_SLOT`].
    Memory,
    /// [`Helper::Memory`] where the code has already found a faulting lane and will not go on.
    MemoryFault,
    /// Cross-lane wave ops: rs1 in slot 0, rs2 in slot 1, the result in [`OUT_SLOT`] (a
    /// ballot's high word in the slot after it).
    Wave,
    /// MMA loads, stores and computes on the wave's fragment tables: base and row stride in
    /// slots 0 and 1.
    Mma,
    /// `barrier`: suspends the wave until its workgroup's waves all arrived.
    Barrier,
    /// The workgroup's instruction budget is overdrawn: `op` is the status the wave was
    /// leaving with.
    InstructionLimit,
    /// `--stats`: counts the lanes of `exec_bits` of a load, store or atomic.
    CountLanes,
    /// Runs loop function `op` (see [`LoopTable`]) on the state area whose address is passed
    /// as `exec_bits`.
    WaveLoop,
    /// A call nested deeper than `MAX_CALL_DEPTH` ran.
    CallDepth,
    /// Hints the cache to fetch the `op` host addresses listed (as u64s) at the address
    /// passed as `exec_bits`: never reads or writes what they point to, never faults, always
    /// returns 0.
    Prefetch,
}

/// Bytes of stack kept free below the frame of compiled code: the Rust helpers it calls and
/// the engine's frames above it take this at most (measured: see `tests/stack_frames.rs`).
pub const STACK_MARGIN: usize = 256 << 10;

/// The largest stack frame the JIT runs: a kernel whose entry function's frame is larger is
/// declined (`JitError::TooLarge`: it runs on the interpreter), a loop function's stops the
/// wave with an error. Every wave of a kernel with barriers has a stack of its own, and the
/// stack probes touch every page of a frame, so this much memory can be resident per wave.
pub const MAX_FRAME: usize = 64 << 20;

/// A loop function as compiled code calls it: `(ctx, in, out) -> status`.
pub type LoopFnPtr = unsafe extern "C" fn(*mut WaveCtx, *mut u8, *mut u8) -> u32;

/// The Cranelift signature of a loop function ([`LoopFnPtr`]).
pub fn loop_fn_signature(call_conv: CallConv) -> Signature {
    let mut sig = Signature::new(call_conv);
    sig.params.extend([AbiParam::new(I64), AbiParam::new(I64), AbiParam::new(I64)]);
    sig.returns.push(AbiParam::new(I32));
    sig
}

/// A compiled loop function.
#[derive(Clone, Copy, Debug)]
pub struct LoopCode {
    pub function: LoopFnPtr,
    /// Where its `out` area starts in the state area.
    pub out_offset: usize,
    /// Bytes of stack its frame takes, return address included.
    pub frame: usize,
}

impl LoopCode {
    /// Bytes of stack a call of it needs: its frame and [`STACK_MARGIN`].
    pub fn stack_needed(&self) -> usize {
        self.frame + STACK_MARGIN
    }
}

/// The running kernel's loop functions as [`Helper::WaveLoop`] finds them: the code
/// generator compiles each on first use, and the helpers reach it through this trait, so they
/// do not depend on the code generator.
pub trait LoopFunctions: Send + Sync {
    /// Loop function `index`, compiled now if this is its first use.
    fn function(&self, index: usize) -> Result<LoopCode, String>;
    /// How many loop functions were compiled so far (each on its first use).
    fn compiled(&self) -> usize;
}

/// What [`WaveCtx::lazy_loops`] points at: a sized handle on the kernel's [`LoopFunctions`],
/// so that the context holds a thin pointer (its layout is the one compiled code reads).
pub struct LoopTable(Box<dyn LoopFunctions>);

impl LoopTable {
    pub fn new(functions: impl LoopFunctions + 'static) -> LoopTable {
        LoopTable(Box::new(functions))
    }

    /// Loop function `index`, compiled now if this is its first use.
    pub fn function(&self, index: usize) -> Result<LoopCode, String> {
        self.0.function(index)
    }

    /// How many loop functions were compiled so far (each on its first use).
    pub fn compiled(&self) -> usize {
        self.0.compiled()
    }
}
