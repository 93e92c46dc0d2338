//! Engine bugs the differential fuzzer found, fixed, as minimal kernels run on both engines.

use wave_jit_codegen::JitEngine;
use wave_runtime::{Device, Dispatch, Engine, Interpreter};

const WIDTHS: [u32; 5] = [4, 8, 16, 32, 64];

fn kernel(source: &str) -> wave_isa::ValidKernel {
    let (module, _) =
        wave_isa::module::load_bytes(source.as_bytes(), "finding.wave").unwrap_or_else(|e| panic!("{e}"));
    module.kernels[0].clone()
}

/// The words at `0x100 + 4t` after a run of `source` with 8 threads at every width, on a
/// device whose first 64 words are 0x1000, 0x1001, ...
fn same_on_both_engines(source: &str) {
    let k = kernel(source);
    let data: Vec<u8> = (0..64u32).flat_map(|i| (0x1000 + i).to_le_bytes()).collect();
    for w in WIDTHS {
        let d = Dispatch { wave_width: w, workgroup: [8, 1, 1], threads: 1, ..Dispatch::default() };
        let run = |engine: &dyn Engine| {
            let mut device = Device::new(8192).unwrap();
            device.write(0, &data).unwrap();
            engine.run(&k, &d, &mut device).map_err(|e| e.to_string()).unwrap();
            device
                .read(0x100, 32)
                .unwrap()
                .chunks(4)
                .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                .collect()
        };
        let want: Vec<u32> = run(&Interpreter::new());
        assert_eq!(run(&JitEngine::strict()), want, "W={w}: JIT, interpreter");
    }
}

/// A call fan with loops, at W = 64 (found by `fuzz-diff --wave-width 64 --seed 2027`, case
/// 1958, a call-fan program; minimised by hand to the lines that keep the crash while the
/// interpreter finishes): the JIT died with SIGSEGV before waves ran on stacks sized for
/// their frames (issue 15 item 1), also with no data and one workgroup of 64 threads. It
/// kills the test process when it fails, hence a test of its own.
#[test]
fn call_fan_with_loops_at_width_64_runs() {
    let k = kernel(CALL_FAN_W64);
    let d = Dispatch { wave_width: 64, workgroup: [64, 1, 1], threads: 1, ..Dispatch::default() };
    let run = |engine: &dyn Engine| {
        let mut device = Device::new(1 << 16).unwrap();
        engine.run(&k, &d, &mut device).map_err(|e| e.to_string()).unwrap();
        device.read(0, 1 << 16).unwrap().to_vec()
    };
    let want = run(&Interpreter::new());
    assert!(run(&JitEngine::strict()) == want, "JIT and interpreter memory differ");
}

const CALL_FAN_W64: &str = "
.kernel fuzz
.registers 40
    if !p1
    endif
    barrier
    call func0
    call func0
func0:
    call func1
    call func1
    call func1
    loop
        mov_imm r24, 0x1
        break p3
        fcmp_gt p3, r10, r7
        frsqrt r9, r13
    endloop
func1:
    call func2
    @p3 return
    loop
    endloop
    call func2
    mov_imm r22, 0x1
    loop
        mov_imm r24, 0x1
        isub r22, r22, r24
        mov_imm r24, 0x0
        local_load_u64 r13, r26
        isub r10, r18, r15
    endloop
func2:
    call func3
    call func3
func3:
    mov_imm r39, 0x0
    loop
        mov_imm r24, 0x1
        isub r39, r39, r24
        icmp_lt p3, r39, r24
        break p3
        cvt_u32_f32 r7, r2
    endloop
    return
.end
";

/// `out[t] = a[t - 1]` with `a` at address 0 and lane 0 switched off by the load's guard
/// (`@!p1`) rather than by an `if`: the JIT gives 0 to lanes 1..3 (the whole first vector)
/// instead of a[0..2], at every width, before the fix: lane 0 of a vector was taken to run
/// with its vector although the op's guard turned it off. Found by `fuzz-diff`
/// (inactive-lanes programs).
#[test]
fn guarded_load_with_lane0_off_below_address_zero_device() {
    same_on_both_engines(
        "
.kernel guarded_left_neighbour
.registers 8
    mov_sr r0, sr_lane_id
    mov_imm r5, 1
    ucmp_lt p1, r0, r5
    mov_imm r5, 4
    imul r6, r0, r5
    mov_imm r5, 0xfffffffc
    iadd r6, r6, r5
    @!p1 device_load_u32 r1, r6
    mov_imm r5, 4
    imul r6, r0, r5
    mov_imm r5, 0x100
    iadd r6, r6, r5
    device_store_u32 r6, r1
    halt
.end
",
    );
}

