//! The stacks compiled code runs on ([`crate::stacks`]), measured by painting them: what the
//! engine and the helpers take besides the frames of compiled code stays well inside
//! [`STACK_MARGIN`], and a loop function without room below its caller runs on a stack of its
//! own, leaving the wave's stack below its limit untouched.

use super::cache::compile;
use super::*;
use crate::abi::STACK_MARGIN;
use crate::stacks::DEFAULT_STACK;
use wave_runtime::{Device, Dispatch, Engine, Interpreter};

/// What painted stack bytes hold until something writes them.
const PAINT: u8 = 0xA5;

fn kernel(source: &str) -> ValidKernel {
    let file = wave_isa::asm::assemble(source, "stacks.wave").unwrap_or_else(|e| panic!("{e:?}")).file;
    wave_isa::module::Module::from_wbin(&file).unwrap_or_else(|e| panic!("{e}")).kernels[0].clone()
}

/// A painted stack that claims `bytes` usable bytes and has `below` more under them.
fn painted(bytes: usize, below: usize) -> WaveStack {
    let stack = DefaultStack::new(bytes + below).unwrap_or_else(|e| panic!("{e}"));
    let base = corosensei::stack::Stack::base(&stack).get();
    // SAFETY: `DefaultStack::new(n)` maps at least `n` writable bytes below its base, and no
    // code runs on this stack yet.
    unsafe { std::ptr::write_bytes((base - bytes - below) as *mut u8, PAINT, bytes + below) };
    WaveStack::from_parts(stack, bytes)
}

/// How deep the stack was written (bytes below its base), scanning the `below` bytes under its
/// claimed ones too.
fn depth_used(stack: &WaveStack, below: usize) -> usize {
    let base = corosensei::stack::Stack::base(&stack.stack).get();
    let lowest = base - stack.bytes() - below;
    // SAFETY: the whole range was mapped and painted by `painted`; nothing runs on the stack.
    let bytes = unsafe { std::slice::from_raw_parts(lowest as *const u8, base - lowest) };
    bytes.len() - bytes.iter().position(|&b| b != PAINT).unwrap_or(bytes.len())
}

/// Run one workgroup of `kernel` with the JIT on `stacks` (pushed for the worker to take:
/// the worker's stack for code, or one per fiber), on the device's memory; the outcome, the
/// worker (with the stacks back) and the code.
fn run_on(
    stacks: Vec<WaveStack>,
    kernel: &ValidKernel,
    dispatch: &Dispatch,
    stats: bool,
    device: &mut Device,
) -> (Result<(), RunFailure>, Worker, Arc<Compiled>) {
    let launch = wave_runtime::resolve(kernel, dispatch, device).unwrap_or_else(|e| panic!("{e}"));
    let code = compile(kernel, flags_for(&launch, stats)).unwrap_or_else(|e| panic!("{e}"));
    let view = DeviceView { size: device.size(), window: device.window_ptr() };
    let tally = Arc::new(Mutex::new(wave_runtime::Stats::default()));
    let mut worker = Worker::new(&launch, stats, &tally);
    worker.stacks = stacks;
    let ran = worker
        .on_code_stack(&code, |worker| worker.run_workgroup(&code, &launch, [0, 0, 0], view))
        .unwrap_or_else(|e| panic!("{e}"));
    (ran, worker, code)
}

fn dispatch(threads: u32, width: u32) -> Dispatch {
    Dispatch {
        grid: [1, 1, 1],
        workgroup: [threads, 1, 1],
        wave_width: width,
        threads: 1,
        max_instructions: 0,
        ..Dispatch::default()
    }
}

/// A device whose first words are lane numbers as floats, NaN for every fifth lane.
fn device() -> Device {
    let mut device = Device::new(1 << 16).unwrap_or_else(|e| panic!("{e}"));
    for (i, word) in device.bytes_mut()[..256].chunks_mut(4).enumerate() {
        let value = if i % 5 == 2 { 0x7fc0_0000 | i as u32 } else { (i as f32).to_bits() };
        word.copy_from_slice(&value.to_le_bytes());
    }
    device
}

/// Every helper but `call_depth` (a float64 op, device and local stores and atomics, wave
/// ops, MMA, a chunk-major loop that bails out to its loop function on the NaN lanes).
const HELPERS: &str = r#"
.kernel helpers
.registers 32
.local_memory 8192
    mov_sr r1, sr_thread_id_x
    mov_imm r2, 4
    imul r3, r1, r2
    device_load_u32 r5, r3
    mov_imm r11, 0x3f800000
    mov_imm r12, 1
    mov_imm r9, 0
    and r10, r1, r2
    loop
        icmp_ge p0, r9, r10
        break p0
        fadd r5, r5, r11
        iadd r9, r9, r12
    endloop
    mov r22, r5
    mov r23, r1
    dadd r20, r22, r22
    wave_reduce_add r7, r1
    wave_shuffle_xor r8, r5, r12
    mov_imm r13, 0x1000
    iadd r13, r13, r3
    device_store_u32 r13, r5
    mov_imm r14, 0x2000
    atomic_add r15, r14, r12, .device
    local_store_u32 r3, r8
    mov_imm r16, 64
    imul r17, r1, r16
    mov_imm r18, 16
    mma_load_a r1, r17, r18
    mma_load_b r1, r17, r18
    mma_compute r2, r1, r1
    mma_store_c r17, r18, r2
    local_load_u32 r19, r3
    mov_imm r13, 0x3000
    iadd r13, r13, r3
    device_store_u32 r13, r19
