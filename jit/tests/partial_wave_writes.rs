//! Writes where every live lane runs, in a partial last wave: the lanes past the workgroup's
//! threads never run, so a register or predicate no cross-lane op names is written whole (no
//! blend with the live lanes); one that a wave op names keeps its stale values there, which
//! `wave_shuffle` reads (semantics: the source lane's register even when it is inactive).
//! Compared with the interpreter at every width with full and partial waves, on one and two
//! worker threads; and the straight-line kernel's code must blend nothing.

mod common;

use common::{check_completes, full_and_partial_waves, two_workgroups, WIDTHS};
use wave_jit_codegen::snapshot::lowering_summary;

/// `out[g]` = a few lane-wise results of loaded values (registers and a predicate no wave op
/// names, the predicate guarding a store), then `r9` shuffled from lane `lane ^ 1`: where
/// that lane does not run, the shuffle reads `r9`'s stale value, the `--set-reg` one (`r9` is
/// written in the running lanes only).
const STRAIGHT: &str = "
.kernel straight
    mov_sr r1, sr_workgroup_id_x
    mov_sr r2, sr_workgroup_size_x
    mov_sr r3, sr_thread_id_x
    imad r4, r1, r2, r3
    mov_imm r5, 4
    imul r6, r4, r5
    device_load_u32 r7, r6
    mov_imm r8, 0x9e3779b9
    imul r10, r7, r8
    xor r10, r10, r4
    ucmp_lt p1, r10, r8
    imax r11, r10, r7
    mov r9, r11
    mov_imm r12, 1
    wave_shuffle_xor r13, r9, r12
    mov_imm r14, 0x4000
    iadd r15, r6, r14
    device_store_u32 r15, r11
    mov_imm r14, 0x8000
    iadd r15, r6, r14
    device_store_u32 r15, r13
    mov_imm r14, 0xc000
    iadd r15, r6, r14
    @p1 device_store_u32 r15, r10
.end
";

/// The same without the shuffle: nothing reads a lane that does not run.
fn without_shuffle() -> String {
    STRAIGHT.replace("    wave_shuffle_xor r13, r9, r12\n", "    mov r13, r9\n")
}

fn check_kernel(source: &str, name: &str) {
    let k = common::assembled(source, name);
    for w in WIDTHS {
        for threads in full_and_partial_waves(w).into_iter().chain([w / 2 + 1, 3]) {
            for workers in [1, 2] {
                let d = two_workgroups(w, threads, vec![(9, 0x5eed), (13, 77)], workers, false);
                check_completes(&k, &d, 1 << 16);
            }
        }
    }
}

#[test]
fn a_partial_wave_with_a_shuffle_of_stale_lanes_matches_the_interpreter() {
    check_kernel(STRAIGHT, "straight.wave");
}

#[test]
fn a_partial_wave_without_cross_lane_ops_matches_the_interpreter() {
    check_kernel(&without_shuffle(), "straight_lanes.wave");
}

/// Two waves and a half at W = 32 (80 threads): without a cross-lane op, no write blends.
#[test]
fn writes_in_a_partial_wave_do_not_blend_with_the_live_lanes() {
    let k = common::assembled(&without_shuffle(), "straight_lanes.wave");
    let summary = lowering_summary(&k, common::checked_flags(32, [80, 1, 1])).unwrap();
    let blends = |s: &str| -> usize {
        s.lines()
            .filter(|l| l.contains("masked writes"))
            .map(|l| l.rsplit(": ").next().unwrap().parse::<usize>().unwrap())
            .sum()
    };
    assert_eq!(blends(&summary), 0, "{summary}");
    // With the shuffle, `r9` keeps its stale lanes: its write blends (one per vector).
    let k = common::assembled(STRAIGHT, "straight.wave");
    let summary = lowering_summary(&k, common::checked_flags(32, [80, 1, 1])).unwrap();
    assert!(blends(&summary) >= 8, "{summary}");
}
