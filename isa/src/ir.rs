//! The structured IR: each kernel decoded once into a statement tree (naga style).
//!
//! Every engine and writer consumes this tree; nobody decodes instruction words again.
//!
//! # Execution semantics of the tree (shared by the interpreter, the JIT and the writers)
//!
//! Each wave has a `live` mask (lanes that exist and have not halted) and an `exec` mask
//! (lanes executing now). Statements run in order whatever the mask (an empty mask still
//! walks bodies, so barriers inside them are reached), except where noted.
//! - `Op`: runs on `exec ∧ guard`; writes only those lanes.
//! - `If { pred }`: then-body on `exec ∧ pred`, else-body on `exec ∧ ¬pred`; afterwards `exec`
//!   is the entry mask minus lanes that broke, continued, returned or halted inside.
//! - `Loop`: the body repeats while any lane of (entry mask − broken − returned − halted)
//!   remains; continuing lanes rejoin at the next iteration; after the loop, exec = entry
//!   mask − returned − halted. A loop entered with an empty mask runs its body once.
//! - `Break { pred }` / `Continue { pred }`: lanes `exec ∧ pred` leave `exec` until the loop
//!   exits / until the next iteration (GPU semantics, semantics.md B.9, B.10).
//! - `Call`: runs the function with the current `exec`; on return, exec = the mask at the
//!   call − lanes halted inside.
//! - `Return`: lanes `exec ∧ guard` leave `exec` until the end of the current call; in the
//!   entry function it is a `Halt`.
//! - `Halt`: lanes `exec ∧ guard` leave `live` for good (B.11). When `live` is empty the wave
//!   ends at once. The builder appends an implicit `Halt` at the end of the code (B.17).
//! - `Barrier`: if a guard is present and no lane of `exec ∧ guard` is set, skipped;
//!   otherwise the whole wave waits until every wave of the workgroup that has not ended has
//!   arrived (ended waves count as arrived, B.16).
//! - `Fence`, `Wait`, `Nop`: no effect on the CPU engines (memory is synchronous).
//!
//! Guards on `If`, `Loop`, `Break`, `Continue` and `Call` are rejected by the validator, and on
//! `else`, `endif` and `endloop` (which have no statement of their own) by the builder.

use crate::encoding::Encoding;
use crate::instr::{DecodeError, Instruction, PredRef, StateRef};
use crate::opcodes::{Op, Role, Scope};
use std::collections::HashMap;
use std::fmt;

/// Deepest nesting of if/loop the builder accepts (the spec's minimum is 32; we promise 64).
pub const MAX_NESTING: u32 = 256;
/// Deepest chain of calls (spec capability MAX_CALL_DEPTH).
pub const MAX_CALL_DEPTH: u32 = 8;

/// Metadata of one kernel, as stored in the `.wbin` metadata table.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct KernelMeta {
    pub name: String,
    /// Declared register count (`.registers`; 32 when absent).
    pub registers: u32,
    /// Local memory bytes (`.local_memory`; 0 = runtime default).
    pub local_memory: u32,
    /// `.workgroup_size` (0,0,0 = runtime value).
    pub workgroup_size: [u32; 3],
}

/// Index of a function in [`Kernel::funcs`]; 0 is the entry.
pub type FuncId = usize;

/// One kernel as a tree.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    pub meta: KernelMeta,
    /// `funcs[0]` is the entry (byte 0); the others are `call` targets.
    pub funcs: Vec<Function>,
    /// Bytes of code of this kernel.
    pub code_size: u32,
}

/// A function: the code reached from one entry offset.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    /// Byte offset of its first instruction, relative to the kernel's code.
    pub offset: u32,
    pub body: Block,
}

pub type Block = Vec<Stmt>;

/// One statement, with the byte offset of the instruction it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub offset: u32,
    /// `@pN` / `@!pN` on the instruction (for `Op`, the same as `inst.guard`).
    pub guard: Option<PredRef>,
    pub kind: StmtKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// A data, memory, atomic, wave or MMA operation.
    Op(Instruction),
    If {
        pred: PredRef,
        then_body: Block,
        else_body: Block,
        /// Offset of `else`, if written.
        else_offset: Option<u32>,
        /// Offset of `endif`.
        end_offset: u32,
    },
    Loop {
        body: Block,
        /// Offset of `endloop`.
        end_offset: u32,
    },
    Break {
        pred: PredRef,
    },
    Continue {
        pred: PredRef,
    },
    Call {
        func: FuncId,
        /// Byte offset of the target relative to the kernel.
        target: u32,
    },
    Return,
    /// `implicit` when added by the builder at the end of the code.
    Halt {
        implicit: bool,
    },
    Barrier,
    /// `op` is one of `FenceAcquire`, `FenceRelease`, `FenceAcqRel`.
    Fence {
        op: Op,
        scope: Scope,
    },
    Wait,
    Nop,
}

