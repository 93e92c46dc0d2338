//! Bounds checks made once at a chunk-major loop's entry (issue 16, item 4).
//!
//! Where the loop counts its trips ([`wave_isa::analysis::induction`]), the most trips any
//! running lane can make bounds how far each moving address gets: a load at
//! `iv + Σ addends` with `iv` stepping by `s` takes the addresses `a₀ + j·s` for
//! `0 ≤ j ≤ J`, where `a₀` is its value at entry. One test over the running lanes' smallest
//! and largest `a₀`, in 64-bit arithmetic so that no sum wraps, shows every one of them in
//! bounds; the loads then need no check of their own. Where the test fails (a fault may come,
//! or the counts do not bound the loop) the loop leaves at once for its bail-out, whose
//! wave-major copy checks every access in the interpreter's order: the test may be
//! conservative, never wrong.

use super::{LaneFold, Translator};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I64};
use cranelift_codegen::ir::{Block, InstBuilder, Value};
use std::collections::HashMap;
use wave_isa::analysis::induction::{loop_ranges, RangedLoad, TripCounter};
use wave_isa::{FuncId, Stmt};

/// More trips than this: the test fails (the spans below then stay far from overflowing).
const MOST_TRIPS: i64 = 1 << 31;

/// The smallest and largest value of a register over the running lanes at loop entry (I64,
/// zero-extended), each found once however many loads name the register.
struct EntryRanges {
    exec: Option<Vec<Value>>,
    found: HashMap<u8, (Value, Value)>,
}

impl Translator<'_, '_> {
    /// Test, at the entry of the chunk-major loop at `offset`, every address its counted
    /// loads can take; leave for `bail` where one may be out of bounds. Returns the offsets of
    /// the loads the test covers (checked code only: none otherwise).
    pub fn check_loads_at_entry(
        &mut self,
        offset: u32,
        body: &[Stmt],
        func: FuncId,
        bail: Block,
    ) -> Vec<RangedLoad> {
        if !self.flags.checked {
            return Vec::new();
        }
        let Some(ranges) = loop_ranges(body, func, self.waves()) else { return Vec::new() };
        // Where every lane runs the loop, no lane needs masking out of the folds.
        let exec = (!self.exec_is_full(offset)).then(|| self.exec_mask());
        let mut entry = EntryRanges { exec, found: HashMap::new() };
        let (trips, mut ok) = self.most_trips(&ranges.trips, &entry);
        for load in &ranges.loads {
            let in_bounds = self.stays_in_bounds(load, trips, &mut entry);
            ok = self.b.ins().band(ok, in_bounds);
        }
        let go = self.b.create_block();
        self.b.ins().brif(ok, go, &[], bail, &[]);
        self.continue_in(go);
        ranges.loads
    }

    /// Lane 0's address in each vector in view for the load at `pc` as the exact 64-bit sum
    /// of its address's terms (an I64 offset from the memory's base), where the test at
    /// entry shows that this sum is the address: every lane runs the load (`full`: lane 0 is
    /// one the test covered), no term is subtracted and the induction register never steps
    /// down. The test put each running lane's `iv₀ + j·s + Σ addends` inside `[0, limit)` for
    /// every `j` the load can see; with only added, non-negative terms every partial sum lies
    /// below that total, so no 32-bit add on the way wrapped (the induction register's own
    /// value included). Unlike the 32-bit address, the sum lets constant terms fold into the
    /// access (`0x400(%base,%iv)`, not an `lea` per load: seven a trip in the tiled GEMM's
    /// inner loop). None otherwise.
    pub fn exact_lane0_offsets(&mut self, pc: u32) -> Option<Vec<Value>> {
        if !self.full {
            return None;
        }
        let address = self.checked_load(pc)?.address.clone();
        if address.addends.iter().any(|&(_, subtract)| subtract) || address.iv.is_some_and(|(_, s)| s < 0) {
            return None;
        }
        let terms = address.iv.map(|(r, _)| r).into_iter().chain(address.addends.iter().map(|&(r, _)| r));
        let mut sums: Vec<Option<Value>> = vec![None; self.wave.n];
        for r in terms {
            for (sum, v) in sums.iter_mut().zip(self.reg(r as u32)) {
                let lane0 = self.lane0(v);
                let wide = self.b.ins().uextend(I64, lane0);
                *sum = Some(match *sum {
                    Some(s) => self.b.ins().iadd(s, wide),
                    None => wide,
                });
            }
        }
        sums.into_iter().collect()
    }

