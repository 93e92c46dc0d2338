//! Shared test support: build kernels from instructions, run them on the interpreter and the
//! JIT, compare device memory bit for bit.
#![allow(dead_code)]

use wave_difftest::gen::GenConfig;
use wave_isa::ir::build_kernel;
use wave_isa::opcodes::{Class, Kind, Role, OPS};
use wave_isa::{Instruction, KernelMeta, Op, PredRef, SpecialReg, ValidKernel};
use wave_jit_codegen::JitEngine;
use wave_runtime::{Device, Dispatch, Engine, Interpreter, RunError};

/// Every wave width the engines support.
pub const WIDTHS: [u32; 5] = [4, 8, 16, 32, 64];

/// `config` for random programs run on the JIT: they stay under its size limit, and lane-local
/// loops are made of the ops it lowers to vector code (what its chunk-major loops admit). The
/// twin of `wave_jit::jit_fuzz_config`, which this crate's tests cannot reach (the root
/// package depends on this one).
pub fn for_jit(config: GenConfig) -> GenConfig {
    GenConfig {
        instruction_limit: Some(wave_jit_codegen::compiler::instruction_limit),
        favoured_ops: Some(wave_jit_codegen::translate::rules::is_native),
        ..config
    }
}

/// An instruction with its operands in assembly order (registers, predicates, immediates...).
pub fn ins(op: Op, vals: &[u32]) -> Instruction {
    let mut i = Instruction::new(op);
    for (spec, &v) in op.operands().iter().zip(vals) {
        i.set_slot(spec.slot, v);
    }
    i
}

/// `@pN` / `@!pN` on an instruction.
pub fn guarded(mut i: Instruction, p: u8, negated: bool) -> Instruction {
    i.guard = Some(PredRef { index: p, negated });
    i
}

/// `if`/`break`/`continue` on `pN` (negated: `!pN`).
pub fn structural(op: Op, p: u8, negated: bool) -> Instruction {
    let mut i = Instruction::new(op);
    i.rs1 = p | if negated { 0x80 } else { 0 };
    i
}

pub fn mov_imm(rd: u32, v: u32) -> Instruction {
    ins(Op::MovImm, &[rd, v])
}

pub fn mov_sr(rd: u32, sr: wave_isa::SpecialReg) -> Instruction {
    ins(Op::MovSr, &[rd, sr as u32])
}

/// Encode instructions, build the kernel tree and validate it.
pub fn kernel(name: &str, insts: &[Instruction]) -> ValidKernel {
    let mut code = Vec::new();
    for i in insts {
        i.encode_into(&mut code);
    }
    let meta = KernelMeta { name: name.into(), registers: 64, local_memory: 0, workgroup_size: [0; 3] };
    let kernel = build_kernel(meta, &code).expect("test kernel builds");
    ValidKernel::new(kernel).unwrap_or_else(|e| panic!("test kernel {name} is invalid: {e:?}"))
}

/// The first kernel of assembly `source` (`name` for its errors).
pub fn assembled(source: &str, name: &str) -> ValidKernel {
    let (module, _) = wave_isa::module::load_bytes(source.as_bytes(), name).unwrap_or_else(|e| panic!("{e}"));
    module.kernels[0].clone()
}

/// Byte offset of instruction `index` in `insts` (for call targets).
pub fn offset_of(insts: &[Instruction], index: usize) -> u32 {
    insts[..index].iter().map(|i| i.size()).sum()
}

/// A deterministic pseudo-random fill with special float and integer values mixed in.
pub fn fill(bytes: &mut [u8], seed: u64) {
    const SPECIAL: [u32; 16] = [
        0,
        0x8000_0000,
        0x7F80_0000,
        0xFF80_0000,
        0x7FC0_0000,
        0x7FA0_0001,
        0x0000_0001,
        0x3F80_0000,
        0xBF80_0000,
        0x4000_0000,
        0x3F00_0000,
        0x7FFF_FFFF,
        0xFFFF_FFFF,
        0x0000_001F,
        0x4020_0000,
        0xC020_0000,
    ];
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for chunk in bytes.chunks_mut(4) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let v = if s.is_multiple_of(4) { SPECIAL[(s >> 8) as usize % 16] } else { (s >> 16) as u32 };
        let b = v.to_le_bytes();
        let n = chunk.len();
        chunk.copy_from_slice(&b[..n]);
    }
}