/// Why a kernel's code does not form a tree.
#[derive(Clone, Debug, PartialEq)]
pub struct BuildError {
    pub kernel: String,
    pub offset: u32,
    pub kind: BuildErrorKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum BuildErrorKind {
    Decode(DecodeError),
    /// The code size is not a multiple of 4.
    Misaligned {
        code_size: u32,
    },
    ElseWithoutIf,
    EndifWithoutIf,
    EndloopWithoutLoop,
    DuplicateElse,
    UnclosedIf,
    UnclosedLoop,
    TooDeep {
        limit: u32,
    },
    CallTargetOutside {
        target: u32,
        code_size: u32,
    },
    CallTargetNotInstruction {
        target: u32,
    },
    /// A guard on `else`, `endif` or `endloop`, which only close a block.
    PredicatedMarker {
        op: Op,
        guard: PredRef,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "kernel `{}` at byte 0x{:x}: {}", self.kernel, self.offset, self.kind)
    }
}

impl fmt::Display for BuildErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildErrorKind::Decode(e) => write!(f, "{e}"),
            BuildErrorKind::Misaligned { code_size } => {
                write!(f, "code size {code_size} is not a multiple of 4")
            }
            BuildErrorKind::ElseWithoutIf => write!(f, "`else` without an open `if`"),
            BuildErrorKind::EndifWithoutIf => write!(f, "`endif` without an open `if`"),
            BuildErrorKind::EndloopWithoutLoop => write!(f, "`endloop` without an open `loop`"),
            BuildErrorKind::DuplicateElse => write!(f, "second `else` for the same `if`"),
            BuildErrorKind::UnclosedIf => write!(f, "`if` is never closed by `endif`"),
            BuildErrorKind::UnclosedLoop => write!(f, "`loop` is never closed by `endloop`"),
            BuildErrorKind::TooDeep { limit } => {
                write!(f, "if/loop nesting deeper than {limit} levels")
            }
            BuildErrorKind::CallTargetOutside { target, code_size } => {
                write!(f, "call target 0x{target:x} is outside the kernel's {code_size} bytes of code")
            }
            BuildErrorKind::CallTargetNotInstruction { target } => {
                write!(f, "call target 0x{target:x} is not the start of an instruction")
            }
            BuildErrorKind::PredicatedMarker { op, guard } => {
                write!(
                    f,
                    "unsupported: predicated `{}` (guard @{guard}); it only closes a block",
                    op.mnemonic()
                )
            }
        }
    }
}

impl std::error::Error for BuildError {}

/// Decode all instructions of one kernel's code (current encoding): `(offset, instruction)`
/// in order.
pub fn decode_code(kernel: &str, code: &[u8]) -> Result<Vec<(u32, Instruction)>, BuildError> {
    decode_code_in(kernel, code, Encoding::Current)
}

/// Decode all instructions of one kernel's code in `encoding`: `(offset, instruction)` in
/// order, offsets in that encoding's bytes.
pub fn decode_code_in(
    kernel: &str,
    code: &[u8],
    encoding: Encoding,
) -> Result<Vec<(u32, Instruction)>, BuildError> {
    let err = |offset: u32, kind| BuildError { kernel: kernel.to_string(), offset, kind };
    if !code.len().is_multiple_of(4) {
        return Err(err(0, BuildErrorKind::Misaligned { code_size: code.len() as u32 }));
    }
    let mut out = Vec::with_capacity(code.len() / 4);
    let mut pos = 0usize;
    while pos < code.len() {
        let (inst, size) =
            encoding.decode(&code[pos..]).map_err(|e| err(pos as u32, BuildErrorKind::Decode(e)))?;
        out.push((pos as u32, inst));
        pos += size as usize;
    }
    Ok(out)
}

