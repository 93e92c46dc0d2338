//! Trip counts and moving addresses of a loop, for bounds checks made once at loop entry
//! (a JIT checks every address a load can take over the whole loop, then runs the loop with
//! no per-trip check).
//!
//! The loop must open with its exit test: `cmp p, a, b` then `break p` (or `break !p`), where
//! one operand is a *counter* and the other is not written in the loop. A counter (like any
//! *induction register*) is written in the loop only by one `iadd r, r, k` / `isub r, r, k`
//! with a known constant `k`, outside nested loops; the counter's one write must also run on
//! every trip (top level, unguarded), and no `continue` of this loop may skip it. Its value at
//! the test of trip `t` is then `r₀ + t·k`, which bounds the trips a lane makes.
//!
//! A load's address is described when it is an induction register plus or minus registers
//! the loop never writes ([`Address`]); other induction registers may be incremented
//! conditionally, so at trip `t` they have moved `j ≤ t` steps before their write and
//! `j ≤ t + 1` after it ([`Address::after_step`]). Everything here is exact 32-bit wrapping
//! arithmetic; the user of the facts checks at run time that no sum wraps.

use super::uniformity::{Uniformity, Value};
use crate::ir::{walk_block, written_state, FuncId, Stmt, StmtKind};
use crate::opcodes::{Class, Op, Role, Slot};
use crate::StateRef;

/// How the loop's exit test bounds its trips: it goes on while `counter REL bound`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TripCounter {
    pub counter: u8,
    /// A register the loop never writes.
    pub bound: u8,
    /// Added to the counter once per trip (two's complement: the `isub` form is negative).
    pub step: i64,
    pub signed: bool,
    /// Goes on while `counter < bound` (or `<=` when `inclusive`) for a positive step, while
    /// `counter > bound` (or `>=`) for a negative one.
    pub inclusive: bool,
}

/// A load address `iv + Σ ±addend` at trip `t`, with the induction register `iv` moved
/// `j` steps, `0 ≤ j ≤ t + after_step`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Address {
    /// The induction register and its step, or `None` for an address the loop never moves.
    pub iv: Option<(u8, i64)>,
    /// Registers the loop never writes, added (`false`) or subtracted (`true`).
    pub addends: Vec<(u8, bool)>,
    /// Whether the load may come after the induction register's write in the same trip.
    pub after_step: bool,
}

/// One load of the loop whose every address is described.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangedLoad {
    /// Byte offset of the load.
    pub pc: u32,
    pub address: Address,
    pub bytes: u32,
    pub local: bool,
}

/// What a loop's bounds checks at entry need.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopRanges {
    pub trips: TripCounter,
    pub loads: Vec<RangedLoad>,
}

/// The trip counter and the described loads of the loop with this body (`None` without a
/// counter as the module doc says, or without a described load). `values` supplies the
/// constant steps (uniformity analysis of the function `func`).
pub fn loop_ranges(body: &[Stmt], func: FuncId, values: &Uniformity) -> Option<LoopRanges> {
    let facts = Facts::of(body, func, values)?;
    let trips = facts.trip_counter(body)?;
    let mut state: Vec<Option<Address>> = (0..=u8::MAX).map(|r| facts.entry_address(r)).collect();
    let mut loads = Vec::new();
    facts.walk(body, &mut state, &mut loads);
    (!loads.is_empty()).then_some(LoopRanges { trips, loads })
}

/// What one pass over the body learns.
struct Facts {
    /// Registers written anywhere in the body.
    written: Vec<bool>,
    /// Induction registers: the offset of their one write, and its step.
    induction: Vec<Option<(u32, i64)>>,
    /// Offsets of the induction writes at the body's top level, unguarded.
    every_trip: Vec<u32>,
    /// A `continue` of this loop (not of a nested one).
    continues: bool,
}

impl Facts {
    fn of(body: &[Stmt], func: FuncId, values: &Uniformity) -> Option<Facts> {
        let mut writes = vec![0u32; 256];
        let mut increments: Vec<Option<(u32, i64)>> = vec![None; 256];
        let mut unsupported = false;
        walk_block(body, 0, &mut |s, _| {
            let StmtKind::Op(inst) = &s.kind else {
                unsupported |= matches!(
                    s.kind,
                    StmtKind::Call { .. } | StmtKind::Return | StmtKind::Halt { .. } | StmtKind::Barrier
                );
                return;
            };
            for named in inst.named_state(Some(Role::Def)) {
                if let StateRef::Reg(r) = named {
                    writes[r as usize] += 1;
                }
            }
            if let Some((r, step)) = increment(inst, s.offset, func, values) {
                increments[r as usize] = Some((s.offset, step));
            }
        });
        if unsupported {
            return None;
        }
        let mut in_nested_loops = vec![false; 256];
        let mut continues = false;
        mark_nested(body, &mut in_nested_loops, &mut continues);
        let induction =
            (0..256).map(|r| increments[r].filter(|_| writes[r] == 1 && !in_nested_loops[r])).collect();
        let every_trip = body
            .iter()
            .filter_map(|s| match &s.kind {
                StmtKind::Op(inst) if inst.guard.is_none() => Some(s.offset),
                _ => None,
            })
            .collect();
        Some(Facts { written: writes.iter().map(|&w| w > 0).collect(), induction, every_trip, continues })
    }

