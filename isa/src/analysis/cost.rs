//! What a run counts: one per executed wave-instruction (wave-emu's count, and the measure of
//! `--max-instructions`), by statistics class. The interpreter counts dynamically, one per
//! micro-op it executes; this module gives the same count statically, for the JIT, which
//! charges it in bulk.
//!
//! # The count
//!
//! A wave counts, per statement it walks: an op (in its [`CostClass`]); the markers `if`,
//! `else` (where written), `endif`, `loop`, `endloop` (once per iteration), `break`,
//! `continue`, `call`, `return`, an explicit `halt`, `barrier`, `fence`, `wait` and `nop` (all
//! [`CostClass::Control`]). The builder's implicit final `halt` and the end of a function count
//! nothing. Statements are walked whatever the mask (ir.rs module doc): both sides of every
//! `if`, the rest of a loop body after every lane broke, a loop entered with an empty mask
//! (its body once). So the count of a region is static except for two things: how often each
//! loop repeats, and a `halt` (or a `return` of the entry) that ends the wave early. A `call`
//! nested [`MAX_CALL_DEPTH`] deep counts its marker and fails. The count is per workgroup,
//! shared by its waves.
//!
//! # The static walk
//!
//! [`CostModel::walk`] is the count of a region walked once: every loop once, calls followed.
//! A loop's further iterations each count [`CostModel::iteration`] (its body and `endloop`).
//! [`CostModel::walk_events`] walks a region in order, reporting its barriers and the entries
//! of loops that hold one, where the JIT settles its count (its doc says why).

use crate::ir::{FuncId, Kernel, Stmt, StmtKind, MAX_CALL_DEPTH};
use crate::opcodes::{Class, Op};
use std::ops::{Add, AddAssign};

/// The statistics classes of counted instructions (wave-emu's `--stats` lines, and MMA).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CostClass {
    /// Integer, bitwise, compare and select ops.
    Integer,
    /// f32, f16, bf16, f64 ops and conversions.
    Float,
    /// Loads and stores.
    Memory,
    /// Structural markers, synchronisation, moves.
    Control,
    /// Cross-lane ops.
    Wave,
    /// Atomic ops (per instruction; wave-emu also counts each lane, which is not static).
    Atomic,
    /// MMA ops.
    Mma,
}

/// Number of [`CostClass`]es.
pub const CLASSES: usize = 7;

impl CostClass {
    /// Every class, in the order of [`Cost::counts`].
    pub const ALL: [CostClass; CLASSES] = [
        CostClass::Integer,
        CostClass::Float,
        CostClass::Memory,
        CostClass::Control,
        CostClass::Wave,
        CostClass::Atomic,
        CostClass::Mma,
    ];

    /// The class an op counts in.
    pub fn of(op: Op) -> CostClass {
        match op.class() {
            Class::Integer | Class::Bitwise | Class::Compare | Class::Select => CostClass::Integer,
            Class::Float | Class::Half | Class::BFloat | Class::Double | Class::Convert => CostClass::Float,
            Class::LocalLoad | Class::LocalStore | Class::DeviceLoad | Class::DeviceStore => {
                CostClass::Memory
            }
            Class::LocalAtomic | Class::DeviceAtomic => CostClass::Atomic,
            Class::Wave => CostClass::Wave,
            Class::Mma => CostClass::Mma,
            Class::Control | Class::Sync | Class::Move => CostClass::Control,
        }
    }

    /// Its index in [`Cost::counts`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Counted instructions, by class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Cost {
    pub counts: [u64; CLASSES],
}

impl Cost {
    pub const ZERO: Cost = Cost { counts: [0; CLASSES] };

    /// One instruction of `class`.
    pub fn one(class: CostClass) -> Cost {
        let mut c = Cost::ZERO;
        c.counts[class.index()] = 1;
        c
    }

    /// One structural marker (`else`, `endif`, `endloop`).
    pub fn marker() -> Cost {
        Cost::one(CostClass::Control)
    }

