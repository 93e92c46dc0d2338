//! Whole-wave Rust helpers that compiled code calls for what Cranelift lacks.
//!
//! Every helper is a [`HelperFn`]: `extern "C" fn(ctx, op, exec_bits, pc) -> status`, named by
//! the code generator through [`Helper`] and found here by [`address`]. Operands sit in the
//! context's scratch slots (one u32 per lane), `op` is the op index with the raw `rd`, `rs1`,
//! `rs2` fields above it ([`helper_op`](crate::abi::helper_op)), `exec_bits` has bit `i` set
//! for each active lane. Per-lane results come from `wave_runtime::semantics`, so the JIT and
//! the interpreter share one definition of every op. No panic may cross the JIT frames: each
//! helper runs its body under `catch_unwind` and turns a panic into an error.

use crate::abi::{
    counter, status, Helper, HelperFn, HostState, LoopCode, WaveCtx, ADDR_SLOT, MAX_FRAME, MAX_LANES,
    OUT_SLOT,
};
use crate::stacks::{room_left, WaveStack};
use corosensei::Yielder;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use wave_isa::opcodes::{Class, Slot, OPS};
use wave_isa::{Frag, Op};
use wave_runtime::device_atomic;
use wave_runtime::semantics::{self, Fragments};
use wave_runtime::{RunErrorKind, Space};

/// Where the code of `helper` is: the one map from the ABI's list of helpers to the functions
/// below.
pub fn address(helper: Helper) -> usize {
    let function: HelperFn = match helper {
        Helper::Lanes => lanes,
        Helper::Bounds => bounds,
        Helper::BoundsFault => bounds_fault,
        Helper::Memory => memory,
        Helper::MemoryFault => memory_fault,
        Helper::Wave => wave,
        Helper::Mma => mma,
        Helper::Barrier => barrier,
        Helper::InstructionLimit => instruction_limit,
        Helper::CountLanes => count_lanes,
        Helper::WaveLoop => wave_loop,
        Helper::CallDepth => call_depth,
        Helper::Prefetch => prefetch,
    };
    function as usize
}

/// What stopped a wave, recorded by a helper: the runtime's own error kind, so a fault
/// reaches the caller as the interpreter would report it.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    pub pc: u32,
    pub lane: Option<u32>,
    pub kind: RunErrorKind,
}

impl Fault {
    /// A fault of the wave, not of one lane.
    pub fn at(pc: u32, kind: RunErrorKind) -> Fault {
        Fault { pc, lane: None, kind }
    }

    /// A JIT bug or a host limit (no stack to be had), reported as what this engine cannot do.
    pub fn internal(pc: u32, why: impl std::fmt::Display) -> Fault {
        Fault::at(pc, RunErrorKind::Unsupported(format!("JIT internal: {why}")))
    }
}

/// Rust-side state of one wave.
pub struct WaveHost {
    pub width: u32,
    /// The dispatch's instruction limit per workgroup (0: none), for its error.
    pub instruction_limit: u64,
    pub fault: Option<Fault>,
    /// The fiber's yielder while the wave runs as a coroutine (kernels with barriers).
    pub yielder: *const Yielder<(), ()>,
    /// Set when another wave failed: barriers then return `ABORTED`.
    pub abort: *const AtomicBool,
    /// MMA fragments: tables A, B and C by register number, one tile per lane.
    pub mma: Fragments,
    /// Barriers this wave waited at (the workgroup's releases are the most any wave waited).
    pub barriers: u64,
    /// The lowest address of the stack the wave runs on that code may use (0: not known),
    /// for [`wave_loop`] to see whether a loop function fits below its caller.
    pub stack_limit: usize,
    /// Loop functions this wave ran on a stack of their own, its own having too little room
    /// (in this dispatch: only waves with barriers are reset per workgroup).
    pub loops_on_own_stack: u32,
}

