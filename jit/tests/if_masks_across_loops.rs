//! A divergent `if` whose sides hold loops keeps its masks in stack slots across them (the
//! `else` lanes across `then`, the lanes leaving `then` across `else`:
//! `Translator::keep_mask_across`). Against the interpreter at every width, with full and
//! partial waves: lanes split by parity, loops with lane-dependent trips on both sides, an
//! `if` with a loop nested in the `then` side, lanes that halt inside a loop (they must not
//! come back at the merge), and instruction budgets that stop the run inside the nest.

mod common;

use common::{check_completes, check_limits, full_and_partial_waves, WIDTHS};
use wave_runtime::Dispatch;

const DEVICE: u64 = 1 << 16;

/// out[tid] (at 0x1000) = a count that depends on which side each lane took, how many trips
/// its loops made and whether the merge put it back; lanes with tid % 8 == 7 halt in the
/// `else` side's loop.
fn kernel() -> wave_isa::ValidKernel {
    common::assembled(
        "
.kernel if_loops
    mov_sr r1, sr_thread_id_x
    mov_imm r2, 4
    imul r3, r1, r2
    mov_imm r4, 0x1000
    iadd r3, r3, r4
    mov_imm r30, 1
    mov_imm r11, 0
    mov_imm r6, 0
    mov_imm r7, 3
    and r8, r1, r7
    and r10, r1, r30
    mov_imm r20, 7
    and r21, r1, r20
    icmp_eq p1, r10, r11
    if p1
        mov r12, r8
        loop
            icmp_le p2, r12, r11
            break p2
            iadd r6, r6, r30
            isub r12, r12, r30
        endloop
        mov_imm r13, 5
        icmp_gt p3, r1, r13
        if p3
            mov_imm r14, 3
            loop
                icmp_le p2, r14, r11
                break p2
                iadd r6, r6, r14
                isub r14, r14, r30
            endloop
        endif
        mov_imm r15, 1000
        iadd r6, r6, r15
    else
        mov r12, r8
        iadd r12, r12, r30
        loop
            icmp_le p2, r12, r11
            break p2
            icmp_eq p3, r21, r20
            @p3 device_store_u32 r3, r12
            @p3 halt
            iadd r6, r6, r12
            isub r12, r12, r30
        endloop
        mov_imm r15, 2000
        iadd r6, r6, r15
    endif
    iadd r6, r6, r1
    device_store_u32 r3, r6
    halt
.end
",
        "if_loops.wave",
    )
}

fn dispatch(w: u32, threads: u32) -> Dispatch {
    Dispatch { wave_width: w, grid: [2, 1, 1], workgroup: [threads, 1, 1], threads: 1, ..Dispatch::default() }
}

#[test]
fn masks_kept_across_loops_match_the_interpreter() {
    let k = kernel();
    for w in WIDTHS {
        for threads in full_and_partial_waves(w) {
            check_completes(&k, &dispatch(w, threads), DEVICE);
        }
    }
}

#[test]
fn budgets_stop_the_nest_alike() {
    let k = kernel();
    for w in [8, 32, 64] {
        check_limits(&k, &dispatch(w, w + w / 2 + 1), DEVICE);
    }
}
