//! Store runs: a straight-line run of stores and pure vector ops shares one bail-out for the
//! possible faults of its stores, instead of a cold block per store.
//!
//! A whole-wave store to consecutive addresses tests each vector's lane 0 against the device
//! or local limit and, where some lane faults, took a cold block of its own that spilled both
//! operands and called the lane-order helper. A kernel's epilogue that writes its 64 results
//! (the GPU-style GEMM's) had 64 such blocks, about a sixth of its code and of its optimized
//! compile time. In a run, each store's test branches to the run's one bail-out instead, which
//! runs the whole run again from its entry state, wave-major, in a function of its own
//! compiled on first use (a [`LoopFn`](super::loop_fn::LoopFn) with a statement count): there
//! every store has its own exact fault path, so the first fault and the lanes stored before
//! it are the interpreter's.
//!
//! Running the run again is exact because it reads no memory: its ops are pure vector ops (no
//! load, atomic, helper, wave op, guard or predicate) and its stores write values computed
//! from registers only, so the stores the first attempt made before it bailed out are made
//! again with the same values at the same addresses, and what its ops wrote to registers is
//! replaced by what the wave-major function leaves. It writes no resident register (those
//! live in memory, and the function reads them in place). Not with a budget or `--stats`,
//! which count each statement where it runs.

use super::loop_fn::ResidentEntry;
use super::Translator;
use crate::error::JitError;
use cranelift_codegen::ir::{Block, InstBuilder};
use wave_isa::opcodes::{Class, Role};
use wave_isa::{FuncId, Kernel, StateRef, Stmt, StmtKind};

/// Where the translation is with respect to store runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StoreRuns {
    /// Runs may form here.
    #[default]
    Allowed,
    /// Translating a run: its stores' possible faults branch to this bail-out.
    Open { bail: Block },
    /// A run's own wave-major function: every store keeps its own fault path.
    Off,
}

/// A run has at least this many stores that share its bail-out (and a bail-out smaller than
/// their fault paths, see `Translator::bail_costs_less`).
const MIN_STORES: usize = 2;

impl Translator<'_, '_> {
    /// The bail-out the store being translated shares with its run, if it is in one.
    pub(super) fn run_bail(&self) -> Option<Block> {
        match self.store_runs {
            StoreRuns::Open { bail } => Some(bail),
            _ => None,
        }
    }

    /// The number of statements at the start of `stmts` that form a store run (see the
    /// module doc), from a store that shares the bail-out to the last store; where none starts
    /// here, `Err` with the number of statements that could have been in one (a run starting
    /// among them would have fewer stores: the caller looks again after them, which keeps a
    /// long block linear).
    pub(super) fn store_run_len(&self, stmts: &[Stmt]) -> Result<usize, usize> {
        let here = self.store_runs == StoreRuns::Allowed
            && self.flags.checked
            && !self.flags.fuel
            && !self.flags.stats
            && self.chunk_loop.is_none()
            && self.shadows.is_empty();
        // A run starts at a store that shares its bail-out: ops before it need not be redone.
        let starts = |s: &Stmt| match &s.kind {
            StmtKind::Op(inst) => {
                matches!(run_member(s), Some(Member::Store)) && self.store_shares_run_bail(inst, s.offset)
            }
            _ => false,
        };
        if !here || !stmts.first().is_some_and(starts) {
            return Err(0);
        }
        let mut stores = 0;
        let mut end = 0;
        let mut members = 0;
        for (i, s) in stmts.iter().enumerate() {
            let writes_resident = match &s.kind {
                StmtKind::Op(inst) => inst
                    .named_state(Some(Role::Def))
                    .any(|named| matches!(named, StateRef::Reg(r) if self.in_memory(r))),
                _ => false,
            };
            match run_member(s) {
                _ if writes_resident => break,
                Some(Member::Store) => {
                    // Only the stores that would branch to the bail-out count; the others keep
                    // their own paths (and may be in the run: they read no memory either).
                    if let StmtKind::Op(inst) = &s.kind {
                        stores += self.store_shares_run_bail(inst, s.offset) as usize;
                    }
                    end = i + 1;
                }
                Some(Member::Pure) => {}
                None => break,
            }
            members = i + 1;
        }
        if stores >= MIN_STORES && self.bail_costs_less(&stmts[..end], stores) {
            Ok(end)
        } else {
            Err(members)
        }
    }