impl WaveHost {
    pub fn new(width: u32) -> WaveHost {
        WaveHost {
            width,
            instruction_limit: 0,
            fault: None,
            yielder: std::ptr::null(),
            abort: std::ptr::null(),
            mma: Fragments::new(width as usize),
            barriers: 0,
            stack_limit: 0,
            loops_on_own_stack: 0,
        }
    }

    /// This state as the context's opaque [`WaveCtx::host`]: the only way that field is set, so
    /// the helpers may cast it back.
    pub fn as_host_state(&mut self) -> *mut HostState {
        (self as *mut WaveHost).cast()
    }

    /// Back to a new wave's state (for the next workgroup of a kernel with barriers), keeping
    /// the MMA tables' storage: dropping and remaking the host per wave was 4 % of a vector
    /// add's time. Waves without barriers need less (see the engine's `Worker::prepare`).
    pub fn reset(&mut self, stack_limit: usize) {
        if self.fault.is_some() {
            self.fault = None;
        }
        self.yielder = std::ptr::null();
        self.abort = std::ptr::null();
        self.mma.clear();
        self.barriers = 0;
        self.stack_limit = stack_limit;
        self.loops_on_own_stack = 0;
    }
}

/// The wave's [`WaveHost`], from the opaque pointer in its context: the engine sets
/// [`WaveCtx::host`] with [`WaveHost::as_host_state`] before the wave runs, so the cast gives
/// back the pointer it was made from. Dereferencing it is the caller's business.
fn host_of(ctx: &WaveCtx) -> *mut WaveHost {
    ctx.host.cast::<WaveHost>()
}

/// Run a helper body, turning a panic into a recorded internal error.
fn guarded(ctx: *mut WaveCtx, pc: u32, body: impl FnOnce(&mut WaveCtx, &mut WaveHost) -> u32) -> u32 {
    let result = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: compiled code passes the context the engine handed it; the engine keeps the
        // context and its host state alive and unaliased for the whole run of the wave.
        let ctx = unsafe { &mut *ctx };
        // SAFETY: as above; `host` is the wave's `WaveHost`, set by the engine before the wave
        // starts (see `host_of`), and no other reference to it is live while a helper runs.
        let host = unsafe { &mut *host_of(ctx) };
        body(ctx, host)
    }));
    match result {
        Ok(s) => s,
        Err(_) => {
            // SAFETY: as above (see `host_of`); the closure above has ended, so no other
            // reference is live.
            let host = unsafe { &mut *host_of(&*ctx) };
            host.fault = Some(Fault::internal(pc, "a JIT helper panicked"));
            status::ERROR
        }
    }
}

fn decode_op(op: u32) -> Op {
    OPS[(op & 0xFF) as usize % OPS.len()].op
}

fn lanes_of(bits: u64, width: u32) -> impl Iterator<Item = usize> {
    (0..width as usize).filter(move |&l| bits >> l & 1 != 0)
}

/// Per-lane ALU ops (integer, bitwise, f32, f16, bf16, f64 pairs, conversions) on all lanes.
// Lane loops index several scratch slots in parallel.
#[allow(clippy::needless_range_loop)]
pub extern "C" fn lanes(ctx: *mut WaveCtx, op: u32, _exec: u64, pc: u32) -> u32 {
    guarded(ctx, pc, |ctx, host| {
        let op = decode_op(op);
        let w = host.width as usize;
        let s = &mut ctx.scratch;
        match op {
            Op::CvtF32F64 => {
                for l in 0..w {
                    s[OUT_SLOT][l] = semantics::cvt_f32_f64(semantics::pair(s[0][l], s[1][l]));
                }
            }
            Op::CvtF64F32 => {
                for l in 0..w {
                    let (lo, hi) = semantics::unpair(semantics::cvt_f64_f32(s[0][l]));
                    s[OUT_SLOT][l] = lo;
                    s[OUT_SLOT + 1][l] = hi;
                }
            }
            _ if op.class() == Class::Double => {
                for l in 0..w {
                    let a = semantics::pair(s[0][l], s[1][l]);
                    let b = semantics::pair(s[2][l], s[3][l]);
                    let c = semantics::pair(s[4][l], s[5][l]);
                    let Some(r) = semantics::alu64(op, a, b, c) else {
                        return unsupported(host, pc, op);
                    };
                    let (lo, hi) = semantics::unpair(r);
                    s[OUT_SLOT][l] = lo;
                    s[OUT_SLOT + 1][l] = hi;
                }
            }
            _ => {
                for l in 0..w {
                    let Some(r) = semantics::alu(op, s[0][l], s[1][l], s[2][l], s[3][l]) else {
                        return unsupported(host, pc, op);
                    };
                    s[OUT_SLOT][l] = r;
                }
            }
        }
        status::DONE
    })
}

