//! The JIT against the interpreter: small kernels covering every op class, divergence, loops
//! with break/continue, calls, halts, barriers, atomics, wave ops and out-of-bounds errors,
//! at W = 4, 8, 16, 32, 64, comparing results and device memory bit for bit.

mod common;

use common::*;
use wave_isa::{Instruction, Op, SpecialReg};
use wave_runtime::{Dispatch, RunErrorKind};

fn dispatch(grid: u32, threads: u32) -> Dispatch {
    Dispatch { grid: [grid, 1, 1], workgroup: [threads, 1, 1], threads: 1, ..Dispatch::default() }
}

#[test]
fn every_data_op_matches() {
    let k = alu_kernel();
    let ops = data_ops();
    for w in WIDTHS {
        let d = Dispatch { wave_width: w, ..dispatch(2, 70) };
        let (ra, rb, ma, mb) = run_both(&k, &d, 1 << 20, 5);
        assert_eq!(ra, rb);
        if let Some(msg) = alu_difference(&ma, &mb, &ops) {
            panic!("W={w}: {msg}");
        }
    }
}

/// A kernel with every data op is large enough at W = 32 to start in the quick tier: it
/// matches the interpreter in that tier and again once the optimized code took over.
#[test]
fn large_kernel_matches_in_both_tiers() {
    let k = alu_kernel();
    let ops = data_ops();
    let d = Dispatch { wave_width: 32, ..dispatch(2, 70) };
    let flags = wave_jit_codegen::Flags {
        width: 32,
        checked: true,
        fuel: true,
        stats: false,
        workgroup: [70, 1, 1],
        window_wraps: false,
    };
    let code = wave_jit_codegen::compile(&k, flags).unwrap();
    assert!(code.tiered(), "every data op at W = 32 starts in the quick tier");
    for tier in ["first", "optimized"] {
        if tier == "optimized" {
            code.wait_optimized().expect("the optimized tier compiles");
        }
        let (ra, rb, ma, mb) = run_both(&k, &d, 1 << 20, 5);
        assert_eq!(ra, rb, "{tier} tier");
        if let Some(msg) = alu_difference(&ma, &mb, &ops) {
            panic!("{tier} tier: {msg}");
        }
    }
}

#[test]
fn control_flow_matches() {
    let mut k = prologue();
    k.extend([
        mov_imm(10, 0), // acc
        mov_imm(11, 5),
        mov_imm(12, 7),
        mov_imm(13, 1),
        mov_imm(14, 0), // loop counter
        ins(Op::IcmpLt, &[1, 1, 11]),
        structural(Op::If, 1, false),
        ins(Op::Iadd, &[10, 10, 13]),
        ins(Op::IcmpEq, &[2, 1, 13]),
        structural(Op::If, 2, true),
        ins(Op::Iadd, &[10, 10, 11]),
        Instruction::new(Op::Else),
        ins(Op::Isub, &[10, 10, 12]),
        Instruction::new(Op::Endif),
        Instruction::new(Op::Else),
        ins(Op::Iadd, &[10, 10, 12]),
        Instruction::new(Op::Endif),
        // loop: counter += 1; break when counter > tid % 7; continue on even counters
        ins(Op::Imod, &[15, 1, 12]),
        Instruction::new(Op::Loop),
        ins(Op::Iadd, &[14, 14, 13]),
        ins(Op::IcmpGt, &[2, 14, 15]),
        structural(Op::Break, 2, false),
        ins(Op::And, &[16, 14, 13]),
        ins(Op::IcmpEq, &[3, 16, 13]),
        structural(Op::If, 3, true),
        structural(Op::Continue, 0, true), // p0 is false: !p0 continues every lane here
        Instruction::new(Op::Endif),
        ins(Op::Imul, &[10, 10, 12]),
        ins(Op::Iadd, &[10, 10, 14]),
        // thread 13 halts in its third iteration
        mov_imm(17, 13),
        ins(Op::IcmpEq, &[0, 1, 17]),
        mov_imm(17, 3),
        ins(Op::IcmpEq, &[3, 14, 17]),
        guarded(ins(Op::And, &[18, 13, 13]), 0, false),
        Instruction::new(Op::Endloop),
    ]);
    let call_at = k.len();
    k.push(ins(Op::Call, &[0]));
    k.extend([
        mov_imm(19, 4),
        ins(Op::Imul, &[19, 4, 19]),
        ins(Op::DeviceStoreU32, &[19, 10]),
        Instruction::new(Op::Halt),
    ]);
    let func_at = k.len();
    k.extend([
        mov_imm(20, 3),
        ins(Op::Imul, &[10, 10, 20]),
        ins(Op::IcmpLt, &[1, 1, 20]),
        guarded(Instruction::new(Op::Return), 1, false),
        ins(Op::Iadd, &[10, 10, 20]),
        mov_imm(21, 9),
        ins(Op::IcmpEq, &[1, 1, 21]),
        guarded(Instruction::new(Op::Halt), 1, false),
        Instruction::new(Op::Return),
    ]);
    k[call_at] = ins(Op::Call, &[offset_of(&k, func_at)]);
    let k = kernel("control", &k);
    check_all_widths(&k, &dispatch(3, 45), 1 << 16);
}

