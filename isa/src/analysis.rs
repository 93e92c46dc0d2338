//! Analyses over a kernel tree: summary facts ([`KernelInfo`], which the validator returns),
//! the call graph
//! ([`call_graph`]), the size of the code with every call inlined ([`inlined_instructions`])
//! and, for the JIT, uniformity and lane-affine values ([`uniformity`]).

pub mod cost;
pub mod induction;
mod uniformity;

pub use uniformity::{uniformity, uniformity_with, StmtUniformity, Uniformity, UniformityOptions, Value};

use crate::ir::{walk_block, FuncId, Kernel, StmtKind, MAX_CALL_DEPTH};
use crate::opcodes::{Class, Kind, Op};
use std::collections::BTreeSet;

/// Summary facts about one kernel, learned by [`crate::validate::validate`]: for `info`,
/// the runtime, the JIT and the writers (through [`crate::validate::ValidKernel::info`]).
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
    pub uses_loops: bool,
    pub uses_atomics: bool,
    /// Local stores, local atomics or `mma_store_c`: whether the kernel may write local
    /// memory (otherwise it reads zeros only).
    pub writes_local_memory: bool,
    pub uses_wave_ops: bool,
    /// Half or bfloat16 arithmetic, or a conversion to/from f16/bf16.
    pub uses_f16_bf16: bool,
    /// Double arithmetic, or a conversion to/from f64.
    pub uses_f64: bool,
    pub uses_mma: bool,
    pub uses_calls: bool,
    /// Number of functions (the entry plus distinct call targets).
    pub functions: u32,
    /// Instructions once every call is inlined ([`inlined_instructions`]): what the JIT and
    /// the GPU writers turn into code.
    pub inlined_instructions: u64,
    /// The call graph ([`call_graph`]): acyclic and at most [`MAX_CALL_DEPTH`] deep.
    pub call_graph: Vec<Vec<CallSite>>,
}