fn unsupported(host: &mut WaveHost, pc: u32, op: Op) -> u32 {
    host.fault = Some(Fault::internal(pc, format!("no lane helper for `{}`", op.mnemonic())));
    status::ERROR
}

/// Exact bounds test: does `[addr, addr + bytes)` leave a memory of `size` bytes?
fn out_of_bounds(addr: u32, bytes: u32, size: u64) -> bool {
    addr as u64 + bytes as u64 > size
}

fn record_oob(
    host: &mut WaveHost,
    pc: u32,
    lane: usize,
    space: Space,
    addr: impl Into<u64>,
    bytes: u32,
    size: u64,
) -> u32 {
    host.fault = Some(Fault {
        pc,
        lane: Some(lane as u32),
        kind: RunErrorKind::OutOfBounds { space, address: addr.into(), bytes, size },
    });
    status::ERROR
}

/// Cold path of a checked load: the lanes in `candidates` may fault; check them exactly in
/// lane order and record the first real fault.
pub extern "C" fn bounds(ctx: *mut WaveCtx, op: u32, candidates: u64, pc: u32) -> u32 {
    guarded(ctx, pc, |ctx, host| {
        let op = decode_op(op);
        let local = op.class() == Class::LocalLoad;
        let (space, size) =
            if local { (Space::Local, ctx.local_size) } else { (Space::Device, ctx.device_size) };
        let bytes = op.access_bytes();
        for l in lanes_of(candidates, host.width) {
            let addr = ctx.scratch[ADDR_SLOT][l];
            if out_of_bounds(addr, bytes, size) {
                return record_oob(host, pc, l, space, addr, bytes, size);
            }
        }
        status::DONE
    })
}

/// [`bounds`] where compiled code has already found a faulting lane and will not go on: a
/// candidate that turns out in bounds is a JIT bug, reported as one (never a silent `DONE`).
pub extern "C" fn bounds_fault(ctx: *mut WaveCtx, op: u32, candidates: u64, pc: u32) -> u32 {
    must_fault(ctx, pc, bounds(ctx, op, candidates, pc))
}

/// [`memory`] where compiled code has already found a faulting lane and will not go on (see
/// [`bounds_fault`]).
pub extern "C" fn memory_fault(ctx: *mut WaveCtx, op: u32, exec: u64, pc: u32) -> u32 {
    must_fault(ctx, pc, memory(ctx, op, exec, pc))
}

/// `st`, or an internal error where a helper that had to find a fault found none.
fn must_fault(ctx: *mut WaveCtx, pc: u32, st: u32) -> u32 {
    if st != status::DONE {
        return st;
    }
    guarded(ctx, pc, |_, host| {
        host.fault = Some(Fault::internal(pc, "JIT bounds check: a reported fault is in bounds"));
        status::ERROR
    })
}

/// Where a lane's access lands: device window or masked local buffer.
fn lane_ptr(ctx: &WaveCtx, local: bool, addr: u32) -> *mut u8 {
    if local {
        // SAFETY: the local buffer is `local_mask + 1 + 16` bytes; the masked offset plus an
        // access of at most 16 bytes stays inside.
        unsafe { ctx.local_base.add((addr & ctx.local_mask) as usize) }
    } else {
        // SAFETY: the device window is 4 GiB + 64 KiB, so any u32 offset + 16 stays inside.
        unsafe { ctx.device_base.add(addr as usize) }
    }
}