    /// All classes together: the instruction count.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    pub fn is_zero(&self) -> bool {
        self.counts.iter().all(|&c| c == 0)
    }

    /// `self − other`, class by class; `None` where some class would go below zero.
    pub fn checked_sub(&self, other: &Cost) -> Option<Cost> {
        let mut out = Cost::ZERO;
        for (o, (a, b)) in out.counts.iter_mut().zip(self.counts.iter().zip(&other.counts)) {
            *o = a.checked_sub(*b)?;
        }
        Some(out)
    }

    /// The smaller count of each class.
    pub fn min(&self, other: &Cost) -> Cost {
        let mut out = *self;
        for (o, b) in out.counts.iter_mut().zip(&other.counts) {
            *o = (*o).min(*b);
        }
        out
    }

    /// `self` repeated `n` times.
    pub fn times(&self, n: u64) -> Cost {
        let mut out = *self;
        for o in &mut out.counts {
            *o = o.saturating_mul(n);
        }
        out
    }
}

impl Add for Cost {
    type Output = Cost;
    fn add(mut self, other: Cost) -> Cost {
        self += other;
        self
    }
}

impl AddAssign for Cost {
    fn add_assign(&mut self, other: Cost) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a = a.saturating_add(*b);
        }
    }
}

/// What a statement counts where it starts: its op, or its opening marker (an `if`'s `else`
/// and `endif` and a loop's `endloop` come later: [`Cost::marker`]).
pub fn opening(stmt: &Stmt) -> Cost {
    match &stmt.kind {
        StmtKind::Op(inst) => Cost::one(CostClass::of(inst.op)),
        StmtKind::Halt { implicit: true } => Cost::ZERO,
        _ => Cost::marker(),
    }
}

/// A point of a static walk (see [`CostModel::walk_events`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WalkEvent<'k> {
    /// Instructions counted, in order.
    Count(Cost),
    /// The entry of a loop whose body holds a barrier (after its `loop` marker): its byte offset.
    LoopEntry(u32),
    /// A barrier (after its own count).
    Barrier(&'k Stmt),
}

/// Facts of one function at one call depth.
#[derive(Clone, Copy, Debug, Default)]
struct FuncFacts {
    /// Its body walked once.
    walk: Cost,
    /// A barrier is reached when its body is walked (calls followed).
    barrier: bool,
}

/// The static counts of one kernel's regions (see the module doc).
#[derive(Clone, Debug)]
pub struct CostModel {
    /// Per function, per call depth 0..=MAX_CALL_DEPTH (the depth its statements run at).
    funcs: Vec<Vec<FuncFacts>>,
}

impl CostModel {
    pub fn new(kernel: &Kernel) -> CostModel {
        let depths = MAX_CALL_DEPTH as usize + 1;
        let mut model = CostModel { funcs: vec![vec![FuncFacts::default(); depths]; kernel.funcs.len()] };
        // A body at depth d calls bodies at depth d + 1, so fill the deepest first.
        for depth in (0..depths as u32).rev() {
            for (id, func) in kernel.funcs.iter().enumerate() {
                let facts = FuncFacts {
                    walk: model.walk(&func.body, depth),
                    barrier: model.has_barrier(&func.body, depth),
                };
                model.funcs[id][depth as usize] = facts;
            }
        }
        model
    }

    /// The facts of the body a call at `depth` runs, `None` when the call fails (too deep).
    fn callee(&self, func: FuncId, depth: u32) -> Option<FuncFacts> {
        if depth >= MAX_CALL_DEPTH {
            return None;
        }
        self.funcs.get(func).and_then(|f| f.get(depth as usize + 1)).copied()
    }

    /// The count of `stmts`, statements at call depth `depth`, walked once: both sides of
    /// every `if`, every loop body once, called bodies.
    pub fn walk(&self, stmts: &[Stmt], depth: u32) -> Cost {
        stmts.iter().fold(Cost::ZERO, |acc, s| acc + self.stmt(s, depth))
    }