/// Decode a kernel's code (current encoding) and build its statement tree.
pub fn build_kernel(meta: KernelMeta, code: &[u8]) -> Result<Kernel, BuildError> {
    build_kernel_in(meta, code, Encoding::Current)
}

/// Decode a kernel's code in `encoding` and build its statement tree. Nothing in the tree
/// says which encoding it came from; offsets are those of `code`.
pub fn build_kernel_in(meta: KernelMeta, code: &[u8], encoding: Encoding) -> Result<Kernel, BuildError> {
    let insts = decode_code_in(&meta.name, code, encoding)?;
    let code_size = code.len() as u32;
    let mut builder = Builder {
        kernel: &meta.name,
        insts: &insts,
        code_size,
        index_of: insts.iter().enumerate().map(|(i, (off, _))| (*off, i)).collect(),
        func_of_target: HashMap::from([(0, 0)]),
        targets: vec![0],
        pending: vec![0],
    };
    let mut bodies: Vec<Block> = Vec::new();
    while let Some(id) = builder.pending.pop() {
        let mut pos = builder.index_of.get(&builder.targets[id]).copied().unwrap_or(insts.len());
        let (body, _) = builder.block(&mut pos, 0, Ctx::Function)?;
        if bodies.len() <= id {
            bodies.resize(id + 1, Vec::new());
        }
        bodies[id] = body;
    }
    let funcs = builder.targets.iter().zip(bodies).map(|(&offset, body)| Function { offset, body }).collect();
    Ok(Kernel { meta, funcs, code_size })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Function,
    Then,
    Else,
    Loop,
}

/// How a block ended.
enum End {
    /// End of code, or an unguarded top-level `return`/`halt`.
    Function,
    Else(u32),
    Endif(u32),
    Endloop(u32),
}

struct Builder<'a> {
    kernel: &'a str,
    insts: &'a [(u32, Instruction)],
    code_size: u32,
    index_of: HashMap<u32, usize>,
    func_of_target: HashMap<u32, FuncId>,
    /// Entry offset of each function, indexed by FuncId.
    targets: Vec<u32>,
    pending: Vec<FuncId>,
}