/// Stores and atomics, active lanes in lane order (higher lanes win; atomics see earlier
/// lanes' updates and return the old value).
pub extern "C" fn memory(ctx: *mut WaveCtx, op: u32, exec: u64, pc: u32) -> u32 {
    guarded(ctx, pc, |ctx, host| {
        let op = decode_op(op);
        let class = op.class();
        let local = matches!(class, Class::LocalStore | Class::LocalAtomic);
        let (space, size) =
            if local { (Space::Local, ctx.local_size) } else { (Space::Device, ctx.device_size) };
        let bytes = op.access_bytes();
        let checked = ctx.checked != 0;
        for l in lanes_of(exec, host.width) {
            let addr = ctx.scratch[0][l];
            if checked && out_of_bounds(addr, bytes, size) {
                return record_oob(host, pc, l, space, addr, bytes, size);
            }
            let p = lane_ptr(ctx, local, addr);
            if op.is_atomic() {
                let (value, desired) = (ctx.scratch[1][l], ctx.scratch[2][l]);
                let old = if local {
                    local_atomic(p, op, value, desired)
                } else {
                    match device_atomic::method(addr as u64) {
                        // SAFETY: `p` is the device window at `addr`, with 16 bytes behind it
                        // (see `lane_ptr`); the window is page aligned and a multiple of 8
                        // bytes long, so the aligned word around `p` is inside it too. Other
                        // workers' atomics go through here too; a kernel whose plain loads or
                        // stores race with atomics on the same bytes is racy itself (WAVE
                        // leaves that undefined), and those accesses are not made atomic.
                        Ok(method) => unsafe { device_atomic::rmw(p, method, op, value, desired) },
                        Err(e) => {
                            let kind = RunErrorKind::Unsupported(e.to_string());
                            host.fault = Some(Fault { pc, lane: Some(l as u32), kind });
                            return status::ERROR;
                        }
                    }
                };
                ctx.scratch[OUT_SLOT][l] = old;
            } else {
                let mut buf = [0u8; 16];
                for i in 0..(bytes as usize).div_ceil(4) {
                    buf[4 * i..4 * i + 4].copy_from_slice(&ctx.scratch[1 + i][l].to_le_bytes());
                }
                // SAFETY: `p` points into the device window or local buffer with at least
                // `bytes` bytes behind it (see `lane_ptr`); unaligned writes are allowed.
                unsafe { std::ptr::copy_nonoverlapping(buf.as_ptr(), p, bytes as usize) };
            }
        }
        status::DONE
    })
}

/// One lane's local atomic: local memory is private to the worker (fibers switch only at
/// barriers), so a plain read-modify-write is indivisible there.
fn local_atomic(p: *mut u8, op: Op, value: u32, desired: u32) -> u32 {
    // SAFETY: `p` has at least 4 bytes behind it in the worker's local buffer (see
    // `lane_ptr`), which no other thread touches; unaligned access.
    unsafe {
        let old = std::ptr::read_unaligned(p as *const u32);
        std::ptr::write_unaligned(p as *mut u32, semantics::atomic(op, old, value, desired).unwrap_or(old));
        old
    }
}

