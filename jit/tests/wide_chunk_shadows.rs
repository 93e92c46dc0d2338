//! Chunk-major loops with scalar shadows run several vectors per chunk where the wave
//! analysis keeps the same values as scalars as the per-vector analysis does
//! (`translate::chunk`, `Translator::wave_shadow_plan`): a loop over values uniform across the
//! wave runs once for the whole wave, its shadows standing for the first vector's lane 0.
//! Against the interpreter at every width, with full and partial waves: uniform counters,
//! a uniform load, a guarded write under a uniform predicate, an affine address, a per-lane
//! sum; a value uniform in each vector but not across the wave (the loop then keeps one
//! vector per chunk); and a uniform load that runs out of bounds in a later trip.

mod common;

use common::{check, run_both, WIDTHS};
use wave_runtime::Dispatch;

#[derive(Clone, Copy, PartialEq)]
enum Variant {
    Uniform,
    /// Adds `tid / 4` (uniform in each 4-lane vector, not across the wave) into r40.
    PerVector,
    /// The uniform table pointer starts 16 bytes before the end of device memory: the fifth
    /// trip's load faults.
    Fault,
}

const TRIPS: u32 = 6;
const DEVICE: u64 = 1 << 16;

fn kernel(variant: Variant) -> wave_isa::ValidKernel {
    let quad_init =
        if variant == Variant::PerVector { "    mov_imm r42, 2\n    shr r41, r1, r42\n" } else { "" };
    let quad_body = if variant == Variant::PerVector { "        iadd r40, r40, r41\n" } else { "" };
    common::assembled(
        &format!(
            "
.kernel wide
.registers 64
    mov_sr r1, sr_thread_id_x
    mov_sr r2, sr_workgroup_id_x
    mov_sr r3, sr_workgroup_size_x
    imad r4, r2, r3, r1
    mov_imm r5, 4
    imad r6, r4, r5, r60
    mov_sr r16, sr_wave_id
    mov_imm r20, {TRIPS}
    mov_imm r21, 0
    mov r24, r61
    mov_imm r22, 7
    mov_imm r23, 0
    mov_imm r30, 0
    mov_imm r40, 0
    mov_imm r25, 1
{quad_init}    loop
        ucmp_lt p2, r21, r20
        break !p2
        device_load_u32 r26, r24
        iadd r23, r23, r26
        ucmp_lt p3, r21, r16
        @p3 iadd r22, r22, r26
        device_load_u32 r27, r6
        iadd r30, r30, r27
        xor r30, r30, r21
{quad_body}        iadd r21, r21, r25
        iadd r24, r24, r5
        iadd r6, r6, r62
    endloop
    mov_imm r7, 16
    imad r8, r4, r7, r63
    device_store_u32 r8, r22
    iadd r8, r8, r5
    device_store_u32 r8, r23
    iadd r8, r8, r5
    device_store_u32 r8, r30
    iadd r8, r8, r5
    device_store_u32 r8, r40
.end
"
        ),
        "wide.wave",
    )
}

fn dispatch(w: u32, threads_per_group: u32, table: u32) -> Dispatch {
    let threads = 2 * threads_per_group;
    Dispatch {
        wave_width: w,
        grid: [2, 1, 1],
        workgroup: [threads_per_group, 1, 1],
        registers: 64,
        initial_registers: vec![(60, 0x100), (61, table), (62, 4 * threads), (63, 0x8000)],
        threads: 1,
        ..Dispatch::default()
    }
}

#[test]
fn wide_chunks_with_shadows_match_the_interpreter() {
    for variant in [Variant::Uniform, Variant::PerVector, Variant::Fault] {
        let k = kernel(variant);
        let table = if variant == Variant::Fault { DEVICE as u32 - 16 } else { 0x40 };
        for w in WIDTHS {
            for threads in common::full_and_partial_waves(w) {
                let d = dispatch(w, threads, table);
                if variant == Variant::Fault {
                    let (interpreted, _, _, _) = run_both(&k, &d, DEVICE, 1);
                    assert!(interpreted.is_err(), "W={w}: the interpreter's run should fault");
                }
                check(&k, &d, DEVICE);
            }
        }
    }
}