#[test]
fn halting_inside_loops_and_if() {
    let mut k = prologue();
    k.extend([
        mov_imm(10, 3),
        ins(Op::Imod, &[11, 1, 10]),
        mov_imm(12, 0),
        ins(Op::IcmpEq, &[1, 11, 12]),
        structural(Op::If, 1, false),
        Instruction::new(Op::Halt),
        Instruction::new(Op::Endif),
        mov_imm(13, 1),
        Instruction::new(Op::Loop),
        ins(Op::Iadd, &[12, 12, 13]),
        ins(Op::IcmpGt, &[2, 12, 11]),
        guarded(Instruction::new(Op::Halt), 2, false),
        mov_imm(14, 5),
        ins(Op::IcmpGt, &[3, 12, 14]),
        structural(Op::Break, 3, false),
        Instruction::new(Op::Endloop),
        mov_imm(15, 4),
        ins(Op::Imul, &[15, 4, 15]),
        ins(Op::DeviceStoreU32, &[15, 12]),
    ]);
    let k = kernel("halts", &k);
    check_all_widths(&k, &dispatch(2, 37), 1 << 16);
}

#[test]
fn memory_widths_and_atomics_match() {
    let mut k = prologue();
    k.extend([
        mov_imm(10, 13),
        ins(Op::Imul, &[11, 4, 10]), // unaligned byte offset per thread
        ins(Op::DeviceLoadU8, &[20, 11]),
        ins(Op::DeviceLoadU16, &[21, 11]),
        ins(Op::DeviceLoadU32, &[22, 11]),
        ins(Op::DeviceLoadU64, &[24, 11]),
        ins(Op::DeviceLoadU128, &[28, 11]),
        mov_imm(12, 0x8000),
        ins(Op::Iadd, &[12, 12, 11]),
        ins(Op::DeviceStoreU128, &[12, 28]),
        mov_imm(13, 3),
        ins(Op::Iadd, &[12, 12, 13]),
        ins(Op::DeviceStoreU64, &[12, 24]),
        ins(Op::DeviceStoreU16, &[12, 20]),
        ins(Op::DeviceStoreU8, &[12, 22]),
        // local memory: store, load back at a neighbour's address
        mov_imm(14, 8),
        ins(Op::Imul, &[15, 1, 14]),
        ins(Op::LocalStoreU64, &[15, 24]),
        ins(Op::LocalStoreU8, &[15, 22]),
        ins(Op::LocalStoreU16, &[15, 21]),
        ins(Op::LocalLoadU32, &[32, 15]),
        ins(Op::LocalLoadU64, &[33, 15]),
        ins(Op::LocalLoadU16, &[35, 15]),
        ins(Op::LocalLoadU8, &[36, 15]),
        // contended atomics: everyone on the same word, in lane order
        mov_imm(16, 0x9000),
        ins(Op::AtomicAdd, &[40, 16, 4, 2]),
        mov_imm(17, 0x9004),
        ins(Op::AtomicMax, &[41, 17, 22, 2]),
        mov_imm(17, 0x9008),
        ins(Op::AtomicMin, &[42, 17, 22, 2]),
        mov_imm(17, 0x900C),
        ins(Op::AtomicXor, &[43, 17, 22, 2]),
        mov_imm(17, 0x9010),
        ins(Op::AtomicCas, &[44, 17, 1, 4, 2]),
        mov_imm(17, 0x9014),
        ins(Op::AtomicExchange, &[0, 17, 4, 2]),
        mov_imm(17, 0x9018),
        ins(Op::AtomicSub, &[45, 17, 1, 2]),
        ins(Op::AtomicAnd, &[46, 17, 22, 2]),
        ins(Op::AtomicOr, &[47, 17, 21, 2]),
        mov_imm(18, 0x400),
        ins(Op::LocalAtomicAdd, &[48, 18, 1]),
        ins(Op::LocalAtomicCas, &[49, 18, 1, 4]),
        ins(Op::LocalAtomicMax, &[50, 18, 22]),
        ins(Op::LocalAtomicMin, &[51, 18, 20]),
        ins(Op::LocalAtomicSub, &[52, 18, 1]),
        ins(Op::LocalAtomicAnd, &[53, 18, 22]),
        ins(Op::LocalAtomicOr, &[54, 18, 21]),
        ins(Op::LocalAtomicXor, &[55, 18, 4]),
        ins(Op::LocalAtomicExchange, &[56, 18, 4]),
        ins(Op::LocalLoadU32, &[57, 18]),
        // dump r20..r57 per thread
        mov_imm(19, 38 * 4),
        ins(Op::Imul, &[19, 4, 19]),
        mov_imm(13, 0xA000),
        ins(Op::Iadd, &[19, 19, 13]),
        mov_imm(13, 4),
    ]);
    for r in 20..58 {
        k.push(ins(Op::DeviceStoreU32, &[19, r]));
        k.push(ins(Op::Iadd, &[19, 19, 13]));
    }
    let k = kernel("memory", &k);
    check_all_widths(&k, &dispatch(2, 50), 1 << 17);
}

