//! Kernels whose barriers are all unguarded statements at the top level of the entry function
//! run in phases, every wave in turn, without fibers (`translate::phases`). Against the
//! interpreter at every width, with full and partial waves, with and without a budget: waves
//! exchanging values through local memory across two barriers, lanes halting before the first
//! (a partial halt), a whole wave halting before the second, a wave reduction after a barrier,
//! values written before a barrier and read after it; and budgets that run out in each phase.
//! The compiled code calls the barrier helper where a barrier sits inside an `if` (fibers),
//! and not where it runs in phases.

mod common;

use common::{check, check_limits, WIDTHS};
use wave_jit_codegen::snapshot::lowering_summary;
use wave_runtime::Dispatch;

const DEVICE: u64 = 1 << 16;

/// `nested`: the second barrier sits inside an `if` every lane takes (the kernel keeps fibers).
fn kernel(nested: bool) -> wave_isa::ValidKernel {
    let (open, close) =
        if nested { ("    icmp_eq p3, r10, r10\n    if p3\n", "    endif\n") } else { ("", "") };
    common::assembled(
        &format!(
            "
.kernel phases
.registers 32
.local_memory 1024
    mov_sr r1, sr_thread_id_x
    mov_sr r2, sr_wave_id
    mov_imm r4, 4
    imul r5, r1, r4
    mov_imm r6, 3
    imul r7, r1, r6
    iadd r7, r7, r20
    local_store_u32 r5, r7
    mov_imm r8, 7
    icmp_eq p1, r1, r8
    @p1 halt
    barrier
    mov_imm r10, 1
    iadd r9, r1, r10
    imul r9, r9, r4
    local_load_u32 r11, r9
    iadd r12, r11, r2
    wave_reduce_add r17, r11
    icmp_eq p2, r2, r10
    if p2
        halt
    endif
    local_store_u32 r5, r12
{open}    barrier
{close}    mov_imm r13, 8
    iadd r14, r5, r13
    local_load_u32 r15, r14
    imad r16, r1, r4, r21
    device_store_u32 r16, r15
    iadd r16, r16, r22
    device_store_u32 r16, r12
    iadd r16, r16, r22
    device_store_u32 r16, r17
    iadd r16, r16, r22
    device_store_u32 r16, r7
.end
"
        ),
        "phases.wave",
    )
}

fn dispatch(w: u32, threads_per_group: u32) -> Dispatch {
    Dispatch {
        wave_width: w,
        grid: [3, 1, 1],
        workgroup: [threads_per_group, 1, 1],
        registers: 32,
        initial_registers: vec![(20, 0x55), (21, 0x1000), (22, 0x400)],
        threads: 1,
        max_instructions: 0,
        ..Dispatch::default()
    }
}

#[test]
fn phased_kernels_match_the_interpreter() {
    for nested in [false, true] {
        let k = kernel(nested);
        for w in WIDTHS {
            for threads in common::full_and_partial_waves(w) {
                check(&k, &dispatch(w, threads), DEVICE);
                check(&k, &Dispatch { max_instructions: 10_000_000, ..dispatch(w, threads) }, DEVICE);
            }
        }
    }
}

#[test]
fn budgets_run_out_where_the_interpreter_stops() {
    let k = kernel(false);
    for w in WIDTHS {
        check_limits(&k, &dispatch(w, 2 * w), DEVICE);
    }
}

/// The helper calls in the hot code of `kernel`'s entry function for a 64-thread workgroup.
fn helper_calls(kernel: &wave_isa::ValidKernel, width: u32) -> u32 {
    let flags = common::checked_flags(width, [64, 1, 1]);
    let summary = lowering_summary(kernel, flags).unwrap_or_else(|e| panic!("{e}"));
    let count = summary.lines().find_map(|l| l.strip_prefix("hot  helper calls: "));
    count.map_or(0, |n| n.parse::<u32>().unwrap())
}

#[test]
fn phases_leave_no_barrier_helper_call() {
    // Kept as fibers, the kernel calls the barrier helper at each of its two barriers. (At
    // W = 8: wider, its waves would store too much of their state for phases to be worth it,
    // every lane's, as a partial halt leaves the analysis nothing to go by.)
    assert_eq!(helper_calls(&kernel(true), 8), helper_calls(&kernel(false), 8) + 2);
    // In phases, a barrier needs no helper: as many calls as without it. These store what the
    // analysis knows as scalars, and no state that loops write before reading it, so they run
    // in phases at W = 32 and 64 too.
    for w in [8, 32, 64] {
        let known = |barrier| helper_calls(&known_state_kernel(barrier), w);
        assert_eq!(known("barrier"), known(""), "W = {w}");
        let loops = |barrier| helper_calls(&loop_writes_kernel(barrier), w);
        assert_eq!(loops("barrier"), loops(""), "W = {w}");
    }
}

