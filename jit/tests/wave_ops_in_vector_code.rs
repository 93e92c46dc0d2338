//! The wave ops lowered to vector code (`translate::waveops`), against the interpreter at
//! every width, on one and two threads, with full and partial last waves:
//! - `wave_shuffle_xor` with one mask for the whole wave (vector code where every lane runs
//!   it): masks 0..2W (those from W up name no lane and give 0), a mask halved in a loop (the
//!   butterfly of reductions), and a divergent `if` whose running lanes agree on a mask that
//!   lane 0, not running, does not hold: vector code there would read lane 0's mask;
//! - `wave_shuffle_up`/`_down`/`wave_shuffle` with one delta or lane for the whole wave and
//!   `wave_broadcast` (vector code where every lane runs them): 0..2W and beyond, a
//!   `shuffle_down` reduction loop (with the xor butterfly's), and the same divergent `if`;
//! - the reductions and the prefix sum with every lane active, with a guard, inside a
//!   divergent `if`, and with no lane active (nothing is written).

mod common;

use common::{check_completes, WIDTHS};
use wave_runtime::Dispatch;

/// Thread g loads x[g] (r1 + 4g), runs `body` with it in r9 and the result in r16, and stores
/// r16 to y[g] (r2 + 4g) where `g < r4`.
fn kernel(body: &str) -> wave_isa::ValidKernel {
    common::assembled(
        &format!(
            "
.kernel shuffle
    mov_sr r5, sr_workgroup_id_x
    mov_sr r6, sr_workgroup_size_x
    mov_sr r7, sr_thread_id_x
    imad r8, r5, r6, r7
    mov_imm r12, 4
    imul r13, r8, r12
    iadd r14, r13, r1
    iadd r15, r13, r2
    device_load_u32 r9, r14
    mov r16, r8
    {body}
    ucmp_lt p0, r8, r4
    @p0 device_store_u32 r15, r16
.end
"
        ),
        "shuffle.wave",
    )
}

const DEVICE: u64 = 1 << 16;

fn dispatch(w: u32, threads: u32, workers: usize) -> Dispatch {
    let workgroup = 2 * w;
    Dispatch {
        wave_width: w,
        grid: [threads.div_ceil(workgroup), 1, 1],
        workgroup: [workgroup, 1, 1],
        initial_registers: vec![(1, 0), (2, (DEVICE / 2) as u32), (4, threads)],
        threads: workers,
        ..Dispatch::default()
    }
}

fn check_everywhere(body: &str) {
    let k = kernel(body);
    for w in WIDTHS {
        for workers in [1, 2] {
            // Full waves (vector code) and a partial last wave (the helper).
            for threads in [8 * w, 8 * w - 3] {
                check_completes(&k, &dispatch(w, threads, workers), DEVICE);
            }
        }
    }
}

#[test]
fn constant_masks_in_and_out_of_range() {
    for m in [0u32, 1, 2, 3, 4, 5, 7, 8, 13, 16, 31, 32, 33, 63, 64, 65, 127, 0xffff_ffff] {
        check_everywhere(&format!("mov_imm r10, {m}\n    wave_shuffle_xor r16, r9, r10"));
    }
}

#[test]
fn a_selector_halved_in_a_loop() {
    // The butterfly (xor) and the shift (down) of wave reductions.
    for op in ["wave_shuffle_xor", "wave_shuffle_down"] {
        check_everywhere(&format!(
            "mov_sr r10, sr_wave_width
    mov_imm r11, 1
    mov_imm r17, 0
    shr r10, r10, r11
    loop
        icmp_eq p2, r10, r17
        break p2
        {op} r18, r9, r10
        iadd r9, r9, r18
        shr r10, r10, r11
    endloop
    mov r16, r9"
        ));
    }
}

/// A divergent `if`: lanes from 1 on set the selector to 1 and run `op`; lane 0, not running,
/// keeps 99 (no lane). The running lanes agree, but lane 0 does not hold their selector:
/// vector code that took it from lane 0 would go wrong (the helper runs instead).
fn lane0_holds_another_selector(op: &str) -> String {
    format!(
        "mov_imm r10, 99
    mov_sr r11, sr_lane_id
    mov_imm r17, 0
    icmp_ne p3, r11, r17
    if p3
        mov_imm r10, 1
        {op} r16, r9, r10
    endif"
    )
}

#[test]
fn a_divergent_if_falls_back_to_the_helper() {
    for op in ["wave_shuffle_xor", "wave_shuffle_up", "wave_shuffle_down", "wave_shuffle", "wave_broadcast"] {
        check_everywhere(&lane0_holds_another_selector(op));
    }
}

#[test]
fn reductions_and_prefix_sums_under_every_mask() {
    let masks = [
        // Every lane; a guard on two lanes of three; a divergent `if` on odd lanes; no lane.
        ("", ""),
        ("mov_imm r20, 3\n    imod r21, r8, r20\n    mov_imm r20, 0\n    icmp_ne p3, r21, r20", "@p3 "),
        ("mov_imm r20, 1\n    and r21, r8, r20\n    icmp_eq p3, r21, r20\n    if p3", "if"),
        ("mov_imm r20, 0\n    icmp_ne p3, r20, r20", "@p3 "),
    ];
    for op in ["wave_reduce_add", "wave_reduce_min", "wave_reduce_max", "wave_prefix_sum"] {
        for (setup, how) in masks {
            let body = match how {
                "if" => format!("{setup}\n        {op} r16, r9\n    endif"),
                guard => format!("{setup}\n    {guard}{op} r16, r9"),
            };
            check_everywhere(&body);
        }
    }
}

#[test]
fn shifts_and_broadcasts_with_one_selector() {
    for op in ["wave_shuffle_up", "wave_shuffle_down", "wave_shuffle", "wave_broadcast"] {
        for d in [0u32, 1, 2, 3, 4, 5, 7, 8, 13, 16, 31, 32, 33, 63, 64, 65, 127, 0xffff_ffff] {
            // The helper call of `dma` leaves its operands in the scratch slots the vector
            // code frames its copy with: that frame must read as zeros all the same.
            check_everywhere(&format!("mov_imm r10, {d}\n    dma r20, r8, r8, r8\n    {op} r16, r9, r10"));
        }
    }
    // wave_broadcast reads the first active lane's selector even where the lanes differ.
    check_everywhere("mov_sr r10, sr_lane_id\n    wave_broadcast r16, r9, r10");
}
