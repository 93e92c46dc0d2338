//! Stores whose address every active lane of the wave shares run as one scalar store of the
//! last active lane's value (`translate::mem`, `store_same`), and store nothing without an
//! active lane. Against the interpreter at every width, with full and partial waves: one lane
//! writing its wave's result, several lanes at one address (the last one wins), no lane at
//! all, 1-, 2- and 4-byte device stores, a local store read back by the wave, an address that
//! is uniform inside a divergent `if` while the inactive lanes hold others, and an address
//! out of bounds (the first active lane faults).

mod common;

use common::{check, run_both, WIDTHS};
use wave_runtime::Dispatch;

const DEVICE: u64 = 1 << 16;

/// `lanes`: how many lanes of each wave take the shared-address stores (0: none).
fn kernel(lanes: u32) -> wave_isa::ValidKernel {
    common::assembled(
        &format!(
            "
.kernel same
.registers 32
.local_memory 1024
    mov_sr r1, sr_thread_id_x
    mov_sr r2, sr_lane_id
    mov_sr r3, sr_wave_id
    mov_imm r4, 4
    imul r5, r3, r4
    iadd r13, r5, r20
    mov_imm r6, 0
    icmp_eq p1, r2, r6
    iadd r15, r1, r4
    @p1 device_store_u32 r13, r15
    mov_imm r7, {lanes}
    ucmp_lt p2, r2, r7
    iadd r8, r13, r21
    @p2 device_store_u32 r8, r1
    iadd r9, r13, r22
    @p2 device_store_u8 r9, r15
    iadd r10, r13, r23
    @p2 device_store_u16 r10, r15
    mov r11, r1
    mov_imm r12, 3
    ucmp_lt p3, r2, r12
    if p3
        mov_imm r11, 0x600
        iadd r11, r11, r5
        device_store_u32 r11, r15
    endif
    @p1 local_store_u32 r5, r15
    local_load_u32 r14, r5
    imad r16, r1, r4, r24
    device_store_u32 r16, r14
.end
"
        ),
        "same.wave",
    )
}

fn dispatch(w: u32, threads_per_group: u32, out: u32) -> Dispatch {
    Dispatch {
        wave_width: w,
        grid: [2, 1, 1],
        workgroup: [threads_per_group, 1, 1],
        registers: 32,
        initial_registers: vec![(20, out), (21, 0x100), (22, 0x200), (23, 0x300), (24, 0x1000)],
        threads: 1,
        ..Dispatch::default()
    }
}

#[test]
fn shared_address_stores_match_the_interpreter() {
    for lanes in [0, 1, 3, 64] {
        let k = kernel(lanes);
        for w in WIDTHS {
            for threads in common::full_and_partial_waves(w) {
                check(&k, &dispatch(w, threads, 0x400), DEVICE);
            }
        }
    }
}

#[test]
fn a_shared_address_out_of_bounds_faults_at_the_first_active_lane() {
    let k = kernel(3);
    for w in WIDTHS {
        let (interpreted, compiled, _, _) = run_both(&k, &dispatch(w, 2 * w, DEVICE as u32 - 2), DEVICE, 5);
        assert!(interpreted.is_err(), "W={w}: the interpreter's run should fault");
        assert_eq!(compiled, interpreted, "W={w}");
    }
}
