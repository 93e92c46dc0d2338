//! A summary of the lowering decisions the translator makes for a kernel, for snapshot tests
//! (`jit/tests/lowering.rs` pins a few kernels' summaries): a change that silently loses a
//! fast path (a coherent copy, vector accesses, native float ops, chunk-major loops) shows up
//! as a diff of these counts, as wasmtime's disassembly tests show one in machine code.
//!
//! The counts are of the CLIF handed to Cranelift (after dead block parameters are removed),
//! split between hot blocks and cold ones (fault, NaN and bail-out paths).

use crate::compiler::translate_entry;
use crate::error::JitError;
use crate::translate::{Analyses, Flags};
use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::{types, Function, Inst, InstructionData, Opcode, Value};
use std::collections::BTreeMap;
use std::fmt::Write;
use wave_isa::ValidKernel;

/// What the counts name: each CLIF instruction falls in at most one group. `ctxs`: the wave's
/// context and the one the function was called with (the first wave's, which holds the
/// workgroup's fields: see `Translator::load_workgroup_field`).
fn group(func: &Function, inst: Inst, ctxs: [Value; 2]) -> Option<&'static str> {
    let dfg = &func.dfg;
    let vector = |v| dfg.value_type(v).is_vector();
    let ctx = ctxs[0];
    let base = dfg.inst_args(inst).first();
    let from_ctx = base == Some(&ctx);
    let from_first_wave = base == Some(&ctxs[1]);
    Some(match dfg.insts[inst].opcode() {
        Opcode::Blendv | Opcode::Bitselect | Opcode::Select => "masked writes (blendv, bitselect, select)",
        Opcode::CallIndirect | Opcode::Call => "helper calls",
        Opcode::Load if from_ctx => "context and scratch loads",
        Opcode::Load if from_first_wave => "workgroup fields from the first wave's context",
        Opcode::Store if matches!(dfg.insts[inst], InstructionData::Store { args, .. } if args[1] == ctx) => {
            "context and scratch stores"
        }
        Opcode::Load if vector(dfg.first_result(inst)) => "vector loads",
        Opcode::Load | Opcode::Uload8 | Opcode::Uload16 => "scalar loads",
        Opcode::Store if matches!(dfg.insts[inst], InstructionData::Store { args, .. } if vector(args[0])) => {
            "vector stores"
        }
        Opcode::Store | Opcode::Istore8 | Opcode::Istore16 => "scalar stores",
        Opcode::Extractlane => "lane extracts",
        Opcode::Insertlane => "lane inserts",
        Opcode::VallTrue | Opcode::VanyTrue | Opcode::VhighBits => "mask tests",
        Opcode::Fcmp
            if matches!(dfg.insts[inst], InstructionData::FloatCompare { cond: FloatCC::Unordered, .. }) =>
        {
            "NaN tests"
        }
        Opcode::Fadd | Opcode::Fsub | Opcode::Fmul | Opcode::Fdiv | Opcode::Fma | Opcode::Sqrt
            if dfg.value_type(dfg.first_result(inst)) == types::F32X4 =>
        {
            "native f32x4 arithmetic"
        }
        Opcode::Brif | Opcode::Jump | Opcode::BrTable | Opcode::Return => "branches",
        _ => return None,
    })
}

/// The context the waves' code reads: the first parameter of the block the entry block jumps
/// to (each wave of the workgroup starts there with its own context).
fn wave_context(func: &Function) -> Option<Value> {
    let entry = func.layout.entry_block()?;
    let jump = func.layout.last_inst(entry)?;
    let targets = func.dfg.insts[jump].branch_destination(&func.dfg.jump_tables, &func.dfg.exception_tables);
    let wave_start = targets.first()?.block(&func.dfg.value_lists);
    func.dfg.block_params(wave_start).first().copied()
}

/// The summary of `kernel`'s entry function for `flags`, one count a line.
pub fn lowering_summary(kernel: &ValidKernel, flags: Flags) -> Result<String, JitError> {
    let analyses = Analyses::new(kernel, flags);
    let crate::compiler::Entry { mut func, loop_fns, .. } = translate_entry(kernel, flags, &analyses)?;
    crate::dead_params::remove_dead_block_params(&mut func);
    let ctx = wave_context(&func).ok_or_else(|| JitError::Codegen("no entry block".into()))?;
    let entry = func.layout.entry_block().ok_or_else(|| JitError::Codegen("no entry block".into()))?;
    let ctxs = [ctx, func.dfg.block_params(entry)[0]];
    // (cold, group) -> count
    let mut counts: BTreeMap<(bool, &str), usize> = BTreeMap::new();
    let (mut blocks, mut cold_blocks, mut most_params) = (0, 0, 0);
    for block in func.layout.blocks() {
        let cold = func.layout.is_cold(block);
        blocks += 1;
        // Values live across a loop's header that the loop never changes are parameters of
        // it until Cranelift drops them, and stay live ranges for its register allocator.
        most_params = most_params.max(func.dfg.num_block_params(block));
        cold_blocks += cold as usize;
        for inst in func.layout.block_insts(block) {
            *counts.entry((cold, "instructions")).or_default() += 1;
            if let Some(g) = group(&func, inst, ctxs) {
                *counts.entry((cold, g)).or_default() += 1;
            }
        }
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "kernel {} W={} {}: {blocks} blocks ({cold_blocks} cold), {} loop functions",
        kernel.meta.name,
        flags.width,
        if flags.checked { "checked" } else { "unchecked" },
        loop_fns.len()
    );
    for ((cold, what), n) in counts {
        let _ = writeln!(out, "{} {what}: {n}", if cold { "cold" } else { "hot " });
    }
    let _ = writeln!(out, "most parameters of a block: {most_params}");
    Ok(out)
}