impl Builder<'_> {
    fn err(&self, offset: u32, kind: BuildErrorKind) -> BuildError {
        BuildError { kernel: self.kernel.to_string(), offset, kind }
    }

    fn block(&mut self, pos: &mut usize, depth: u32, ctx: Ctx) -> Result<(Block, End), BuildError> {
        let mut block = Vec::new();
        loop {
            let Some(&(offset, inst)) = self.insts.get(*pos) else {
                if ctx == Ctx::Function {
                    block.push(Stmt {
                        offset: self.code_size,
                        guard: None,
                        kind: StmtKind::Halt { implicit: true },
                    });
                }
                return Ok((block, End::Function));
            };
            *pos += 1;
            let guard = inst.guard;
            if let (Op::Else | Op::Endif | Op::Endloop, Some(guard)) = (inst.op, guard) {
                return Err(self.err(offset, BuildErrorKind::PredicatedMarker { op: inst.op, guard }));
            }
            let kind = match inst.op {
                Op::If => {
                    if depth + 1 > MAX_NESTING {
                        return Err(self.err(offset, BuildErrorKind::TooDeep { limit: MAX_NESTING }));
                    }
                    let (then_body, end) = self.block(pos, depth + 1, Ctx::Then)?;
                    let (else_body, else_offset, end) = match end {
                        End::Else(else_off) => {
                            let (else_body, end) = self.block(pos, depth + 1, Ctx::Else)?;
                            (else_body, Some(else_off), end)
                        }
                        other => (Vec::new(), None, other),
                    };
                    let end_offset = match end {
                        End::Endif(o) => o,
                        _ => return Err(self.err(offset, BuildErrorKind::UnclosedIf)),
                    };
                    StmtKind::If { pred: inst.struct_pred(), then_body, else_body, else_offset, end_offset }
                }
                Op::Loop => {
                    if depth + 1 > MAX_NESTING {
                        return Err(self.err(offset, BuildErrorKind::TooDeep { limit: MAX_NESTING }));
                    }
                    let (body, end) = self.block(pos, depth + 1, Ctx::Loop)?;
                    match end {
                        End::Endloop(end_offset) => StmtKind::Loop { body, end_offset },
                        _ => return Err(self.err(offset, BuildErrorKind::UnclosedLoop)),
                    }
                }
                Op::Else => match ctx {
                    Ctx::Then => return Ok((block, End::Else(offset))),
                    Ctx::Else => return Err(self.err(offset, BuildErrorKind::DuplicateElse)),
                    _ => return Err(self.err(offset, BuildErrorKind::ElseWithoutIf)),
                },
                Op::Endif => match ctx {
                    Ctx::Then | Ctx::Else => return Ok((block, End::Endif(offset))),
                    _ => return Err(self.err(offset, BuildErrorKind::EndifWithoutIf)),
                },
                Op::Endloop => match ctx {
                    Ctx::Loop => return Ok((block, End::Endloop(offset))),
                    _ => return Err(self.err(offset, BuildErrorKind::EndloopWithoutLoop)),
                },
                Op::Break => StmtKind::Break { pred: inst.struct_pred() },
                Op::Continue => StmtKind::Continue { pred: inst.struct_pred() },
                Op::Call => StmtKind::Call { func: self.func_for(offset, inst.imm)?, target: inst.imm },
                Op::Return => StmtKind::Return,
                Op::Halt => StmtKind::Halt { implicit: false },
                Op::Barrier => StmtKind::Barrier,
                Op::FenceAcquire | Op::FenceRelease | Op::FenceAcqRel => {
                    StmtKind::Fence { op: inst.op, scope: inst.scope }
                }
                Op::Wait => StmtKind::Wait,
                Op::Nop => StmtKind::Nop,
                _ => StmtKind::Op(inst),
            };
            let ends_function = ctx == Ctx::Function
                && guard.is_none()
                && matches!(kind, StmtKind::Return | StmtKind::Halt { .. });
            block.push(Stmt { offset, guard, kind });
            if ends_function {
                return Ok((block, End::Function));
            }
        }
    }

    fn func_for(&mut self, offset: u32, target: u32) -> Result<FuncId, BuildError> {
        if target >= self.code_size {
            return Err(
                self.err(offset, BuildErrorKind::CallTargetOutside { target, code_size: self.code_size })
            );
        }
        if !self.index_of.contains_key(&target) {
            return Err(self.err(offset, BuildErrorKind::CallTargetNotInstruction { target }));
        }
        if let Some(&id) = self.func_of_target.get(&target) {
            return Ok(id);
        }
        let id = self.targets.len();
        self.targets.push(target);
        self.func_of_target.insert(target, id);
        self.pending.push(id);
        Ok(id)
    }
}

impl Kernel {
    /// Visit every statement of every function, depth first, with its nesting depth.
    pub fn walk(&self, f: &mut impl FnMut(FuncId, &Stmt, u32)) {
        for (id, func) in self.funcs.iter().enumerate() {
            walk_block(&func.body, 0, &mut |s, d| f(id, s, d));
        }
    }
}

/// Visit every statement of a block, depth first, with its if/loop nesting depth.
pub fn walk_block(block: &[Stmt], depth: u32, f: &mut impl FnMut(&Stmt, u32)) {
    for s in block {
        f(s, depth);
        match &s.kind {
            StmtKind::If { then_body, else_body, .. } => {
                walk_block(then_body, depth + 1, f);
                walk_block(else_body, depth + 1, f);
            }
            StmtKind::Loop { body, .. } => walk_block(body, depth + 1, f),
            _ => {}
        }
    }
}

/// Registers and predicates a block writes (nested statements too).
pub struct Written {
    pub regs: Vec<bool>,
    pub preds: Vec<bool>,
}

