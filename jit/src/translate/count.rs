//! Instruction accounting: compiled code takes from the workgroup's budget exactly what the
//! interpreter counts (`wave_isa::analysis::cost`), and with `Flags::stats` adds it, by class,
//! to the wave's counters.
//!
//! Translation follows the interpreter's walk, so it knows at every point what the code so far
//! has counted: [`Translator::pending`], what has not been paid yet. The code pays it, with a
//! test of the budget, only at
//! - a loop's back edge: one iteration (the loop's first iteration stays pending and is paid
//!   with what surrounds the loop), the hot path's one subtraction and compare;
//! - a barrier, and the entry of a loop that holds one: a wave that waits has paid for all it
//!   did, so the budget runs out in the same wave as in the interpreter;
//! - every way out of the wave's code (its end, a halt of its last lanes, an error): the exit
//!   block takes what the way out carries as pending and turns an overdrawn budget into the
//!   instruction-limit error, so that a fault after the budget ran out reports the limit, as
//!   the interpreter does.
//!
//! Where code paths join (after a uniform `if`, at a loop's latch and exit), each comes with
//! the same pending count, because code that skips a region with a real branch (where the
//! interpreter walks it with an empty mask) counts the region as the walk does
//! ([`Translator::skip`]); a join still pays any difference on the edges ([`Join`]). The
//! budget is overdrawn exactly when the interpreter's count passes the limit, so a kernel
//! fails on both engines or on neither, in the same workgroup and wave and with the same
//! error; only the pc differs: the JIT names the loop, barrier, halt or fault where it paid.

use super::Translator;
use crate::abi::{counter, helper_op, status, Helper};
use crate::error::JitError;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I64};
use cranelift_codegen::ir::{Block, BlockArg, InstBuilder, MemFlagsData, Value};
use wave_isa::analysis::cost::{Cost, CostClass, WalkEvent};
use wave_isa::{Instruction, PredRef, Stmt};

/// A point where code paths meet: the block, and each path's edge into it (a block of its own,
/// filled when every path is in) with the count it brings.
pub struct Join {
    pub block: Block,
    edges: Vec<(Block, Cost)>,
    /// Some path was given a branch target into the join.
    entered: bool,
}

impl Join {
    /// A path into the join through `edge` (a fresh block) bringing `pending`; without an
    /// edge (no accounting) the path branches to the join's block itself.
    pub fn add_edge(&mut self, edge: Option<Block>, pending: Cost) -> Block {
        self.entered = true;
        match edge {
            Some(edge) => {
                self.edges.push((edge, pending));
                edge
            }
            None => self.block,
        }
    }
}

impl Translator<'_, '_> {
    /// The code here counts `cost` more.
    pub fn count(&mut self, cost: Cost) {
        self.pending += cost;
    }