    /// The exit test at the body's head, with its counter.
    fn trip_counter(&self, body: &[Stmt]) -> Option<TripCounter> {
        let [test, exit, ..] = body else { return None };
        let (StmtKind::Op(cmp), StmtKind::Break { pred }) = (&test.kind, &exit.kind) else { return None };
        if self.continues || cmp.guard.is_some() || pred.index != cmp.rd {
            return None;
        }
        // The test as "a < b" or "a <= b" (signed or not); the loop goes on while it fails
        // (`break p`) or while it holds (`break !p`).
        let (a, b, signed, inclusive) = match cmp.op {
            Op::IcmpLt => (cmp.rs1, cmp.rs2, true, false),
            Op::IcmpLe => (cmp.rs1, cmp.rs2, true, true),
            Op::IcmpGt => (cmp.rs2, cmp.rs1, true, false),
            Op::IcmpGe => (cmp.rs2, cmp.rs1, true, true),
            Op::UcmpLt => (cmp.rs1, cmp.rs2, false, false),
            Op::UcmpLe => (cmp.rs1, cmp.rs2, false, true),
            _ => return None,
        };
        // Going on while `a < b` holds: the counter climbs to the bound from below (a) or
        // falls to it from above (b). While it fails (b <= a): the same with roles swapped.
        let (low, high, inclusive) = if pred.negated { (a, b, inclusive) } else { (b, a, !inclusive) };
        let counter_of = |r: u8| {
            self.induction[r as usize].filter(|(offset, _)| self.every_trip.contains(offset)).map(|(_, s)| s)
        };
        let (counter, bound, step) = match (counter_of(low), counter_of(high)) {
            (Some(step), _) if step > 0 && !self.written[high as usize] => (low, high, step),
            (_, Some(step)) if step < 0 && !self.written[low as usize] => (high, low, step),
            _ => return None,
        };
        Some(TripCounter { counter, bound, step, signed, inclusive })
    }

    /// A register's address form at the body's head.
    fn entry_address(&self, r: u8) -> Option<Address> {
        if let Some((_, step)) = self.induction[r as usize] {
            return Some(Address { iv: Some((r, step)), addends: Vec::new(), after_step: false });
        }
        (!self.written[r as usize]).then(|| Address {
            iv: None,
            addends: vec![(r, false)],
            after_step: false,
        })
    }

    /// Follow the body in order, recording the loads whose address is described.
    fn walk(&self, stmts: &[Stmt], state: &mut [Option<Address>], loads: &mut Vec<RangedLoad>) {
        for s in stmts {
            match &s.kind {
                StmtKind::Op(inst) => {
                    let class = inst.op.class();
                    if matches!(class, Class::LocalLoad | Class::DeviceLoad) {
                        if let Some(address) = &state[inst.rs1 as usize] {
                            let bytes = inst.op.access_bytes();
                            let local = class == Class::LocalLoad;
                            loads.push(RangedLoad { pc: s.offset, address: address.clone(), bytes, local });
                        }
                    }
                    let result = match self.induction[inst.rd as usize] {
                        Some((offset, step)) if offset == s.offset => {
                            Some(Address { iv: Some((inst.rd, step)), addends: Vec::new(), after_step: true })
                        }
                        _ if inst.guard.is_some() => None,
                        _ => derived(inst, state),
                    };
                    for named in inst.named_state(Some(Role::Def)) {
                        if let StateRef::Reg(r) = named {
                            state[r as usize] = None;
                        }
                    }
                    if inst.named_state(Some(Role::Def)).any(|d| d == StateRef::Reg(inst.rd as u32)) {
                        state[inst.rd as usize] = result;
                    }
                }
                StmtKind::If { then_body, else_body, .. } => {
                    let mut other = state.to_vec();
                    self.walk(then_body, state, loads);
                    self.walk(else_body, &mut other, loads);
                    for (mine, theirs) in state.iter_mut().zip(other) {
                        *mine = join(mine.take(), theirs);
                    }
                }
                StmtKind::Loop { body, .. } => {
                    // At its head a register the nested loop writes holds its last trip's value.
                    let nested = written_state(body).regs;
                    for (r, slot) in state.iter_mut().enumerate() {
                        if nested[r] {
                            *slot = None;
                        }
                    }
                    self.walk(body, &mut state.to_vec(), loads);
                }
                _ => {}
            }
        }
    }
}

