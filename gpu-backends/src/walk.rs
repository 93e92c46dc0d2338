//! The lock-step walk of a kernel's statement tree, shared by every writer: the recursion,
//! call inlining, the per-loop and per-call flags with their fresh names, and which lanes
//! `exec` rejoins with after each construct (README: "the wave in lock step"). A writer
//! implements [`Syntax`] and only spells the [`Step`]s.

use crate::ops::{lowering, Lowering};
use crate::{EmitError, Target};
use wave_isa::instr::{Instruction, PredRef};
use wave_isa::ir::{Block, Stmt, StmtKind};
use wave_isa::opcodes::{Op, Scope};
use wave_isa::Kernel;

/// `exec = entry && live && !left[0] && !left[1] ...`: the mask after a construct, without the
/// lanes that halted or left it through a flag.
pub struct Rejoin<'a> {
    pub entry: &'a str,
    pub left: Vec<&'a str>,
}

/// One step of the walk, for the statement it comes from (guard, offset). Flag names are
/// fresh: a writer declares each where its construct begins, or all up front ([`walk`]).
///
/// - `Op`: a data, memory, atomic, wave or MMA op (never a [`Lowering::Statement`] one).
/// - `If` saves `exec` in `entry`, the then-body runs with `exec = entry && pred`, the
///   else-body (after `Else`) with `exec = entry && !pred`; `EndIf` sets `exec = rejoin`.
/// - `Loop` saves `exec` in `entry`, clears `brk` once and `cnt` at the top of every iteration;
///   `EndLoop` sets `exec = next`, runs the body again while any lane of the wave has `exec`,
///   then sets `exec = after`. `LoopExit`: lanes of `exec && pred` set `flag` (`brk` or `cnt`)
///   and leave `exec`.
/// - `Call` saves `exec` in `entry` and clears `ret`, the callee's body follows; `Return`:
///   active lanes set `ret` and leave `exec`. `Halt`: active lanes leave `live` and `exec`,
///   the wave returns when no lane is live.
/// - `Barrier` is reached by the whole wave, a guarded one when any lane of `exec && guard` is.
pub enum Step<'a> {
    Op(&'a Instruction),
    If { entry: &'a str, pred: PredRef },
    Else { entry: &'a str, pred: PredRef },
    EndIf(Rejoin<'a>),
    Loop { id: u32, entry: &'a str, brk: &'a str, cnt: &'a str },
    EndLoop { id: u32, cnt: &'a str, next: Rejoin<'a>, after: Rejoin<'a> },
    LoopExit { keyword: &'static str, flag: &'a str, pred: PredRef },
    Call { entry: &'a str, ret: &'a str, target: u32 },
    EndCall { ret: &'a str, target: u32, rejoin: Rejoin<'a> },
    Return(&'a str),
    Halt,
    Barrier,
    Fence(Op, Scope),
    Wait,
    Nop,
}

/// Fresh numbers for names, one counter per kernel.
#[derive(Default)]
pub struct FreshIds(u32);

impl FreshIds {
    pub fn next(&mut self) -> u32 {
        self.0 += 1;
        self.0
    }
}

/// A writer's spelling of the steps.
pub trait Syntax {
    /// Put in front of every flag name (`%` for PTX registers).
    const FLAG_PREFIX: &'static str;
    /// `ids` gives names of the writer's own (labels) from the flags' counter.
    fn step(&mut self, stmt: &Stmt, step: Step, ids: &mut FreshIds) -> Result<(), EmitError>;
}

/// Walk the entry function of `kernel`, calls inlined. Returns the flag names made, sorted.
pub fn walk<S: Syntax>(kernel: &Kernel, target: Target, syntax: &mut S) -> Result<Vec<String>, EmitError> {
    let mut walker = Walker { kernel, target, syntax, ids: FreshIds::default(), flags: Vec::new() };
    walker.block(&kernel.funcs[0].body, &Frame { ret: None, lp: None })?;
    walker.flags.sort();
    Ok(walker.flags)
}

/// Where a statement sits: inside which inlined call (its `ret`; none in the entry function)
/// and which loop of that call (its `brk`, `cnt`).
struct Frame<'f> {
    ret: Option<&'f str>,
    lp: Option<(&'f str, &'f str)>,
}

impl<'f> Frame<'f> {
    /// `exec` after a nested construct: the entry mask minus the lanes that left; the loop's
    /// flags count only inside its body.
    fn rejoin(&self, entry: &'f str, include_loop: bool) -> Rejoin<'f> {
        let mut left = Vec::new();
        if let (true, Some((brk, cnt))) = (include_loop, self.lp) {
            left.extend([brk, cnt]);
        }
        left.extend(self.ret);
        Rejoin { entry, left }
    }
}

struct Walker<'a, S> {
    kernel: &'a Kernel,
    target: Target,
    syntax: &'a mut S,
    ids: FreshIds,
    flags: Vec<String>,
}

impl<S: Syntax> Walker<'_, S> {
    /// The flags of one construct, one fresh number for all: `ife3`, `le4 brk4 cnt4`.
    fn fresh_flags<const N: usize>(&mut self, kinds: [&str; N]) -> (u32, [String; N]) {
        let id = self.ids.next();
        let names = kinds.map(|kind| format!("{}{kind}{id}", S::FLAG_PREFIX));
        self.flags.extend(names.iter().cloned());
        (id, names)
    }

    fn step(&mut self, stmt: &Stmt, step: Step) -> Result<(), EmitError> {
        self.syntax.step(stmt, step, &mut self.ids)
    }

    fn block(&mut self, block: &Block, frame: &Frame) -> Result<(), EmitError> {
        for stmt in block {
            match &stmt.kind {
                StmtKind::Op(inst) if lowering(inst.op) == Lowering::Statement => {
                    let what = "control instruction outside the statement tree";
                    return Err(EmitError::op(self.target, what, inst.op, stmt.offset));
                }
                StmtKind::Op(inst) => self.step(stmt, Step::Op(inst))?,
                StmtKind::If { pred, then_body, else_body, .. } => {
                    let (_, [entry]) = &self.fresh_flags(["ife"]);
                    self.step(stmt, Step::If { entry, pred: *pred })?;
                    self.block(then_body, frame)?;
                    if !else_body.is_empty() {
                        self.step(stmt, Step::Else { entry, pred: *pred })?;
                        self.block(else_body, frame)?;
                    }
                    self.step(stmt, Step::EndIf(frame.rejoin(entry, true)))?;
                }
                StmtKind::Loop { body, .. } => {
                    let (id, [entry, brk, cnt]) = &self.fresh_flags(["le", "brk", "cnt"]);
                    self.step(stmt, Step::Loop { id: *id, entry, brk, cnt })?;
                    self.block(body, &Frame { ret: frame.ret, lp: Some((brk, cnt)) })?;
                    // Continued lanes run the next iteration; broken ones wait for the loop's end.
                    let next = Rejoin { entry, left: [brk.as_str()].into_iter().chain(frame.ret).collect() };
                    self.step(stmt, Step::EndLoop { id: *id, cnt, next, after: frame.rejoin(entry, false) })?;
                }
                StmtKind::Break { pred } | StmtKind::Continue { pred } => {
                    let (keyword, flag) = match (&stmt.kind, frame.lp) {
                        (StmtKind::Break { .. }, Some((brk, _))) => ("break", brk),
                        (_, Some((_, cnt))) => ("continue", cnt),
                        // Validation rules this out.
                        (_, None) => {
                            let what = format!("break/continue outside a loop at offset 0x{:x}", stmt.offset);
                            return Err(EmitError::Unsupported { target: self.target, what });
                        }
                    };
                    self.step(stmt, Step::LoopExit { keyword, flag, pred: *pred })?;
                }
                StmtKind::Call { func, target } => {
                    let (_, [entry, ret]) = &self.fresh_flags(["ce", "ret"]);
                    self.step(stmt, Step::Call { entry, ret, target: *target })?;
                    // The callee sees none of the caller's loops.
                    let kernel = self.kernel;
                    self.block(&kernel.funcs[*func].body, &Frame { ret: Some(ret), lp: None })?;
                    let rejoin = Rejoin { entry, left: Vec::new() };
                    self.step(stmt, Step::EndCall { ret, target: *target, rejoin })?;
                }
                // A return from the entry function ends the lane like `halt`.
                StmtKind::Return | StmtKind::Halt { .. } => match (&stmt.kind, frame.ret) {
                    (StmtKind::Return, Some(flag)) => self.step(stmt, Step::Return(flag))?,
                    _ => self.step(stmt, Step::Halt)?,
                },
                StmtKind::Barrier => self.step(stmt, Step::Barrier)?,
                StmtKind::Fence { op, scope } => self.step(stmt, Step::Fence(*op, *scope))?,
                StmtKind::Wait => self.step(stmt, Step::Wait)?,
                StmtKind::Nop => self.step(stmt, Step::Nop)?,
            }
        }
        Ok(())
    }
}
