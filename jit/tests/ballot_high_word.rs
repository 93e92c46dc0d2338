//! At W = 64 `wave_ballot rd` also writes rd + 1 (the high 32 lanes, semantics B.15), which the
//! opcode table does not name. Found by `fuzz-diff --count 20000 --seed 20261127 --wave-width
//! 64` (case 11348): the uniformity analysis kept rd + 1 as the constant it held before, so
//! after a divergent `if` whose else side ran the ballot, a compare with rd + 1 used lane 0's
//! old value for every lane. Compared with the interpreter at every width.

mod common;

use common::{check_completes, WIDTHS};
use wave_runtime::Dispatch;

#[test]
fn the_high_word_of_a_ballot_varies_after_a_divergent_if() {
    // Odd lanes run the ballot (lane 0 does not); then every lane compares its id with r9 and
    // stores the result and r9.
    let k = common::assembled(
        "
.kernel ballot_high
    mov_sr r13, sr_thread_id_x
    mov_imm r20, 1
    and r21, r13, r20
    icmp_eq p2, r21, r20
    if !p2
    else
        wave_ballot r8, p2
    endif
    ucmp_le p1, r13, r9
    mov_imm r22, 1
    mov_imm r23, 0
    select r24, p1, r22, r23
    mov_imm r25, 8
    imul r26, r13, r25
    iadd r26, r26, r2
    device_store_u32 r26, r24
    mov_imm r25, 4
    iadd r26, r26, r25
    device_store_u32 r26, r9
.end
",
        "ballot_high.wave",
    );
    check_every_width(&k);
}

/// A uniform counter r9 that a loop's ballot overwrites at W = 64 (as rd + 1): the loop's
/// scalar shadow of r9 and its affine facts must not outlive the ballot.
#[test]
fn a_ballot_in_a_loop_overwrites_the_register_after_rd() {
    let k = common::assembled(
        "
.kernel ballot_loop
    mov_sr r13, sr_thread_id_x
    mov_imm r9, 0
    mov_imm r10, 1
    mov_imm r11, 40
    mov_imm r12, 5
    mov_imm r14, 0
    loop
        ucmp_lt p1, r14, r12
        break !p1
        ucmp_lt p2, r13, r11
        iadd r9, r9, r10
        wave_ballot r8, p2
        iadd r9, r9, r10
        iadd r14, r14, r10
        ucmp_lt p3, r13, r14
        break p3
    endloop
    mov_imm r25, 8
    imul r26, r13, r25
    iadd r26, r26, r2
    device_store_u32 r26, r9
    mov_imm r25, 4
    iadd r26, r26, r25
    device_store_u32 r26, r14
.end
",
        "ballot_loop.wave",
    );
    check_every_width(&k);
}

/// Two workgroups of 64 threads (r2 = 0x100), against the interpreter at every width.
fn check_every_width(k: &wave_isa::ValidKernel) {
    for w in WIDTHS {
        let d = Dispatch {
            wave_width: w,
            grid: [2, 1, 1],
            workgroup: [64, 1, 1],
            initial_registers: vec![(2, 0x100)],
            threads: 1,
            ..Dispatch::default()
        };
        check_completes(k, &d, 4096);
    }
}