/// `iadd r, r, k`, `iadd r, k, r` or `isub r, r, k` with `k` a known constant: `(r, step)`.
fn increment(inst: &crate::Instruction, pc: u32, func: FuncId, values: &Uniformity) -> Option<(u8, i64)> {
    let constant = |slot| match values.operand(func, pc, inst, slot) {
        Some(Value::Uniform(Some(c))) => Some(c as i32 as i64),
        _ => None,
    };
    let r = inst.rd;
    match inst.op {
        Op::Iadd if inst.rs1 == r && inst.rs2 != r => Some((r, constant(Slot::Rs2)?)),
        Op::Iadd if inst.rs2 == r && inst.rs1 != r => Some((r, constant(Slot::Rs1)?)),
        Op::Isub if inst.rs1 == r && inst.rs2 != r => Some((r, -constant(Slot::Rs2)?)),
        _ => None,
    }
}

/// The address form an unguarded op writes to `rd`: a copy, or a sum or difference of two
/// forms of which at most one moves.
fn derived(inst: &crate::Instruction, state: &[Option<Address>]) -> Option<Address> {
    let (a, b) = (state[inst.rs1 as usize].as_ref(), state[inst.rs2 as usize].as_ref());
    match inst.op {
        Op::Mov => a.cloned(),
        Op::Iadd => combine(a?, b?, false),
        Op::Isub => combine(a?, b?, true),
        _ => None,
    }
}

/// `a + b` (or `a - b`), where `b` does not move when subtracted.
fn combine(a: &Address, b: &Address, subtract: bool) -> Option<Address> {
    let iv = match (a.iv, b.iv) {
        (iv, None) => iv,
        (None, iv) if !subtract => iv,
        _ => return None,
    };
    let mut addends = a.addends.clone();
    addends.extend(b.addends.iter().map(|&(r, negated)| (r, negated != subtract)));
    Some(Address { iv, addends, after_step: a.after_step || b.after_step })
}

/// The form a register has after an `if`: the same on both paths, or the induction register
/// with either its moved or its unmoved count (the later one bounds both).
fn join(a: Option<Address>, b: Option<Address>) -> Option<Address> {
    let (a, b) = (a?, b?);
    if a.iv == b.iv && a.addends == b.addends {
        let after_step = a.after_step || b.after_step;
        return Some(Address { after_step, ..a });
    }
    None
}

