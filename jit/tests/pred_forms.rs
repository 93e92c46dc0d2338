//! Predicates held as compare forms (`jit/src/translate/pred_forms.rs`): `p = cmp(i, n)` with
//! `i` lane-affine and `n` uniform is kept as two scalars; the coherent `if` on it tests its
//! last lane (`<`, `<=`) or its first lane and whether the lanes wrap (`>`, `>=`), and the
//! masks are rebuilt on the masked path and wherever the predicate is read later. Driven with
//! every lane taking `then`, a partial last wave, no lane taking it, lanes that wrap past 2^32
//! or `i32::MAX` (the middle lanes fail while both ends hold, or the first lane holds and the
//! wrapped ones fail), every compare order and both polarities of the `if`; with the predicate
//! read after the `if`, rewritten inside it (under a partial mask), and rewritten by a call
//! inside it.
//! Each is compared with the interpreter at every width, on one and two worker threads.

mod common;

use common::{check_completes, WIDTHS};
use wave_runtime::Dispatch;

/// `out[g] = then ? 1 : 2` for global thread g, at `0x1000 + 4g`, for `i = g + start` and the
/// compare `test` writing p0; the predicate is read again after the `if` (`@p0` store at
/// `0x9000 + 4g`).
fn guard(test: &str, negated: bool) -> String {
    let p = if negated { "!p0" } else { "p0" };
    format!(
        "
.kernel guard
    mov_sr r5, sr_workgroup_id_x
    mov_sr r6, sr_workgroup_size_x
    mov_sr r7, sr_thread_id_x
    imad r9, r5, r6, r7
    iadd r8, r9, r2
    {test}
    mov_imm r12, 4
    imul r13, r9, r12
    mov_imm r14, 0x1000
    iadd r13, r13, r14
    if {p}
        mov_imm r11, 1
    else
        mov_imm r11, 2
    endif
    device_store_u32 r13, r11
    mov_imm r14, 0x8000
    iadd r13, r13, r14
    @p0 device_store_u32 r13, r8
.end
"
    )
}

const TESTS: [&str; 6] = [
    "ucmp_lt p0, r8, r4",
    "ucmp_le p0, r4, r8",
    "icmp_lt p0, r8, r4",
    "icmp_ge p0, r8, r4",
    "icmp_gt p0, r4, r8",
    "icmp_le p0, r4, r8",
];

fn dispatch(w: u32, registers: Vec<(u8, u32)>, threads: usize) -> Dispatch {
    Dispatch {
        wave_width: w,
        grid: [2, 1, 1],
        workgroup: [2 * w, 1, 1],
        initial_registers: registers,
        threads,
        ..Dispatch::default()
    }
}

#[test]
fn coherent_ifs_on_compare_forms_match_the_interpreter() {
    for test in TESTS {
        for negated in [false, true] {
            let k = common::assembled(&guard(test, negated), "guard.wave");
            for w in WIDTHS {
                let threads = 4 * w;
                // (start, limit): all lanes below the limit; a partial last wave; none; lanes
                // wrapping past 2^32 with lanes 8-15 above the limit; the same at i32::MAX;
                // lanes from the limit on (the first lane at or above it) that wrap below it
                // past 2^32 and past i32::MAX.
                let cases = [
                    (0, threads),
                    (0, threads - 5),
                    (0, 0),
                    (0xffff_fff0, 0xffff_fff8),
                    (0x7fff_fff0, 0x7fff_fff8),
                    (0xffff_fff8, 0xffff_fff0),
                    (0x7fff_fff8, 0x7fff_fff0),
                ];
                for (start, limit) in cases {
                    for workers in [1, 2] {
                        check_completes(&k, &dispatch(w, vec![(2, start), (4, limit)], workers), 1 << 16);
                    }
                }
            }
        }
    }
}

/// p0 and p1 are forms when the `if`s start; the inner body rewrites p0 for its lanes only,
/// and both are read after the `if`s.
const REWRITTEN_INSIDE: &str = "
.kernel rewritten
    mov_sr r5, sr_workgroup_id_x
    mov_sr r6, sr_workgroup_size_x
    mov_sr r7, sr_thread_id_x
    imad r8, r5, r6, r7
    ucmp_lt p0, r8, r4
    ucmp_lt p1, r8, r3
    mov_imm r12, 4
    imul r13, r8, r12
    mov_imm r14, 0x1000
    iadd r13, r13, r14
    mov_imm r11, 0
    if p0
        if p1
            mov_imm r15, 3
            and r16, r8, r15
            icmp_eq p0, r16, r15
            mov_imm r11, 1
        endif
    endif
    device_store_u32 r13, r11
    mov_imm r14, 0x4000
    iadd r13, r13, r14
    @p0 device_store_u32 r13, r8
    iadd r13, r13, r14
    @p1 device_store_u32 r13, r8
.end
";

/// p1 is a form when the `if` starts; the function called inside rewrites it.
const CALL_INSIDE: &str = "
.kernel called
    mov_sr r5, sr_workgroup_id_x
    mov_sr r6, sr_workgroup_size_x
    mov_sr r7, sr_thread_id_x
    imad r8, r5, r6, r7
    mov_imm r12, 4
    imul r13, r8, r12
    mov_imm r14, 0x1000
    iadd r13, r13, r14
    ucmp_lt p1, r8, r4
    ucmp_lt p2, r8, r3
    if p2
        call flip
    endif
    @p1 device_store_u32 r13, r8
    halt
flip:
    icmp_eq p1, r7, r7
    return
.end
";

#[test]
fn forms_written_inside_an_if_match_the_interpreter() {
    for (source, name) in [(REWRITTEN_INSIDE, "rewritten.wave"), (CALL_INSIDE, "called.wave")] {
        let k = common::assembled(source, name);
        for w in WIDTHS {
            let threads = 4 * w;
            for (n, m) in [(threads, threads), (threads, threads - 3), (threads - 3, w + 1), (0, threads)] {
                for workers in [1, 2] {
                    check_completes(&k, &dispatch(w, vec![(4, n), (3, m)], workers), 1 << 16);
                }
            }
        }
    }
}