    /// The count of one statement walked once.
    pub fn stmt(&self, s: &Stmt, depth: u32) -> Cost {
        let inner = match &s.kind {
            StmtKind::If { then_body, else_body, else_offset, .. } => {
                let else_part = match else_offset {
                    Some(_) => Cost::marker() + self.walk(else_body, depth),
                    None => Cost::ZERO,
                };
                self.walk(then_body, depth) + else_part + Cost::marker()
            }
            StmtKind::Loop { body, .. } => self.iteration(body, depth),
            StmtKind::Call { func, .. } => self.callee(*func, depth).map_or(Cost::ZERO, |f| f.walk),
            _ => Cost::ZERO,
        };
        opening(s) + inner
    }

    /// The count of one iteration of a loop with this body: the body and `endloop`.
    pub fn iteration(&self, body: &[Stmt], depth: u32) -> Cost {
        self.walk(body, depth) + Cost::marker()
    }

    /// Whether walking `stmts` (at call depth `depth`) reaches a barrier, guarded or not.
    pub fn has_barrier(&self, stmts: &[Stmt], depth: u32) -> bool {
        stmts.iter().any(|s| self.stmt_has_barrier(s, depth))
    }

    fn stmt_has_barrier(&self, s: &Stmt, depth: u32) -> bool {
        match &s.kind {
            StmtKind::Barrier => true,
            StmtKind::If { then_body, else_body, .. } => {
                self.has_barrier(then_body, depth) || self.has_barrier(else_body, depth)
            }
            StmtKind::Loop { body, .. } => self.has_barrier(body, depth),
            StmtKind::Call { func, .. } => self.callee(*func, depth).is_some_and(|f| f.barrier),
            _ => false,
        }
    }

    /// Walk `stmts` once, in order, as [`CostModel::walk`] counts them, telling `f` the counts
    /// (merged between events), each barrier and the entry of each loop that holds a barrier.
    /// The JIT settles its count with the budget at those points (so that a wave that waits at
    /// a barrier has paid for everything before it), and code that skips a region (a real
    /// branch where the interpreter walks with an empty mask) replays this walk.
    pub fn walk_events<'k>(
        &self,
        kernel: &'k Kernel,
        stmts: &'k [Stmt],
        depth: u32,
        f: &mut impl FnMut(WalkEvent<'k>),
    ) {
        let mut pending = Cost::ZERO;
        self.events(kernel, stmts, depth, &mut pending, f);
        if !pending.is_zero() {
            f(WalkEvent::Count(pending));
        }
    }

