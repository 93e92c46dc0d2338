//! Scalars in the coherent copy of a loop: registers of the form `base + lane × stride` live as
//! one scalar there, and the copy's `break` test is decided on scalars where the predicate
//! compares such a register with a uniform one (the first and the last lane in view decide,
//! unless the lanes wrap in the compare's domain). Driven where the lanes in view wrap past
//! 2^32 or past `i32::MAX` between the first and the last (the middle lanes leave while both
//! ends stay), with every compare order and polarity, where the copy hands over to the
//! masked loop before a register it writes was written (the register keeps its entry value,
//! which is not of the planned form), and through stores in a loop over the whole wave. Each
//! is compared with the interpreter at every width, on one and two worker threads.

mod common;

use common::{check_completes, WIDTHS};
use wave_runtime::Dispatch;

/// `out[t]` = the trips lane t ran: it stays while `test` holds for `r8 = start + t` against
/// `r4`, which drops by `r6` each trip (so every lane leaves within a few trips).
fn counted_loop(test: &str) -> String {
    format!(
        "
.kernel counted
    mov_sr r7, sr_thread_id_x
    iadd r8, r7, r5
    mov_imm r13, 0
    mov_imm r17, 1
    loop
        {test}
        iadd r13, r13, r17
        isub r4, r4, r6
    endloop
    mov_imm r10, 4
    imul r18, r7, r10
    device_store_u32 r18, r13
.end
"
    )
}

/// The compare and `break` pairs: both domains, both sides for the varying operand, and both
/// polarities (a lane leaves where the compare holds, or where it fails). Each leaves once
/// `r4` has dropped far enough, within 64 trips for every case below.
const TESTS: [&str; 6] = [
    "ucmp_lt p0, r8, r4\n        break !p0",
    "ucmp_le p0, r4, r8\n        break p0",
    "icmp_le p1, r4, r8\n        break p1",
    "icmp_lt p0, r8, r4\n        break !p0",
    "icmp_ge p2, r8, r4\n        break p2",
    "icmp_gt p0, r4, r8\n        break !p0",
];

/// (start, first limit, drop per trip): lanes in view that do not wrap; lanes wrapping past
/// 2^32 with lanes 8-15 of the first wave above the limit and the wrapped ones below it;
/// the same at `i32::MAX`; a start where every lane leaves at once.
const CASES: [(u32, u32, u32); 4] = [
    (0, 98, 7),
    (0xffff_fff0, 0xffff_fff8, 0x1fff_ffff),
    (0x7fff_fff0, 0x7fff_fff8, 0x1fff_ffff),
    (0xffff_ffc0, 0, 1),
];

/// `out[t]` = the trips lane t ran: it stays while `test` holds for `r8 = start + 2t`
/// against `r4`, which rises by `r6` each trip. Even lanes skip the domains' largest values,
/// which no rising limit can pass, so lanes that wrap still leave.
fn rising_limit_loop(test: &str) -> String {
    format!(
        "
.kernel rising
    mov_sr r7, sr_thread_id_x
    iadd r8, r7, r7
    iadd r8, r8, r5
    mov_imm r13, 0
    mov_imm r17, 1
    loop
        {test}
        iadd r13, r13, r17
        iadd r4, r4, r6
    endloop
    mov_imm r10, 4
    imul r18, r7, r10
    device_store_u32 r18, r13
.end
"
    )
}

/// Pairs where a lane leaves once the rising limit has passed its value, so the low lanes
/// leave first and the first lane decides (unless the lanes wrap): `x < u` and `x <= u` in
/// both domains (true: signed), both sides and both polarities.
const RISING_TESTS: [(&str, bool); 7] = [
    ("ucmp_lt p0, r8, r4\n        break p0", false),
    ("ucmp_le p0, r8, r4\n        break p0", false),
    ("ucmp_le p1, r4, r8\n        break !p1", false),
    ("icmp_lt p1, r8, r4\n        break p1", true),
    ("icmp_le p2, r4, r8\n        break !p2", true),
    ("icmp_gt p0, r4, r8\n        break p0", true),
    ("icmp_ge p2, r8, r4\n        break !p2", true),
];

/// (start, first limit, rise per trip) for each domain: lanes that do not wrap; lanes
/// wrapping past the domain's top, where the wrapped lanes lie below the first limit while
/// both ends lie above it (the middle lanes leave first) and the second limit is the top
/// (every lane left leaves); every lane leaving at once.
fn rising_cases(signed: bool) -> [(u32, u32, u32); 3] {
    let wrapping =
        if signed { (0x7fff_fff0, 0x8000_0008, 0xffff_fff7) } else { (0xffff_fff0, 8, 0xffff_fff7) };
    [(98, 0, 7), wrapping, (0, 0x7000_0000, 1)]
}

