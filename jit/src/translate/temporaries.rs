//! Loop temporaries: registers whose lanes that did not run a write never read the value
//! again, so the write needs no blend.
//!
//! A write under a partial mask keeps the inactive lanes' old values (a blend), because those
//! lanes may read them later. Take a register used only inside one loop's body, whose first
//! use there (in program order, nested statements included) is an unguarded write at the
//! body's top level that does not read it. Each trip, every lane still in the loop runs that
//! write before any read, and the lanes active at a later point of a trip are a subset of
//! those active at the write (lanes only leave a trip: `break` and `continue` take them away,
//! nested `if`s and loops give back only what they took). No lane reads it outside the loop.
//! So what an unguarded top-level write leaves in the inactive lanes is never read, and the
//! write can replace the whole vector (writes nested in the body still blend: the lanes they
//! skip read what the top-level write left). Besides the blend, the old value is then dead at
//! the loop's header, which spares the register allocator carrying it around the loop (a
//! coherent copy's loaded values were stored to the stack on every trip for the masked loop's
//! blends).
//!
//! The same holds in loops nested in such a loop, the outermost one that holds every name of
//! the register: where each loop from it down to the nested one writes the register first
//! each trip, and nothing that runs after the nested loop's statement before the trip of its
//! enclosing loop ends names the register (the rest of that body; of an `if`'s `then` side,
//! the `else` side too). A lane that skips the nested write then either left one of those
//! loops (it resumes where nothing reads the register before the next trip's first write, or
//! after the outermost loop, where nothing names it) or waits for an enclosing loop's next
//! trip, which writes it first. (Nested loops that each set a counter or compare result
//! blended it at every level, and carried the blended values through every header.)
//!
//! Kernels with calls are left alone (a callee's statements are shared by its call sites),
//! and so are registers that a wave or MMA op names (those read other lanes' values).

use std::collections::{HashMap, HashSet};
use wave_isa::ir::walk_block;
use wave_isa::opcodes::{Class, Role};
use wave_isa::{Kernel, StateRef, Stmt, StmtKind};

/// The unguarded writes that need no blend, as (statement offset, register or predicate): the
/// top-level writes of every loop temporary (see the module doc).
pub fn unblended_writes(kernel: &Kernel) -> HashSet<(u32, StateRef)> {
    let mut writes = HashSet::new();
    let [entry] = kernel.funcs.as_slice() else { return writes };
    let all = uses(&entry.body);
    walk_block(&entry.body, 0, &mut |s, _| {
        let StmtKind::Loop { body, .. } = &s.kind else { return };
        let inside = uses(body);
        for (&state, count) in &inside.count {
            if all.count.get(&state) == Some(count) && !all.cross_lane.contains(&state) {
                loop_temporary(body, state, &mut writes);
            }
        }
    });
    writes
}

/// The top-level writes of `state` in a loop with this body, where each trip writes it first,
/// and those of the loops nested in it that qualify (see the module doc). The caller knows
/// that no lane leaving the loop reads `state` again before writing it.
fn loop_temporary(body: &[Stmt], state: StateRef, writes: &mut HashSet<(u32, StateRef)>) {
    if !written_first_each_trip(body).contains(&state) {
        return;
    }
    for s in body.iter().filter(|s| top_level_write(s, state)) {
        writes.insert((s.offset, state));
    }
    nested_loop_temporaries(body, state, writes);
}

/// The loops in `stmts` (nested in `if`s too) after which nothing in `stmts` names `state`,
/// given that nothing a lane runs after leaving `stmts` reads it before a write that covers
/// the lane: theirs is a loop temporary where they write it first each trip.
fn nested_loop_temporaries(stmts: &[Stmt], state: StateRef, writes: &mut HashSet<(u32, StateRef)>) {
    for s in stmts.iter().rev() {
        match &s.kind {
            StmtKind::Loop { body, .. } => loop_temporary(body, state, writes),
            StmtKind::If { then_body, else_body, .. } => {
                // The `else` side runs after the `then` side.
                if !names(else_body, state) {
                    nested_loop_temporaries(then_body, state, writes);
                }
                nested_loop_temporaries(else_body, state, writes);
            }
            _ => {}
        }
        if names(std::slice::from_ref(s), state) {
            return;
        }
    }
}