    /// Whether the run's one bail-out is smaller code than a fault path per store: the
    /// bail-out stores the W/4 vectors of each register it names (and the exec and live
    /// masks) and loads back those it writes (and exec); a store's own path spills its two
    /// operands and calls the helper. Resident registers are copied by a loop, whatever
    /// their number.
    fn bail_costs_less(&self, run: &[Stmt], stores: usize) -> bool {
        const CALL: usize = 5;
        let in_variables = |r: &u32| !self.in_memory(*r);
        let named: std::collections::BTreeSet<u32> = run
            .iter()
            .filter_map(|s| match &s.kind {
                StmtKind::Op(inst) => Some(inst.named_state(None)),
                _ => None,
            })
            .flatten()
            .filter_map(|named| match named {
                StateRef::Reg(r) => Some(r),
                StateRef::Pred(_) => None,
            })
            .filter(in_variables)
            .collect();
        let written = wave_isa::ir::written_state(run);
        let written = named.iter().filter(|&&r| written.regs[r as usize]).count();
        let n = self.wave.n;
        let bail = (named.len() + 2) * n + (written + 1) * n + CALL;
        bail < stores * (2 * n + CALL)
    }

    /// Translate the store run `run` (see [`Self::store_run_len`]): its statements as usual,
    /// with one shared bail-out that runs it again wave-major from its entry.
    pub(super) fn store_run(&mut self, run: &[Stmt], func: FuncId) -> Result<(), JitError> {
        let (state, entry) = self.run_entry(run);
        let bail = self.b.create_block();
        self.b.set_cold_block(bail);
        let done = self.b.create_block();
        let at_start = self.pending;
        self.store_runs = StoreRuns::Open { bail };
        let result = self.block(run, func);
        self.store_runs = StoreRuns::Allowed;
        result?;
        let after = self.pending;
        self.b.ins().jump(done, &[]);
        self.continue_in(bail);
        self.pending = at_start;
        self.call_wave_major(run[0].offset, func, state, &entry, Some(run.len()), ResidentEntry::InPlace);
        self.b.ins().jump(done, &[]);
        self.continue_in(done);
        self.pending = after;
        Ok(())
    }
}

/// What a statement is to a store run.
enum Member {
    Store,
    Pure,
}

/// Whether `s` may be part of a store run, and as what: an unguarded store, or an unguarded
/// native op of a pure class that names no predicate.
fn run_member(s: &Stmt) -> Option<Member> {
    let StmtKind::Op(inst) = &s.kind else {
        return matches!(s.kind, StmtKind::Nop).then_some(Member::Pure);
    };
    if s.guard.is_some() || inst.guard.is_some() {
        return None;
    }
    if inst.named_state(None).any(|named| matches!(named, StateRef::Pred(_))) {
        return None;
    }
    match inst.op.class() {
        Class::DeviceStore | Class::LocalStore => Some(Member::Store),
        Class::Integer
        | Class::Float
        | Class::Half
        | Class::BFloat
        | Class::Double
        | Class::Bitwise
        | Class::Convert
        | Class::Move
            if super::rules::is_native(inst.op) =>
        {
            Some(Member::Pure)
        }
        _ => None,
    }
}

/// The `len` statements of the run that starts at the statement at `offset` in function
/// `func` (see [`Translator::store_run`]).
pub(super) fn run_stmts(kernel: &Kernel, func: FuncId, offset: u32, len: usize) -> Option<&[Stmt]> {
    super::loop_fn::find_in_lists(kernel, func, &|list| {
        let at = list.iter().position(|s| s.offset == offset)?;
        list.get(at..at + len)
    })
}