    fn events<'k>(
        &self,
        kernel: &'k Kernel,
        stmts: &'k [Stmt],
        depth: u32,
        pending: &mut Cost,
        f: &mut impl FnMut(WalkEvent<'k>),
    ) {
        let emit = |pending: &mut Cost, event: WalkEvent<'k>, f: &mut dyn FnMut(WalkEvent<'k>)| {
            if !pending.is_zero() {
                f(WalkEvent::Count(std::mem::take(pending)));
            }
            f(event);
        };
        for s in stmts {
            if !self.stmt_has_barrier(s, depth) {
                *pending += self.stmt(s, depth);
                continue;
            }
            *pending += opening(s);
            match &s.kind {
                StmtKind::Barrier => emit(pending, WalkEvent::Barrier(s), f),
                StmtKind::If { then_body, else_body, else_offset, .. } => {
                    self.events(kernel, then_body, depth, pending, f);
                    if else_offset.is_some() {
                        *pending += Cost::marker();
                        self.events(kernel, else_body, depth, pending, f);
                    }
                    *pending += Cost::marker();
                }
                StmtKind::Loop { body, .. } => {
                    emit(pending, WalkEvent::LoopEntry(s.offset), f);
                    self.events(kernel, body, depth, pending, f);
                    *pending += Cost::marker();
                }
                StmtKind::Call { func, .. } => {
                    if let Some(callee) = kernel.funcs.get(*func) {
                        self.events(kernel, &callee.body, depth + 1, pending, f);
                    }
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::module::load_bytes;

    fn kernel(source: &str) -> Kernel {
        let (module, _) = load_bytes(source.as_bytes(), "k.wave").unwrap_or_else(|e| panic!("{e}"));
        module.kernels[0].kernel().clone()
    }

    #[test]
    fn walks_count_markers_both_sides_and_calls() {
        let k = kernel(
            "
.kernel k
    mov_imm r1, 1
    if p1
        iadd r1, r1, r1
    else
        fadd r2, r2, r2
    endif
    loop
        break p1
        device_load_u32 r3, r1
    endloop
    call f
    halt
f:
    atomic_add r1, r2, .device
    return
.end
",
        );
        let model = CostModel::new(&k);
        let top = model.walk(&k.funcs[0].body, 0);
        let by = |c: CostClass| top.counts[c.index()];
        // mov_imm, if, else, endif, loop, break, endloop, call, halt; f: return.
        assert_eq!(by(CostClass::Control), 10);
        assert_eq!((by(CostClass::Integer), by(CostClass::Float), by(CostClass::Memory)), (1, 1, 1));
        assert_eq!((by(CostClass::Atomic), by(CostClass::Wave), by(CostClass::Mma)), (1, 0, 0));
        assert_eq!(top.total(), 14);
        let StmtKind::Loop { body, .. } = &k.funcs[0].body[2].kind else { panic!("loop") };
        assert_eq!(model.iteration(body, 0).total(), 3);
    }

    #[test]
    fn calls_past_the_depth_limit_count_their_marker_only() {
        // A chain entry -> f1 -> ... -> f9: each fN is `nop; call fN+1; return`, f9 `nop;
        // return`. The call made at depth 8 (f8's) fails, so f9 is never counted.
        let mut source = String::from(".kernel k\n    call f1\n    halt\n");
        for n in 1..=9 {
            source.push_str(&format!("f{n}:\n    nop\n"));
            if n < 9 {
                source.push_str(&format!("    call f{}\n", n + 1));
            }
            source.push_str("    return\n");
        }
        source.push_str(".end\n");
        // The validator (and so the checking assembler) rejects such a chain; the tree does
        // not, and the engines fail the call.
        let assembled = crate::asm::assemble_unchecked(&source, "k.wave").unwrap_or_else(|e| panic!("{e}"));
        let wbin = &assembled.file.kernels[0];
        let k = crate::ir::build_kernel(wbin.meta.clone(), &wbin.code).unwrap_or_else(|e| panic!("{e}"));
        let model = CostModel::new(&k);
        // The entry's call and halt; f1..f8 each nop, call and return.
        assert_eq!(model.walk(&k.funcs[0].body, 0).total(), 2 + 8 * 3);
        // Started at depth 1, the call in f7 is the one that fails.
        assert_eq!(model.walk(&k.funcs[0].body, 1).total(), 2 + 7 * 3);
    }

    #[test]
    fn events_stop_at_barriers_and_barrier_loops() {
        let k = kernel(
            "
.kernel k
    nop
    loop
        barrier
        break p1
    endloop
    if p2
        @p1 barrier
    endif
    halt
.end
",
        );
        let model = CostModel::new(&k);
        let mut events = Vec::new();
        model.walk_events(&k, &k.funcs[0].body, 0, &mut |e| {
            events.push(match e {
                WalkEvent::Count(c) => format!("+{}", c.total()),
                WalkEvent::LoopEntry(at) => format!("loop@{at}"),
                WalkEvent::Barrier(s) => format!("barrier@{}", s.offset),
            })
        });
        assert_eq!(events, ["+2", "loop@4", "+1", "barrier@8", "+4", "barrier@24", "+2"]);
        let total: u64 = model.walk(&k.funcs[0].body, 0).total();
        assert_eq!(total, 2 + 1 + 4 + 2, "events add up to the walk");
    }
}
