//! Shifts by an amount the same in every running lane of a vector run as one vector shift by
//! lane 0's amount; where lane 0 may be off (divergent code, guarded shifts) or the amounts
//! differ per lane, they go through the lane helper. Each case is compared with the
//! interpreter at every width: taking lane 0's amount where lane 0 is off (it holds 35 there,
//! the running lanes 7) changes the stored words.

mod common;

use common::{check_completes, WIDTHS};
use wave_runtime::Dispatch;

const KERNEL: &str = "
.kernel shifts
    mov_sr r1, sr_thread_id_x
    mov_sr r2, sr_workgroup_id_x
    mov_sr r3, sr_workgroup_size_x
    imad r1, r2, r3, r1
    mov_imm r4, 2
    shl r5, r1, r4
    device_load_u32 r6, r5
    mov_imm r30, 0x4000
    shl r7, r6, r20
    iadd r5, r5, r30
    device_store_u32 r5, r7
    shr r7, r6, r20
    iadd r5, r5, r30
    device_store_u32 r5, r7
    sar r7, r6, r20
    iadd r5, r5, r30
    device_store_u32 r5, r7
    shl r7, r6, r1
    iadd r5, r5, r30
    device_store_u32 r5, r7
    mov_imm r10, 3
    and r11, r1, r10
    mov_imm r12, 0
    icmp_ne p1, r11, r12
    mov_imm r13, 35
    @p1 mov_imm r13, 9
    @p1 sar r7, r6, r13
    iadd r5, r5, r30
    device_store_u32 r5, r7
    mov_imm r13, 35
    if p1
        mov_imm r13, 7
        shl r14, r6, r13
        sar r15, r6, r13
        xor r14, r14, r15
    endif
    iadd r5, r5, r30
    device_store_u32 r5, r14
.end
";

fn kernel() -> wave_isa::ValidKernel {
    common::assembled(KERNEL, "shifts.wave")
}

#[test]
fn shifts_match_the_interpreter_at_every_width() {
    for amount in [0, 5, 31, 32, 37, 0xFFFF_FFE1] {
        for w in WIDTHS {
            // Whole waves, and a partial last wave (dead lanes).
            for threads in [2 * w, 2 * w - 3] {
                let d = Dispatch {
                    wave_width: w,
                    grid: [2, 1, 1],
                    workgroup: [threads, 1, 1],
                    initial_registers: vec![(20, amount)],
                    threads: 1,
                    ..Dispatch::default()
                };
                check_completes(&kernel(), &d, 1 << 18);
            }
        }
    }
}