#[test]
fn wave_ops_match_under_divergence() {
    let mut k = prologue();
    k.extend([
        mov_imm(10, 4),
        ins(Op::Imul, &[11, 4, 10]),
        ins(Op::DeviceLoadU32, &[12, 11]), // data
        mov_imm(13, 3),
        ins(Op::And, &[14, 12, 13]),
        mov_imm(15, 0),
        ins(Op::IcmpNe, &[1, 14, 15]), // divergent predicate
        mov_sr(16, SpecialReg::LaneId),
        mov_imm(17, 5),
        ins(Op::Imod, &[18, 12, 17]), // shuffle amounts 0..4 (and negatives)
        ins(Op::IcmpLt, &[2, 12, 16]),
        structural(Op::If, 1, false),
        ins(Op::WaveShuffle, &[20, 12, 12]),
        ins(Op::WaveShuffleUp, &[21, 12, 18]),
        ins(Op::WaveShuffleDown, &[22, 12, 18]),
        ins(Op::WaveShuffleXor, &[23, 12, 18]),
        ins(Op::WaveBroadcast, &[24, 12, 18]),
        ins(Op::WaveBallot, &[25, 2]),
        ins(Op::WaveAny, &[3, 2]),
        ins(Op::WaveAll, &[0, 2]),
        ins(Op::WavePrefixSum, &[27, 12]),
        ins(Op::WaveReduceAdd, &[28, 12]),
        ins(Op::WaveReduceMin, &[29, 12]),
        ins(Op::WaveReduceMax, &[30, 12]),
        ins(Op::Select, &[31, 3, 12, 16]),
        ins(Op::Select, &[32, 0, 12, 16]),
        Instruction::new(Op::Endif),
        mov_imm(19, 16 * 4),
        ins(Op::Imul, &[19, 4, 19]),
        mov_imm(13, 0x4000),
        ins(Op::Iadd, &[19, 19, 13]),
        mov_imm(13, 4),
    ]);
    for r in 20..36 {
        k.push(ins(Op::DeviceStoreU32, &[19, r]));
        k.push(ins(Op::Iadd, &[19, 19, 13]));
    }
    let k = kernel("waveops", &k);
    check_all_widths(&k, &dispatch(2, 70), 1 << 16);
}

#[test]
fn barriers_with_several_waves_match() {
    let mut k = prologue();
    k.extend([
        mov_imm(10, 4),
        ins(Op::Imul, &[11, 1, 10]), // local slot of this thread
        ins(Op::LocalStoreU32, &[11, 4]),
        Instruction::new(Op::Barrier),
        // read the next thread's slot (wrapping inside the workgroup)
        ins(Op::Iadd, &[12, 1, 10]),
        mov_imm(13, 1),
        ins(Op::Iadd, &[14, 1, 13]),
        ins(Op::Imod, &[14, 14, 3]),
        ins(Op::Imul, &[14, 14, 10]),
        ins(Op::LocalLoadU32, &[15, 14]),
        // wave 1 halts before the loop: halted waves count as arrived
        mov_sr(16, SpecialReg::WaveId),
        ins(Op::IcmpEq, &[1, 16, 13]),
        guarded(Instruction::new(Op::Halt), 1, false),
        mov_imm(17, 0),
        Instruction::new(Op::Loop),
        Instruction::new(Op::Barrier),
        ins(Op::LocalLoadU32, &[18, 14]),
        ins(Op::Iadd, &[15, 15, 18]),
        ins(Op::Iadd, &[18, 18, 13]),
        Instruction::new(Op::Barrier),
        ins(Op::LocalStoreU32, &[11, 18]),
        ins(Op::Iadd, &[17, 17, 13]),
        mov_imm(19, 3),
        ins(Op::IcmpGe, &[2, 17, 19]),
        structural(Op::Break, 2, false),
        Instruction::new(Op::Endloop),
        ins(Op::Imul, &[20, 4, 10]),
        ins(Op::DeviceStoreU32, &[20, 15]),
    ]);
    let k = kernel("barriers", &k);
    // Two and a half waves at every width.
    for w in WIDTHS {
        let d = Dispatch { wave_width: w, ..dispatch(3, w * 5 / 2) };
        check(&k, &d, 1 << 16);
    }
}

#[test]
fn out_of_bounds_errors_match() {
    // Device load past the end by some lanes; device store past the end; local load past the end.
    let cases: Vec<(&str, Vec<Instruction>)> = vec![
        (
            "dev_load",
            vec![
                mov_imm(10, 0xFFF0 - 40 * 4),
                mov_imm(11, 4),
                ins(Op::Imul, &[12, 4, 11]),
                ins(Op::Iadd, &[12, 12, 10]),
                ins(Op::DeviceLoadU64, &[20, 12]),
                ins(Op::DeviceStoreU32, &[12, 4]),
            ],
        ),
        (
            "dev_store",
            vec![
                mov_imm(10, 0xFFF0 - 40 * 4),
                mov_imm(11, 4),
                ins(Op::Imul, &[12, 4, 11]),
                ins(Op::Iadd, &[12, 12, 10]),
                ins(Op::DeviceStoreU32, &[12, 4]),
                ins(Op::DeviceStoreU64, &[12, 4]),
            ],
        ),
        (
            "local_load",
            vec![
                mov_imm(10, 16384 - 64),
                mov_imm(11, 4),
                ins(Op::Imul, &[12, 1, 11]),
                ins(Op::Iadd, &[12, 12, 10]),
                ins(Op::LocalStoreU8, &[12, 4]),
                ins(Op::LocalLoadU32, &[20, 12]),
            ],
        ),
        (
            "atomic",
            vec![
                mov_imm(10, 0xFFF0 - 40 * 4),
                mov_imm(11, 4),
                ins(Op::Imul, &[12, 4, 11]),
                ins(Op::Iadd, &[12, 12, 10]),
                ins(Op::AtomicAdd, &[20, 12, 4, 2]),
            ],
        ),
    ];
    for (name, body) in cases {
        let mut k = prologue();
        k.extend(body);
        let k = kernel(name, &k);
        for w in WIDTHS {
            let d = Dispatch { wave_width: w, ..dispatch(3, 48) };
            let (ra, rb, ma, mb) = run_both(&k, &d, 0x10000, 3);
            let (ea, eb) = (ra.expect_err("interpreter faults"), rb.expect_err("JIT faults"));
            assert!(matches!(ea.kind, RunErrorKind::OutOfBounds { .. }), "{name}: {ea}");
            assert_eq!(ea, eb, "{name} W={w}");
            assert!(ma == mb, "{name} W={w}: memory differs after the fault");
        }
    }
}