/// Cross-lane ops over the active lanes (§5.8, B.15), computed by `wave_runtime::semantics`'s
/// `wave_*` functions: rs1 sits in scratch slot 0 (a predicate as 0 / non-zero lane values),
/// rs2 in slot 1; the ballot's high word (W = 64) goes to the slot after the output.
pub extern "C" fn wave(ctx: *mut WaveCtx, op: u32, exec: u64, pc: u32) -> u32 {
    guarded(ctx, pc, |ctx, host| {
        let op = decode_op(op);
        let w = host.width as usize;
        let s = &mut ctx.scratch;
        // A predicate operand as lane bits: lanes whose slot-0 value is non-zero.
        let pred =
            || s[0].iter().take(w).enumerate().filter(|&(_, &v)| v != 0).fold(0u64, |b, (l, _)| b | 1 << l);
        let out = match op {
            Op::WaveBallot => {
                let ballot = semantics::wave_ballot(w, exec, pred());
                s[OUT_SLOT + 1] = [ballot.high.unwrap_or(0); MAX_LANES];
                [ballot.low; MAX_LANES]
            }
            Op::WaveAny | Op::WaveAll => {
                let holds = if op == Op::WaveAny {
                    semantics::wave_any(w, exec, pred())
                } else {
                    semantics::wave_all(w, exec, pred())
                };
                [if holds { u32::MAX } else { 0 }; MAX_LANES]
            }
            _ => match semantics::wave_row(op, w, exec, &s[0], &s[1]) {
                Some(row) => row,
                None => return unsupported(host, pc, op),
            },
        };
        s[OUT_SLOT] = out;
        status::DONE
    })
}

/// MMA on 4×4 f32 tiles kept per lane in the wave's three fragment tables (§5.8); tiles are
/// loaded from and stored to local memory.
pub extern "C" fn mma(ctx: *mut WaveCtx, op: u32, exec: u64, pc: u32) -> u32 {
    guarded(ctx, pc, |ctx, host| {
        let fields = [(op >> 8) as u8, (op >> 16) as u8, (op >> 24) as u8];
        let op = decode_op(op);
        // The fragment id `op` names in `table`, from the opcode table's slot for it.
        let id = |table| match op.fragment_slot(table) {
            Some(Slot::Rd) => fields[0],
            Some(Slot::Rs1) => fields[1],
            Some(Slot::Rs2) => fields[2],
            _ => 0,
        };
        let checked = ctx.checked != 0;
        let table = match op {
            Op::MmaLoadA => Frag::A,
            Op::MmaLoadB => Frag::B,
            Op::MmaStoreC => Frag::C,
            Op::MmaCompute => {
                host.mma.compute(id(Frag::A), id(Frag::B), id(Frag::C), lanes_of(exec, host.width));
                return status::DONE;
            }
            _ => return unsupported(host, pc, op),
        };
        let frag = id(table);
        // Base and row stride: rs1, rs2 for loads, rd, rs1 for the store (scratch 0 and 1).
        for l in lanes_of(exec, host.width) {
            let (base, stride) = (ctx.scratch[0][l], ctx.scratch[1][l]);
            let mut tile = host.mma.tile(table, frag, l);
            for (i, e) in tile.iter_mut().enumerate() {
                let addr = semantics::mma_element_address(base, stride, i);
                let size = ctx.local_size;
                if checked && addr + 4 > size {
                    return record_oob(host, pc, l, Space::Local, addr, 4, size);
                }
                // Unchecked: the masked offset stays inside the local buffer (`lane_ptr`).
                let p = lane_ptr(ctx, true, addr as u32) as *mut u32;
                // SAFETY: `p` has 4 bytes behind it in the local buffer (see `lane_ptr`),
                // which only this worker's waves use; unaligned access.
                unsafe {
                    if op == Op::MmaStoreC {
                        std::ptr::write_unaligned(p, *e);
                    } else {
                        *e = std::ptr::read_unaligned(p);
                    }
                }
            }
            if op != Op::MmaStoreC {
                *host.mma.tile_mut(table, frag, l) = tile;
            }
        }
        status::DONE
    })
}

/// `barrier`: suspend this wave's fiber until the workgroup's waves all arrived.
pub extern "C" fn barrier(ctx: *mut WaveCtx, _op: u32, _exec: u64, pc: u32) -> u32 {
    guarded(ctx, pc, |_ctx, host| {
        host.barriers += 1;
        if !host.yielder.is_null() {
            // SAFETY: the engine sets `yielder` to the running fiber's yielder, valid while
            // the fiber runs, which is whenever compiled code can call this helper.
            unsafe { (*host.yielder).suspend(()) };
        }
        // SAFETY: `abort` is null or points to the dispatch's flag, alive for the whole run.
        if !host.abort.is_null() && unsafe { (*host.abort).load(Ordering::Relaxed) } {
            return status::ABORTED;
        }
        status::DONE
    })
}

