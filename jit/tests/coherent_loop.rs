//! The coherent copy of a loop entered by every lane: it runs unmasked while no lane leaves
//! and hands over to the masked loop at the first trip where one does. Driven with lanes
//! leaving at different trips (a grid-stride loop over n not a multiple of anything), with
//! every lane leaving together, with none entering the body, and with ops before the `break`
//! that must not run twice (those loops get no copy). Each is compared with the interpreter
//! at every width, on one and two worker threads.

mod common;

use common::{check_completes, check_limits, WIDTHS};
use wave_runtime::Dispatch;

/// `out[t] = sum of in[i] for i = t, t + T, ... < n` (T threads in the grid), plus the trip
/// count at `0x10000 + 4t`.
const GRID_STRIDE: &str = "
.kernel stride
    mov_sr r5, sr_workgroup_id_x
    mov_sr r6, sr_workgroup_size_x
    mov_sr r7, sr_thread_id_x
    imad r8, r5, r6, r7
    mov r20, r8
    mov_sr r9, sr_grid_size_x
    imul r9, r9, r6
    mov_imm r10, 4
    imul r11, r8, r10
    imul r12, r9, r10
    mov_imm r13, 0
    mov_imm r16, 0
    mov_imm r17, 1
    loop
        ucmp_lt p0, r8, r4
        break !p0
        device_load_u32 r14, r11
        iadd r13, r13, r14
        iadd r16, r16, r17
        iadd r8, r8, r9
        iadd r11, r11, r12
    endloop
    imul r18, r20, r10
    mov_imm r19, 0x8000
    iadd r18, r18, r19
    device_store_u32 r18, r13
    mov_imm r19, 0x8000
    iadd r18, r18, r19
    device_store_u32 r18, r16
.end
";

/// A loop whose op before the `break` reads what it writes (`r8 += 1`, then the test):
/// running that op again when a lane leaves would count it twice.
const BUMP_FIRST: &str = "
.kernel bump
    mov_sr r7, sr_thread_id_x
    mov_imm r8, 0
    mov_imm r17, 1
    mov_imm r13, 0
    loop
        iadd r8, r8, r17
        ucmp_lt p0, r7, r8
        break p0
        iadd r13, r13, r8
    endloop
    mov_imm r10, 4
    imul r18, r7, r10
    device_store_u32 r18, r13
.end
";

fn kernel(source: &str) -> wave_isa::ValidKernel {
    common::assembled(source, "loop.wave")
}

fn run(k: &wave_isa::ValidKernel, w: u32, grid: u32, n: u32, threads: usize) {
    let d = Dispatch {
        wave_width: w,
        grid: [grid, 1, 1],
        workgroup: [2 * w, 1, 1],
        initial_registers: vec![(4, n)],
        threads,
        ..Dispatch::default()
    };
    check_completes(k, &d, 1 << 18);
}

#[test]
fn grid_stride_loops_match_the_interpreter() {
    let k = kernel(GRID_STRIDE);
    for w in WIDTHS {
        let threads_in_grid = 3 * 2 * w;
        // Lanes leave at different trips; all leave together; none enters the body.
        for n in [5 * threads_in_grid + 7, 4 * threads_in_grid, 1, 0, threads_in_grid - 1] {
            for threads in [1, 2] {
                run(&k, w, 3, n, threads);
            }
        }
    }
}

#[test]
fn ops_that_may_not_run_twice_keep_the_masked_loop() {
    let k = kernel(BUMP_FIRST);
    for w in WIDTHS {
        run(&k, w, 2, 0, 1);
    }
}

/// An instruction limit that runs out in the coherent copy, at the handover, or in the
/// masked loop stops both engines alike: the same limits pass, and a failing one stops in
/// the same workgroup and wave (the copy pays for each trip at its back edge as the masked
/// loop does). As `instruction_limit.rs` does, the faulting instruction is not compared.
#[test]
fn limits_run_out_alike_in_either_copy() {
    let k = kernel(GRID_STRIDE);
    for w in WIDTHS {
        let n = 5 * 3 * 2 * w + 7;
        let d = Dispatch {
            wave_width: w,
            grid: [3, 1, 1],
            workgroup: [2 * w, 1, 1],
            initial_registers: vec![(4, n)],
            threads: 1,
            ..Dispatch::default()
        };
        check_limits(&k, &d, 1 << 18);
    }
}