/// Interpreter result, JIT result, interpreter memory, JIT memory.
pub type BothRuns = (Result<(), RunError>, Result<(), RunError>, Vec<u8>, Vec<u8>);

/// Run `kernel` on both engines from the same initial memory; return both results.
pub fn run_both(kernel: &ValidKernel, dispatch: &Dispatch, device_size: u64, seed: u64) -> BothRuns {
    let mut a = Device::new(device_size).unwrap();
    fill(a.bytes_mut(), seed);
    let mut b = Device::new(device_size).unwrap();
    b.bytes_mut().copy_from_slice(a.bytes());
    let ra = Interpreter::new().run(kernel, dispatch, &mut a).map(|_| ());
    let rb = JitEngine::strict().run(kernel, dispatch, &mut b).map(|_| ());
    (ra, rb, a.bytes().to_vec(), b.bytes().to_vec())
}

/// Two workgroups of `threads` threads in a row, with these initial registers, on `workers`
/// workers, checked or not.
pub fn two_workgroups(
    w: u32,
    threads: u32,
    registers: Vec<(u8, u32)>,
    workers: usize,
    unchecked: bool,
) -> Dispatch {
    Dispatch {
        wave_width: w,
        grid: [2, 1, 1],
        workgroup: [threads, 1, 1],
        initial_registers: registers,
        threads: workers,
        unchecked,
        ..Dispatch::default()
    }
}

/// Threads per workgroup that make two full waves of `w` lanes, and one and a half (a partial
/// last wave).
pub fn full_and_partial_waves(w: u32) -> [u32; 2] {
    [2 * w, w + w / 2 + 1]
}

/// Both engines succeed (or fail identically) and leave identical memory, at every width.
pub fn check_all_widths(kernel: &ValidKernel, base: &Dispatch, device_size: u64) {
    for w in WIDTHS {
        let d = Dispatch { wave_width: w, ..base.clone() };
        check(kernel, &d, device_size);
    }
}

pub fn check(kernel: &ValidKernel, d: &Dispatch, device_size: u64) {
    let both = run_both(kernel, d, device_size, 7 + d.wave_width as u64);
    assert_same(kernel, d, both);
}

/// [`check`], where the run must also reach its end (no fault, no limit) on the interpreter.
pub fn check_completes(kernel: &ValidKernel, d: &Dispatch, device_size: u64) {
    let both = run_both(kernel, d, device_size, 7 + d.wave_width as u64);
    assert_eq!(both.0, Ok(()), "kernel {} W={}: the interpreter's run", kernel.meta.name, d.wave_width);
    assert_same(kernel, d, both);
}

/// Instruction limits from a quarter to twice what one workgroup of `d` counts on the
/// interpreter: both engines pass and fail at the same limits,
/// stop in the same workgroup and wave (the JIT names the pc where it settles its count, not
/// the statement's, so the pc is not compared), and leave the same memory where they pass.
/// Some limits must pass and some fail.
pub fn check_limits(kernel: &ValidKernel, d: &Dispatch, device_size: u64) {
    let stop = |r: &Result<(), RunError>| {
        r.as_ref().err().map(|e| (format!("{:?}", std::mem::discriminant(&e.kind)), e.workgroup, e.wave))
    };
    let w = d.wave_width;
    let full = Interpreter::new().run(kernel, d, &mut Device::new(device_size).unwrap());
    let workgroups: u64 = d.grid.iter().map(|&g| g as u64).product();
    let per_workgroup = full.unwrap().stats.instructions / workgroups;
    let (mut passed, mut failed) = (0, 0);
    for limit in (per_workgroup / 4..=2 * per_workgroup).step_by(1 + per_workgroup as usize / 64) {
        let d = Dispatch { max_instructions: limit, ..d.clone() };
        let (interpreter, jit, ma, mb) = run_both(kernel, &d, device_size, 3);
        assert_eq!(stop(&interpreter), stop(&jit), "W={w} limit {limit}");
        if interpreter.is_ok() {
            passed += 1;
            assert!(ma == mb, "W={w} limit {limit}: memory differs");
        } else {
            failed += 1;
        }
    }
    assert!(passed > 0 && failed > 0, "W={w}: {passed} limits passed, {failed} failed");
}