/// The workgroup's instruction budget is overdrawn where the wave leaves its code with status
/// `op` (see `translate::count`): the run stops with the instruction-limit error, at the pc of
/// the fault the wave stopped for, if any (the budget ran out by that instruction), else at
/// `pc`. A wave stopped by another wave's error stays stopped.
pub extern "C" fn instruction_limit(ctx: *mut WaveCtx, op: u32, _exec: u64, pc: u32) -> u32 {
    guarded(ctx, pc, |_ctx, host| {
        if op == status::ABORTED {
            return status::ABORTED;
        }
        let pc = match (&host.fault, op) {
            (Some(f), status::ERROR) => f.pc,
            _ => pc,
        };
        host.fault = Some(Fault::at(pc, RunErrorKind::InstructionLimit { limit: host.instruction_limit }));
        status::ERROR
    })
}

/// `--stats`: count the lanes `exec` of a load, store or atomic (`op`), as wave-emu does.
pub extern "C" fn count_lanes(ctx: *mut WaveCtx, op: u32, exec: u64, pc: u32) -> u32 {
    guarded(ctx, pc, |ctx, host| {
        let op = decode_op(op);
        let lanes = lanes_of(exec, host.width).count() as u64;
        let bytes = lanes * op.access_bytes() as u64;
        let c = &mut ctx.counters;
        let (count, size) = match op.class() {
            Class::DeviceLoad => (counter::DEVICE_LOADS, Some(counter::DEVICE_LOAD_BYTES)),
            Class::DeviceStore => (counter::DEVICE_STORES, Some(counter::DEVICE_STORE_BYTES)),
            Class::LocalLoad => (counter::LOCAL_LOADS, Some(counter::LOCAL_LOAD_BYTES)),
            Class::LocalStore => (counter::LOCAL_STORES, Some(counter::LOCAL_STORE_BYTES)),
            _ => (counter::ATOMIC_LANES, None),
        };
        c[count] += lanes;
        if let Some(size) = size {
            c[size] += bytes;
        }
        status::DONE
    })
}

/// The wave-major function of a chunk-major loop (`op`: its number) after a bail-out, on the
/// state area at `area` (see `translate::chunk`); compiled on the first call. It runs below
/// its caller if the wave's stack has room for its frame, else on a stack of its own.
pub extern "C" fn wave_loop(ctx: *mut WaveCtx, op: u32, area: u64, pc: u32) -> u32 {
    let mut call = None;
    let st = guarded(ctx, pc, |ctx, host| {
        // SAFETY: the engine points `lazy_loops` at the loop table of the running kernel's
        // compiled code, which outlives every wave of the dispatch.
        let lazy = unsafe { &*ctx.lazy_loops };
        let code = match lazy.function(op as usize) {
            Ok(code) => code,
            Err(e) => {
                host.fault = Some(Fault::internal(pc, e));
                return status::ERROR;
            }
        };
        if code.frame > MAX_FRAME {
            let why = format!(
                "the loop at pc 0x{pc:04x} is too deep for the JIT (stack frame of {:.1} MiB, limit {} MiB)",
                code.frame as f64 / (1 << 20) as f64,
                MAX_FRAME >> 20
            );
            host.fault = Some(Fault::at(pc, RunErrorKind::Unsupported(why)));
            return status::ERROR;
        }
        if room_left(host.stack_limit) >= code.stack_needed() {
            call = Some((code, None));
            return status::DONE;
        }
        match WaveStack::with_room(code.stack_needed()) {
            Ok(stack) => {
                call = Some((code, Some(stack)));
                status::DONE
            }
            Err(why) => {
                host.fault = Some(Fault::internal(pc, why));
                status::ERROR
            }
        }
    });
    let area = area as *mut u8;
    match call {
        Some((code, None)) => run_loop_fn(code, ctx, area),
        Some((code, Some(stack))) => run_loop_fn_on(stack, code, ctx, area),
        None => st,
    }
}