/// Compute [`KernelInfo`] (the validator does, once its rules hold). Instruction facts come
/// from the opcode table.
pub(crate) fn kernel_info(kernel: &Kernel, call_graph: Vec<Vec<CallSite>>) -> KernelInfo {
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
        uses_loops: false,
        uses_atomics: false,
        writes_local_memory: false,
        uses_wave_ops: false,
        uses_f16_bf16: false,
        uses_f64: false,
        uses_mma: false,
        uses_calls: false,
        functions: kernel.funcs.len() as u32,
        inlined_instructions: inlined_instructions_in(kernel, &call_graph),
        call_graph,
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
                info.uses_loops = true;
                offsets.insert(*end_offset);
            }
            StmtKind::Barrier => info.uses_barriers = true,
            StmtKind::Call { .. } => info.uses_calls = true,
            StmtKind::Op(inst) => {
                info.writes_local_memory |= matches!(inst.op.class(), Class::LocalStore | Class::LocalAtomic)
                    || inst.op == Op::MmaStoreC;
                match inst.op.class() {
                    Class::LocalAtomic | Class::DeviceAtomic => info.uses_atomics = true,
                    Class::Wave => info.uses_wave_ops = true,
                    Class::Mma => info.uses_mma = true,
                    _ => {}
                }
                info.uses_f16_bf16 |= inst.op.uses_f16_bf16();
                info.uses_f64 |= inst.op.uses_f64();
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

/// Instructions of the kernel once every call is inlined, as the JIT and the GPU writers
/// inline them: each `call` is replaced by a copy of its callee (calls in a callee are copied
/// in turn), up to [`MAX_CALL_DEPTH`] calls deep, where a call stays one instruction (it
/// fails when it runs). Structural markers count as in [`KernelInfo::instruction_count`]
/// (`if`, `else`, `endif`, `loop`, `endloop`; not the builder's implicit `halt`), so a kernel
/// without calls has its instruction count here. Each call costs one instruction besides
/// its callee's copy.
///
/// Calls can make this exponential in the kernel's size (eight functions each calling the
/// next four times: 91 instructions, 174,766 once inlined), which is why the engines and
/// writers check it before generating code. Computed per (function, call depth), bottom up,
/// in saturating arithmetic: linear in the kernel's size whatever the result, recursion
/// included.
pub fn inlined_instructions(kernel: &Kernel) -> u64 {
    // Most kernels have no calls: no graph to make.
    let graph = if kernel.funcs.len() > 1 { call_graph(kernel) } else { Vec::new() };
    inlined_instructions_in(kernel, &graph)
}

/// [`inlined_instructions`] with the kernel's call graph already made (ignored, and may be
/// empty, for a kernel of one function).
fn inlined_instructions_in(kernel: &Kernel, graph: &[Vec<CallSite>]) -> u64 {
    // A function's own instructions, its calls not expanded.
    let own_size = |func: &crate::ir::Function| {
        let mut count = 0u64;
        walk_block(&func.body, 0, &mut |stmt, _| {
            count += match &stmt.kind {
                StmtKind::Halt { implicit: true } => 0,
                StmtKind::If { else_offset, .. } => 2 + u64::from(else_offset.is_some()),
                StmtKind::Loop { .. } => 2,
                _ => 1,
            };
        });
        count
    };
    // Most kernels have no calls: one walk.
    if let [entry] = kernel.funcs.as_slice() {
        return own_size(entry);
    }
    let own: Vec<u64> = kernel.funcs.iter().map(own_size).collect();
    // sizes[f]: function f's size when its body is inlined at call depth `depth` (the number
    // of calls open around it), filled from the deepest level up.
    let mut sizes = own.clone();
    for _depth in (0..MAX_CALL_DEPTH).rev() {
        // At depth d a call expands into its callee at depth d + 1 (the previous level);
        // at MAX_CALL_DEPTH (the first level, `own`) calls are not expanded.
        sizes = graph
            .iter()
            .zip(&own)
            .map(|(calls, &own)| {
                calls.iter().fold(own, |total, site| {
                    total.saturating_add(sizes.get(site.callee).copied().unwrap_or(0))
                })
            })
            .collect();
    }
    sizes.first().copied().unwrap_or(0)
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
.kernel stores
    local_store_u32 r1, r2
    cvt_bf16_f32 r3, r4
.end
";
        let (module, _) = load_bytes(source.as_bytes(), "k.wave").unwrap_or_else(|e| panic!("{e}"));
        let info = module.kernels[0].info();
        assert_eq!((info.registers, info.local_memory, info.registers_used), (40, 64, 32));
        // mov_sr, loop, if, dadd, endif, break, endloop, call, halt; f: 4 more.
        assert_eq!(info.instruction_count, 13);
        assert_eq!(info.max_nesting_depth, 2);
        assert_eq!(info.functions, 2);
        assert!(info.uses_f64 && info.uses_f16_bf16 && info.uses_atomics && info.uses_barriers);
        assert!(info.uses_calls && info.uses_loops && !info.uses_wave_ops && !info.uses_mma);
        // A device atomic writes no local memory.
        assert!(!info.writes_local_memory);
        let plain = module.kernels[1].info();
        assert_eq!((plain.instruction_count, plain.max_nesting_depth, plain.registers_used), (1, 0, 4));
        assert!(!plain.uses_f64 && !plain.uses_calls && !plain.uses_barriers && !plain.uses_atomics);
        assert!(!plain.uses_loops && !plain.writes_local_memory && !plain.uses_f16_bf16);
        let stores = module.kernels[2].info();
        assert!(stores.writes_local_memory && stores.uses_f16_bf16 && !stores.uses_f64);
        assert_eq!(info.call_graph, [vec![CallSite { offset: 32, callee: 1 }], vec![]]);
        assert_eq!(call_graph(&module.kernels[0]), info.call_graph);
    }

    /// A chain of `levels` functions below the entry, each calling the next `fan` times,
    /// with three instructions of its own before the calls.
    fn fan_source(levels: usize, fan: usize) -> String {
        let mut s = String::from(".kernel fan\n    mov_imm r6, 0\n    call f1\n    halt\n");
        for level in 1..=levels {
            s += &format!("f{level}:\n    mov_imm r10, 1\n    iadd r6, r6, r10\n    nop\n");
            if level < levels {
                for _ in 0..fan {
                    s += &format!("    call f{}\n", level + 1);
                }
            }
            s += "    return\n";
        }
        s + ".end\n"
    }

    /// The tree of a source's first kernel, not validated (deep or recursive calls).
    fn unvalidated(source: &str) -> Kernel {
        let assembled = crate::asm::assemble_unchecked(source, "k.wave").unwrap_or_else(|e| panic!("{e}"));
        let k = &assembled.file.kernels[0];
        crate::ir::build_kernel(k.meta.clone(), &k.code).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn inlined_instructions_expand_every_call() {
        let (module, _) =
            load_bytes(fan_source(8, 4).as_bytes(), "fan.wave").unwrap_or_else(|e| panic!("{e}"));
        let kernel = &module.kernels[0];
        // The entry: 3 instructions. Level 8: 4 (3 + return); level k < 8: 8 (3 + 4 calls +
        // return) plus 4 copies of level k + 1.
        let mut level = 4u64;
        for _ in 1..8 {
            level = 8 + 4 * level;
        }
        let info = kernel.info();
        assert_eq!(inlined_instructions(kernel), 3 + level);
        assert_eq!((info.inlined_instructions, info.instruction_count), (3 + level, 3 + 7 * 8 + 4));
        // Without calls: the instruction count (markers included).
        let plain = "
.kernel k
    loop
        if p1
            iadd r1, r1, r1
        else
            nop
        endif
        break p1
    endloop
.end
";
        let (module, _) = load_bytes(plain.as_bytes(), "k.wave").unwrap_or_else(|e| panic!("{e}"));
        let info = module.kernels[0].info();
        assert_eq!((info.inlined_instructions, info.instruction_count), (8, 8));
    }

    #[test]
    fn inlined_instructions_stop_at_the_call_depth_limit_and_saturate() {
        // Ten levels: levels 1..=8 are copied (5 instructions each: 3, a call, a return);
        // the call in level 8 is not expanded (it fails when it runs).
        assert_eq!(inlined_instructions(&unvalidated(&fan_source(10, 1))), 3 + 8 * 5);
        // Recursion (rejected by the validator) is bounded by the same depth: `f` at depth k
        // is 3 + 2 copies of `f` at depth k + 1, and 3 at depth 8: 3 (2^(9-k) - 1).
        let recursive = ".kernel r\n    call f\n    halt\nf:\n    call f\n    call f\n    return\n.end\n";
        assert_eq!(inlined_instructions(&unvalidated(recursive)), 2 + 3 * ((1 << 8) - 1));
        // 300 calls per level, 9 levels: 300^8 copies of the last level overflow u64.
        assert_eq!(inlined_instructions(&unvalidated(&fan_source(9, 300))), u64::MAX);
    }
}