/// Whether `stmts` (nested statements included) name `state`.
fn names(stmts: &[Stmt], state: StateRef) -> bool {
    let mut found = false;
    walk_block(stmts, 0, &mut |s, _| found |= named_here(s).contains(&state));
    found
}

/// The registers and predicates each trip of a loop with this body writes before it reads
/// them: the first statement of the body that names one (in it or nested in it) is an
/// unguarded op that writes it without reading it. Every lane still in the trip at a later
/// read ran that write (lanes only leave a trip); a lane that left before it keeps its older
/// value.
pub(super) fn written_first_each_trip(body: &[Stmt]) -> Vec<StateRef> {
    let mut seen: Vec<StateRef> = Vec::new();
    let mut first_written = Vec::new();
    for s in body {
        walk_block(std::slice::from_ref(s), 0, &mut |t, _| {
            for state in named_here(t) {
                if !seen.contains(&state) {
                    seen.push(state);
                    if top_level_write(s, state) {
                        first_written.push(state);
                    }
                }
            }
        });
    }
    first_written
}

/// The registers and predicates a cross-lane op (wave op, MMA) in `stmts` names: those read
/// other lanes' values, active or not.
pub(super) fn cross_lane_state(stmts: &[Stmt]) -> HashSet<StateRef> {
    uses(stmts).cross_lane
}

/// Whether `s` is an unguarded op that writes `state` without reading it.
fn top_level_write(s: &Stmt, state: StateRef) -> bool {
    match &s.kind {
        StmtKind::Op(inst) => {
            s.guard.is_none()
                && inst.named_state(Some(Role::Def)).any(|n| n == state)
                && !inst.named_state(Some(Role::Use)).any(|n| n == state)
        }
        _ => false,
    }
}

/// How often each register and predicate is named in `stmts` (nested statements included),
/// and which ones a wave or MMA op names.
#[derive(Default)]
struct Uses {
    count: HashMap<StateRef, usize>,
    cross_lane: HashSet<StateRef>,
}

fn uses(stmts: &[Stmt]) -> Uses {
    let mut u = Uses::default();
    walk_block(stmts, 0, &mut |s, _| {
        let cross_lane =
            matches!(&s.kind, StmtKind::Op(inst) if matches!(inst.op.class(), Class::Wave | Class::Mma));
        for state in named_here(s) {
            *u.count.entry(state).or_default() += 1;
            if cross_lane {
                u.cross_lane.insert(state);
            }
        }
    });
    u
}

/// The registers and predicates statement `s` itself names: an op's operands, a guard, the
/// predicate of an `if`, `break` or `continue` (not what nested statements name).
fn named_here(s: &Stmt) -> Vec<StateRef> {
    let mut named: Vec<StateRef> = s.guard.iter().map(|g| StateRef::Pred(g.index)).collect();
    match &s.kind {
        StmtKind::Op(inst) => named.extend(inst.named_state(None)),
        StmtKind::If { pred, .. } | StmtKind::Break { pred } | StmtKind::Continue { pred } => {
            named.push(StateRef::Pred(pred.index))
        }
        _ => {}
    }
    named
}

#[cfg(test)]
mod tests {
    use super::unblended_writes;
    use wave_isa::StateRef;

    fn writes(source: &str) -> Vec<String> {
        let (module, _) = wave_isa::module::load_bytes(source.as_bytes(), "k.wave").expect("assembles");
        let mut w: Vec<String> = unblended_writes(&module.kernels[0])
            .into_iter()
            .map(|(_, state)| match state {
                StateRef::Reg(r) => format!("r{r}"),
                StateRef::Pred(p) => format!("p{p}"),
            })
            .collect();
        w.sort_unstable();
        w.dedup();
        w
    }