/// [`run_loop_fn`] on a stack of its own, made for it.
fn run_loop_fn_on(mut stack: WaveStack, code: LoopCode, ctx: *mut WaveCtx, area: *mut u8) -> u32 {
    // SAFETY: the engine keeps the context alive while the wave runs, and no mutable
    // reference to it is live here.
    let host = host_of(unsafe { &*ctx });
    // SAFETY: `host` is the wave's `WaveHost` (see `host_of`); the engine keeps it alive and
    // unaliased while the wave runs, and no reference to it is live here. Nested bail-outs
    // see the limit of the stack they run on.
    let caller_limit = unsafe {
        (*host).loops_on_own_stack += 1;
        std::mem::replace(&mut (*host).stack_limit, stack.limit())
    };
    // Loop functions hold no barrier: the wave never suspends on this stack.
    let st = corosensei::on_stack(&mut stack.stack, || run_loop_fn(code, ctx, area));
    // SAFETY: as above; the loop function has returned.
    unsafe { (*host).stack_limit = caller_limit };
    WaveStack::recycle([stack]);
    st
}

/// Call loop function `code` on the state area at `area`, on a stack with room for it.
fn run_loop_fn(code: LoopCode, ctx: *mut WaveCtx, area: *mut u8) -> u32 {
    // SAFETY: the function was compiled for this kernel's context layout with the
    // loop-function signature; `area` is the caller's state area, sized for both the `in`
    // groups and the `out` groups that start `out_offset` into it. `wave_loop` runs it where
    // the stack has `code.stack_needed()` bytes left: its frame (probed page by page) and the
    // margin for the helpers it calls.
    unsafe { (code.function)(ctx, area, area.add(code.out_offset)) }
}

/// A call nested deeper than MAX_CALL_DEPTH ran.
pub extern "C" fn call_depth(ctx: *mut WaveCtx, _op: u32, _exec: u64, pc: u32) -> u32 {
    guarded(ctx, pc, |_ctx, host| {
        host.fault = Some(Fault::at(pc, RunErrorKind::CallDepth { limit: wave_isa::ir::MAX_CALL_DEPTH }));
        status::ERROR
    })
}

/// Prefetch the `count` host addresses listed at `list` ([`Helper::Prefetch`]): the compiled
/// code's guesses of where a loop's device loads go next trip. A prefetch is a hint: it never
/// faults, whatever the address, and changes no memory, so a wrong guess costs only time.
pub extern "C" fn prefetch(_ctx: *mut WaveCtx, count: u32, list: u64, _pc: u32) -> u32 {
    #[cfg(target_arch = "x86_64")]
    for i in 0..count as usize {
        // SAFETY: compiled code passes a stack area of at least `count` u64s, 16-byte aligned
        // and live for the call, all written: zeroed at its loop's entry, then guesses
        // (`translate::prefetch`).
        let address = unsafe { (list as *const u64).add(i).read() };
        // SAFETY: `_mm_prefetch` is a cache hint on an address, never a memory access: it
        // cannot fault or touch memory whatever the address (SSE, always on x86_64).
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(address as *const i8)
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (count, list);
    0
}

#[cfg(test)]
mod prefetch_tests {
    /// Whatever the guesses, the helper only hints: unmapped, null and kernel addresses do
    /// not fault.
    #[test]
    fn prefetching_any_address_does_not_fault() {
        let wild: [u64; 5] = [0, 1, 0x1000, 0xffff_8000_0000_0000, u64::MAX];
        let st = super::prefetch(std::ptr::null_mut(), wild.len() as u32, wild.as_ptr() as u64, 0);
        assert_eq!(st, 0);
    }
}