#[test]
fn runaway_loop_stops_at_the_instruction_limit() {
    let mut k = prologue();
    k.extend([Instruction::new(Op::Loop), ins(Op::Iadd, &[10, 10, 4]), Instruction::new(Op::Endloop)]);
    let k = kernel("runaway", &k);
    let d = Dispatch { max_instructions: 10_000, ..dispatch(1, 8) };
    let (ra, rb, _, _) = run_both(&k, &d, 4096, 1);
    assert!(matches!(ra.unwrap_err().kind, RunErrorKind::InstructionLimit { limit: 10_000 }));
    assert!(matches!(rb.unwrap_err().kind, RunErrorKind::InstructionLimit { limit: 10_000 }));
}

#[test]
fn threads_and_unchecked_give_the_same_memory() {
    let k = alu_kernel();
    let base = Dispatch { wave_width: 16, ..dispatch(6, 40) };
    let run = |d: &Dispatch| {
        let mut dev = wave_runtime::Device::new(1 << 20).unwrap();
        fill(dev.bytes_mut(), 11);
        wave_runtime::Engine::run(&wave_jit_codegen::JitEngine::strict(), &k, d, &mut dev).unwrap();
        dev.bytes().to_vec()
    };
    let one = run(&base);
    assert!(one == run(&Dispatch { threads: 2, ..base.clone() }), "2 threads differ");
    assert!(one == run(&Dispatch { unchecked: true, ..base.clone() }), "unchecked differs");
    let (ra, rb, ma, mb) = run_both(&k, &base, 1 << 20, 11);
    assert_eq!(ra, rb);
    assert_eq!(alu_difference(&ma, &mb, &data_ops()), None);
}

#[test]
fn mma_matches() {
    let mut k = prologue();
    k.extend([
        // every lane: A at local 0, B at local 64, stride 16; C accumulates (twice); store to
        // 256 + lane*64
        mov_imm(10, 0),
        mov_imm(11, 16),
        mov_imm(12, 64),
        mov_imm(13, 4),
        ins(Op::Imul, &[14, 1, 13]),
        ins(Op::DeviceLoadU32, &[15, 14]),
        ins(Op::LocalStoreU32, &[14, 15]),
        ins(Op::MmaLoadA, &[1, 10, 11]),
        ins(Op::MmaLoadB, &[2, 12, 11]),
        ins(Op::MmaCompute, &[1, 2, 3]),
        ins(Op::MmaCompute, &[1, 2, 3]),
        mov_imm(16, 64),
        ins(Op::Imul, &[17, 1, 16]),
        mov_imm(18, 256),
        ins(Op::Iadd, &[17, 17, 18]),
        ins(Op::MmaStoreC, &[17, 11, 3]),
        ins(Op::LocalLoadU32, &[19, 17]),
        mov_imm(20, 0x2000),
        ins(Op::Iadd, &[20, 20, 14]),
        ins(Op::DeviceStoreU32, &[20, 19]),
    ]);
    let k = kernel("mma", &k);
    check_all_widths(&k, &dispatch(1, 32), 1 << 16);
}

/// Loads and stores at `base + 4 × id`, which the JIT turns into whole-vector accesses:
/// in full and partial waves, after a partial `halt`, and under a divergent `if`.
#[test]
fn vector_accesses_match_under_divergence_and_halts() {
    let mut k = prologue();
    k.extend([
        mov_imm(7, 4),
        ins(Op::Imul, &[8, 4, 7]),
        ins(Op::DeviceLoadU32, &[9, 8]),
        mov_imm(16, 64),
        ins(Op::DeviceLoadU32, &[17, 16]),
        mov_imm(10, 3),
        ins(Op::Imod, &[11, 1, 10]),
        mov_imm(12, 0),
        ins(Op::IcmpEq, &[1, 11, 12]),
        structural(Op::If, 1, false),
        Instruction::new(Op::Halt),
        Instruction::new(Op::Endif),
        // Addresses computed after the halt: halted lanes keep stale ones.
        mov_imm(21, 0x100),
        ins(Op::Iadd, &[22, 8, 21]),
        ins(Op::DeviceLoadU32, &[13, 22]),
        ins(Op::Iadd, &[13, 13, 9]),
        ins(Op::Iadd, &[13, 13, 17]),
        mov_imm(14, 0x8000),
        ins(Op::Iadd, &[15, 8, 14]),
        mov_imm(18, 1),
        ins(Op::And, &[19, 1, 18]),
        ins(Op::IcmpEq, &[2, 19, 12]),
        structural(Op::If, 2, false),
        ins(Op::DeviceStoreU32, &[15, 13]),
        Instruction::new(Op::Else),
        ins(Op::DeviceStoreU32, &[15, 9]),
        ins(Op::Iadd, &[23, 8, 21]),
        ins(Op::Iadd, &[23, 23, 21]),
        ins(Op::DeviceLoadU32, &[24, 23]),
        ins(Op::DeviceStoreU32, &[15, 24]),
        Instruction::new(Op::Endif),
        ins(Op::LocalStoreU32, &[8, 13]),
        ins(Op::LocalLoadU32, &[20, 8]),
        mov_imm(14, 0x9000),
        ins(Op::Iadd, &[15, 8, 14]),
        ins(Op::DeviceStoreU32, &[15, 20]),
    ]);
    let k = kernel("vectors", &k);
    for threads in [32, 36, 64] {
        let mut d = dispatch(2, threads);
        d.local_memory = 1024;
        check_all_widths(&k, &d, 1 << 16);
    }
}

