//! A workgroup of fewer threads than the wave width is one wave whose lanes past its threads
//! never run; without an op that reads other lanes' registers, the JIT computes only the
//! vectors that hold its threads (`translate::WaveView`). Against the interpreter at every
//! width and every workgroup size up to W: loads, stores, divergent control, a loop, the
//! reductions, ballot and the prefix sum (which combine active lanes only), and an
//! out-of-bounds access. Shuffles that read the lanes past the threads see their registers'
//! initial values. And the code of a 14-thread workgroup is the same size at W = 16 and 64.

mod common;

use common::{check, WIDTHS};
use wave_runtime::Dispatch;

const DEVICE: u64 = 1 << 16;

fn dispatch(w: u32, threads: u32, initial_registers: Vec<(u8, u32)>) -> Dispatch {
    Dispatch {
        wave_width: w,
        grid: [3, 1, 1],
        workgroup: [threads, 1, 1],
        registers: 32,
        initial_registers,
        threads: 1,
        ..Dispatch::default()
    }
}

/// Workgroup sizes of one wave at width `w`: one thread, part of a vector, whole vectors,
/// all lanes but one, all of them.
fn one_wave_sizes(w: u32) -> Vec<u32> {
    let mut sizes = vec![1, 3, 4, 6, 8, 14, w / 2, w - 1, w];
    sizes.retain(|&t| t >= 1 && t <= w);
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

/// Lane-local and active-lane work: r20 is the input base, r21 the output base, r22 an
/// address that is out of bounds for lanes >= r23. `ballot`: with `wave_ballot` (which also
/// writes r17 at W = 64).
fn lane_kernel(ballot: bool) -> wave_isa::ValidKernel {
    let ballot = if ballot { "wave_ballot r16, p1" } else { "mov r16, r8" };
    common::assembled(
        &format!(
            "
.kernel lanes
.registers 32
    mov_sr r1, sr_thread_id_x
    mov_sr r2, sr_workgroup_id_x
    mov_sr r3, sr_workgroup_size_x
    imad r4, r2, r3, r1
    mov_imm r5, 4
    imul r6, r4, r5
    iadd r7, r6, r20
    device_load_u32 r8, r7
    iadd r9, r6, r21
    mov_imm r10, 3
    and r11, r8, r10
    mov_imm r12, 0
    icmp_eq p1, r11, r12
    if p1
        iadd r8, r8, r1
    else
        imul r8, r8, r5
    endif
    mov_imm r13, 0
    loop
        iadd r8, r8, r13
        iadd r13, r13, r5
        ucmp_lt p2, r13, r11
        break !p2
    endloop
    device_store_u32 r9, r8
    wave_reduce_add r14, r8
    wave_prefix_sum r15, r8
    {ballot}
    wave_reduce_max r17, r1
    mov_imm r18, 0x2000
    iadd r18, r18, r6
    device_store_u32 r18, r14
    iadd r18, r18, r5
    device_store_u32 r18, r15
    mov_imm r19, 0x3000
    iadd r19, r19, r6
    device_store_u32 r19, r16
    iadd r19, r19, r5
    device_store_u32 r19, r17
    ucmp_lt p3, r1, r23
    @!p3 iadd r24, r22, r6
    @!p3 device_load_u32 r25, r24
    @!p3 device_store_u32 r9, r25
.end
"
        ),
        "lanes.wave",
    )
}

#[test]
fn one_wave_workgroups_match_the_interpreter() {
    let k = lane_kernel(true);
    for w in WIDTHS {
        for threads in one_wave_sizes(w).into_iter().chain([w + 1]) {
            // In bounds for every thread, then out of bounds from thread 5 on.
            for faulting_from in [64, 5] {
                let init = vec![(20, 0), (21, 0x1000), (22, 0xfff0_0000), (23, faulting_from), (13, 0x55)];
                check(&k, &dispatch(w, threads, init), DEVICE);
            }
        }
    }
}

/// Shuffles whose source lanes lie past the workgroup's threads: they read those lanes'
/// registers, which hold their initial values (r5 = 0x1234, never written there).
fn shuffle_kernel() -> wave_isa::ValidKernel {
    common::assembled(
        "
.kernel shuffles
.registers 32
    mov_sr r1, sr_thread_id_x
    mov_sr r2, sr_workgroup_id_x
    iadd r5, r5, r1
    iadd r5, r5, r2
    mov_imm r6, 4
    imul r7, r1, r6
    mov_imm r8, 0x100
    imul r9, r2, r8
    iadd r7, r7, r9
    mov_imm r10, 1
    wave_shuffle_down r11, r5, r10
    device_store_u32 r7, r11
    iadd r7, r7, r21
    mov_imm r10, 5
    wave_shuffle_xor r11, r5, r10
    device_store_u32 r7, r11
    iadd r7, r7, r21
    iadd r12, r1, r10
    wave_shuffle r11, r5, r12
    device_store_u32 r7, r11
    iadd r7, r7, r21
    mov_sr r13, sr_wave_width
    isub r13, r13, r6
    wave_broadcast r11, r5, r13
    device_store_u32 r7, r11
.end
",
        "shuffles.wave",
    )
}

#[test]
fn shuffles_read_the_initial_registers_of_lanes_past_the_threads() {
    let k = shuffle_kernel();
    for w in WIDTHS {
        for threads in one_wave_sizes(w) {
            check(&k, &dispatch(w, threads, vec![(5, 0x1234), (21, 0x1000)]), DEVICE);
        }
    }
}

#[test]
fn a_small_workgroup_compiles_to_the_same_code_at_every_wide_width() {
    let k = lane_kernel(false);
    let summary = |width| {
        let flags = common::checked_flags(width, [14, 1, 1]);
        let text = wave_jit_codegen::snapshot::lowering_summary(&k, flags).unwrap();
        // Past the header line, which names the width.
        text.split_once('\n').unwrap().1.to_string()
    };
    let at_16 = summary(16);
    assert_eq!(summary(32), at_16);
    assert_eq!(summary(64), at_16);
}