/// Mark the registers written inside nested loops, and whether a `continue` leaves this
/// loop's trip early (those of a nested loop are its own).
fn mark_nested(stmts: &[Stmt], in_nested: &mut [bool], continues: &mut bool) {
    for s in stmts {
        match &s.kind {
            StmtKind::Continue { .. } => *continues = true,
            StmtKind::If { then_body, else_body, .. } => {
                mark_nested(then_body, in_nested, continues);
                mark_nested(else_body, in_nested, continues);
            }
            StmtKind::Loop { body, .. } => {
                for (slot, written) in in_nested.iter_mut().zip(written_state(body).regs) {
                    *slot |= written;
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::uniformity;
    use crate::module::load_bytes;

    /// The ranges of the first loop of a kernel.
    fn ranges(source: &str) -> Option<LoopRanges> {
        let (module, _) = load_bytes(source.as_bytes(), "t.wave").unwrap_or_else(|e| panic!("{e}"));
        let k = module.kernels[0].kernel().clone();
        let values = uniformity(&k);
        assert!(!values.conservative);
        let body = k.funcs[0].body.iter().find_map(|s| match &s.kind {
            StmtKind::Loop { body, .. } => Some(body.clone()),
            _ => None,
        })?;
        loop_ranges(&body, 0, &values)
    }

    const COUNTED: &str = "
.kernel k
    mov_imm r1, 16
    mov_imm r2, 0
    mov_imm r3, 1
    mov_imm r4, 4
    mov_imm r5, 1024
    mov_sr r6, sr_lane_id
    loop
        icmp_le p1, r1, r2
        break p1
        local_load_u32 r7, r6
        iadd r8, r6, r5
        device_load_u32 r9, r8
        iadd r6, r6, r4
        device_load_u16 r10, r6
        isub r1, r1, r3
    endloop
    halt
.end
";

    #[test]
    fn a_counted_loop_bounds_its_loads() {
        let r = ranges(COUNTED).expect("ranges");
        assert_eq!(r.trips, TripCounter { counter: 1, bound: 2, step: -1, signed: true, inclusive: false });
        let iv = Some((6, 4));
        let loads: Vec<(Address, u32, bool)> =
            r.loads.into_iter().map(|l| (l.address, l.bytes, l.local)).collect();
        assert_eq!(
            loads,
            vec![
                (Address { iv, addends: vec![], after_step: false }, 4, true),
                (Address { iv, addends: vec![(5, false)], after_step: false }, 4, false),
                (Address { iv, addends: vec![], after_step: true }, 2, false),
            ]
        );
    }

    #[test]
    fn the_test_may_count_up_and_break_on_its_negation() {
        let src = COUNTED
            .replace("mov_imm r1, 16", "mov_imm r1, 0")
            .replace("mov_imm r2, 0", "mov_imm r2, 16")
            .replace("icmp_le p1, r1, r2", "ucmp_lt p1, r1, r2")
            .replace("break p1", "break !p1")
            .replace("isub r1, r1, r3", "iadd r1, r1, r3");
        let r = ranges(&src).expect("ranges");
        assert_eq!(r.trips, TripCounter { counter: 1, bound: 2, step: 1, signed: false, inclusive: false });
    }

    #[test]
    fn no_counter_no_ranges() {
        // The counter's write is conditional: trips are not bounded by it.
        assert_eq!(ranges(&COUNTED.replace("isub r1, r1, r3", "@p1 isub r1, r1, r3")), None);
        // A continue may skip it.
        let skip = COUNTED.replace("break p1", "break p1\n        continue p1");
        assert_eq!(ranges(&skip), None);
        // The bound moves.
        assert_eq!(
            ranges(&COUNTED.replace("isub r1, r1, r3", "isub r1, r1, r3\n        iadd r2, r2, r3")),
            None
        );
        // The step is not a known constant.
        assert_eq!(ranges(&COUNTED.replace("mov_imm r3, 1", "mov_sr r3, sr_lane_id")), None);
        // Counting down to a bound below, but the test goes on while below it.
        assert_eq!(ranges(&COUNTED.replace("break p1", "break !p1")), None);
    }

    #[test]
    fn addresses_lose_their_form_where_the_loop_makes_it_unknown() {
        // Written twice: not an induction register, so no load of it is described.
        let twice = COUNTED.replace("iadd r6, r6, r4", "iadd r6, r6, r4\n        iadd r6, r6, r4");
        assert_eq!(ranges(&twice), None);
        // A guarded derivation, a product, a value from memory.
        for (from, to) in [
            ("iadd r8, r6, r5", "@p1 iadd r8, r6, r5"),
            ("iadd r8, r6, r5", "imul r8, r6, r5"),
            ("iadd r8, r6, r5", "local_load_u32 r8, r6"),
        ] {
            let r = ranges(&COUNTED.replace(from, to)).expect("ranges");
            assert!(r.loads.iter().all(|l| l.address.addends.is_empty()), "{to}: {:?}", r.loads);
        }
        // Subtracting a moving value is not a moving address.
        let r = ranges(&COUNTED.replace("iadd r8, r6, r5", "isub r8, r5, r6")).expect("ranges");
        assert_eq!(r.loads.len(), 2);
        // A value from an if's one side only.
        let one_side = COUNTED.replace("iadd r8, r6, r5", "if p1\n        iadd r8, r6, r5\n        endif");
        let r = ranges(&one_side).expect("ranges");
        assert_eq!(r.loads.len(), 2);
        // Inside a nested loop that writes it, the register is unknown at the loop's head.
        let nested = COUNTED.replace(
            "device_load_u32 r9, r8",
            "loop\n        device_load_u32 r9, r8\n        iadd r8, r8, r5\n        break p1\n        endloop",
        );
        let r = ranges(&nested).expect("ranges");
        assert_eq!(r.loads.len(), 2);
    }

    #[test]
    fn an_increment_inside_an_if_counts_as_maybe_taken() {
        let src = COUNTED.replace("iadd r6, r6, r4", "if p1\n        iadd r6, r6, r4\n        endif");
        let r = ranges(&src).expect("ranges");
        let last = r.loads.last().expect("the u16 load");
        assert_eq!(last.bytes, 2);
        assert!(last.address.after_step);
    }
}