    /// The most trips a running lane can make (I64), and whether that bound holds (an i8: no
    /// counter wraps on its way to the bound, and the count is not absurd).
    fn most_trips(&mut self, counter: &TripCounter, entry: &EntryRanges) -> (Value, Value) {
        let signed = counter.signed;
        let (low, high) =
            if signed { (LaneFold::SMin, LaneFold::SMax) } else { (LaneFold::UMin, LaneFold::UMax) };
        let (top, bottom) = if signed { (i32::MAX as i64, i32::MIN as i64) } else { (u32::MAX as i64, 0) };
        let inclusive = counter.inclusive as i64;
        let fold = |t: &mut Self, r: u8, fold: LaneFold| {
            let values = t.reg(r as u32);
            let folded = t.fold_running(&values, entry, fold);
            if signed {
                t.b.ins().sextend(I64, folded)
            } else {
                t.b.ins().uextend(I64, folded)
            }
        };
        // `distance / step` trips, rounded up; `fits`: the counter's last step stays in range.
        let (distance, step, fits) = if counter.step > 0 {
            // Going on while c < limit (c <= y: limit = y + 1); each lane stops at its own y.
            let y = fold(self, counter.bound, high);
            let limit = self.b.ins().iadd_imm_s(y, inclusive);
            let first = fold(self, counter.counter, low);
            let last = self.b.ins().iadd_imm_s(limit, counter.step - 1);
            let fits = self.b.ins().icmp_imm_s(IntCC::SignedLessThanOrEqual, last, top);
            (self.b.ins().isub(limit, first), counter.step, fits)
        } else {
            // Going on while c > limit (c >= y: limit = y - 1).
            let y = fold(self, counter.bound, low);
            let limit = self.b.ins().iadd_imm_s(y, -inclusive);
            let first = fold(self, counter.counter, high);
            let last = self.b.ins().iadd_imm_s(limit, 1 + counter.step);
            let fits = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, last, bottom);
            (self.b.ins().isub(first, limit), -counter.step, fits)
        };
        let zero = self.b.ins().iconst(I64, 0);
        let distance = self.b.ins().smax(distance, zero);
        let trips = if step == 1 {
            distance
        } else {
            let rounded = self.b.ins().iadd_imm_s(distance, step - 1);
            let step = self.b.ins().iconst(I64, step);
            self.b.ins().udiv(rounded, step)
        };
        let sane = self.b.ins().icmp_imm_s(IntCC::SignedLessThanOrEqual, trips, MOST_TRIPS);
        (trips, self.b.ins().band(fits, sane))
    }

    /// Whether every address `load` can take in `trips` trips is in bounds for the running
    /// lanes (an i8). Each lane's exact sum `iv + Σ ±addend` lies between the sums of the
    /// registers' extremes; where that range plus the steps is inside `[0, limit)`, no lane's
    /// 32-bit sum wrapped, so its address is that exact sum.
    fn stays_in_bounds(&mut self, load: &RangedLoad, trips: Value, entry: &mut EntryRanges) -> Value {
        let address = &load.address;
        let zero = self.b.ins().iconst(I64, 0);
        let (mut lowest, mut highest) = (zero, zero);
        let terms = address.iv.map(|(iv, _)| (iv, false)).into_iter().chain(address.addends.iter().copied());
        for (r, subtract) in terms {
            let (min, max) = self.extremes(r, entry);
            if subtract {
                lowest = self.b.ins().isub(lowest, max);
                highest = self.b.ins().isub(highest, min);
            } else {
                lowest = self.b.ins().iadd(lowest, min);
                highest = self.b.ins().iadd(highest, max);
            }
        }
        // The steps taken before the load: at most trips - 1, or trips after the step's write.
        let steps = if address.after_step {
            trips
        } else {
            let before = self.b.ins().iadd_imm_s(trips, -1);
            self.b.ins().smax(before, zero)
        };
        let step = address.iv.map_or(0, |(_, s)| s);
        let span = self.b.ins().imul_imm_s(steps, step);
        let down = self.b.ins().smin(span, zero);
        let up = self.b.ins().smax(span, zero);
        let lowest = self.b.ins().iadd(lowest, down);
        let highest = self.b.ins().iadd(highest, up);
        let above_zero = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, lowest, 0);
        // In bounds: address < limit (the exact one for this width, see `abi::limits_for`).
        let limit =
            self.load_workgroup_field(I32, self.env.limit_offset(load.local, load.bytes.trailing_zeros()));
        let limit = self.b.ins().uextend(I64, limit);
        let below_limit = self.b.ins().icmp(IntCC::SignedLessThan, highest, limit);
        self.b.ins().band(above_zero, below_limit)
    }

    /// Register `r`'s smallest and largest unsigned value over the running lanes (I64).
    fn extremes(&mut self, r: u8, entry: &mut EntryRanges) -> (Value, Value) {
        if let Some(&found) = entry.found.get(&r) {
            return found;
        }
        let values = self.reg(r as u32);
        let min = self.fold_running(&values, entry, LaneFold::UMin);
        let max = self.fold_running(&values, entry, LaneFold::UMax);
        let found = (self.b.ins().uextend(I64, min), self.b.ins().uextend(I64, max));
        entry.found.insert(r, found);
        found
    }

    /// `fold` over the running lanes of `values`, as an I32 scalar (its identity when no lane
    /// runs).
    fn fold_running(&mut self, values: &[Value], entry: &EntryRanges, fold: LaneFold) -> Value {
        let all = match &entry.exec {
            Some(exec) => self.fold_lanes(values, exec, fold),
            None => self.fold_every_lane(values, fold),
        };
        self.b.ins().extractlane(all, 0)
    }
}