/// Assemble one kernel from source.
fn assembled(source: &str) -> wave_isa::ValidKernel {
    let file = wave_isa::asm::assemble(source, "test.wave").unwrap().file;
    wave_isa::module::Module::from_wbin(&file).unwrap().kernel("k").unwrap().clone()
}

type Outcome = Result<(), wave_runtime::RunError>;

/// Run both engines on a 64 KiB device whose first `count` words are `word(i)`; their
/// results and final memories.
fn run_both_on_words(
    k: &wave_isa::ValidKernel,
    d: &Dispatch,
    count: usize,
    word: impl Fn(usize) -> u32,
) -> (Outcome, Outcome, Vec<u8>, Vec<u8>) {
    use wave_runtime::Engine;
    let mut a = wave_runtime::Device::new(1 << 16).unwrap();
    for (i, bytes) in a.bytes_mut()[..4 * count].chunks_mut(4).enumerate() {
        bytes.copy_from_slice(&word(i).to_le_bytes());
    }
    let mut b = wave_runtime::Device::new(1 << 16).unwrap();
    b.bytes_mut().copy_from_slice(a.bytes());
    let ra = wave_runtime::Interpreter::new().run(k, d, &mut a).map(|_| ());
    let rb = wave_jit_codegen::JitEngine::strict().run(k, d, &mut b).map(|_| ());
    (ra, rb, a.bytes().to_vec(), b.bytes().to_vec())
}

/// Every workgroup starts with zeroed local memory. Each workgroup here reads its word of
/// local memory, then changes it (by a store, or by an atomic add): a workgroup that ran after
/// another on the same worker sees a non-zero word if the JIT skipped zeroing between them
/// (it does for kernels that cannot write local memory).
#[test]
fn local_memory_starts_zeroed_in_every_workgroup() {
    for write in ["local_store_u32 r4, r5", "local_atomic_add r6, r4, r5"] {
        let source = format!(
            r#"
.kernel k
.registers 16
.local_memory 256
    mov_sr r1, sr_thread_id_x
    mov_sr r2, sr_workgroup_id_x
    mov_sr r3, sr_workgroup_size_x
    mov_imm r7, 4
    imul r4, r1, r7
    local_load_u32 r8, r4
    mov_imm r5, 77
    {write}
    imad r9, r2, r3, r1
    imul r9, r9, r7
    device_store_u32 r9, r8
    halt
.end
"#
        );
        let k = assembled(&source);
        for w in WIDTHS {
            let d = Dispatch { wave_width: w, ..dispatch(6, 40) };
            let (ra, rb, a, b) = run_both_on_words(&k, &d, 0, |_| 0);
            assert_eq!(ra, rb, "{write}, W={w}");
            assert!(a == b, "{write}, W={w}: a workgroup saw local memory another one wrote");
        }
    }
}

/// A large kernel runs in the quick tier first and in the optimized one once it is ready;
/// both compute what the interpreter computes.
#[test]
fn both_tiers_match_interpreter() {
    let gemm = gemm_tiled();
    let code = wave_jit_codegen::compile(&gemm, gemm_flags(32)).unwrap();
    assert!(code.tiered(), "the tiled GEMM at W = 32 is compiled in two tiers");
    check_gemm(&gemm, 32);
    let optimized = code.wait_optimized().expect("the optimized tier compiles");
    assert!(optimized >= code.compile_time);
    check_gemm(&gemm, 32);
}

/// `compile_fresh` and `compile_first_tier` compile anew each time and leave the cache alone;
/// `compile_first_tier` keeps a large kernel in its quick tier (no background compile).
#[test]
fn fresh_compiles_bypass_the_cache() {
    let mut gemm = gemm_tiled().into_kernel();
    // A name no other test compiles, so that the cache holds nothing for it yet.
    gemm.meta.name = "gemm_tiled_compiled_fresh".into();
    let gemm = wave_isa::ValidKernel::new(gemm).unwrap();
    let flags = gemm_flags(32);
    let first = wave_jit_codegen::compile_first_tier(&gemm, flags).unwrap();
    assert!(first.tiered(), "the tiled GEMM at W = 32 starts in the quick tier");
    assert_eq!(first.tiers(), wave_jit_codegen::Tiers::QuickOnly("only the first tier was asked for".into()));
    let fresh = wave_jit_codegen::compile_fresh(&gemm, flags).unwrap();
    assert!(fresh.wait_optimized().expect("the optimized tier compiles") >= fresh.compile_time);
    let (cached, compiled_now) = wave_jit_codegen::engine::cache::compile_or_reuse(&gemm, flags).unwrap();
    assert!(compiled_now, "a fresh compile filled the cache");
    let (again, compiled_again) = wave_jit_codegen::engine::cache::compile_or_reuse(&gemm, flags).unwrap();
    assert!(!compiled_again && std::sync::Arc::ptr_eq(&cached, &again));
    assert!(!std::sync::Arc::ptr_eq(&fresh, &cached));
}

