//! Local loads whose lanes' addresses step by a constant other than 0 and 4
//! (`Translator::load_strided_local`: every lane placed from lane 0's pointer where every lane
//! runs the load in checked code; other cases load lane by lane). Driven with strides of 8,
//! 12, 132 and 4096 bytes and a descending one (a stride near 2^32, which must not take the
//! path); every lane running, every fourth lane off by a guard, a partial last wave; the
//! unchecked mode; and a last lane whose address is past the end of local memory. Each lane
//! reads the word the next thread stored, so a lane placed wrongly reads another value.
//! Compared with the interpreter (results and every byte of memory) at every width, on one
//! and two workers.

mod common;

use common::{check, check_completes, two_workgroups, WIDTHS};

/// Thread t stores `7g + 1` (g its global index) at local `slot(t)`, with `slot(t) = t ·
/// stride` (or `(size - t) · stride` descending); after a barrier it loads `slot(t + 1)`,
/// guarded by `g % 4 != 1` with `sparse`, and stores what it read at `0x1000 + 4g`.
fn kernel(stride: u32, descending: bool, sparse: bool, local_bytes: u32) -> String {
    let slot = if descending {
        "isub r9, r6, r7
    imul r10, r9, r11
    isub r13, r10, r11"
    } else {
        "imul r10, r7, r11
    iadd r13, r10, r11"
    };
    let (guard_setup, guard) = if sparse {
        (
            "mov_imm r15, 3
    and r16, r8, r15
    mov_imm r15, 1
    icmp_ne p1, r16, r15",
            "@p1 ",
        )
    } else {
        ("", "")
    };
    format!(
        "
.kernel strided
.local_memory {local_bytes}
    mov_sr r5, sr_workgroup_id_x
    mov_sr r6, sr_workgroup_size_x
    mov_sr r7, sr_thread_id_x
    imad r8, r5, r6, r7
    mov_imm r11, {stride}
    {slot}
    mov_imm r12, 7
    imul r14, r8, r12
    mov_imm r12, 1
    iadd r14, r14, r12
    local_store_u32 r10, r14
    barrier
    mov_imm r20, 0
    {guard_setup}
    {guard}local_load_u32 r20, r13
    mov_imm r12, 4
    imul r21, r8, r12
    mov_imm r12, 0x1000
    iadd r21, r21, r12
    device_store_u32 r21, r20
.end
"
    )
}

const DEVICE: u64 = 1 << 16;

#[test]
fn strided_local_loads_read_each_lanes_word() {
    for stride in [8, 12, 132, 4096] {
        for descending in [false, true] {
            for sparse in [false, true] {
                for w in WIDTHS {
                    // Two full waves, and one and a half (a partial last wave).
                    for threads in [2 * w, w + w / 2 + 1] {
                        // Room for every slot and the one past the last.
                        let local = stride * (threads + 2);
                        let k = common::assembled(&kernel(stride, descending, sparse, local), "strided.wave");
                        for workers in [1, 2] {
                            for unchecked in [false, true] {
                                check_completes(
                                    &k,
                                    &two_workgroups(w, threads, Vec::new(), workers, unchecked),
                                    DEVICE,
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn a_lane_past_the_end_faults_where_the_interpreter_does() {
    for stride in [8, 132] {
        for sparse in [false, true] {
            for w in WIDTHS {
                let threads = 2 * w;
                // The last thread's load, one slot past the stored ones, is out of bounds.
                let k = common::assembled(&kernel(stride, false, sparse, stride * threads), "strided.wave");
                check(&k, &two_workgroups(w, threads, Vec::new(), 1, false), DEVICE);
            }
        }
    }
}