/// What `body` writes, anywhere in it.
pub fn written_state(body: &[Stmt]) -> Written {
    let mut w = Written { regs: vec![false; 256], preds: vec![false; 8] };
    walk_block(body, 0, &mut |s, _| {
        let StmtKind::Op(inst) = &s.kind else { return };
        for named in inst.named_state(Some(Role::Def)) {
            let slot = match named {
                StateRef::Reg(r) => w.regs.get_mut(r as usize),
                StateRef::Pred(p) => w.preds.get_mut(p as usize),
            };
            if let Some(slot) = slot {
                *slot = true;
            }
        }
    });
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(insts: &[Instruction]) -> Vec<u8> {
        let mut out = Vec::new();
        for i in insts {
            i.encode_into(&mut out);
        }
        out
    }

    fn meta() -> KernelMeta {
        KernelMeta { name: "k".into(), registers: 32, ..Default::default() }
    }

    #[test]
    fn builds_nested_tree_and_functions() {
        let mut call = Instruction::new(Op::Call);
        let mut pif = Instruction::new(Op::If);
        pif.rs1 = 1;
        let code = enc(&[
            pif,                           // 0
            Instruction::new(Op::Loop),    // 4
            Instruction::new(Op::Break),   // 8
            Instruction::new(Op::Endloop), // 12
            Instruction::new(Op::Else),    // 16
            {
                call.imm = 36;
                call
            }, // 20
            Instruction::new(Op::Endif),   // 28
            Instruction::new(Op::Halt),    // 32
            Instruction::new(Op::Nop),     // 36 (function)
            Instruction::new(Op::Return),  // 40
        ]);
        let k = build_kernel(meta(), &code).unwrap();
        assert_eq!(k.funcs.len(), 2);
        assert_eq!(k.funcs[1].offset, 36);
        assert_eq!(k.funcs[1].body.len(), 2);
        let StmtKind::If { then_body, else_body, else_offset, end_offset, pred } = &k.funcs[0].body[0].kind
        else {
            panic!("expected if")
        };
        assert_eq!((pred.index, *else_offset, *end_offset), (1, Some(16), 28));
        assert!(matches!(then_body[0].kind, StmtKind::Loop { end_offset: 12, .. }));
        assert!(matches!(else_body[0].kind, StmtKind::Call { func: 1, target: 36 }));
        assert_eq!(k.funcs[0].body.len(), 2, "entry ends at the top-level halt");
    }

    #[test]
    fn implicit_halt_at_end() {
        let k = build_kernel(meta(), &enc(&[Instruction::new(Op::Nop)])).unwrap();
        assert!(matches!(k.funcs[0].body[1].kind, StmtKind::Halt { implicit: true }));
        assert_eq!(k.funcs[0].body[1].offset, 4);
    }

    #[test]
    fn structure_errors() {
        let cases: &[(&[Op], BuildErrorKind)] = &[
            (&[Op::Else], BuildErrorKind::ElseWithoutIf),
            (&[Op::Endif], BuildErrorKind::EndifWithoutIf),
            (&[Op::Endloop], BuildErrorKind::EndloopWithoutLoop),
            (&[Op::If], BuildErrorKind::UnclosedIf),
            (&[Op::Loop, Op::Nop], BuildErrorKind::UnclosedLoop),
            (&[Op::If, Op::Else, Op::Else], BuildErrorKind::DuplicateElse),
        ];
        for (ops, kind) in cases {
            let insts: Vec<_> = ops.iter().map(|&o| Instruction::new(o)).collect();
            let e = build_kernel(meta(), &enc(&insts)).unwrap_err();
            assert_eq!(&e.kind, kind, "{ops:?}");
        }
        let mut guarded_endif = Instruction::new(Op::Endif);
        guarded_endif.guard = Some(PredRef { index: 1, negated: false });
        let e = build_kernel(meta(), &enc(&[Instruction::new(Op::If), guarded_endif])).unwrap_err();
        assert_eq!(
            e.kind,
            BuildErrorKind::PredicatedMarker { op: Op::Endif, guard: guarded_endif.guard.unwrap() }
        );
        let e = build_kernel(meta(), &enc(&vec![Instruction::new(Op::Loop); 300])).unwrap_err();
        assert_eq!(e.kind, BuildErrorKind::TooDeep { limit: MAX_NESTING });
        let mut call = Instruction::new(Op::Call);
        call.imm = 2;
        let e = build_kernel(meta(), &enc(&[call, Instruction::new(Op::Halt)])).unwrap_err();
        assert_eq!(e.kind, BuildErrorKind::CallTargetNotInstruction { target: 2 });
        call.imm = 400;
        let e = build_kernel(meta(), &enc(&[call])).unwrap_err();
        assert!(matches!(e.kind, BuildErrorKind::CallTargetOutside { .. }));
    }

    #[test]
    fn depth_64_is_fine() {
        let mut insts = vec![Instruction::new(Op::Loop); 64];
        insts.extend(vec![Instruction::new(Op::Endloop); 64]);
        assert!(build_kernel(meta(), &enc(&insts)).is_ok());
    }
}
