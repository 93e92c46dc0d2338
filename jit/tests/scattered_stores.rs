//! 32-bit stores whose lanes' addresses follow no known pattern (`Translator::scattered_store`):
//! where no active lane may fault, the active lanes store inline in lane order (a loop over the
//! mask's bits); where one may, the memory helper stores in lane order up to the fault. Driven with a transposed tile's slots
//! (every lane its own word) and with slots three lanes share (the last active one's word must
//! stay); every lane active, every fourth lane off by a guard, a partial last wave, no lane
//! active; inactive lanes that aim at lane 0's word (a store of theirs would overwrite it);
//! active lanes past the end of device or local memory; the unchecked mode; device and local
//! memory; one and two workers. Each is compared with the interpreter (results and every byte
//! of memory) at every width.

mod common;

use common::{check, check_completes, two_workgroups, WIDTHS};

/// How a lane picks its slot among the workgroup's `size` words.
#[derive(Clone, Copy)]
enum Slots {
    /// `(t % 8) · size/8 + t / 8`: a transposed tile, one lane per word.
    Transposed,
    /// `t / 3`: three lanes per word.
    Shared,
}

/// Which lanes store.
#[derive(Clone, Copy)]
enum Active {
    /// Every thread (an unguarded store).
    All,
    /// Global threads below `r4` (a guard).
    Guard,
    /// Global threads below `r4` (an `if`) but every fourth (a guard).
    Sparse,
}

/// Global thread g (thread t of its workgroup) stores g into its slot of device memory (words
/// from `r2 + 4 · size · workgroup`) and of local memory where `active` says; the other lanes'
/// addresses are those of slot 0 (lane 0's word). After a barrier every lane copies word t of
/// local memory to `0x100 + 4g` (local memory starts zeroed).
fn kernel(slots: Slots, active: Active, local_bytes: u32) -> String {
    let slot = match slots {
        Slots::Transposed => {
            "mov_imm r15, 7
    and r16, r7, r15
    mov_imm r15, 3
    shr r9, r6, r15
    imul r16, r16, r9
    shr r9, r7, r15
    iadd r9, r9, r16"
        }
        Slots::Shared => {
            "mov_imm r15, 3
    idiv r9, r7, r15"
        }
    };
    let (sparse_off, store) = match active {
        // Unguarded: every lane of a full wave stores.
        Active::All => (
            "",
            "device_store_u32 r13, r8
    local_store_u32 r17, r8",
        ),
        Active::Guard => (
            "",
            "@p0 device_store_u32 r13, r8
    @p0 local_store_u32 r17, r8",
        ),
        // The lanes where p0 holds run an `if`, and every fourth of them is off by the
        // stores' guard p1.
        Active::Sparse => (
            "mov_imm r15, 3
    and r16, r8, r15
    mov_imm r15, 1
    icmp_ne p1, r16, r15
    @!p1 mov r13, r20
    @!p1 mov_imm r17, 0",
            "if p0
        @p1 device_store_u32 r13, r8
        @p1 local_store_u32 r17, r8
    endif",
        ),
    };
    format!(
        "
.kernel scattered
.local_memory {local_bytes}
    mov_sr r5, sr_workgroup_id_x
    mov_sr r6, sr_workgroup_size_x
    mov_sr r7, sr_thread_id_x
    imad r8, r5, r6, r7
    ucmp_lt p0, r8, r4
    mov_imm r12, 4
    {slot}
    imul r17, r9, r12
    imad r13, r5, r6, r9
    imul r13, r13, r12
    iadd r13, r13, r2
    imul r20, r5, r6
    imul r20, r20, r12
    iadd r20, r20, r2
    @!p0 mov r13, r20
    @!p0 mov_imm r17, 0
    {sparse_off}
    {store}
    barrier
    imul r18, r7, r12
    local_load_u32 r19, r18
    mov_imm r14, 0x100
    imul r21, r8, r12
    iadd r21, r21, r14
    device_store_u32 r21, r19
.end
"
    )
}

const DEVICE: u64 = 1 << 16;

#[test]
fn scattered_stores_write_their_active_lanes_in_lane_order() {
    for slots in [Slots::Transposed, Slots::Shared] {
        for active in [Active::All, Active::Guard, Active::Sparse] {
            for w in WIDTHS {
                // Two full waves, and one and a half (a partial last wave).
                for threads in [2 * w, w + w / 2 + 1] {
                    let k = common::assembled(&kernel(slots, active, 4 * threads), "scattered.wave");
                    // n: every lane, the last five off, none.
                    for n in [2 * threads, 2 * threads - 5, 0] {
                        for workers in [1, 2] {
                            for unchecked in [false, true] {
                                let d =
                                    two_workgroups(w, threads, vec![(2, 0x1000), (4, n)], workers, unchecked);
                                check_completes(&k, &d, DEVICE);
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn an_active_lane_past_the_end_stops_the_wave_where_the_interpreter_does() {
    for slots in [Slots::Transposed, Slots::Shared] {
        for active in [Active::All, Active::Guard, Active::Sparse] {
            for w in WIDTHS {
                let threads = 2 * w;
                let n = 2 * threads;
                // Device: the second workgroup's slots run past the end.
                let k = common::assembled(&kernel(slots, active, 4 * threads), "scattered.wave");
                let base = DEVICE as u32 - 4 * (threads + threads / 2);
                for workers in [1, 2] {
                    check(&k, &two_workgroups(w, threads, vec![(2, base), (4, n)], workers, false), DEVICE);
                }
                // Local: the buffer holds only the first half of the slots. Both workgroups
                // fault, so one worker: a second would run the second workgroup's device stores
                // beside the first one's fault, where the interpreter stops before them.
                let k = common::assembled(&kernel(slots, active, 2 * threads), "scattered.wave");
                check(&k, &two_workgroups(w, threads, vec![(2, 0x1000), (4, n)], 1, false), DEVICE);
            }
        }
    }
}
