//! Store runs (`translate/store_run.rs`): consecutive whole-wave stores between pure vector ops
//! share one bail-out, which runs the run again wave-major from its entry in a function of its
//! own. Driven without an instruction limit (under one, no runs form) where no lane faults
//! (device and local runs) and where the first fault is in any one of the device stores (in
//! the middle of a vector, so that lanes before it store and lanes after it do not), with full
//! and partial waves, on one and two workers: the results and every byte of memory must be
//! the interpreter's at every width. The GPU-style GEMM's epilogue, whose values are resident
//! registers, faults where the interpreter does; and the runs form (a loop function each, no
//! fault call of their own for the stores that share the bail-out).

mod common;

use common::{check, check_completes, WIDTHS};
use wave_jit_codegen::snapshot::lowering_summary;
use wave_runtime::Dispatch;

/// Global thread g stores eight words at `4g` from the bases in r21-r28 (g and its thread id
/// by turns), then four into local memory (`4 × thread id`, `0x100` apart), read back after a
/// barrier and added to the word at 0x800 (which no thread writes); then two words at `4g`
/// from r29 and r30 (stores after the runs, whose inputs the runs wrote). Each device store
/// has a base of its own so that a test can make exactly one of them fault.
const KERNEL: &str = "
.kernel store_run
.local_memory 2048
    mov_sr r5, sr_workgroup_id_x
    mov_sr r6, sr_workgroup_size_x
    mov_sr r7, sr_thread_id_x
    imad r8, r5, r6, r7
    mov_imm r12, 4
    imul r13, r8, r12
    iadd r18, r13, r21
    device_store_u32 r18, r8
    iadd r18, r13, r22
    device_store_u32 r18, r7
    iadd r18, r13, r23
    device_store_u32 r18, r8
    iadd r18, r13, r24
    device_store_u32 r18, r7
    iadd r18, r13, r25
    device_store_u32 r18, r8
    iadd r18, r13, r26
    device_store_u32 r18, r7
    iadd r18, r13, r27
    device_store_u32 r18, r8
    iadd r18, r13, r28
    device_store_u32 r18, r7
    mov_imm r19, 0x800
    device_load_u32 r20, r19
    imul r14, r7, r12
    mov_imm r15, 0x100
    local_store_u32 r14, r8
    iadd r14, r14, r15
    local_store_u32 r14, r7
    iadd r14, r14, r15
    local_store_u32 r14, r8
    iadd r14, r14, r15
    local_store_u32 r14, r7
    barrier
    imul r14, r7, r12
    local_load_u32 r16, r14
    iadd r16, r16, r20
    iadd r17, r13, r29
    device_store_u32 r17, r16
    iadd r17, r13, r30
    device_store_u32 r17, r18
.end
";

/// Device stores in the kernel, and their bases (r21-r30): 1 KiB apart from 0x1000.
const STORES: usize = 10;

/// Two workgroups of `threads` threads on `workers` workers, checked, without an instruction
/// limit (under one, the translation counts each statement where it runs and forms no runs).
fn two_workgroups(w: u32, threads: u32, registers: Vec<(u8, u32)>, workers: usize) -> Dispatch {
    Dispatch { max_instructions: 0, ..common::two_workgroups(w, threads, registers, workers, false) }
}

fn bases() -> Vec<(u8, u32)> {
    (0..STORES as u32).map(|j| (21 + j as u8, 0x1000 + 0x400 * j)).collect()
}

const DEVICE: u64 = 1 << 16;

fn kernel() -> wave_isa::ValidKernel {
    common::assembled(KERNEL, "store_run.wave")
}

/// Threads per workgroup: two full waves, and one and a half (the last wave partial).
fn workgroups(w: u32) -> [u32; 2] {
    [2 * w, w + w / 2 + 1]
}

#[test]
fn runs_that_stay_in_bounds_store_what_the_interpreter_stores() {
    let k = kernel();
    for w in WIDTHS {
        for threads in workgroups(w) {
            for workers in [1, 2] {
                let d = two_workgroups(w, threads, bases(), workers);
                check_completes(&k, &d, DEVICE);
            }
        }
    }
}

#[test]
fn a_fault_in_any_store_of_a_run_stops_where_the_interpreter_does() {
    let k = kernel();
    for w in WIDTHS {
        for threads in workgroups(w) {
            let total = 2 * threads;
            // The first faulting lane: in the middle of the second workgroup's last vector
            // (the first workgroup completes).
            let first_bad = total - 3;
            for store in 0..STORES {
                // Store `store` (0-7 in the first run, 8-9 after the local run) reaches past
                // the end from lane `first_bad` on; every other store stays in bounds (so no
                // lane of the first workgroup faults, which the interpreter runs first).
                let mut registers = bases();
                registers[store].1 = DEVICE as u32 - 4 * first_bad;
                for workers in [1, 2] {
                    check(&k, &two_workgroups(w, threads, registers.clone(), workers), DEVICE);
                }
            }
        }
    }
}

#[test]
fn the_runs_share_one_bail_out() {
    let k = kernel();
    let flags = wave_jit_codegen::Flags {
        width: 32,
        checked: true,
        fuel: false,
        stats: false,
        workgroup: [64, 1, 1],
        window_wraps: false,
    };
    let summary = lowering_summary(&k, flags).unwrap();
    // The device run (eight stores) and the local run (four) each have a loop function; the
    // two stores at the end keep their own fault paths (a bail-out that stores the seven
    // registers they name would be larger).
    assert!(summary.lines().next().unwrap().ends_with(", 2 loop functions"), "{summary}");
    // The cold calls: the two loop functions', the last two stores' fault helpers and the two
    // loads' bounds faults (without runs: fourteen stores' and the loads').
    let cold_calls = summary
        .lines()
        .find_map(|l| l.strip_prefix("cold helper calls: "))
        .map_or(0, |n| n.parse::<u32>().unwrap());
    assert_eq!(cold_calls, 6, "{summary}");
}

/// The GPU-style GEMM (`benches/kernels/gemm_gpu.wave`, N = 128: one workgroup) whose result
/// matrix ends past the end of device memory: its epilogue's 64 stores are one run, and its
/// accumulators are resident registers (in memory), which the run's wave-major function reads
/// in place. The stores of the last rows fault, some lanes of one store first; every width.
#[test]
fn the_gemm_epilogue_faults_where_the_interpreter_does() {
    const N: u32 = 128;
    let source = include_str!("../../benches/kernels/gemm_gpu.wave");
    let file = wave_isa::asm::assemble(source, "gemm_gpu.wave").unwrap().file;
    let k = wave_isa::module::Module::from_wbin(&file).unwrap().kernel("gemm_gpu").unwrap().clone();
    let bytes = N * N * 4;
    // C starts so that its last 5.5 rows of 128 words are past the end.
    let device = 3 * bytes - 4 * (N * 5 + N / 2 + 3);
    for w in WIDTHS {
        let d = Dispatch {
            grid: [1, 1, 1],
            workgroup: [16, 16, 1],
            wave_width: w,
            registers: 128,
            local_memory: 16384,
            initial_registers: vec![(1, 0), (2, bytes), (3, 2 * bytes), (4, N)],
            max_instructions: 0,
            threads: 1,
            ..Dispatch::default()
        };
        let (interpreter, jit, ma, mb) = common::run_both(&k, &d, device as u64, 5);
        assert!(interpreter.is_err(), "W={w}: the interpreter's run should fault");
        assert_eq!(interpreter, jit, "W={w}");
        assert!(ma == mb, "W={w}: memory differs");
    }
}