/// A bail-out runs the loop's wave-major function (compiled on first use) from the loop's
/// entry state, which the caller stores only where some later read can see it. `r5` holds a
/// NaN in some lanes, so vectors with such lanes bail out at the loop's end. `r6` is written
/// in the loop before any read and read after it: lanes that run no trip must keep its entry
/// value through the bail-out. `r8` is written the same way but dead after the loop, so its
/// entry value is never stored. In the second kernel a loop before it, bailing out too,
/// writes `r6` first: that loop's output then reaches the end only through the second loop's
/// entry state. Fails if the entry state or an output that is live is dropped, or if the
/// wave-major function's outputs or lane numbering are wrong.
#[test]
fn loop_function_keeps_live_entry_state() {
    let loop_before = r#"
    mov_imm r13, 3
    loop
        icmp_ge p0, r9, r13
        break p0
        iadd r6, r9, r13
        fadd r5, r5, r11
        iadd r9, r9, r12
    endloop
    mov_imm r9, 0"#;
    for before in ["", loop_before] {
        let source = format!(
            r#"
.kernel k
.registers 16
    mov_sr r1, sr_thread_id_x
    mov_imm r3, 4
    imul r4, r1, r3
    device_load_u32 r5, r4
    mov_imm r6, 7
    mov_imm r8, 9
    mov_imm r9, 0
    mov_imm r11, 0x3f800000
    mov_imm r12, 1{before}
    and r10, r1, r3          ; 0 or 4 trips, by lane
    loop
        icmp_ge p0, r9, r10
        break p0
        mov r6, r9
        mov r8, r9
        fadd r5, r5, r11
        iadd r9, r9, r12
    endloop
    mov_imm r13, 0x1000
    iadd r13, r13, r4
    device_store_u32 r13, r5
    mov_imm r13, 0x2000
    iadd r13, r13, r4
    device_store_u32 r13, r6
    halt
.end
"#
        );
        let k = assembled(&source);
        for w in WIDTHS {
            for threads in [64, 36] {
                let d = Dispatch { wave_width: w, ..dispatch(1, threads) };
                let nan_or_index =
                    |i: usize| if i % 5 == 2 { 0x7fc0_0000 | i as u32 } else { (i as f32).to_bits() };
                let (ra, rb, a, b) = run_both_on_words(&k, &d, 64, nan_or_index);
                assert_eq!(ra, rb, "W={w}, {threads} threads");
                let word = |m: &[u8], at: usize| u32::from_le_bytes(m[at..at + 4].try_into().unwrap());
                for lane in 0..threads as usize {
                    let kept = word(&b, 0x2000 + 4 * lane);
                    assert_eq!(word(&a, 0x2000 + 4 * lane), kept, "W={w}, lane {lane}: r6 after the loop");
                    assert_eq!(word(&a, 0x1000 + 4 * lane), word(&b, 0x1000 + 4 * lane), "W={w}: r5");
                }
            }
        }
    }
}

#[test]
fn chunk_major_loops_match() {
    let arithmetic = r#"
.kernel k
.registers 32
    mov_sr r1, sr_thread_id_x
    mov_sr r2, sr_lane_id
    mov_imm r3, 4
    imul r4, r1, r3          ; byte offset of this thread's word
    mov_imm r5, 0
    mov_imm r6, 0
    mov_imm r7, 3
    and r8, r1, r7
    iadd r8, r8, r3          ; trip count 4..7, varying per lane
    mov_imm r9, 0
    loop
        icmp_ge p0, r9, r8
        break p0
        device_load_u32 r10, r4
        iadd r11, r4, r3
        device_load_u32 r12, r11
        fma r5, r10, r12, r5
        fadd r6, r6, r10
        fmul r13, r12, r12
        fadd r6, r6, r13
        fma r24, r10, r12, r24   ; an accumulator another op reads
        fmul r25, r24, r10
        iadd r27, r11, r3
        device_load_u32 r26, r27
        iadd r27, r27, r3
        device_load_u32 r28, r27
        fmul r29, r26, r28       ; not an accumulator: tested every trip
        mov_sr r2, sr_lane_id
        mov_sr r22, sr_thread_id_x
        iadd r14, r2, r9
        imad r15, r14, r3, r15
        iadd r15, r15, r22
        iadd r4, r4, r3
        iadd r9, r9, r3
        mov_imm r16, 1
        isub r9, r9, r3
        iadd r9, r9, r16
    endloop
    mov_imm r17, 0x2000
    iadd r18, r17, r4
    device_store_u32 r18, r5
    iadd r18, r18, r17
    device_store_u32 r18, r6
    iadd r18, r18, r17
    device_store_u32 r18, r15
    iadd r18, r18, r17
    device_store_u32 r18, r24
    iadd r18, r18, r17
    device_store_u32 r18, r25
    iadd r18, r18, r17
    device_store_u32 r18, r29
    halt
.end
"#;
    let k = assembled(arithmetic);
    // With and without an instruction budget (the wave is charged its longest vector's trips).
    for (threads, max_instructions) in [(64, 0), (36, 0), (64, 10_000), (36, 10_000)] {
        let d = Dispatch { max_instructions, ..dispatch(1, threads) };
        check_all_widths(&k, &d, 1 << 16);
    }
    // A budget that runs out inside the loop: both engines stop with the limit error (the JIT
    // charges whole iterations, so it names the loop, not the exact instruction).
    for w in WIDTHS {
        let d = Dispatch { wave_width: w, max_instructions: 40, ..dispatch(1, 64) };
        let (ra, rb, ..) = run_both(&k, &d, 1 << 16, 3);
        for r in [&ra, &rb] {
            assert!(
                matches!(r, Err(e) if matches!(e.kind, RunErrorKind::InstructionLimit { limit: 40 })),
                "W={w}: {r:?}"
            );
        }
    }
    // NaNs in the inputs: 3 of every 7 words quiet or signalling NaNs with their own payloads.
    for w in WIDTHS {
        let d = Dispatch { wave_width: w, ..dispatch(1, 64) };
        let nans = |i: usize| match i % 7 {
            3 | 4 => 0x7fc0_0000 | i as u32,
            5 => 0xff80_0001 + i as u32,
            _ => (1.0f32 + i as f32 / 16.0).to_bits(),
        };
        let (ra, rb, a, b) = run_both_on_words(&k, &d, 0x100, nans);
        assert_eq!(ra, rb, "W={w}");
        assert!(a == b, "W={w}: memory differs with NaN inputs");
    }

    let fault = r#"
.kernel k
.registers 32
    mov_sr r1, sr_thread_id_x
    mov_imm r3, 4
    mov_imm r20, 0x10000     ; device memory size in this test
    mov_imm r21, 0x100
    mov_imm r9, 0
    mov_imm r7, 4
    icmp_lt p1, r1, r7       ; lanes 0..3
    ; lanes 0..3: first load walks 0xFF00, 0xFF80, 0x10000 (faults in iteration 2)
    ; others:     second load walks 0x100, 0x10000 (faults in iteration 1)
    mov_imm r10, 0xFF00
    mov_imm r11, 0x80
    mov_imm r12, 0x100
    mov_imm r13, 0xFF00
    select r14, p1, r10, r21
    select r15, p1, r21, r12
    select r16, p1, r11, r21
    select r17, p1, r21, r13
    loop
        device_load_u32 r18, r14
        device_load_u32 r19, r15
        iadd r14, r14, r16
        iadd r15, r15, r17
        iadd r9, r9, r3
        icmp_ge p0, r9, r20
        break p0
    endloop
    halt
.end
"#;
    let k = assembled(fault);
    for w in WIDTHS {
        let d = Dispatch { wave_width: w, ..dispatch(1, 64) };
        let (ra, rb, ..) = run_both(&k, &d, 1 << 16, 1);
        assert!(ra.is_err(), "W={w}: the interpreter should fault");
        assert_eq!(ra, rb, "W={w}: a different fault");
    }
}

