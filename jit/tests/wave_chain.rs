//! One call of the entry function runs all the waves of a workgroup, chained by their
//! contexts (`WaveCtx::next_wave`). Against the interpreter at every width: each wave starts
//! from its own state (registers, live lanes of a partial last wave), on one and two threads;
//! a fault in a middle wave names that wave and the waves after it do not run (one thread:
//! with two, which workgroups of the other worker ran before it saw the fault is a race); an
//! instruction budget that runs out in a middle wave names that wave (the pc of a limit error
//! may differ: the JIT pays for instructions in blocks); and kernels with barriers (each wave
//! on a fiber of its own) are unchanged.

mod common;

use common::{check, run_both, WIDTHS};
use wave_runtime::Dispatch;

/// Thread g: r20 accumulates over a loop whose trip count is its wave id + 1, then it stores
/// `g + r20` to y[g] (r2 + 4g). With `fault_wave`, the lanes of that wave load from
/// 0xfffffff0 first (out of bounds: the wave faults).
fn kernel(fault_wave: Option<u32>, barrier: bool) -> wave_isa::ValidKernel {
    let fault = match fault_wave {
        Some(w) => format!(
            "mov_imm r30, {w}
    icmp_eq p2, r22, r30
    mov_imm r31, 0xfffffff0
    @p2 device_load_u32 r32, r31"
        ),
        None => String::new(),
    };
    let barrier = if barrier { "barrier" } else { "" };
    common::assembled(
        &format!(
            "
.kernel chain
.registers 40
    mov_sr r5, sr_workgroup_id_x
    mov_sr r6, sr_workgroup_size_x
    mov_sr r7, sr_thread_id_x
    imad r8, r5, r6, r7
    mov_sr r22, sr_wave_id
    mov_imm r23, 1
    iadd r24, r22, r23
    mov_imm r20, 0
    mov_imm r25, 0
    loop
        ucmp_lt p1, r25, r24
        break !p1
        iadd r20, r20, r7
        iadd r25, r25, r23
    endloop
    {barrier}
    {fault}
    iadd r21, r8, r20
    mov_imm r12, 4
    imul r13, r8, r12
    iadd r13, r13, r2
    device_store_u32 r13, r21
.end
"
        ),
        "chain.wave",
    )
}

const DEVICE: u64 = 1 << 16;

fn dispatch(w: u32, threads_per_group: u32, workers: usize, limit: u64) -> Dispatch {
    Dispatch {
        wave_width: w,
        grid: [3, 1, 1],
        workgroup: [threads_per_group, 1, 1],
        initial_registers: vec![(2, 0x100)],
        threads: workers,
        max_instructions: limit,
        ..Dispatch::default()
    }
}

#[test]
fn each_wave_of_the_chain_runs_from_its_own_state() {
    for barrier in [false, true] {
        let k = kernel(None, barrier);
        for w in WIDTHS {
            for workers in [1, 2] {
                // Four full waves; and three and a half (a partial last wave).
                for threads in [4 * w, 3 * w + w / 2] {
                    check(&k, &dispatch(w, threads, workers, 0), DEVICE);
                }
            }
        }
    }
}

#[test]
fn a_fault_in_a_middle_wave_names_it_and_ends_the_chain() {
    for barrier in [false, true] {
        for fault_wave in [0, 1, 3] {
            let k = kernel(Some(fault_wave), barrier);
            for w in WIDTHS {
                check(&k, &dispatch(w, 4 * w, 1, 0), DEVICE);
            }
        }
    }
}

#[test]
fn a_budget_that_runs_out_in_a_middle_wave_names_it() {
    let k = kernel(None, false);
    let mut stopped_in_a_later_wave = false;
    for w in WIDTHS {
        // About 20 instructions a wave before its loop, 4 a trip: a budget of 60 ends in the
        // second wave, 100 in the third.
        for limit in [30, 60, 100, 140] {
            let (interpreted, compiled, _, _) = run_both(&k, &dispatch(w, 4 * w, 1, limit), DEVICE, 1);
            let place = |r: &Result<(), wave_runtime::RunError>| {
                r.as_ref().err().map(|e| (e.workgroup, e.wave, e.kind.clone()))
            };
            assert_eq!(place(&compiled), place(&interpreted), "W={w}, budget {limit}");
            stopped_in_a_later_wave |= place(&interpreted).is_some_and(|(_, wave, _)| wave > 0);
        }
    }
    assert!(stopped_in_a_later_wave, "no budget ran out after the first wave");
}
