//! Stores of consecutive words under a partial mask (`Translator::masked_lane_stores`): where
//! no active lane may fault, the active lanes store inline, one word each, from a loop over the
//! mask's bits; where one may, the memory helper stores in lane order up to the fault. Driven
//! with a partial last wave, every fourth lane off, inactive lanes whose addresses lie past the
//! end of device or local memory (they must neither fault nor be written), an active lane that
//! faults, and the unchecked mode; device and local memory. Each is compared with the
//! interpreter (results and every byte of memory) at every width, on one and two threads.

mod common;

use common::{check, check_completes, two_workgroups, WIDTHS};

/// Global thread g stores g at `r2 + 4g` where `g < r4` and (with `sparse`) `g % 4 != 1`.
/// Local memory: the same lanes store at `4 × thread id`, then every lane copies its word of
/// local memory to `0x100 + 4g` after a barrier (local memory starts zeroed).
fn kernel(sparse: bool, local_bytes: u32) -> String {
    let sparse_test = if sparse {
        "mov_imm r15, 3
    and r16, r8, r15
    mov_imm r15, 1
    icmp_ne p1, r16, r15
    if p1"
    } else {
        "if p0"
    };
    format!(
        "
.kernel masked
.local_memory {local_bytes}
    mov_sr r5, sr_workgroup_id_x
    mov_sr r6, sr_workgroup_size_x
    mov_sr r7, sr_thread_id_x
    imad r8, r5, r6, r7
    ucmp_lt p0, r8, r4
    mov_imm r12, 4
    imul r13, r8, r12
    iadd r13, r13, r2
    imul r17, r7, r12
    if p0
    {sparse_test}
        device_store_u32 r13, r8
        local_store_u32 r17, r8
    endif
    endif
    barrier
    local_load_u32 r18, r17
    mov_imm r14, 0x100
    imul r19, r8, r12
    iadd r19, r19, r14
    device_store_u32 r19, r18
.end
"
    )
}

const DEVICE: u64 = 1 << 16;

#[test]
fn partial_masks_store_only_their_active_lanes() {
    for sparse in [false, true] {
        for w in WIDTHS {
            let threads = 4 * w;
            // The local buffer holds the workgroup's words exactly: lanes past it are inactive.
            let k = common::assembled(&kernel(sparse, 4 * 2 * w), "masked.wave");
            // (n, base): all lanes; a partial last wave; the active lanes ending exactly at the
            // end of device memory with the inactive ones past it; no lane.
            let end = DEVICE as u32 - 4 * (threads - 3);
            for (n, base) in [(threads, 0x1000), (threads - 5, 0x1000), (threads - 3, end), (0, 0x1000)] {
                for workers in [1, 2] {
                    for unchecked in [false, true] {
                        let d = two_workgroups(w, 2 * w, vec![(2, base), (4, n)], workers, unchecked);
                        check_completes(&k, &d, DEVICE);
                    }
                }
            }
        }
    }
}

#[test]
fn an_active_lane_that_faults_stops_the_wave_where_the_interpreter_does() {
    for sparse in [false, true] {
        for w in WIDTHS {
            let threads = 4 * w;
            let k = common::assembled(&kernel(sparse, 4 * 2 * w), "masked.wave");
            // Lanes from `threads - 6` on store past the end; lanes from `threads - 3` are off.
            let base = DEVICE as u32 - 4 * (threads - 6);
            for workers in [1, 2] {
                check(
                    &k,
                    &two_workgroups(w, 2 * w, vec![(2, base), (4, threads - 3)], workers, false),
                    DEVICE,
                );
            }
        }
    }
}