.end
"#;

/// Waves on fibers: a barrier between a local store and a load of the neighbour's word.
const BARRIER: &str = r#"
.kernel fibers
.local_memory 1024
    mov_sr r1, sr_thread_id_x
    mov_imm r2, 4
    imul r3, r1, r2
    local_store_u32 r3, r1
    barrier
    iadd r4, r3, r2
    mov_imm r5, 1020
    and r4, r4, r5
    local_load_u32 r6, r4
    device_store_u32 r3, r6
.end
"#;

/// A load out of bounds (the cold path records the fault).
const FAULT: &str = r#"
.kernel fault
    mov_imm r1, 0xfffffff0
    device_load_u32 r2, r1
.end
"#;

/// Device memory after the interpreter ran `kernel` on [`device`].
fn interpreted(kernel: &ValidKernel, dispatch: &Dispatch) -> Vec<u8> {
    let mut device = device();
    Interpreter::new().run(kernel, dispatch, &mut device).unwrap_or_else(|e| panic!("{e}"));
    device.bytes().to_vec()
}

/// What the engine and the helpers take besides the frames of compiled code, at every
/// width, with and without the counting code of `--stats`, for waves on the worker's stack
/// and on fibers, on success and on a fault: 7 KiB when measured (STACK_MARGIN is 256 KiB;
/// a panic caught in a helper, which no valid kernel causes, took 22 KiB in a separate
/// measurement).
#[test]
fn helpers_stay_well_inside_the_margin() {
    let mut deepest = 0;
    for (source, ok) in [(HELPERS, true), (BARRIER, true), (FAULT, false)] {
        let k = kernel(source);
        for width in [4, 32, 64] {
            for stats in [false, true] {
                let d = dispatch(64, width);
                // One for each fiber, or one for the worker.
                let stacks = (0..64 / width).map(|_| painted(DEFAULT_STACK, 0)).collect();
                let mut device = device();
                let (ran, worker, code) = run_on(stacks, &k, &d, stats, &mut device);
                assert_eq!(ran.is_ok(), ok, "{}, W = {width}: {ran:?}", k.meta.name);
                if ok {
                    assert!(device.bytes() == interpreted(&k, &d), "{}, W = {width}", k.meta.name);
                }
                for stack in &worker.stacks {
                    let used = depth_used(stack, 0);
                    assert!(used <= stack.bytes(), "{}, W = {width}: {used} bytes used", k.meta.name);
                    let beside_code = used.saturating_sub(code.entry().frame);
                    deepest = deepest.max(beside_code);
                }
            }
        }
    }
    eprintln!("deepest use of the stack beside compiled code: {deepest} bytes");
    assert!(deepest > 0 && deepest <= STACK_MARGIN / 4, "{deepest} bytes beside compiled code");
}

/// A bail-out whose loop function does not fit below its caller (the wave's stack claims no
/// more than the entry function needs) runs it on a stack of its own: the results match the
/// interpreter and nothing below the claimed stack was written.
#[test]
fn a_loop_function_without_room_runs_on_a_stack_of_its_own() {
    let k = kernel(HELPERS);
    let below = 1 << 20;
    for width in [4, 64] {
        let d = dispatch(64, width);
        let mut device = device();
        let launch = wave_runtime::resolve(&k, &d, &device).unwrap_or_else(|e| panic!("{e}"));
        let code = compile(&k, flags_for(&launch, false)).unwrap_or_else(|e| panic!("{e}"));
        let claimed = code.entry().stack_needed();
        let (ran, worker, code) = run_on(vec![painted(claimed, below)], &k, &d, false, &mut device);
        assert_eq!(ran, Ok(()), "W = {width}");
        assert_eq!(code.lazy.compiled(), 1, "W = {width}: the loop bailed out to its function");
        // Every bail-out ran the loop function on a stack of its own.
        let own_stack: u32 = worker.hosts.iter().map(|h| h.loops_on_own_stack).sum();
        assert!(own_stack > 0, "W = {width}");
        assert!(device.bytes() == interpreted(&k, &d), "W = {width}");
        let used = depth_used(&worker.stacks[0], below);
        assert!(used <= claimed, "W = {width}: {used} bytes of the wave's stack used, {claimed} claimed");
    }
}
