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

/// The unguarded writes that need no blend, as (statement offset, register): the top-level
/// writes of every loop temporary (see the module doc).
pub fn unblended_writes(kernel: &Kernel) -> HashSet<(u32, u32)> {
    let mut writes = HashSet::new();
    let [entry] = kernel.funcs.as_slice() else { return writes };
    let all = uses(&entry.body);
    walk_block(&entry.body, 0, &mut |s, _| {
        let StmtKind::Loop { body, .. } = &s.kind else { return };
        let inside = uses(body);
        for (&reg, &count) in &inside.count {
            if all.count.get(&reg) != Some(&count) || all.cross_lane.contains(&reg) {
                continue;
            }
            let reg_state = StateRef::Reg(reg);
            let top_level_write = |s: &Stmt| match &s.kind {
                StmtKind::Op(inst) => {
                    s.guard.is_none()
                        && inst.named_state(Some(Role::Def)).any(|n| n == reg_state)
                        && !inst.named_state(Some(Role::Use)).any(|n| n == reg_state)
                }
                _ => false,
            };
            let first = body.iter().find(|s| names(s, reg));
            if !first.is_some_and(&top_level_write) {
                continue;
            }
            for s in body.iter().filter(|s| top_level_write(s)) {
                writes.insert((s.offset, reg));
            }
        }
    });
    writes
}

/// How often each register is named by the ops in `stmts` (nested ones included), and which
/// registers a wave or MMA op names.
#[derive(Default)]
struct Uses {
    count: HashMap<u32, usize>,
    cross_lane: HashSet<u32>,
}

fn uses(stmts: &[Stmt]) -> Uses {
    let mut u = Uses::default();
    walk_block(stmts, 0, &mut |s, _| {
        let StmtKind::Op(inst) = &s.kind else { return };
        let cross_lane = matches!(inst.op.class(), Class::Wave | Class::Mma);
        for named in inst.named_state(None) {
            if let StateRef::Reg(r) = named {
                *u.count.entry(r).or_default() += 1;
                if cross_lane {
                    u.cross_lane.insert(r);
                }
            }
        }
    });
    u
}

/// Whether statement `s` (or one nested in it) names register `reg`.
fn names(s: &Stmt, reg: u32) -> bool {
    let mut found = false;
    walk_block(std::slice::from_ref(s), 0, &mut |s, _| {
        if let StmtKind::Op(inst) = &s.kind {
            found |= inst.named_state(None).any(|n| n == StateRef::Reg(reg));
        }
    });
    found
}

#[cfg(test)]
mod tests {
    use super::unblended_writes;

    fn writes(source: &str) -> Vec<u32> {
        let (module, _) = wave_isa::module::load_bytes(source.as_bytes(), "k.wave").expect("assembles");
        let mut w: Vec<u32> = unblended_writes(&module.kernels[0]).into_iter().map(|(_, r)| r).collect();
        w.sort_unstable();
        w.dedup();
        w
    }

    #[test]
    fn only_registers_written_first_in_one_loop_body_and_used_nowhere_else() {
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
        if p0
            mov r12, r3
        endif
    endloop
    device_store_u32 r2, r8
.end
";
        // r3 (read in an `if` too) and r5 only: r2 and r1 are read first, r6 is read by its
        // first write, r7's only write is guarded, r8 is read after the loop, r10 feeds a
        // wave op, r12 is written only in an `if`.
        assert_eq!(writes(source), vec![3, 5]);
    }
}
