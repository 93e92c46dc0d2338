//! Interpreter tests: small kernels whose expected results are computed by hand or by plain
//! Rust in the test, never recorded from a run.

use wave_isa::module::load_bytes;
use wave_isa::ValidKernel;
use wave_runtime::{
    Device, Dispatch, DispatchError, Engine, Interpreter, RunError, RunErrorKind, Space, Stats,
};

fn kernel(src: &str) -> ValidKernel {
    match load_bytes(src.as_bytes(), "test.wave") {
        Ok((module, _)) => module.kernels.into_iter().next().expect("one kernel"),
        Err(e) => panic!("{e}"),
    }
}

fn dispatch(wg: u32, w: u32) -> Dispatch {
    Dispatch { workgroup: [wg, 1, 1], wave_width: w, ..Dispatch::default() }
}

fn run_on(src: &str, d: &Dispatch, device: &mut Device) -> Result<Stats, RunError> {
    Interpreter::new().run(&kernel(src), d, device).map(|report| report.stats)
}

fn words(device: &Device, offset: u64, count: usize) -> Vec<u32> {
    device
        .read(offset, count as u64 * 4)
        .unwrap()
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn put_words(device: &mut Device, offset: u64, values: &[u32]) {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    device.write(offset, &bytes).unwrap();
}

/// Global thread index in r0, byte offset (×4) in r1.
const PROLOGUE: &str = "
    mov_sr r0, sr_thread_id_x
    mov_sr r5, sr_workgroup_id_x
    mov_sr r6, sr_workgroup_size_x
    imad r0, r5, r6, r0
    mov_imm r2, 2
    shl r1, r0, r2
";

#[test]
fn vector_add_over_several_workgroups() {
    let src = format!(
        ".kernel vadd\n{PROLOGUE}
    mov_imm r3, 0x400
    iadd r3, r3, r1
    device_load_u32 r4, r1
    device_load_u32 r7, r3
    fadd r4, r4, r7
    mov_imm r3, 0x800
    iadd r3, r3, r1
    device_store_u32 r3, r4
    halt
.end"
    );
    let mut dev = Device::new(4096).unwrap();
    let a: Vec<f32> = (0..96).map(|i| i as f32 * 0.5).collect();
    let b: Vec<f32> = (0..96).map(|i| 100.0 - i as f32).collect();
    put_words(&mut dev, 0, &a.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
    put_words(&mut dev, 0x400, &b.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
    let d = Dispatch { grid: [3, 1, 1], ..dispatch(32, 16) };
    let stats = run_on(&src, &d, &mut dev).unwrap();
    let out = words(&dev, 0x800, 96);
    for i in 0..96 {
        assert_eq!(out[i], (a[i] + b[i]).to_bits(), "element {i}");
    }
    assert_eq!(stats.workgroups, 3);
    assert_eq!(stats.waves, 6);
    assert_eq!(stats.device_loads, 192);
    assert_eq!(stats.device_stores, 96);
}

#[test]
fn operand_order_of_multi_operand_ops() {
    // bfi rd, base, insert, offset, width; select rd, p, t, f; imad; fma; cvt pairs; dadd.
    let src = "
.kernel ops
    mov_imm r1, 0xFFFFFFFF
    mov_imm r2, 0
    mov_imm r3, 4
    mov_imm r4, 8
    bfi r5, r1, r2, r3, r4
    mov_imm r10, 0
    device_store_u32 r10, r5
    mov_imm r6, 7
    icmp_lt p1, r3, r6
    select r7, p1, r3, r6
    mov_imm r10, 4
    device_store_u32 r10, r7
    imad r8, r3, r6, r4
    mov_imm r10, 8
    device_store_u32 r10, r8
    mov_imm r11, 0x40000000
    mov_imm r12, 0x40400000
    mov_imm r13, 0x3f800000
    fma r14, r11, r12, r13
    mov_imm r10, 12
    device_store_u32 r10, r14
    cvt_f64_f32 r16, r14
    dadd r18, r16, r16
    mov_imm r10, 16
    device_store_u64 r10, r18
    cvt_f32_f64 r20, r18
    mov_imm r10, 24
    device_store_u32 r10, r20
    bfe r21, r1, r3, r4
    mov_imm r10, 28
    device_store_u32 r10, r21
    halt
.end";
    let mut dev = Device::new(256).unwrap();
    run_on(src, &dispatch(1, 4), &mut dev).unwrap();
    let out = words(&dev, 0, 8);
    assert_eq!(out[0], 0xFFFF_F00F);
    assert_eq!(out[1], 4, "p1 = 4 < 7, so the true value");
    assert_eq!(out[2], 4 * 7 + 8);
    assert_eq!(out[3], 7.0f32.to_bits());
    assert_eq!(u64::from(out[4]) | u64::from(out[5]) << 32, 14.0f64.to_bits());
    assert_eq!(out[6], 14.0f32.to_bits());
    assert_eq!(out[7], 0xFF);
}

#[test]
fn divergent_if_else_and_guards() {
    // Odd lanes take the then side, even lanes the else side; @p guarded op on lane < 2.
    let src = format!(
        ".kernel div\n{PROLOGUE}
    mov_imm r3, 1
    and r4, r0, r3
    icmp_eq p1, r4, r3
    mov_imm r9, 2
    icmp_lt p2, r0, r9
    if p1
        mov_imm r7, 100
    else
        mov_imm r7, 200
    endif
    @p2 iadd r7, r7, r3
    device_store_u32 r1, r7
    halt
.end"
    );
    let mut dev = Device::new(1024).unwrap();
    let stats = run_on(&src, &dispatch(8, 8), &mut dev).unwrap();
    let expected: Vec<u32> = (0..8).map(|i| if i % 2 == 1 { 100 } else { 200 } + u32::from(i < 2)).collect();
    assert_eq!(words(&dev, 0, 8), expected);
    assert_eq!(stats.divergent_branches, 1);
}

#[test]
fn loop_with_break_inside_if_and_continue() {
    // Lane i counts iterations until its counter reaches i (break inside an if), skipping the
    // accumulation on odd iterations (continue). GPU semantics (B.9, B.10).
    let src = format!(
        ".kernel lp\n{PROLOGUE}
    mov_imm r3, 0
    mov_imm r4, 0
    mov_imm r8, 1
    loop
        icmp_ge p1, r3, r0
        if p1
            break p1
        endif
        iadd r3, r3, r8
        and r9, r3, r8
        icmp_eq p2, r9, r8
        continue p2
        iadd r4, r4, r3
    endloop
    mov_imm r10, 0x100
    iadd r10, r10, r1
    device_store_u32 r1, r3
    device_store_u32 r10, r4
    halt
.end"
    );
    let mut dev = Device::new(1024).unwrap();
    run_on(&src, &dispatch(8, 8), &mut dev).unwrap();
    let counts = words(&dev, 0, 8);
    let sums = words(&dev, 0x100, 8);
    for i in 0..8u32 {
        assert_eq!(counts[i as usize], i, "lane {i} iterations");
        let expected: u32 = (1..=i).filter(|k| k % 2 == 0).sum();
        assert_eq!(sums[i as usize], expected, "lane {i} even-sum");
    }
}

#[test]
fn halt_inside_if_halts_only_active_lanes() {
    let src = format!(
        ".kernel h\n{PROLOGUE}
    mov_imm r3, 4
    icmp_lt p1, r0, r3
    if p1
        halt
    endif
    mov_imm r7, 9
    device_store_u32 r1, r7
    halt
.end"
    );
    let mut dev = Device::new(1024).unwrap();
    run_on(&src, &dispatch(8, 8), &mut dev).unwrap();
    assert_eq!(words(&dev, 0, 8), vec![0, 0, 0, 0, 9, 9, 9, 9]);
}

#[test]
fn barrier_exchanges_through_local_memory_across_waves() {
    // 64 threads in 4 waves of 16: write local[t] = t*3, barrier, read local[(t+17)%64].
    let src = format!(
        ".kernel bar\n{PROLOGUE}
    mov_imm r3, 3
    imul r4, r0, r3
    local_store_u32 r1, r4
    barrier
    mov_imm r5, 17
    iadd r5, r0, r5
    mov_imm r6, 63
    and r5, r5, r6
    mov_imm r6, 2
    shl r5, r5, r6
    local_load_u32 r7, r5
    device_store_u32 r1, r7
    halt
.end"
    );
    let mut dev = Device::new(1024).unwrap();
    let stats = run_on(&src, &dispatch(64, 16), &mut dev).unwrap();
    let expected: Vec<u32> = (0..64).map(|t| ((t + 17) % 64) * 3).collect();
    assert_eq!(words(&dev, 0, 64), expected);
    assert_eq!(stats.barriers, 1);
}

#[test]
fn halted_wave_counts_as_arrived_at_barrier() {
    // Wave 0 halts before the barrier; the others must still pass it (B.16).
    let src = format!(
        ".kernel hb\n{PROLOGUE}
    mov_sr r3, sr_wave_id
    mov_imm r4, 0
    icmp_eq p1, r3, r4
    @p1 halt
    barrier
    mov_imm r7, 5
    device_store_u32 r1, r7
    halt
.end"
    );
    let mut dev = Device::new(1024).unwrap();
    run_on(&src, &dispatch(12, 4), &mut dev).unwrap();
    assert_eq!(words(&dev, 0, 12), vec![0, 0, 0, 0, 5, 5, 5, 5, 5, 5, 5, 5]);
}

#[test]
fn waves_run_until_barrier_in_wave_order() {
    // Each wave appends its id with an atomic counter before and after a barrier: the schedule
    // is wave 0, 1, 2 up to the barrier, then 0, 1, 2 again.
    let src = "
.kernel order
    mov_sr r0, sr_wave_id
    mov_sr r1, sr_lane_id
    mov_imm r2, 0
    icmp_eq p1, r1, r2
    mov_imm r3, 1
    mov_imm r4, 0x100
    mov_imm r6, 2
    @p1 atomic_add r5, r4, r3, .device
    shl r5, r5, r6
    @p1 device_store_u32 r5, r0
    barrier
    @p1 atomic_add r5, r4, r3, .device
    shl r5, r5, r6
    @p1 device_store_u32 r5, r0
    halt
.end";
    let mut dev = Device::new(1024).unwrap();
    run_on(src, &dispatch(12, 4), &mut dev).unwrap();
    assert_eq!(words(&dev, 0, 6), vec![0, 1, 2, 0, 1, 2]);
}

#[test]
fn out_of_bounds_store_stops_with_lane_pc_and_address() {
    // Lane i stores 4 bytes at 250 + 2*i: lanes 0 (250..254) and 1 (252..256) fit in 256
    // bytes, lane 2 (254..258) does not.
    let src = "
.kernel oob
    mov_sr r0, sr_lane_id
    iadd r1, r0, r0
    mov_imm r2, 250
    iadd r1, r1, r2
    mov_imm r3, 0x01010101
    device_store_u32 r1, r3
    halt
.end";
    let mut dev = Device::new(256).unwrap();
    let err = run_on(src, &dispatch(4, 4), &mut dev).unwrap_err();
    assert_eq!(err.lane, Some(2));
    assert_eq!(err.pc, 0x24, "4 + 8 + 8 + 8 + 8 bytes precede the store");
    assert_eq!(
        err.kind,
        RunErrorKind::OutOfBounds { space: Space::Device, address: 254, bytes: 4, size: 256 }
    );
    let text = err.to_string();
    assert!(text.contains("oob") && text.contains("lane 2") && text.contains("0xfe"), "{text}");
    // Lanes 0 and 1 stored before the failure.
    assert_eq!(dev.read(250, 6).unwrap(), &[1, 1, 1, 1, 1, 1]);
}

#[test]
fn local_out_of_bounds() {
    let src = "
.kernel loob
.local_memory 64
    mov_imm r1, 64
    local_load_u8 r2, r1
    halt
.end";
    let mut dev = Device::new(256).unwrap();
    let err = run_on(src, &dispatch(4, 4), &mut dev).unwrap_err();
    assert_eq!(err.kind, RunErrorKind::OutOfBounds { space: Space::Local, address: 64, bytes: 1, size: 64 });
    assert_eq!(err.lane, Some(0));
}

#[test]
fn instruction_limit_stops_an_endless_loop() {
    let src = "
.kernel forever
    loop
        nop
    endloop
    halt
.end";
    let mut dev = Device::new(256).unwrap();
    let d = Dispatch { max_instructions: 1000, ..dispatch(4, 4) };
    let err = run_on(src, &d, &mut dev).unwrap_err();
    assert_eq!(err.kind, RunErrorKind::InstructionLimit { limit: 1000 });
}

#[test]
fn impossible_dispatches_are_rejected_before_running() {
    let src = ".kernel k\n    mov_imm r20, 1\n    device_store_u32 r20, r20\n    halt\n.end";
    let k = kernel(src);
    let mut dev = Device::new(256).unwrap();
    let reject = |d: Dispatch, dev: &mut Device| match Interpreter::new().run(&k, &d, dev) {
        Err(RunError { kind: RunErrorKind::Dispatch(e), .. }) => e,
        other => panic!("expected a dispatch error, got {other:?}"),
    };
    let e = reject(Dispatch { workgroup: [1100, 1, 1], ..Dispatch::default() }, &mut dev);
    assert_eq!(e, DispatchError::WorkgroupTooLarge { workgroup: [1100, 1, 1], threads: 1100 });
    assert!(e.to_string().contains("76 more than MAX_WORKGROUP_SIZE 1024"), "{e}");
    assert!(matches!(
        reject(Dispatch { wave_width: 12, ..Dispatch::default() }, &mut dev),
        DispatchError::WaveWidth { width: 12 }
    ));
    assert!(matches!(
        reject(Dispatch { grid: [1, 0, 1], ..Dispatch::default() }, &mut dev),
        DispatchError::EmptyGrid { .. }
    ));
    assert!(matches!(
        reject(Dispatch { local_memory: 2 << 20, ..Dispatch::default() }, &mut dev),
        DispatchError::LocalMemoryTooLarge { .. }
    ));
    assert!(matches!(
        reject(Dispatch { initial_registers: vec![(40, 1)], ..Dispatch::default() }, &mut dev),
        DispatchError::InitialRegisterOutOfRange { register: 40, registers: 32 }
    ));
    assert_eq!(dev.read(0, 32).unwrap(), &[0; 32], "nothing ran");
}

#[test]
fn wave_operations() {
    // W = 8: shuffle_xor 1, prefix sum, reduce min, broadcast from lane 5, and any/all.
    let src = "
.kernel waveops
    mov_sr r0, sr_lane_id
    mov_imm r2, 2
    shl r1, r0, r2
    mov_imm r3, 1
    wave_shuffle_xor r4, r0, r3
    device_store_u32 r1, r4
    iadd r5, r0, r3
    wave_prefix_sum r6, r5
    mov_imm r7, 0x20
    iadd r7, r7, r1
    device_store_u32 r7, r6
    mov_imm r8, 5
    wave_broadcast r9, r5, r8
    mov_imm r7, 0x40
    iadd r7, r7, r1
    device_store_u32 r7, r9
    wave_reduce_max r10, r5
    mov_imm r7, 0x60
    iadd r7, r7, r1
    device_store_u32 r7, r10
    mov_imm r11, 10
    wave_shuffle_down r12, r0, r11
    mov_imm r7, 0x80
    iadd r7, r7, r1
    device_store_u32 r7, r12
    halt
.end";
    let mut dev = Device::new(1024).unwrap();
    run_on(src, &dispatch(8, 8), &mut dev).unwrap();
    assert_eq!(words(&dev, 0, 8), (0..8).map(|i| i ^ 1).collect::<Vec<u32>>());
    assert_eq!(words(&dev, 0x20, 8), (0..8).map(|i| (1..=i).sum()).collect::<Vec<u32>>());
    assert_eq!(words(&dev, 0x40, 8), vec![6; 8]);
    assert_eq!(words(&dev, 0x60, 8), vec![8; 8]);
    assert_eq!(words(&dev, 0x80, 8), vec![0; 8], "source lane out of range reads 0");
}

#[test]
fn ballot_at_wave_width_64_fills_two_registers() {
    let src = "
.kernel ballot
    mov_sr r0, sr_lane_id
    mov_imm r2, 3
    and r3, r0, r2
    mov_imm r4, 0
    icmp_eq p1, r3, r4
    wave_ballot r6, p1
    mov_imm r2, 2
    shl r1, r0, r2
    mov_imm r8, 0x100
    iadd r8, r8, r1
    device_store_u32 r1, r6
    device_store_u32 r8, r7
    halt
.end";
    let mut dev = Device::new(1024).unwrap();
    run_on(src, &dispatch(64, 64), &mut dev).unwrap();
    assert_eq!(words(&dev, 0, 64), vec![0x1111_1111; 64]);
    assert_eq!(words(&dev, 0x100, 64), vec![0x1111_1111; 64]);
}

#[test]
fn atomics_in_lane_order_return_old_values() {
    let src = "
.kernel atom
    mov_sr r0, sr_lane_id
    mov_imm r2, 2
    shl r1, r0, r2
    mov_imm r3, 0x200
    mov_imm r4, 1
    atomic_add r5, r3, r4, .device
    device_store_u32 r1, r5
    mov_imm r6, 0x204
    atomic_max r6, r0, .device
    mov_imm r7, 0x208
    mov_imm r8, 3
    atomic_cas r9, r7, r8, r0, .device
    mov_imm r10, 0x40
    iadd r10, r10, r1
    device_store_u32 r10, r9
    halt
.end";
    let mut dev = Device::new(1024).unwrap();
    put_words(&mut dev, 0x208, &[3]);
    run_on(src, &dispatch(8, 8), &mut dev).unwrap();
    assert_eq!(words(&dev, 0, 8), (0..8).collect::<Vec<u32>>());
    assert_eq!(words(&dev, 0x200, 3), vec![8, 7, 0], "lane 0's CAS swaps 3 for 0; later lanes see 0");
    assert_eq!(words(&dev, 0x40, 8), vec![3, 0, 0, 0, 0, 0, 0, 0]);
}

#[test]
fn call_and_return_with_partial_return() {
    // The function returns early on lanes < 2; the others add 10 more.
    let src = format!(
        ".kernel calls\n{PROLOGUE}
    mov_imm r7, 1
    call f
    device_store_u32 r1, r7
    halt
f:
    mov_imm r3, 2
    icmp_lt p1, r0, r3
    iadd r7, r7, r7
    @p1 return
    mov_imm r3, 10
    iadd r7, r7, r3
    return
.end"
    );
    let mut dev = Device::new(1024).unwrap();
    run_on(&src, &dispatch(4, 4), &mut dev).unwrap();
    assert_eq!(words(&dev, 0, 4), vec![2, 2, 12, 12]);
}

#[test]
fn mma_tile_product() {
    // A = 4×4 of (i + 1) row-major at local 0, B = identity·2 at local 64, C = 0: C = 2A.
    let src = "
.kernel mma
.local_memory 256
    mov_sr r0, sr_lane_id
    mov_imm r1, 0
    icmp_eq p1, r0, r1
    mov_imm r2, 0
    mov_imm r3, 1
    mov_imm r4, 16
    loop
        iadd r19, r2, r3
        cvt_f32_u32 r5, r19
        mov_imm r6, 2
        shl r7, r2, r6
        @p1 local_store_u32 r7, r5
        iadd r2, r2, r3
        icmp_ge p2, r2, r4
        break p2
    endloop
    mov_imm r10, 0x40000000
    mov_imm r11, 64
    @p1 local_store_u32 r11, r10
    mov_imm r11, 84
    @p1 local_store_u32 r11, r10
    mov_imm r11, 104
    @p1 local_store_u32 r11, r10
    mov_imm r11, 124
    @p1 local_store_u32 r11, r10
    mov_imm r12, 0
    mov_imm r13, 16
    mma_load_a r20, r12, r13
    mov_imm r14, 64
    mma_load_b r21, r14, r13
    mma_compute r20, r21, r22
    mov_imm r15, 128
    mma_store_c r15, r13, r22
    mov_imm r16, 0
    loop
        mov_imm r6, 2
        shl r7, r16, r6
        iadd r17, r7, r15
        local_load_u32 r18, r17
        @p1 device_store_u32 r7, r18
        mov_imm r3, 1
        iadd r16, r16, r3
        icmp_ge p2, r16, r4
        break p2
    endloop
    halt
.end";
    let mut dev = Device::new(1024).unwrap();
    run_on(src, &dispatch(4, 4), &mut dev).unwrap();
    let expected: Vec<u32> = (0..16).map(|i| (2.0 * (i as f32 + 1.0)).to_bits()).collect();
    assert_eq!(words(&dev, 0, 16), expected);
}

#[test]
fn initial_registers_and_special_registers() {
    let src = "
.kernel sr
    mov_sr r0, sr_thread_id_x
    mov_sr r1, sr_thread_id_y
    mov_sr r2, sr_num_waves
    mov_sr r3, sr_grid_size_x
    mov_imm r4, 2
    mov_sr r5, sr_wave_width
    mov_sr r6, sr_wave_id
    imul r7, r6, r5
    mov_sr r8, sr_lane_id
    iadd r7, r7, r8
    mov_imm r9, 4
    shl r7, r7, r9
    iadd r7, r7, r30
    device_store_u32 r7, r0
    iadd r7, r7, r9
    device_store_u32 r7, r1
    iadd r7, r7, r9
    device_store_u32 r7, r2
    iadd r7, r7, r9
    device_store_u32 r7, r3
    halt
.end";
    let mut dev = Device::new(4096).unwrap();
    let d = Dispatch {
        workgroup: [3, 2, 1],
        wave_width: 4,
        grid: [2, 1, 1],
        initial_registers: vec![(30, 0x100)],
        ..Dispatch::default()
    };
    run_on(src, &d, &mut dev).unwrap();
    let out = words(&dev, 0x100, 24);
    for t in 0..6u32 {
        let row = &out[t as usize * 4..t as usize * 4 + 4];
        assert_eq!(row, &[t % 3, t / 3, 2, 2], "thread {t}");
    }
}
