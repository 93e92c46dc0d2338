//! One failing kernel per validator rule, checking the rule, the offset and the message.

use wave_isa::instr::{Instruction, PredRef, STRUCT_PRED_NEGATE};
use wave_isa::ir::{build_kernel, Kernel, KernelMeta, MAX_CALL_DEPTH};
use wave_isa::opcodes::Op;
use wave_isa::validate::{validate, Rule, ValidationError};

fn inst(op: Op) -> Instruction {
    Instruction::new(op)
}

fn reg3(op: Op, rd: u8, rs1: u8, rs2: u8) -> Instruction {
    let mut i = inst(op);
    (i.rd, i.rs1, i.rs2) = (rd, rs1, rs2);
    i
}

fn with_pred(op: Op, rs1: u8) -> Instruction {
    let mut i = inst(op);
    i.rs1 = rs1;
    i
}

fn call(target: u32) -> Instruction {
    let mut i = inst(Op::Call);
    i.imm = target;
    i
}

fn kernel_with(registers: u32, insts: &[Instruction]) -> Kernel {
    let mut code = Vec::new();
    for i in insts {
        i.encode_into(&mut code);
    }
    let meta = KernelMeta { name: "k".into(), registers, ..Default::default() };
    build_kernel(meta, &code).expect("test kernels are well formed")
}

fn errors(insts: &[Instruction]) -> Vec<ValidationError> {
    validate(&kernel_with(32, insts)).expect_err("expected validation errors")
}

#[test]
fn valid_kernel_passes() {
    let k = kernel_with(
        32,
        &[
            reg3(Op::Iadd, 1, 2, 31),
            inst(Op::Loop),
            with_pred(Op::If, 1),
            with_pred(Op::Break, 2 | STRUCT_PRED_NEGATE),
            inst(Op::Endif),
            with_pred(Op::Continue, 3),
            inst(Op::Endloop),
            inst(Op::Halt),
        ],
    );
    assert_eq!(validate(&k).map(|info| info.max_nesting_depth), Ok(2));
}

#[test]
fn break_outside_loop() {
    let e = errors(&[with_pred(Op::If, 1), with_pred(Op::Break, 1), inst(Op::Endif)]);
    assert_eq!(e.len(), 1);
    assert_eq!((e[0].rule, e[0].offset), (Rule::BreakOutsideLoop, 4));
    assert_eq!(
        e[0].to_string(),
        "kernel `k` at byte 0x4: [break-outside-loop] `break` is not inside a `loop` of the same function"
    );
}

#[test]
fn continue_in_function_called_from_a_loop() {
    // The loop is in the caller: the callee's `continue` is still outside a loop.
    let e = errors(&[
        inst(Op::Loop),             // 0
        call(20),                   // 4
        inst(Op::Endloop),          // 12
        inst(Op::Halt),             // 16
        with_pred(Op::Continue, 1), // 20
        inst(Op::Return),           // 24
    ]);
    assert_eq!(e.len(), 1);
    assert_eq!((e[0].rule, e[0].offset), (Rule::BreakOutsideLoop, 20));
    assert!(e[0].message.starts_with("`continue`"));
}

#[test]
fn recursion_names_the_chain() {
    let e = errors(&[
        call(12),         // 0
        inst(Op::Halt),   // 8
        call(24),         // 12: f
        inst(Op::Return), // 20
        call(12),         // 24: g calls f again
        inst(Op::Return), // 32
    ]);
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!((e[0].rule, e[0].offset), (Rule::Recursion, 24));
    assert!(e[0].message.contains("0xc -> 0x18 -> 0xc"), "{}", e[0].message);
    assert!(e[0].message.contains("entry -> 0xc -> 0x18 -> 0xc"), "{}", e[0].message);
}

#[test]
fn self_recursion() {
    let e = errors(&[call(12), inst(Op::Halt), inst(Op::Nop), call(12), inst(Op::Return)]);
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].rule, Rule::Recursion);
    assert_eq!(e[0].offset, 16);
}

/// A chain of `depth` nested calls: entry calls f1, f1 calls f2, ...
fn call_chain(depth: u32) -> Vec<Instruction> {
    let mut insts = vec![call(12), inst(Op::Halt)];
    for i in 1..=depth {
        if i < depth {
            insts.push(call(12 + 12 * i));
        } else {
            insts.push(inst(Op::Nop));
            insts.push(inst(Op::Nop));
        }
        insts.push(inst(Op::Return));
    }
    insts
}

#[test]
fn call_depth_limit() {
    let info = validate(&kernel_with(32, &call_chain(MAX_CALL_DEPTH))).expect("valid");
    // The entry and one function per level, each calling the next.
    assert_eq!(info.functions, MAX_CALL_DEPTH + 1);
    assert!(info.call_graph[..MAX_CALL_DEPTH as usize].iter().all(|calls| calls.len() == 1));
    let e = errors(&call_chain(MAX_CALL_DEPTH + 1));
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!((e[0].rule, e[0].offset), (Rule::CallDepth, 0));
    assert!(e[0].message.starts_with("call chain entry -> 0xc -> 0x18"), "{}", e[0].message);
    assert!(e[0].message.ends_with("is 9 calls deep; the limit is 8"), "{}", e[0].message);
}