    /// How many writes of each register or predicate need no blend.
    fn write_counts(source: &str) -> Vec<(String, usize)> {
        let (module, _) = wave_isa::module::load_bytes(source.as_bytes(), "k.wave").expect("assembles");
        let mut counts = std::collections::BTreeMap::new();
        for (_, state) in unblended_writes(&module.kernels[0]) {
            let name = match state {
                StateRef::Reg(r) => format!("r{r}"),
                StateRef::Pred(p) => format!("p{p}"),
            };
            *counts.entry(name).or_insert(0) += 1;
        }
        counts.into_iter().collect()
    }

    #[test]
    fn nested_loops_that_write_a_counter_first_each_trip_need_no_blend() {
        // r10 and p1 at all three levels; r6 is read first. In the second kernel the
        // outer loop reads r10 after the middle loop (both nested writes blend); in the third
        // the inner loop sits in a `then` side whose `else` side reads p1 (its lanes skip
        // the `then` side's writes); in the fourth the outer loop reads r10 before writing it
        // (a lane that broke out of an inner loop reads what the inner write left).
        let nest = "
.kernel k
    mov_sr r1, sr_thread_id_x
    mov_imm r6, 0
    loop
        mov_imm r10, 3
        icmp_lt p1, r1, r10
        break p1
        iadd r6, r6, r10
        loop
            mov_imm r10, 5
            icmp_lt p1, r1, r10
            break p1
            iadd r6, r6, r10
            loop
                mov_imm r10, 7
                icmp_lt p1, r1, r10
                break p1
                iadd r6, r6, r10
            endloop
        endloop
    endloop
    device_store_u32 r1, r6
.end
";
        let expected = |n| vec![("p1".to_string(), n), ("r10".to_string(), n)];
        assert_eq!(write_counts(nest), expected(3));
        let read_after = nest.replacen(
            "        endloop
    endloop",
            "        endloop
        iadd r6, r6, r10
    endloop",
            1,
        );
        assert_eq!(write_counts(&read_after), vec![("p1".to_string(), 3), ("r10".to_string(), 1)]);
        let in_then = nest.replacen(
            "            loop
                mov_imm r10, 7",
            "            if p1
            loop
                mov_imm r10, 7",
            1,
        );
        let in_then = in_then.replacen(
            "            endloop
        endloop",
            "            endloop
            else
            break p1
            endif
        endloop",
            1,
        );
        assert_eq!(write_counts(&in_then), vec![("p1".to_string(), 2), ("r10".to_string(), 3)]);
        let outer_reads_first = nest.replacen(
            "    loop
        mov_imm r10, 3",
            "    loop
        iadd r6, r6, r10
        mov_imm r10, 3",
            1,
        );
        assert_eq!(write_counts(&outer_reads_first), vec![("p1".to_string(), 3)]);
    }

    #[test]
    fn only_state_written_first_in_one_loop_body_and_used_nowhere_else() {
        let source = "
.kernel k
    mov_sr r1, sr_thread_id_x
    mov_imm r2, 0
    mov_imm r9, 0
    loop
        ucmp_lt p0, r1, r4
        break !p0
        device_load_u32 r3, r1
        iadd r2, r2, r3
        mov r5, r3
        iadd r5, r5, r3
        iadd r6, r6, r3
        @p0 mov r7, r3
        iadd r8, r1, r1
        iadd r1, r1, r4
        mov r10, r3
        wave_shuffle r11, r10, r1
        icmp_eq p1, r1, r4
        if p0
            mov r12, r3
            icmp_eq p2, r3, r4
        endif
    endloop
    @p1 device_store_u32 r2, r8
.end
";
        // p0 (read by `break`, a guard and an `if`), r3 (read in an `if` too) and r5 only:
        // r2 and r1 are read first, r6 is read by its first write, r7's only write is
        // guarded, r8 and p1 are read after the loop, r10 feeds a wave op, r12 and p2 are
        // written only in an `if`.
        assert_eq!(writes(source), vec!["p0", "r3", "r5"]);
    }
}
