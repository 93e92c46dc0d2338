//! Writes under a uniform guard to values a loop keeps as scalars (`@p iadd r22, r22, r26`
//! with `p` the same in every lane, as in the prefix sum's loop over the waves' totals): the
//! scalar takes the new value where the guard's lane 0 holds and keeps the old one where it
//! fails, instead of the register staying a vector blended lane by lane. Driven in a
//! chunk-major loop and in the coherent copy of a loop with a divergent exit, with guards of
//! both polarities that change between trips, a guarded compare, an affine register, and a
//! register written only under a guard that may never hold (it keeps its entry value). Each
//! is compared with the interpreter at every width, with full and partial waves, on one and
//! two worker threads; and the chunk-major loop's code
//! must not blend the guarded register per vector.

mod common;

use common::{check_completes, full_and_partial_waves, two_workgroups, WIDTHS};
use wave_jit_codegen::snapshot::lowering_summary;

/// The loop's guarded writes, at the top level of its body. `r21` is the trip, `r16` a
/// uniform bound (`3 × wave id + r9`), `r8` the thread id (stride 1),
/// `r30` the square of `r16` (uniform, not known: written only under a guard, read only after).
const GUARDED_BODY: &str = "
        ucmp_lt p3, r21, r16
        @p3 iadd r22, r22, r21
        @!p3 iadd r23, r23, r21
        @p3 iadd r8, r8, r25
        @p3 ucmp_lt p1, r21, r5
        @p1 iadd r24, r24, r25
        ucmp_lt p0, r21, r6
        @p0 mov r30, r21
        iadd r21, r21, r25";

/// The lines of [`GUARDED_BODY`] that write `r30`: its write-back after the loop selects,
/// vector by vector, between the entry value and the scalar, by whether the loop wrote it.
const R30_WRITE: &str = "
        ucmp_lt p0, r21, r6
        @p0 mov r30, r21";

/// Before the loop: the thread's global index `r7`, the values the body reads and writes.
const PROLOGUE: &str = "
    mov_sr r10, sr_workgroup_id_x
    mov_sr r11, sr_workgroup_size_x
    mov_sr r12, sr_thread_id_x
    imad r7, r10, r11, r12
    mov_sr r16, sr_wave_id
    mov_imm r13, 3
    imad r16, r16, r13, r9
    imul r30, r16, r16
    mov r8, r12
    mov_imm r21, 0
    mov_imm r22, 0
    mov_imm r23, 0
    mov_imm r24, 0
    mov_imm r25, 1
    mov_imm r14, 32
    imul r15, r7, r14";

/// After the loop: `out[g]` = r22, r23, r8, r24, r30 (32 bytes a thread).
const EPILOGUE: &str = "
    device_store_u32 r15, r22
    mov_imm r14, 4
    iadd r15, r15, r14
    device_store_u32 r15, r23
    iadd r15, r15, r14
    device_store_u32 r15, r8
    iadd r15, r15, r14
    device_store_u32 r15, r24
    iadd r15, r15, r14
    device_store_u32 r15, r30";

/// A loop of `r4` trips, the same in every lane, with nothing but register ops: chunk-major.
fn chunk_major_kernel(body: &str) -> String {
    format!(
        ".kernel guarded_chunk
{PROLOGUE}
    loop
        ucmp_lt p2, r21, r4
        break !p2
{body}
    endloop
{EPILOGUE}
.end
"
    )
}

/// Lane t runs `r4 - t` trips (a divergent exit) and stores its running sum each trip: the
/// coherent copy runs while every lane is in, the masked loop after.
fn coherent_kernel() -> String {
    format!(
        ".kernel guarded_coherent
{PROLOGUE}
    mov_imm r17, 0x4000
    iadd r17, r17, r15
    mov r18, r12
    loop
        ucmp_lt p2, r18, r4
        break !p2
{GUARDED_BODY}
        device_store_u32 r17, r22
        iadd r18, r18, r25
    endloop
{EPILOGUE}
.end
"
    )
}

/// (trips `r4`, guarded compare bound `r5`, last trip writing `r30` `r6`, bound offset `r9`):
/// no trip; guards that switch off mid-loop; a `r30` written on some trips; guards that
/// never hold in some waves (`r9` = 0, wave 0) and always hold in others (large `r9`).
const CASES: [(u32, u32, u32, u32); 4] = [(0, 3, 2, 1), (9, 3, 0, 0), (40, 0, 2, 5), (23, 7, 30, 100)];

fn check_kernel(source: &str, name: &str) {
    let k = common::assembled(source, name);
    for w in WIDTHS {
        for threads in full_and_partial_waves(w) {
            for (trips, bound, written, offset) in CASES {
                for workers in [1, 2] {
                    let registers = vec![(4, trips), (5, bound), (6, written), (9, offset)];
                    let d = two_workgroups(w, threads, registers, workers, false);
                    check_completes(&k, &d, 1 << 16);
                }
            }
        }
    }
}

#[test]
fn guarded_writes_in_a_chunk_major_loop_match_the_interpreter() {
    check_kernel(&chunk_major_kernel(GUARDED_BODY), "guarded_chunk.wave");
}

#[test]
fn guarded_writes_in_a_coherent_copy_match_the_interpreter() {
    check_kernel(&coherent_kernel(), "guarded_coherent.wave");
}

/// The masked writes in the chunk-major kernel's hot code at W = 32 (two full waves), without
/// `r30`'s write-back: one select per guarded write, fewer than the eight vectors of one
/// register, so the guarded registers are not blended vector by vector.
#[test]
fn guarded_writes_to_scalars_do_not_blend_vectors() {
    let body = GUARDED_BODY.replace(R30_WRITE, "");
    assert_ne!(body, GUARDED_BODY);
    let k = common::assembled(&chunk_major_kernel(&body), "guarded_chunk.wave");
    let summary = lowering_summary(&k, common::checked_flags(32, [64, 1, 1])).unwrap();
    let masked: usize = summary
        .lines()
        .find_map(|l| l.strip_prefix("hot  masked writes (blendv, bitselect, select): "))
        .map_or(0, |n| n.parse().unwrap());
    assert!(masked < 8, "{masked} masked writes at W = 32:\n{summary}");
}