/// Both engines' results and memories are the same.
fn assert_same(kernel: &ValidKernel, d: &Dispatch, (ra, rb, ma, mb): BothRuns) {
    assert_eq!(ra, rb, "kernel {} W={}: results differ", kernel.meta.name, d.wave_width);
    if let Some(i) = (0..ma.len()).find(|&i| ma[i] != mb[i]) {
        let w = i & !3;
        panic!(
            "kernel {} W={}: memory differs first at byte 0x{i:x}: interpreter {:08x}, JIT {:08x}",
            kernel.meta.name,
            d.wave_width,
            u32::from_le_bytes(ma[w..w + 4].try_into().unwrap()),
            u32::from_le_bytes(mb[w..w + 4].try_into().unwrap()),
        );
    }
}

/// The bundled tiled GEMM kernel (`benches/kernels/gemm_tiled.wave`): large enough at W = 32
/// for the JIT to compile it in two tiers.
pub fn gemm_tiled() -> ValidKernel {
    let source = include_str!("../../../benches/kernels/gemm_tiled.wave");
    let file = wave_isa::asm::assemble(source, "gemm_tiled.wave").unwrap().file;
    wave_isa::module::Module::from_wbin(&file).unwrap().kernel("gemm_tiled").unwrap().clone()
}

/// The flags of a checked dispatch without a budget at `width`, with workgroups of
/// `workgroup` threads.
pub fn checked_flags(width: u32, workgroup: [u32; 3]) -> wave_jit_codegen::Flags {
    wave_jit_codegen::Flags {
        width,
        checked: true,
        fuel: false,
        stats: false,
        workgroup,
        window_wraps: false,
    }
}

/// The flags `JitEngine` compiles [`gemm_tiled`] with in [`check_gemm`].
pub fn gemm_flags(width: u32) -> wave_jit_codegen::Flags {
    checked_flags(width, [16, 16, 1])
}

/// [`gemm_tiled`] for N = 64 (one workgroup) at width `w` on both engines: finite inputs
/// (the per-vector loops run to their end), then random bits (NaNs: bail-outs). Fails on any
/// difference in results or memory.
pub fn check_gemm(kernel: &ValidKernel, w: u32) {
    const N: u32 = 64;
    let bytes = N * N * 4;
    let d = Dispatch {
        grid: [1, 1, 1],
        workgroup: [16, 16, 1],
        wave_width: w,
        registers: 64,
        local_memory: 8192,
        initial_registers: vec![(1, 0), (2, bytes), (3, 2 * bytes), (4, N)],
        // No budget: the flags are then `gemm_flags`.
        max_instructions: 0,
        threads: 1,
        ..Dispatch::default()
    };
    let mut a = Device::new(4 * bytes as u64).unwrap();
    for (i, word) in a.bytes_mut()[..2 * bytes as usize].chunks_mut(4).enumerate() {
        word.copy_from_slice(&((i * 37 % 101) as f32 / 16.0 - 3.0).to_bits().to_le_bytes());
    }
    let mut b = Device::new(4 * bytes as u64).unwrap();
    b.bytes_mut().copy_from_slice(a.bytes());
    let ra = Interpreter::new().run(kernel, &d, &mut a).map(|_| ());
    let rb = JitEngine::strict().run(kernel, &d, &mut b).map(|_| ());
    assert_eq!(ra, rb, "gemm W={w}");
    assert!(a.bytes() == b.bytes(), "gemm W={w}: memory differs");
    check(kernel, &d, 4 * bytes as u64);
}

/// r4 = global thread id (x), r1 = thread id, r2 = workgroup id, r3 = workgroup size.
pub fn prologue() -> Vec<Instruction> {
    vec![
        mov_sr(1, SpecialReg::ThreadIdX),
        mov_sr(2, SpecialReg::WorkgroupIdX),
        mov_sr(3, SpecialReg::WorkgroupSizeX),
        ins(Op::Imad, &[4, 2, 3, 1]),
    ]
}