    /// Pay `cost` now: take it from the budget (and add it to the counters); leave with the
    /// instruction-limit error, naming `pc`, when the budget is overdrawn.
    pub fn pay(&mut self, cost: Cost, pc: u32) {
        if !self.flags.fuel || cost.is_zero() {
            return;
        }
        let amount = self.b.ins().iconst(I64, cost.total() as i64);
        let left = self.take_fuel(amount);
        self.add_counters(&cost);
        let spent = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, left, 0);
        let stop = self.b.create_block();
        self.b.set_cold_block(stop);
        let go = self.b.create_block();
        self.b.ins().brif(spent, stop, &[], go, &[]);
        self.continue_in(stop);
        // Nothing more to pay: the exit finds the budget overdrawn and reports the limit.
        let done = self.b.ins().iconst(I32, status::DONE as i64);
        let args = self.exit_args(done, Cost::ZERO, pc);
        self.b.ins().jump(self.exit, &args);
        self.continue_in(go);
    }

    /// Pay everything pending.
    pub fn settle(&mut self, pc: u32) {
        if !self.flags.fuel {
            return;
        }
        let cost = std::mem::take(&mut self.pending);
        self.pay(cost, pc);
    }

    /// Subtract `cost` from the workgroup's budget; returns what is left (negative: spent).
    pub fn take_fuel(&mut self, cost: Value) -> Value {
        let fuel_ptr = self.load_ctx(I64, self.env.fuel_offset());
        let flags = MemFlagsData::new().with_notrap();
        let fuel = self.b.ins().load(I64, flags, fuel_ptr, 0);
        let left = self.b.ins().isub(fuel, cost);
        self.b.ins().store(flags, left, fuel_ptr, 0);
        left
    }

    /// `--stats`: add `cost`, class by class, to the wave's counters.
    fn add_counters(&mut self, cost: &Cost) {
        if !self.flags.stats {
            return;
        }
        for class in CostClass::ALL {
            let n = cost.counts[class.index()];
            if n != 0 {
                self.add_to_counter(class.index(), n as i64);
            }
        }
    }

    /// Add `n` to counter `index` ([`crate::abi::counter`]).
    fn add_to_counter(&mut self, index: usize, n: i64) {
        let amount = self.b.ins().iconst(I64, n);
        self.add_value_to_counter(index, amount);
    }

    fn add_value_to_counter(&mut self, index: usize, amount: Value) {
        let flags = MemFlagsData::new().with_notrap();
        let offset = self.env.counter_offset(index);
        let old = self.b.ins().load(I64, flags, self.ctx, offset);
        let new = self.b.ins().iadd(old, amount);
        self.b.ins().store(flags, new, self.ctx, offset);
    }

    /// The exit block's arguments: the status, and with a budget what is pending and the pc.
    fn exit_args(&mut self, status: Value, pending: Cost, pc: u32) -> Vec<BlockArg> {
        let mut args = vec![status.into()];
        if self.flags.fuel {
            args.push(self.b.ins().iconst(I64, pending.total() as i64).into());
            args.push(self.b.ins().iconst(I32, pc as i64).into());
        }
        args
    }

    /// Leave the code with `status` (an error, or a failed wave's abort).
    pub fn leave(&mut self, status: Value) {
        let args = self.exit_args(status, self.pending, 0);
        self.b.ins().jump(self.exit, &args);
    }

    /// Leave the code with `status` when it is not 0; go on at `go` otherwise.
    pub fn leave_if(&mut self, status: Value, go: Block) {
        if !self.flags.fuel {
            self.b.ins().brif(status, self.exit, &[status.into()], go, &[]);
            return;
        }
        // The count rides on a cold edge of its own, not on the hot path.
        let out = self.b.create_block();
        self.b.set_cold_block(out);
        self.b.ins().brif(status, out, &[], go, &[]);
        self.continue_in(out);
        self.leave(status);
    }

    /// The wave ends here (at the halt at `pc`, or at the code's end).
    pub fn leave_done(&mut self, pc: u32) {
        let pending = self.pending;
        self.add_counters(&pending);
        let done = self.b.ins().iconst(I32, status::DONE as i64);
        let args = self.exit_args(done, pending, pc);
        self.b.ins().jump(self.exit, &args);
    }

    /// The exit block with a budget: take what the way out brought, and turn an overdrawn
    /// budget into the instruction-limit error. Returns the status to return.
    pub fn settle_at_exit(&mut self) -> Value {
        let params = self.b.block_params(self.exit).to_vec();
        let (st, pending, pc) = (params[0], params[1], params[2]);
        let left = self.take_fuel(pending);
        let spent = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, left, 0);
        let limit = self.b.create_block();
        self.b.set_cold_block(limit);
        let out = self.b.create_block();
        self.b.append_block_param(out, I32);
        self.b.ins().brif(spent, limit, &[], out, &[st.into()]);
        self.continue_in(limit);
        let zero = self.b.ins().iconst(I64, 0);
        let limited = self.call_helper_with(Helper::InstructionLimit, st, zero, pc);
        self.b.ins().jump(out, &[limited.into()]);
        self.b.switch_to_block(out);
        self.b.block_params(out)[0]
    }

    // ---- joins ---------------------------------------------------------------------------

    pub fn join(&mut self) -> Join {
        Join { block: self.b.create_block(), edges: Vec::new(), entered: false }
    }

    /// A branch target into `join` for the code here (it brings what is pending now).
    pub fn edge(&mut self, join: &mut Join) -> Block {
        let edge = self.flags.fuel.then(|| self.b.create_block());
        join.add_edge(edge, self.pending)
    }

    /// Go on at `join` from the code here, the last path into it: where no other path branched
    /// to it and none pays its way in (no budget), in the block here, without a block of its
    /// own. A loop's latch as a block of its own was a jump more on every trip (the naive
    /// GEMM's inner loop took two jumps a trip instead of one), and Cranelift put the trip's
    /// arithmetic there, where the back edge uses it, apart from the body's loads.
    pub fn fall_into(&mut self, mut join: Join, pc: u32) {
        if join.entered || self.flags.fuel {
            let edge = self.edge(&mut join);
            self.b.ins().jump(edge, &[]);
            self.enter(join, pc);
        }
    }

    /// Go on at `join`, every path into it being in: each edge pays what it brings beyond
    /// what all bring, which stays pending (the paths of a join count alike, so normally
    /// nothing is paid: see the module doc). `pc` names the join for a limit error.
    pub fn enter(&mut self, join: Join, pc: u32) {
        let common = join.edges.iter().map(|(_, c)| *c).reduce(|a, b| a.min(&b));
        for (edge, brought) in join.edges {
            self.continue_in(edge);
            let extra = brought.checked_sub(&common.unwrap_or_default()).unwrap_or_default();
            self.pay(extra, pc);
            self.b.ins().jump(join.block, &[]);
        }
        self.continue_in(join.block);
        if let Some(common) = common {
            self.pending = common;
        }
    }

    // ---- skipped regions ----------------------------------------------------------------

    /// Count `stmts` as walking them with an empty mask counts (they are skipped by a real
    /// branch here), settling at their barriers and barrier loops as their code would; with
    /// `wait`, wait at their unguarded barriers too, as the interpreter's waves do.
    pub fn skip(&mut self, stmts: &[Stmt], wait: bool) {
        let (costs, kernel) = (self.costs(), self.kernel);
        let mut events = Vec::new();
        costs.walk_events(kernel, stmts, self.cf.call_depth(), &mut |e| events.push(e));
        for event in events {
            match event {
                WalkEvent::Count(cost) => self.count(cost),
                WalkEvent::LoopEntry(pc) => self.settle(pc),
                WalkEvent::Barrier(s) => {
                    self.settle(s.offset);
                    if wait && s.guard.is_none() {
                        self.barrier_call(s.offset);
                    }
                }
            }
        }
    }

    // ---- --stats --------------------------------------------------------------------------

    /// `--stats`: count a divergent `if` (some executing lane does not hold `pred`).
    pub fn count_divergence(&mut self, pred: PredRef) {
        if !self.flags.stats {
            return;
        }
        let exec = self.exec_mask();
        let p = self.pred_ref(pred);
        let else_lanes = self.and_not(&exec, &p);
        let any = self.any(&else_lanes);
        let one = self.b.ins().uextend(I64, any);
        self.add_value_to_counter(counter::DIVERGENT_BRANCHES, one);
    }

    /// `--stats`: count the lanes of a load, store or atomic.
    pub fn count_lanes(&mut self, inst: &Instruction, pc: u32) {
        use wave_isa::opcodes::Class;
        let counted = matches!(
            inst.op.class(),
            Class::LocalLoad
                | Class::DeviceLoad
                | Class::LocalStore
                | Class::DeviceStore
                | Class::LocalAtomic
                | Class::DeviceAtomic
        );
        if !self.flags.stats || !counted {
            return;
        }
        let mask = self.op_mask(inst.guard);
        let bits = self.mask_bits(&mask);
        // It cannot fail: its status is not looked at.
        self.call_helper(Helper::CountLanes, helper_op(inst), bits, pc);
    }

    /// What one iteration of a loop counted: from `header` (pending at its header) to now
    /// (pending at its latch).
    pub fn iteration_counted(&self, header: &Cost, offset: u32) -> Result<Cost, JitError> {
        self.pending.checked_sub(header).ok_or_else(|| {
            JitError::Codegen(format!("instruction count of the loop at byte 0x{offset:x} went down"))
        })
    }
}