/// The same through local memory: `l[t] = 100 + t`, then `out[t] = l[t - 1]` under `@!p1`.
#[test]
fn guarded_load_with_lane0_off_below_address_zero_local() {
    same_on_both_engines(
        "
.kernel guarded_left_neighbour_local
.registers 8
    mov_sr r0, sr_lane_id
    mov_imm r5, 4
    imul r6, r0, r5
    mov_imm r5, 100
    iadd r2, r0, r5
    local_store_u32 r6, r2
    mov_imm r5, 1
    ucmp_lt p1, r0, r5
    mov_imm r5, 0xfffffffc
    iadd r6, r6, r5
    @!p1 local_load_u32 r1, r6
    mov_imm r5, 4
    imul r6, r0, r5
    mov_imm r5, 0x100
    iadd r6, r6, r5
    device_store_u32 r6, r1
    halt
.end
",
    );
}

/// The `if` form of the same load passes (a control: the harness does not fail every kernel).
#[test]
fn left_neighbour_load_with_lane0_off_by_an_if_matches() {
    same_on_both_engines(
        "
.kernel if_left_neighbour
.registers 8
    mov_sr r0, sr_lane_id
    mov_imm r5, 1
    ucmp_lt p1, r0, r5
    mov_imm r5, 4
    imul r6, r0, r5
    mov_imm r5, 0xfffffffc
    iadd r6, r6, r5
    if !p1
    device_load_u32 r1, r6
    endif
    mov_imm r5, 4
    imul r6, r0, r5
    mov_imm r5, 0x100
    iadd r6, r6, r5
    device_store_u32 r6, r1
    halt
.end
",
    );
}

/// A non-returning atomic (`rd` = r0) before the read of r0 after a barrier (found by
/// `fuzz-diff --wave-width 32 --seed 202612732`, case 1199; minimised): the def/use query
/// the analyses share (`Instruction::named_state`) named r0 as the atomic's destination, so
/// the barrier phases took r0 for written before it is read and did not carry it across the
/// barrier: the JIT stored 0 where the interpreter stored the constant. Every width, with an
/// instruction limit and without.
#[test]
fn a_non_returning_atomic_does_not_write_r0() {
    const SOURCE: &str = "
.kernel fuzz
.registers 40
.local_memory 1024
    mov_imm r0, 0xb23cbf77
    mov_sr r5, sr_thread_id_x
    mov_imm r6, 4
    imul r5, r5, r6
    barrier
    loop
        mov_imm r24, 0x1
        isub r27, r27, r24
        icmp_lt p3, r27, r24
        break p3
        atomic_sub r26, r8, .system
    endloop
    local_atomic_exchange r26, r10
    mov_imm r30, 0x100
    iadd r29, r5, r30
    device_store_u32 r29, r0
.end
";
    let k = kernel(SOURCE);
    for w in WIDTHS {
        for max_instructions in [0, 1_000_000] {
            let d = Dispatch {
                wave_width: w,
                workgroup: [8, 1, 1],
                threads: 1,
                max_instructions,
                ..Dispatch::default()
            };
            let run = |engine: &dyn Engine| {
                let mut device = Device::new(8192).unwrap();
                engine.run(&k, &d, &mut device).map_err(|e| e.to_string()).unwrap();
                device.read(0x100, 32).unwrap().to_vec()
            };
            let want = run(&Interpreter::new());
            assert_eq!(&want[..4], &0xb23c_bf77u32.to_le_bytes(), "W={w}: the interpreter's r0");
            assert_eq!(run(&JitEngine::strict()), want, "W={w}, limit {max_instructions}: JIT, interpreter");
        }
    }
}
