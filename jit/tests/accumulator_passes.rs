//! Chunk-major loops with more float accumulators than the machine's vector registers hold
//! run as passes over their trips, each with some of the accumulators (`translate::fission`).
//! Against the interpreter at W = 8, 32 and 64 (one pass at 8) with two full waves and one
//! and a half: lanes
//! that make different numbers of trips (each pass must make the same ones), registers that
//! several passes write and the code after the loop reads (each pass starts from their entry
//! values), finite inputs (every pass runs to its end), random bits with NaNs (the deferred
//! NaN test's bail-out after the passes changed the accumulators), and a load out of bounds in
//! a later trip (the fault's bail-out).

mod common;

use common::{assembled, check, full_and_partial_waves};
use wave_isa::StmtKind;
use wave_jit_codegen::JitEngine;
use wave_runtime::{Device, Dispatch, Engine, Interpreter};

/// Bytes of device memory: A at 0, B at 0x1000, out at 0x2000.
const DEVICE: u64 = 0x10000;

/// An 8×8 block of accumulators (r64..r127), as the GPU-style GEMM's: too many for one
/// chunk's registers, and a body too large to unroll per chunk at W = 32 and 64, so they are
/// the entry function's resident registers there (at W = 8 the loop is unrolled and runs in
/// one pass).
const ROWS: u32 = 8;
const COLS: u32 = 8;

/// Thread t makes `(t & 3) + 2` trips; each trip loads a0..a7 (r24..) from A (its own, moving
/// 4 bytes a trip) and b0..b7 (r32..) from B (the same for all threads, moving 32 bytes a
/// trip) and folds the products into the accumulators. After the loop it stores the
/// accumulators, its trip counter and its A address (both written by every pass) to
/// out[t * 66 ..]. `fault_tid`: that thread's A address leaves the device in its first trip.
fn kernel(fault_tid: Option<u32>) -> wave_isa::ValidKernel {
    let mut src = String::from(
        ".kernel passes\n.registers 128\n    mov_sr r1, sr_thread_id_x\n    mov_imm r2, 4\n    imul r3, r1, r2\n    mov_imm r5, 3\n    and r6, r1, r5\n    mov_imm r5, 2\n    iadd r42, r6, r5\n    mov_imm r44, 0\n    mov_imm r61, 1\n    mov_imm r62, 16\n    mov r50, r3\n    mov_imm r51, 0x1000\n",
    );
    if let Some(t) = fault_tid {
        src += &format!(
            "    mov_imm r5, {t}\n    icmp_eq p2, r1, r5\n    mov_imm r5, 0xfffc\n    @p2 mov r50, r5\n"
        );
    }
    for acc in 64..64 + ROWS * COLS {
        src += &format!("    mov_imm r{acc}, 0\n");
    }
    src += "    loop\n        icmp_le p1, r42, r44\n        break p1\n        mov r52, r50\n";
    for i in 0..ROWS {
        src += &format!("        device_load_u32 r{}, r52\n        iadd r52, r52, r62\n", 24 + i);
    }
    src += "        iadd r50, r50, r2\n";
    for j in 0..COLS {
        src += &format!("        device_load_u32 r{}, r51\n        iadd r51, r51, r2\n", 32 + j);
    }
    for i in 0..ROWS {
        for j in 0..COLS {
            let acc = 64 + COLS * i + j;
            src += &format!("        fma r{acc}, r{}, r{}, r{acc}\n", 24 + i, 32 + j);
        }
    }
    src += "        isub r42, r42, r61\n    endloop\n";
    // out[t * 66 + k]: the accumulators, then r42 and r50.
    src += "    mov_imm r5, 264\n    imul r7, r1, r5\n    mov_imm r5, 0x2000\n    iadd r7, r7, r5\n";
    for r in (64..64 + ROWS * COLS).chain([42, 50]) {
        src += &format!("    device_store_u32 r7, r{r}\n    iadd r7, r7, r2\n");
    }
    src += "    halt\n.end\n";
    assembled(&src, "passes.wave")
}

fn dispatch(w: u32, threads: u32) -> Dispatch {
    Dispatch {
        grid: [2, 1, 1],
        workgroup: [threads, 1, 1],
        wave_width: w,
        registers: 128,
        // No budget: a budget keeps the loop in one pass.
        max_instructions: 0,
        threads: 1,
        ..Dispatch::default()
    }
}

/// The kernel's loop is one the JIT splits (else the tests below would test nothing new).
#[test]
fn the_loop_is_split() {
    let k = kernel(None);
    let mut body = None;
    wave_isa::ir::walk_block(&k.funcs[0].body, 0, &mut |s, _| {
        if let StmtKind::Loop { body: b, .. } = &s.kind {
            body.get_or_insert_with(|| b.clone());
        }
    });
    let passes = wave_jit_codegen::translate::fission::accumulator_passes(&body.unwrap()).expect("split");
    assert!(passes.len() > 2, "{} passes", passes.len());
}

/// Finite inputs: every pass runs to its end, and the results equal the interpreter's.
#[test]
fn finite_inputs_match_the_interpreter() {
    let k = kernel(None);
    for w in [8, 32, 64] {
        for threads in full_and_partial_waves(w) {
            let d = dispatch(w, threads);
            let mut a = Device::new(DEVICE).unwrap();
            for (i, word) in a.bytes_mut()[..0x2000].chunks_mut(4).enumerate() {
                word.copy_from_slice(&((i * 37 % 101) as f32 / 16.0 - 3.0).to_bits().to_le_bytes());
            }
            let mut b = Device::new(DEVICE).unwrap();
            b.bytes_mut().copy_from_slice(a.bytes());
            let ra = Interpreter::new().run(&k, &d, &mut a).map(|_| ());
            let rb = JitEngine::strict().run(&k, &d, &mut b).map(|_| ());
            assert_eq!(ra, Ok(()), "W={w}, {threads} threads");
            assert_eq!(rb, Ok(()), "W={w}, {threads} threads");
            if let Some(at) = (0..a.bytes().len()).find(|&i| a.bytes()[i] != b.bytes()[i]) {
                panic!("W={w}, {threads} threads: memory differs at byte 0x{at:x}");
            }
        }
    }
}

/// Random bits (NaNs among them: the bail-out after the passes ran) and a fault on a later
/// trip of one thread.
#[test]
fn nans_and_faults_match_the_interpreter() {
    for fault in [None, Some(5)] {
        let k = kernel(fault);
        for w in [8, 32, 64] {
            for threads in full_and_partial_waves(w) {
                check(&k, &dispatch(w, threads), DEVICE);
            }
        }
    }
}
