//! Broadcasts in chunk-major loops: an `fma` whose factor is a word every lane of a vector
//! loads (`a` in a GEMM), used six times a trip, from device and from local memory, on words
//! of every kind (the inputs hold NaNs and infinities: a NaN operand takes the loop's
//! bail-out), beside a broadcast from an address the inner loop never moves, which the outer
//! loop overwrites between its trips. The last is the trap for loading broadcasts again per
//! use as loads Cranelift may move (tried on 2026-11-29 and not kept): such a load from an
//! address that does not move is hoisted out of both loops and misses the new words.
//! Compared with the interpreter (results and every byte of memory) at every width, with
//! full and partial waves, on one and two workers.

mod common;

use common::{check_completes, full_and_partial_waves, two_workgroups, WIDTHS};

/// Thread g runs 3 outer trips; in each, an inner loop of `r4` trips adds `a · b` six times
/// and `c · b` twice to its accumulators r8..r11, where `a` steps through the words from
/// `r2` (device) or from local word 0 on (`local`, copied there first), `b` through this
/// lane's column from `0x4000`, and `c` is its wave's word from `0x3000`, which lane 0 of the
/// wave overwrites after each inner loop. The accumulators go to `0x8000 + 16g`.
fn kernel(local: bool) -> String {
    let (copy, a_pointer) = if local {
        (
            "mov_imm r30, 0
    imul r31, r7, r22
    iadd r32, r31, r2
    device_load_u32 r33, r32
    local_store_u32 r31, r33
    barrier",
            "mov_imm r13, 0",
        )
    } else {
        ("", "mov r13, r2")
    };
    let a_load = if local { "local_load_u32 r15, r13" } else { "device_load_u32 r15, r13" };
    format!(
        "
.kernel broadcasts
.registers 64
.local_memory 1024
    mov_sr r5, sr_workgroup_id_x
    mov_sr r6, sr_workgroup_size_x
    mov_sr r7, sr_thread_id_x
    mov_sr r25, sr_lane_id
    imad r20, r5, r6, r7
    mov_imm r21, 0
    mov_imm r22, 4
    mov_imm r23, 1
    mov_sr r29, sr_wave_id
    mov_imm r27, 8
    imad r24, r5, r27, r29
    imul r24, r24, r22
    mov_imm r27, 0x3000
    iadd r24, r24, r27
    icmp_eq p0, r25, r21
    {copy}
    mov_imm r8, 0
    mov_imm r9, 0
    mov_imm r10, 0
    mov_imm r11, 0
    mov_imm r26, 3
    loop
        icmp_le p2, r26, r21
        break p2
        mov r12, r4
        {a_pointer}
        imul r14, r7, r22
        mov_imm r27, 0x4000
        iadd r14, r14, r27
        loop
            icmp_le p1, r12, r21
            break p1
            {a_load}
            device_load_u32 r16, r14
            device_load_u32 r17, r24
            fma r8, r15, r16, r8
            fma r9, r15, r16, r9
            fma r10, r15, r16, r10
            fma r11, r15, r16, r11
            fma r8, r15, r16, r8
            fma r9, r15, r16, r9
            fma r10, r17, r16, r10
            fma r11, r17, r16, r11
            iadd r13, r13, r22
            mov_imm r27, 256
            iadd r14, r14, r27
            isub r12, r12, r23
        endloop
        @p0 device_store_u32 r24, r8
        isub r26, r26, r23
    endloop
    mov_imm r27, 16
    imul r28, r20, r27
    mov_imm r27, 0x8000
    iadd r28, r28, r27
    device_store_u32 r28, r8
    iadd r28, r28, r22
    device_store_u32 r28, r9
    iadd r28, r28, r22
    device_store_u32 r28, r10
    iadd r28, r28, r22
    device_store_u32 r28, r11
.end
"
    )
}

#[test]
fn broadcasts_in_chunk_major_loops_match_the_interpreter() {
    for local in [false, true] {
        let k = common::assembled(&kernel(local), "broadcasts.wave");
        for w in WIDTHS {
            for threads in full_and_partial_waves(w) {
                for trips in [0, 1, 7] {
                    for workers in [1, 2] {
                        let d = two_workgroups(w, threads, vec![(2, 0x1000), (4, trips)], workers, false);
                        check_completes(&k, &d, 1 << 16);
                    }
                }
            }
        }
    }
}
