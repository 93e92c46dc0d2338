//! The checklist of `isa/README.md` ("Adding an instruction"), enforced: every opcode of the
//! table has a lane function (or is one of the named non-lane data ops), runs on the
//! interpreter and on the JIT, and is written by every GPU writer. A failure names the op and
//! the place to add it.

use wave_gpu_backends::ops::{lowering, Lowering};
use wave_gpu_backends::{write, EmitError, Options, Target};
use wave_isa::ir::{build_kernel, KernelMeta};
use wave_isa::opcodes::{Class, Kind, Op, OPS};
use wave_isa::{Instruction, ValidKernel};
use wave_jit::codegen::JitEngine;
use wave_jit::runtime::semantics::lane_fn;
use wave_jit::runtime::{Device, Dispatch, Engine, Interpreter};

/// Data ops that are not lane functions of their operands: each has its own code in the
/// interpreter, the JIT and the writers.
const NOT_LANE_OPS: &[Op] = &[Op::Select, Op::MovImm, Op::MovSr, Op::CvtF32F64, Op::CvtF64F32];

/// Classes whose ops are pure functions of a lane's registers.
fn is_lane_class(class: Class) -> bool {
    matches!(
        class,
        Class::Integer
            | Class::Float
            | Class::Half
            | Class::BFloat
            | Class::Double
            | Class::Bitwise
            | Class::Compare
            | Class::Select
            | Class::Convert
            | Class::Move
    )
}

/// `op` once, with operands that make it valid anywhere: registers spread apart (pairs and
/// quads do not overlap; all start at 0, so addresses are 0), predicate 1, a float immediate.
fn sample(op: Op) -> Instruction {
    let mut inst = Instruction::new(op);
    for (i, spec) in op.operands().iter().enumerate() {
        let v = match spec.kind {
            Kind::Reg | Kind::Pair | Kind::Quad => 4 + 4 * i as u32,
            Kind::Pred => 1,
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

fn kernel(inst: &Instruction) -> ValidKernel {
    let mut code = Vec::new();
    inst.encode_into(&mut code);
    let meta = KernelMeta { name: "one".into(), registers: 64, local_memory: 4096, workgroup_size: [0; 3] };
    let kernel = build_kernel(meta, &code).expect("a sample instruction builds");
    ValidKernel::new(kernel).expect("a sample instruction is valid")
}

#[test]
fn every_op_has_what_the_checklist_asks() {
    let mut missing = Vec::new();
    let mut checked = 0;
    for info in OPS {
        let op = info.op;
        if lowering(op) == Lowering::Statement {
            // Structure (if/loop/call/...), barriers and fences: the statement tree's kinds.
            continue;
        }
        let name = info.mnemonic;
        if is_lane_class(op.class()) && lane_fn(op).is_none() && !NOT_LANE_OPS.contains(&op) {
            missing.push(format!("`{name}`: no lane function (runtime/src/semantics.rs, `lane_ops!`)"));
        }
        let k = kernel(&sample(op));
        let dispatch = Dispatch { wave_width: 8, workgroup: [8, 1, 1], threads: 1, ..Dispatch::default() };
        let engines: [(&dyn Engine, &str); 2] = [
            (&Interpreter::new(), "no interpreter path (runtime/src/interp/exec.rs)"),
            (
                &JitEngine::strict(),
                "no JIT lowering or helper (jit/src/translate/alu.rs by class, jit/src/helpers.rs)",
            ),
        ];
        for (engine, place) in engines {
            let mut device = Device::new(1 << 16).unwrap();
            if let Err(e) = engine.run(&k, &dispatch, &mut device) {
                missing.push(format!("`{name}`: {place}: {e}"));
            }
        }
        for target in Target::ALL {
            match write(&k, target, &Options::default()) {
                Ok(_) => {}
                // Metal has no f64: a clear refusal is the implementation.
                Err(EmitError::UnsupportedOp { what, .. }) if target == Target::Metal && what == "f64" => {}
                Err(e) => missing.push(format!(
                    "`{name}`: no {target} writer implementation (gpu-backends/src/ops.rs, clike.rs or ptx.rs): {e}"
                )),
            }
        }
        checked += 1;
    }
    assert!(missing.is_empty(), "the checklist of isa/README.md is not complete:\n{}", missing.join("\n"));
    assert!(checked > 120, "only {checked} ops checked");
}