/// Chunk-major loops with uniform control keep uniform and lane-affine values (addresses,
/// counters, constants, predicates) as scalars. Each register and predicate the loops touch is
/// stored afterwards, so a wrong scalar, a wrong stride when the vector is rebuilt, or a
/// vector state not written back at the loop's exit changes memory. Covered: a uniform `if`
/// writing an affine address on both sides, a nested uniform loop, a shadowed predicate read by
/// `select`, constants, and a register the loop writes (before any read) whose value on entry
/// is not uniform: in workgroup 0 that loop runs no trip, and the entry vector must survive. Full waves and a partial one (no shadows then).
#[test]
fn shadowed_loops_match() {
    let source = r#"
.kernel k
.registers 40
    mov_sr r1, sr_thread_id_x
    mov_imm r3, 4
    imul r4, r1, r3          ; this thread's word: lane-affine, stride 4
    mov_imm r5, 0
    mov_imm r9, 0
    mov_imm r10, 6
    mov_imm r12, 3
    mov_imm r18, 1
    and r11, r1, r12         ; varying; the second loop writes it before any use
    mov r16, r1
    loop
        icmp_ge p0, r9, r10
        break p0
        device_load_u32 r13, r4
        imul r14, r9, r3
        iadd r14, r14, r3
        device_load_u32 r15, r14
        fadd r5, r5, r13
        fadd r5, r5, r15
        icmp_lt p1, r9, r12
        if p1
            iadd r4, r4, r3
        else
            iadd r4, r4, r12
        endif
        select r17, p1, r14, r4
        iadd r16, r16, r17
        mov_imm r19, 7
        loop
            icmp_le p2, r19, r12
            break p2
            isub r19, r19, r18
            imad r20, r19, r3, r4
            xor r23, r20, r19
        endloop
        iadd r9, r9, r18
    endloop
    mov_imm r21, 0
    mov_sr r26, sr_workgroup_id_x   ; no trip in workgroup 0: r11 keeps its entry value
    loop
        icmp_ge p3, r21, r26
        break p3
        mov_imm r11, 9
        device_load_u32 r22, r4
        iadd r21, r21, r18
    endloop
    select r24, p1, r18, r21
    select r25, p2, r18, r21
    imul r2, r1, r3
    mov_imm r30, 0x4000
    iadd r2, r2, r30
    mov_imm r31, 0x100
    device_store_u32 r2, r4
    iadd r2, r2, r31
    device_store_u32 r2, r5
    iadd r2, r2, r31
    device_store_u32 r2, r9
    iadd r2, r2, r31
    device_store_u32 r2, r11
    iadd r2, r2, r31
    device_store_u32 r2, r14
    iadd r2, r2, r31
    device_store_u32 r2, r16
    iadd r2, r2, r31
    device_store_u32 r2, r17
    iadd r2, r2, r31
    device_store_u32 r2, r19
    iadd r2, r2, r31
    device_store_u32 r2, r20
    iadd r2, r2, r31
    device_store_u32 r2, r21
    iadd r2, r2, r31
    device_store_u32 r2, r22
    iadd r2, r2, r31
    device_store_u32 r2, r23
    iadd r2, r2, r31
    device_store_u32 r2, r24
    iadd r2, r2, r31
    device_store_u32 r2, r25
    halt
.end
"#;
    let k = assembled(source);
    for (grid, threads, max_instructions) in [(2, 64, 0), (1, 36, 0), (1, 64, 100_000)] {
        let d = Dispatch { max_instructions, ..dispatch(grid, threads) };
        check_all_widths(&k, &d, 1 << 16);
    }
}

