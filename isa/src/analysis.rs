//! Analyses over a kernel tree: summary facts ([`kernel_info`]), the call graph
//! ([`call_graph`]) and, for the JIT, uniformity and lane-affine values ([`uniformity`]).

pub mod cost;
mod uniformity;

pub use uniformity::{uniformity, uniformity_with, StmtUniformity, Uniformity, UniformityOptions, Value};

use crate::ir::{walk_block, FuncId, Kernel, StmtKind};
use crate::opcodes::{Class, Kind};
use std::collections::BTreeSet;

/// Summary facts about one kernel, for `check`, statistics, the runtime and the writers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelInfo {
    pub name: String,
    /// Declared register count (`.registers`; 0 = the runtime's value).
    pub registers: u32,
    /// One more than the highest register any operand touches (pairs and quads included);
    /// 0 when no register is used. The runtime checks it against the resolved count.
    pub registers_used: u32,
    pub local_memory: u32,
    pub workgroup_size: [u32; 3],
    /// Distinct instructions reachable from the entry (structural markers included, the
    /// builder's implicit `halt` not).
    pub instruction_count: u32,
    /// Deepest if/loop nesting (0 = straight-line code).
    pub max_nesting_depth: u32,
    pub uses_barriers: bool,
    pub uses_atomics: bool,
    pub uses_wave_ops: bool,
    /// Half or bfloat16 arithmetic, or a conversion to/from f16/bf16.
    pub uses_f16_bf16: bool,
    /// Double arithmetic, or a conversion to/from f64.
    pub uses_f64: bool,
    pub uses_mma: bool,
    pub uses_calls: bool,
    /// Number of functions (the entry plus distinct call targets).
    pub functions: u32,
}

/// Compute [`KernelInfo`]. Instruction facts come from the opcode table's classes.
pub fn kernel_info(kernel: &Kernel) -> KernelInfo {
    let meta = &kernel.meta;
    let mut info = KernelInfo {
        name: meta.name.clone(),
        registers: meta.registers,
        registers_used: 0,
        local_memory: meta.local_memory,
        workgroup_size: meta.workgroup_size,
        instruction_count: 0,
        max_nesting_depth: 0,
        uses_barriers: false,
        uses_atomics: false,
        uses_wave_ops: false,
        uses_f16_bf16: false,
        uses_f64: false,
        uses_mma: false,
        uses_calls: false,
        functions: kernel.funcs.len() as u32,
    };
    // Functions may share code (a call into the middle of the entry), so count offsets.
    let mut offsets = BTreeSet::new();
    kernel.walk(&mut |_, stmt, depth| {
        let nesting = depth + u32::from(matches!(stmt.kind, StmtKind::If { .. } | StmtKind::Loop { .. }));
        info.max_nesting_depth = info.max_nesting_depth.max(nesting);
        match &stmt.kind {
            StmtKind::Halt { implicit: true } => return,
            StmtKind::If { else_offset, end_offset, .. } => {
                offsets.extend(*else_offset);
                offsets.insert(*end_offset);
            }
            StmtKind::Loop { end_offset, .. } => {
                offsets.insert(*end_offset);
            }
            StmtKind::Barrier => info.uses_barriers = true,
            StmtKind::Call { .. } => info.uses_calls = true,
            StmtKind::Op(inst) => {
                let mnemonic = inst.op.mnemonic();
                let converts = |ty: &str| {
                    inst.op.class() == Class::Convert && mnemonic.split('_').any(|part| part == ty)
                };
                match inst.op.class() {
                    Class::LocalAtomic | Class::DeviceAtomic => info.uses_atomics = true,
                    Class::Wave => info.uses_wave_ops = true,
                    Class::Half | Class::BFloat => info.uses_f16_bf16 = true,
                    Class::Double => info.uses_f64 = true,
                    Class::Mma => info.uses_mma = true,
                    _ => {}
                }
                info.uses_f16_bf16 |= converts("f16") || converts("bf16");
                info.uses_f64 |= converts("f64");
                for (spec, _) in inst.operands() {
                    let span = spec.kind.register_span();
                    let value = inst.slot_value(spec.slot);
                    let names_register = span > 0 && !(spec.optional && value == 0);
                    if names_register && !matches!(spec.kind, Kind::Fragment(_)) {
                        info.registers_used = info.registers_used.max(value + span);
                    }
                }
            }
            _ => {}
        }
        offsets.insert(stmt.offset);
    });
    info.instruction_count = offsets.len() as u32;
    info
}

/// One `call` statement: where it is and which function it reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallSite {
    /// Byte offset of the `call` instruction.
    pub offset: u32,
    pub callee: FuncId,
}

/// The call graph: for each function (indexed by [`FuncId`]), its calls in code order.
pub fn call_graph(kernel: &Kernel) -> Vec<Vec<CallSite>> {
    kernel
        .funcs
        .iter()
        .map(|func| {
            let mut calls = Vec::new();
            walk_block(&func.body, 0, &mut |stmt, _| {
                if let StmtKind::Call { func: callee, .. } = stmt.kind {
                    calls.push(CallSite { offset: stmt.offset, callee });
                }
            });
            calls
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::module::load_bytes;

    #[test]
    fn kernel_info_facts() {
        let source = "
.kernel k
.registers 40
.local_memory 64
    mov_sr r1, sr_lane_id
    loop
        if p1
            dadd r30, r2, r4
        endif
        break p1
    endloop
    call f
    halt
f:
    cvt_f16_f32 r3, r1
    atomic_add r1, r2, .device
    barrier
    return
.end
.kernel plain
    iadd r1, r2, r3
.end
";
        let (module, _) = load_bytes(source.as_bytes(), "k.wave").unwrap_or_else(|e| panic!("{e}"));
        let info = kernel_info(&module.kernels[0]);
        assert_eq!((info.registers, info.local_memory, info.registers_used), (40, 64, 32));
        // mov_sr, loop, if, dadd, endif, break, endloop, call, halt; f: 4 more.
        assert_eq!(info.instruction_count, 13);
        assert_eq!(info.max_nesting_depth, 2);
        assert_eq!(info.functions, 2);
        assert!(info.uses_f64 && info.uses_f16_bf16 && info.uses_atomics && info.uses_barriers);
        assert!(info.uses_calls && !info.uses_wave_ops && !info.uses_mma);
        let plain = kernel_info(&module.kernels[1]);
        assert_eq!((plain.instruction_count, plain.max_nesting_depth, plain.registers_used), (1, 0, 4));
        assert!(!plain.uses_f64 && !plain.uses_calls && !plain.uses_barriers && !plain.uses_atomics);
        assert_eq!(call_graph(&module.kernels[0]), [vec![CallSite { offset: 32, callee: 1 }], vec![]]);
    }
}