/// Full waves reach the barrier with state the wave analysis knows: a constant (r3), a uniform
/// value (r5, from the workgroup id and an initial register), affine ones (r6 = 3·tid + r20,
/// r7 = r20 − 5·tid), a uniform predicate (p1) and a varying one (p2), a varying register
/// (r8, loaded); the kernel keeps them across the barrier as constants, lane 0 of each, and
/// vectors (`translate::phases`), and stores them all after it, with the last lane's r5 and r6
/// (in a partial wave, a lane past the threads: their initial values).
/// `barrier`: the barrier statement (or nothing).
fn known_state_kernel(barrier: &str) -> wave_isa::ValidKernel {
    common::assembled(
        &format!(
            "
.kernel known
.registers 32
.local_memory 1024
    mov_sr r1, sr_thread_id_x
    mov_sr r2, sr_workgroup_id_x
    mov_imm r3, 0x1234
    mov_imm r4, 4
    imad r5, r2, r4, r20
    mov_imm r9, 3
    imad r6, r1, r9, r20
    mov_imm r9, 5
    imul r7, r1, r9
    isub r7, r20, r7
    imul r10, r1, r4
    iadd r11, r10, r21
    device_load_u32 r8, r11
    ucmp_lt p1, r2, r4
    ucmp_lt p2, r8, r5
    local_store_u32 r10, r8
    {barrier}
    iadd r12, r10, r4
    mov_imm r13, 1020
    and r12, r12, r13
    local_load_u32 r14, r12
    imad r15, r1, r4, r22
    mov_imm r16, 0x400
    device_store_u32 r15, r3
    iadd r15, r15, r16
    device_store_u32 r15, r5
    iadd r15, r15, r16
    device_store_u32 r15, r6
    iadd r15, r15, r16
    device_store_u32 r15, r7
    iadd r15, r15, r16
    device_store_u32 r15, r8
    iadd r15, r15, r16
    device_store_u32 r15, r14
    iadd r15, r15, r16
    mov_imm r17, 0
    mov_imm r18, 1
    @p1 mov r17, r18
    device_store_u32 r15, r17
    iadd r15, r15, r16
    mov_imm r17, 0
    @p2 mov r17, r18
    device_store_u32 r15, r17
    iadd r15, r15, r16
    mov_sr r19, sr_wave_width
    isub r19, r19, r18
    wave_shuffle r23, r5, r19
    device_store_u32 r15, r23
    iadd r15, r15, r16
    wave_shuffle r23, r6, r19
    device_store_u32 r15, r23
.end
"
        ),
        "known.wave",
    )
}

#[test]
fn state_the_analysis_knows_crosses_barriers_exactly() {
    let initial = vec![(20, 0x7fff_fff0), (21, 0x100), (22, 0x2000)];
    check_one_and_several_waves(&known_state_kernel("barrier"), 6, initial);
}

/// `kernel` against the interpreter at every width, `groups` workgroups of one full wave, two,
/// and one and a half.
fn check_one_and_several_waves(
    kernel: &wave_isa::ValidKernel,
    groups: u32,
    initial_registers: Vec<(u8, u32)>,
) {
    for w in WIDTHS {
        for threads in common::full_and_partial_waves(w).into_iter().chain([w]) {
            let d = Dispatch {
                grid: [groups, 1, 1],
                initial_registers: initial_registers.clone(),
                ..dispatch(w, threads)
            };
            check(kernel, &d, 1 << 16);
        }
    }
}

/// After the barrier, loops that write registers before reading them: r8 and p2 open every
/// trip (so the barrier's values are dead), r9 is written after a `break` that lanes take at
/// different trips (the first trip for thread 0, which keeps the barrier's r9 and stores it
/// after the loop), r10 only inside trips (dead at the barrier, rewritten by a later loop);
/// r17 is read only inside a loop, the value from before the barrier.
fn loop_writes_kernel(barrier: &str) -> wave_isa::ValidKernel {
    common::assembled(
        &format!(
            "
.kernel loops
.registers 32
.local_memory 1024
    mov_sr r1, sr_thread_id_x
    mov_imm r4, 4
    imul r2, r1, r4
    iadd r3, r2, r21
    device_load_u32 r8, r3
    mov_imm r5, 7
    imul r9, r1, r5
    iadd r9, r9, r8
    mov r10, r8
    ucmp_lt p2, r8, r9
    iadd r17, r8, r5
    local_store_u32 r2, r9
    {barrier}
    mov_imm r6, 0
    mov_imm r11, 0
    loop
        mov_imm r8, 3
        icmp_eq p2, r6, r8
        ucmp_lt p1, r6, r1
        break !p1
        iadd r10, r6, r8
        mov r9, r10
        iadd r11, r11, r10
        iadd r6, r6, r4
        break p2
    endloop
    mov_imm r6, 0
    mov_imm r15, 1
    loop
        iadd r10, r6, r1
        ucmp_lt p1, r6, r4
        break !p1
        iadd r11, r11, r10
        iadd r11, r11, r17
        iadd r6, r6, r15
    endloop
    local_load_u32 r12, r2
    imad r13, r1, r4, r22
    mov_imm r14, 0x400
    device_store_u32 r13, r9
    iadd r13, r13, r14
    device_store_u32 r13, r11
    iadd r13, r13, r14
    device_store_u32 r13, r8
    iadd r13, r13, r14
    device_store_u32 r13, r12
    iadd r13, r13, r14
    mov_imm r15, 1
    mov_imm r16, 0
    @p2 mov r16, r15
    device_store_u32 r13, r16
.end
"
        ),
        "loops.wave",
    )
}

#[test]
fn loop_writes_after_a_barrier_keep_what_later_reads_need() {
    check_one_and_several_waves(&loop_writes_kernel("barrier"), 4, vec![(21, 0x100), (22, 0x2000)]);
}