/// Every op that chunk-major loops accept, inside such a loop (with a divergent trip count and
/// divergent guards), folded into running sums: a helper call there would trip the JIT's
/// debug assertion, a wrong per-vector view would change the sums.
#[test]
fn every_pure_vector_op_in_a_chunk_major_loop() {
    let ops: Vec<Op> =
        data_ops().into_iter().filter(|&op| wave_jit_codegen::translate::rules::is_native(op)).collect();
    assert!(ops.len() > 30, "{} ops", ops.len());
    let mut k = prologue();
    k.push(mov_imm(7, 32));
    k.push(ins(Op::Imul, &[5, 4, 7]));
    load_inputs(&mut k);
    // Trip count 0..3 by thread.
    k.push(mov_imm(7, 3));
    k.push(ins(Op::And, &[30, 1, 7]));
    k.push(mov_imm(31, 1));
    k.push(mov_imm(29, 0));
    k.push(Instruction::new(Op::Loop));
    k.push(ins(Op::IcmpLe, &[0, 30, 29]));
    k.push(structural(Op::Break, 0, false));
    for (n, &op) in ops.iter().enumerate() {
        k.push(data_instruction(op, n));
        k.push(ins(Op::Select, &[22, 2, 10, 11]));
        k.push(ins(Op::Xor, &[25, 25, 20]));
        k.push(ins(Op::Iadd, &[26, 26, 22]));
        k.push(ins(Op::Imul, &[26, 26, 31]));
    }
    k.push(ins(Op::Isub, &[30, 30, 31]));
    k.push(Instruction::new(Op::Endloop));
    k.push(mov_imm(7, 8));
    k.push(ins(Op::Imul, &[6, 4, 7]));
    k.push(mov_imm(7, 0x10000));
    k.push(ins(Op::Iadd, &[6, 6, 7]));
    k.push(ins(Op::DeviceStoreU32, &[6, 25]));
    k.push(ins(Op::Iadd, &[6, 6, 8]));
    k.push(ins(Op::DeviceStoreU32, &[6, 26]));
    let k = kernel("pure_ops_loop", &k);
    for max_instructions in [0, 1_000_000] {
        let d = Dispatch { max_instructions, ..dispatch(2, 64) };
        check_all_widths(&k, &d, 1 << 17);
    }
}

/// Local atomics run inline, lane after lane, with the identity for inactive lanes; the helper
/// takes over where a lane may fault. Every kind, contended (one word for all lanes) and
/// spread (a word per 3 lanes), with and without a returned value, under a divergent guard;
/// then an out-of-bounds lane after in-bounds ones.
#[test]
fn local_atomics_match() {
    let mut body = String::new();
    let kinds = ["add", "sub", "min", "max", "and", "or", "xor", "exchange"];
    for (i, kind) in kinds.iter().enumerate() {
        // r10 = contended word, r11 = spread word; r12 = value; returns into r20+i / r0.
        let ret = if i % 2 == 0 { format!("r{}", 20 + i) } else { "r0".to_string() };
        body.push_str(&format!("    local_atomic_{kind} {ret}, r10, r12\n"));
        body.push_str(&format!("    @p1 local_atomic_{kind} r{}, r11, r12\n", 30 + i));
        body.push_str("    iadd r12, r12, r13\n");
    }
    let source = format!(
        r#"
.kernel k
.registers 64
.local_memory 256
    mov_sr r1, sr_thread_id_x
    mov_imm r2, 3
    imul r12, r1, r2          ; values 0, 3, 6, ...
    mov_imm r13, 0x9e3779b9
    imul r14, r1, r13
    xor r12, r12, r14
    mov_imm r10, 8
    idiv r11, r1, r2
    mov_imm r2, 4
    imul r11, r11, r2
    iadd r11, r11, r2          ; 4 + 4 * (t / 3)
    and r15, r1, r2
    icmp_eq p1, r15, r2        ; lanes with bit 2 set
    local_atomic_cas r40, r10, r12, r13
{body}
    ; everything to device memory: local words, then the returned values
    mov_imm r16, 4
    imul r17, r1, r16
    local_load_u32 r18, r17
    device_store_u32 r17, r18
    mov_imm r19, 0x100
    iadd r17, r17, r19
    device_store_u32 r17, r20
    iadd r17, r17, r19
    device_store_u32 r17, r22
    iadd r17, r17, r19
    device_store_u32 r17, r24
    iadd r17, r17, r19
    device_store_u32 r17, r30
    iadd r17, r17, r19
    device_store_u32 r17, r33
    iadd r17, r17, r19
    device_store_u32 r17, r36
    iadd r17, r17, r19
    device_store_u32 r17, r40
    ; lanes 40.. go out of bounds after the others have added
    mov_imm r50, 40
    icmp_ge p2, r1, r50
    mov_imm r51, 0x1000
    select r52, p2, r51, r10
    local_atomic_add r53, r52, r12
    halt
.end
"#
    );
    let k = assembled(&source);
    for threads in [64, 36] {
        let d = Dispatch { local_memory: 256, ..dispatch(2, threads) };
        check_all_widths(&k, &d, 1 << 16);
    }
    let d = Dispatch { wave_width: 32, local_memory: 256, ..dispatch(1, 64) };
    let (ra, ..) = run_both(&k, &d, 1 << 16, 1);
    assert!(matches!(ra, Err(ref e) if matches!(e.kind, RunErrorKind::OutOfBounds { .. })), "{ra:?}");
}