#[test]
fn predicated_control_is_unsupported() {
    let guard = Some(PredRef { index: 1, negated: false });
    let mut pif = with_pred(Op::If, 2);
    pif.guard = guard;
    let mut lp = inst(Op::Loop);
    lp.guard = guard;
    let mut brk = with_pred(Op::Break, 2);
    brk.guard = Some(PredRef { index: 0, negated: true });
    let mut c = call(28);
    c.guard = guard;
    let e = errors(&[
        pif,               // 0
        inst(Op::Endif),   // 4
        lp,                // 8
        brk,               // 12
        inst(Op::Endloop), // 16
        c,                 // 20
        inst(Op::Return),  // 28
    ]);
    let found: Vec<_> = e.iter().map(|e| (e.rule, e.offset)).collect();
    assert_eq!(
        found,
        [
            (Rule::PredicatedControl, 0),
            (Rule::PredicatedControl, 8),
            (Rule::PredicatedControl, 12),
            (Rule::PredicatedControl, 20)
        ]
    );
    assert!(e[0].message.starts_with("unsupported: predicated `if`"), "{}", e[0].message);
    assert!(e[2].message.starts_with("unsupported: predicated `break` (guard @!p0)"), "{}", e[2].message);
    assert!(e[3].message.starts_with("unsupported: predicated `call`"));
}

#[test]
fn registers_beyond_declared_count() {
    let mut load128 = inst(Op::DeviceLoadU128);
    (load128.rd, load128.rs1) = (29, 0);
    let mut dadd = inst(Op::Dadd);
    (dadd.rd, dadd.rs1, dadd.rs2) = (2, 4, 31);
    let mut atomic = inst(Op::AtomicAdd);
    (atomic.rs1, atomic.rs2) = (1, 2); // rd = 0: non-returning, no register
    let e = errors(&[reg3(Op::Iadd, 40, 1, 2), load128, dadd, atomic]);
    let found: Vec<_> = e.iter().map(|e| (e.rule, e.offset)).collect();
    assert_eq!(found, [(Rule::RegisterRange, 0), (Rule::RegisterRange, 8), (Rule::RegisterRange, 12)]);
    assert_eq!(
        e[0].to_string(),
        "kernel `k` at byte 0x0: [register-range] r40 used by `iadd` but the kernel declares 32 registers (.registers)"
    );
    assert!(e[1].message.starts_with("register quad r29..r32"), "{}", e[1].message);
    assert!(e[2].message.starts_with("register pair r31..r32"), "{}", e[2].message);
}

#[test]
fn registers_are_checked_against_small_counts_and_not_when_unset() {
    let code = [reg3(Op::Iadd, 7, 8, 1)];
    let e = validate(&kernel_with(8, &code)).unwrap_err();
    assert_eq!(e.len(), 1);
    assert!(e[0].message.starts_with("r8 used"), "{}", e[0].message);
    // `.registers 0` means "the runtime's value": checked at dispatch instead.
    assert_eq!(validate(&kernel_with(0, &code)).map(|info| info.registers_used), Ok(9));
}

#[test]
fn predicate_indices() {
    let cmp = reg3(Op::IcmpLt, 4, 1, 2);
    let mut select = reg3(Op::Select, 1, 9, 2);
    select.rs3 = 3;
    let e = errors(&[cmp, select, with_pred(Op::If, 5 | STRUCT_PRED_NEGATE), inst(Op::Endif)]);
    let found: Vec<_> = e.iter().map(|e| (e.rule, e.offset)).collect();
    assert_eq!(found, [(Rule::PredicateRange, 0), (Rule::PredicateRange, 8), (Rule::PredicateRange, 16)]);
    assert_eq!(e[0].message, "`icmp_lt` uses predicate p4; only p0..p3 exist");
    assert_eq!(e[2].message, "`if` uses predicate p5; only p0..p3 exist");
}

#[test]
fn special_register_index() {
    let mut m = inst(Op::MovSr);
    (m.rd, m.rs1) = (1, 20);
    let e = errors(&[m]);
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].rule, Rule::SpecialRegister);
    assert!(e[0].message.starts_with("special register index 20 does not exist"));
}

#[test]
fn all_errors_are_reported_in_offset_order() {
    let e = errors(&[reg3(Op::Iadd, 40, 41, 2), with_pred(Op::Break, 7)]);
    let found: Vec<_> = e.iter().map(|e| (e.rule, e.offset)).collect();
    // r40 and r41 each, then the break's two problems.
    assert_eq!(found.len(), 4, "{e:?}");
    assert!(found[..2].iter().all(|&(r, o)| r == Rule::RegisterRange && o == 0));
    assert!(found[2..].iter().all(|&(_, o)| o == 8));
}

#[test]
fn deep_nesting_is_valid() {
    let mut insts = Vec::new();
    for _ in 0..100 {
        insts.push(inst(Op::Loop));
        insts.push(with_pred(Op::If, 1));
    }
    insts.push(with_pred(Op::Break, 1));
    for _ in 0..100 {
        insts.push(inst(Op::Endif));
        insts.push(inst(Op::Endloop));
    }
    assert_eq!(validate(&kernel_with(32, &insts)).map(|info| info.max_nesting_depth), Ok(200));
}
