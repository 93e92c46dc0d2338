//! Kernels built from encoded instructions, for the writer tests.
#![allow(dead_code)]

use wave_isa::instr::{Instruction, PredRef};
use wave_isa::ir::{build_kernel, KernelMeta};
use wave_isa::opcodes::{Kind, Op, OPS};
use wave_isa::ValidKernel;

pub fn encode(insts: &[Instruction]) -> Vec<u8> {
    let mut out = Vec::new();
    for i in insts {
        i.encode_into(&mut out);
    }
    out
}

pub fn kernel(name: &str, insts: &[Instruction]) -> ValidKernel {
    let meta = KernelMeta { name: name.into(), registers: 64, local_memory: 4096, workgroup_size: [0; 3] };
    let kernel = build_kernel(meta, &encode(insts)).expect("test kernel builds");
    ValidKernel::new(kernel).unwrap_or_else(|e| panic!("test kernel {name} is invalid: {e:?}"))
}

/// One instance of `op` with distinct operands (registers spaced so pairs/quads do not overlap).
pub fn sample(op: Op) -> Instruction {
    let mut inst = Instruction::new(op);
    for (i, spec) in op.operands().iter().enumerate() {
        let v = match spec.kind {
            Kind::Reg | Kind::Pair | Kind::Quad => 4 + 4 * i as u32,
            Kind::Pred => 1 + (i as u32 % 3),
            Kind::Scope => 2,
            Kind::Imm => 0x3F80_0000,
            Kind::Target => 0,
            Kind::Fragment(_) => 1 + i as u32,
            Kind::Special => 4,
        };
        inst.set_slot(spec.slot, v);
    }
    inst
}

/// Every non-structural op, once, the odd ones guarded by `@p1`.
pub fn every_op_kernel(include_f64: bool) -> ValidKernel {
    let mut insts = Vec::new();
    for (k, info) in OPS.iter().enumerate() {
        if info.op.is_structural() || matches!(info.op, Op::Call | Op::Return | Op::Halt) {
            continue;
        }
        if !include_f64 && info.op.uses_f64() {
            continue;
        }
        let mut inst = sample(info.op);
        if k % 2 == 1 {
            inst.guard = Some(PredRef { index: 1, negated: false });
        }
        insts.push(inst);
    }
    kernel("every_op", &insts)
}

fn ins(op: Op, rd: u8, rs1: u8, rs2: u8) -> Instruction {
    let mut i = Instruction::new(op);
    i.rd = rd;
    i.rs1 = rs1;
    i.rs2 = rs2;
    i
}

fn imm(rd: u8, v: u32) -> Instruction {
    let mut i = Instruction::new(Op::MovImm);
    i.rd = rd;
    i.imm = v;
    i
}

fn pred_op(op: Op, p: u8, negated: bool) -> Instruction {
    let mut i = Instruction::new(op);
    i.rs1 = p | if negated { 0x80 } else { 0 };
    i
}

/// Structured control flow of every kind: nested if/else, loop with break and continue
/// inside ifs, a call with a guarded return, a guarded halt, a barrier in a partial if.
pub fn control_kernel() -> ValidKernel {
    let mut call = Instruction::new(Op::Call);
    let mut insts = vec![
        ins(Op::MovSr, 1, 4, 0),  // r1 = lane
        imm(2, 0),                // r2 = 0 (counter)
        imm(3, 3),                // r3 = 3
        ins(Op::IcmpLt, 1, 1, 3), // p1 = lane < 3
        pred_op(Op::If, 1, false),
        ins(Op::Iadd, 2, 2, 3),
        Instruction::new(Op::Barrier),
        Instruction::new(Op::Else),
        ins(Op::Isub, 2, 2, 3),
        Instruction::new(Op::Endif),
        Instruction::new(Op::Loop),
        ins(Op::Iadd, 2, 2, 3),
        ins(Op::UcmpLt, 2, 1, 2), // p2 = lane < r2
        pred_op(Op::If, 2, false),
        pred_op(Op::Break, 2, false),
        Instruction::new(Op::Endif),
        pred_op(Op::Continue, 1, true),
        ins(Op::Iadd, 2, 2, 2),
        Instruction::new(Op::Endloop),
    ];
    let call_at = insts.len();
    insts.push(call);
    insts.push(ins(Op::DeviceStoreU32, 0, 1, 2));
    let mut halt = Instruction::new(Op::Halt);
    halt.guard = Some(PredRef { index: 1, negated: false });
    insts.push(halt);
    insts.push(ins(Op::WaveReduceAdd, 5, 2, 0));
    insts.push(Instruction::new(Op::Halt));
    let func_at: u32 = insts.iter().map(|i| i.size()).sum();
    let mut ret = Instruction::new(Op::Return);
    ret.guard = Some(PredRef { index: 2, negated: true });
    insts.push(ins(Op::Imul, 2, 2, 3));
    insts.push(ret);
    insts.push(ins(Op::Iadd, 2, 2, 1));
    insts.push(Instruction::new(Op::Return));
    call.imm = func_at;
    insts[call_at] = call;
    kernel("control", &insts)
}