fn dispatch(w: u32, grid: u32, registers: Vec<(u8, u32)>, threads: usize) -> Dispatch {
    Dispatch {
        wave_width: w,
        grid: [grid, 1, 1],
        workgroup: [2 * w, 1, 1],
        initial_registers: registers,
        threads,
        // A runaway loop fails (on both engines) instead of hanging the test.
        max_instructions: 1 << 20,
        ..Dispatch::default()
    }
}

#[test]
fn leave_tests_on_scalars_match_the_interpreter() {
    for test in TESTS {
        let k = common::assembled(&counted_loop(test), "counted.wave");
        for w in WIDTHS {
            for (start, limit, drop) in CASES {
                for threads in [1, 2] {
                    let d = dispatch(w, 2, vec![(4, limit), (5, start), (6, drop)], threads);
                    check_completes(&k, &d, 1 << 16);
                }
            }
        }
    }
}

#[test]
fn leave_tests_where_the_low_lanes_leave_first_match_the_interpreter() {
    for (test, signed) in RISING_TESTS {
        let k = common::assembled(&rising_limit_loop(test), "rising.wave");
        for w in WIDTHS {
            for (start, limit, rise) in rising_cases(signed) {
                for threads in [1, 2] {
                    let d = dispatch(w, 2, vec![(4, limit), (5, start), (6, rise)], threads);
                    check_completes(&k, &d, 1 << 16);
                }
            }
        }
    }
}

/// `r21` starts as t² (not affine) and the loop writes it (`r21 = r8`, affine) only after its
/// `break`: where the copy hands over on its first trip, the masked loop must see t².
const WRITTEN_AFTER_BREAK: &str = "
.kernel late_write
    mov_sr r7, sr_thread_id_x
    imul r21, r7, r7
    mov r8, r7
    mov_imm r17, 1
    loop
        ucmp_lt p0, r8, r4
        break !p0
        mov r21, r8
        iadd r8, r8, r17
    endloop
    mov_imm r10, 4
    imul r18, r7, r10
    device_store_u32 r18, r21
.end
";

#[test]
fn a_register_written_after_the_break_keeps_its_entry_value_until_written() {
    let k = common::assembled(WRITTEN_AFTER_BREAK, "late_write.wave");
    for w in WIDTHS {
        // No lane enters; lanes leave at different trips, the first on the first trip; every
        // lane runs a few trips and leaves together with others.
        for n in [0, 3, w + 1, 5 * w] {
            for threads in [1, 2] {
                check_completes(&k, &dispatch(w, 2, vec![(4, n)], threads), 1 << 16);
            }
        }
    }
}

/// `out[i] = 3 × in[i]` over a grid-stride loop that stores: the addresses are scalars in
/// the copy, and each access covers the wave with one bounds check.
const SCALE: &str = "
.kernel scale
    mov_sr r5, sr_workgroup_id_x
    mov_sr r6, sr_workgroup_size_x
    mov_sr r7, sr_thread_id_x
    imad r8, r5, r6, r7
    mov_sr r9, sr_grid_size_x
    imul r9, r9, r6
    mov_imm r10, 4
    imul r11, r8, r10
    imul r12, r9, r10
    mov_imm r15, 0x8000
    mov_imm r16, 3
    loop
        ucmp_lt p0, r8, r4
        break !p0
        device_load_u32 r14, r11
        imul r14, r14, r16
        iadd r13, r11, r15
        device_store_u32 r13, r14
        iadd r8, r8, r9
        iadd r11, r11, r12
    endloop
.end
";

#[test]
fn grid_stride_stores_match_the_interpreter() {
    let k = common::assembled(SCALE, "scale.wave");
    for w in WIDTHS {
        let threads_in_grid = 3 * 2 * w;
        for n in [4 * threads_in_grid + 5, 2 * threads_in_grid, 7, 0] {
            for threads in [1, 2] {
                check_completes(&k, &dispatch(w, 3, vec![(4, n)], threads), 1 << 16);
            }
        }
    }
    // An array that ends exactly at the end of memory, and one a word past it: the same
    // fault (the last lane's store), after the same stores.
    for w in WIDTHS {
        for (n, size) in [(0x2000 / 4, 0x8000 + 0x2000), (0x2000 / 4, 0x8000 + 0x2000 - 4)] {
            let d = dispatch(w, 1, vec![(4, n)], 1);
            common::check(&k, &d, size);
        }
    }
}