/// Data ops whose operands are registers (and predicates) only.
pub fn data_ops() -> Vec<Op> {
    OPS.iter()
        .filter(|i| {
            matches!(
                i.class,
                Class::Integer
                    | Class::Float
                    | Class::Half
                    | Class::BFloat
                    | Class::Double
                    | Class::Bitwise
                    | Class::Compare
                    | Class::Select
                    | Class::Convert
            ) || i.op == Op::Mov
        })
        .map(|i| i.op)
        .collect()
}

/// r10..r17 = the 8 words at r5 (r5 advances past them, r8 = 4); p1 and p3 from comparing
/// them: divergent guards for the data ops.
pub fn load_inputs(k: &mut Vec<Instruction>) {
    k.push(mov_imm(8, 4));
    for j in 0..8u32 {
        k.push(ins(Op::DeviceLoadU32, &[10 + j, 5]));
        k.push(ins(Op::Iadd, &[5, 5, 8]));
    }
    k.push(ins(Op::IcmpLt, &[1, 10, 11]));
    k.push(ins(Op::UcmpLt, &[3, 12, 13]));
}

/// `op` writing r20 (and r21 for pairs) or p2, reading r10, r12, ... and p3; every odd one
/// (by `n`) under `@p1` or `@!p1`.
pub fn data_instruction(op: Op, n: usize) -> Instruction {
    let mut vals = Vec::new();
    let mut next_src = 10;
    for spec in op.operands() {
        vals.push(match (spec.role, spec.kind) {
            (Role::Def, Kind::Pred) => 2,
            (Role::Def, _) => 20,
            (Role::Use, Kind::Pred) => 3,
            (Role::Use, _) => {
                let r = next_src;
                next_src += 2;
                r
            }
        });
    }
    let i = ins(op, &vals);
    if n % 2 == 1 {
        guarded(i, 1, n % 4 == 3)
    } else {
        i
    }
}

/// Every data op on loaded (special-value-rich) inputs; odd ops run under `@p1`, a divergent
/// predicate. Results stored per thread and op.
pub fn alu_kernel() -> ValidKernel {
    let ops = data_ops();
    let mut k = prologue();
    // r5 = gid * 32 (input), r6 = 0x10000 + gid * ops * 8 (output)
    k.push(mov_imm(7, 32));
    k.push(ins(Op::Imul, &[5, 4, 7]));
    k.push(mov_imm(7, ops.len() as u32 * 12));
    k.push(ins(Op::Imul, &[6, 4, 7]));
    k.push(mov_imm(7, 0x10000));
    k.push(ins(Op::Iadd, &[6, 6, 7]));
    load_inputs(&mut k);
    for (n, &op) in ops.iter().enumerate() {
        k.push(data_instruction(op, n));
        // Predicate results become values.
        k.push(ins(Op::Select, &[22, 2, 10, 11]));
        k.push(ins(Op::DeviceStoreU32, &[6, 20]));
        k.push(ins(Op::Iadd, &[6, 6, 8]));
        k.push(ins(Op::DeviceStoreU32, &[6, 21]));
        k.push(ins(Op::Iadd, &[6, 6, 8]));
        k.push(ins(Op::DeviceStoreU32, &[6, 22]));
        k.push(ins(Op::Iadd, &[6, 6, 8]));
    }
    kernel("alu", &k)
}

/// The first difference in the ALU kernel's output, naming the op.
pub fn alu_difference(ma: &[u8], mb: &[u8], ops: &[Op]) -> Option<String> {
    let word = |m: &[u8], i: usize| u32::from_le_bytes(m[i..i + 4].try_into().unwrap());
    (0..ma.len()).step_by(4).find_map(|i| {
        let (a, b) = (word(ma, i), word(mb, i));
        if a == b {
            return None;
        }
        let op = (i >= 0x10000).then(|| ops[(i - 0x10000) / 12 % ops.len()]);
        Some(format!("{:?} differs at 0x{i:x}: interpreter {a:08x}, JIT {b:08x}", op.map(Op::mnemonic)))
    })
}
