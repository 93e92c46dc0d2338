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
        for state in written_first_each_trip(body) {
            if all.count.get(&state) != inside.count.get(&state) || all.cross_lane.contains(&state) {
                continue;
            }
            for s in body.iter().filter(|s| top_level_write(s, state)) {
                writes.insert((s.offset, state));
            }
        }
    });
    writes
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
