//! Loop fission by accumulators: a chunk-major loop whose accumulators and the values they
//! read outgrow the machine's 16 vector registers runs as several passes over its trips,
//! each computing some of the accumulators (the GPU-style GEMM's 64, `fma acc, a, b, acc`
//! over 8 `a` and 8 `b` values: passes of 2×4 blocks, each with the 2 `a` and 4 `b` values
//! it reads).
//!
//! One pass over all of them kept its accumulators in memory (they are the wave's resident
//! registers) and every `fma` read and wrote one there. A pass holds only the
//! statements its accumulators depend on, with everything those read (by register name, so
//! a pass computes each register it keeps exactly as the whole loop does), and every `break`
//! and `continue` with what they read, so each pass makes the same trips. Before a later
//! pass, the registers and predicates it writes are put back to their values at the loop's
//! entry; those it does not write keep what an earlier pass left, which is the whole loop's
//! final value (each statement is in some pass). Exact, as the chunk-major loop is: nothing
//! in its body writes memory, a possible fault bails out to the wave-major loop from the
//! loop's entry state, and each accumulator is written by its own statements only (see
//! `chunk::nan_sticky_accumulators`).

use wave_isa::opcodes::Role;
use wave_isa::{StateRef, Stmt, StmtKind};

/// The most vectors a pass keeps live: its accumulators and the other registers they read
/// (of the 16 machine registers, two stay for an `fma`'s copy of a factor and an address).
const PASS_VECTORS: usize = 14;

/// What a pass costs besides its loads, in loads: its loop's test, branch and counters.
const PASS_OVERHEAD: usize = 3;

/// The bodies of the passes `body` runs as (the statements each keeps, in body order), or
/// None where it runs as one: a body of anything but flat ops, `break`s and `continue`s, or
/// whose accumulators fit one pass.
pub fn accumulator_passes(body: &[Stmt]) -> Option<Vec<Vec<Stmt>>> {
    let flat = body.iter().all(|s| {
        matches!(s.kind, StmtKind::Op(_) | StmtKind::Break { .. } | StmtKind::Continue { .. } | StmtKind::Nop)
    });
    if !flat {
        return None;
    }
    let accumulators = super::chunk::nan_sticky_accumulators(body);
    let reads: Vec<StateSet> = body.iter().map(read_state).collect();
    let writes: Vec<StateSet> = body.iter().map(written_state).collect();
    // Per accumulator: the other registers and predicates its statements read.
    let inputs: Vec<StateSet> = accumulators
        .iter()
        .map(|&r| {
            let acc = StateSet::of(StateRef::Reg(r));
            let mut read = StateSet::default();
            for i in (0..body.len()).filter(|&i| writes[i].meets(&acc)) {
                read = read.union(&reads[i]);
            }
            read.minus(&acc)
        })
        .collect();
    let groups = group_accumulators(&inputs);
    if groups.len() < 2 {
        return None;
    }
    // The group whose accumulator a statement writes, if any.
    let owner: Vec<Option<usize>> = (0..body.len())
        .map(|i| {
            let k = accumulators.iter().position(|&r| writes[i].meets(&StateSet::of(StateRef::Reg(r))))?;
            groups.iter().position(|g| g.contains(&k))
        })
        .collect();
    // Per statement: the others that read what it writes.
    let readers: Vec<Vec<usize>> = (0..body.len())
        .map(|i| (0..body.len()).filter(|&j| j != i && writes[i].meets(&reads[j])).collect())
        .collect();
    let mut passes = Vec::with_capacity(groups.len());
    let mut kept_anywhere = vec![false; body.len()];
    for pass in 0..groups.len() {
        let mut removed: Vec<bool> = owner.iter().map(|o| o.is_some_and(|g| g != pass)).collect();
        // Drop what only dropped statements read, until nothing more goes.
        loop {
            let mut changed = false;
            for i in 0..body.len() {
                if removed[i] || owner[i].is_some() || !matches!(body[i].kind, StmtKind::Op(_)) {
                    continue;
                }
                if !readers[i].is_empty() && readers[i].iter().all(|&j| removed[j]) {
                    removed[i] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let kept: Vec<Stmt> = (0..body.len()).filter(|&i| !removed[i]).map(|i| body[i].clone()).collect();
        if kept.len() == body.len() {
            return None;
        }
        for (k, &gone) in kept_anywhere.iter_mut().zip(&removed) {
            *k |= !gone;
        }
        passes.push(kept);
    }
    kept_anywhere.iter().all(|&k| k).then_some(passes)
}

/// Accumulators (by index) in groups of at most [`PASS_VECTORS`] live vectors each: of two
/// greedy groupings, the one whose passes load fewer inputs (each pass loads its own, and
/// costs a loop's overhead besides). Each grouping fills a group with the accumulator that
/// adds the fewest inputs it lacks; ties go to the first in body order (a GEMM's rows in
/// stripes: a 4×4 block as two passes of two rows) or to the one whose inputs complete the
/// most others (blocks that grow as squares: an 8×8 block as 2×4 blocks).
fn group_accumulators(inputs: &[StateSet]) -> Vec<Vec<usize>> {
    let cost = |groups: &Vec<Vec<usize>>| -> usize {
        groups
            .iter()
            .map(|g| {
                g.iter().fold(StateSet::default(), |all, &k| all.union(&inputs[k])).len() + PASS_OVERHEAD
            })
            .sum()
    };
    let in_order = greedy_groups(inputs, false);
    let squares = greedy_groups(inputs, true);
    let greedy = if cost(&squares) < cost(&in_order) { squares } else { in_order };
    match greedy.first().and_then(|like| outer_product_blocks(inputs, like)) {
        Some(blocks) if cost(&blocks) < cost(&greedy) => blocks,
        _ => greedy,
    }
}

/// Accumulators that form an outer product (each reads one row input and one column input,
/// every pair once: a GEMM's block of outputs) in blocks of rows × columns (smaller at the
/// edges), the most accumulators a block can have with its inputs in [`PASS_VECTORS`], shaped
/// like `like` (a group the greedy groupings made) where that shape is as large. The greedy
/// groupings can leave a ragged end: the GPU-style GEMM's 8×8 became seven 2×4 blocks, then
/// one of 7 accumulators over 7 inputs and one of a single accumulator, whose pass ran at the
/// latency of its one `fma` chain. None where the accumulators are not such a grid.
fn outer_product_blocks(inputs: &[StateSet], like: &[usize]) -> Option<Vec<Vec<usize>>> {
    let pairs: Vec<[usize; 2]> = inputs
        .iter()
        .map(|s| {
            let members: Vec<usize> = s.members().collect();
            (members.len() == 2).then(|| [members[0], members[1]])
        })
        .collect::<Option<_>>()?;
    let [x, y] = *pairs.first()?;
    let partners = |of: usize| -> Vec<usize> {
        let mut found: Vec<usize> = pairs
            .iter()
            .filter_map(|&[p, q]| {
                if p == of {
                    Some(q)
                } else if q == of {
                    Some(p)
                } else {
                    None
                }
            })
            .collect();
        found.sort_unstable();
        found.dedup();
        found
    };
    let (rows, cols) = (partners(y), partners(x));
    if rows.len() * cols.len() != pairs.len() || rows.iter().any(|r| cols.contains(r)) {
        return None;
    }
    let mut grid = vec![vec![None; cols.len()]; rows.len()];
    for (k, &[p, q]) in pairs.iter().enumerate() {
        let place = |r: usize, c: usize| {
            Some((rows.iter().position(|&v| v == r)?, cols.iter().position(|&v| v == c)?))
        };
        let (r, c) = place(p, q).or_else(|| place(q, p))?;
        if grid[r][c].replace(k).is_some() {
            return None;
        }
    }
    let rows_of = |group: &[usize]| {
        let mut used: Vec<usize> =
            group.iter().filter_map(|&k| grid.iter().position(|row| row.contains(&Some(k)))).collect();
        used.sort_unstable();
        used.dedup();
        used.len()
    };
    let liked = rows_of(like);
    let fits = |(h, w): (usize, usize)| h * w + h + w <= PASS_VECTORS;
    let shapes = (1..=rows.len()).flat_map(|h| (1..=cols.len()).map(move |w| (h, w)));
    let (h, w) = shapes
        .filter(|&shape| fits(shape))
        .max_by_key(|&(h, w)| (h * w, std::cmp::Reverse(h + w), h == liked))?;
    let mut blocks = Vec::new();
    for r0 in (0..rows.len()).step_by(h) {
        for c0 in (0..cols.len()).step_by(w) {
            let mut block: Vec<usize> = Vec::new();
            for row in &grid[r0..(r0 + h).min(rows.len())] {
                block.extend(row[c0..(c0 + w).min(cols.len())].iter().flatten());
            }
            block.sort_unstable();
            blocks.push(block);
        }
    }
    Some(blocks)
}

/// One greedy grouping (see [`group_accumulators`]); `completing`: ties go to the
/// accumulator whose inputs complete the most others.
fn greedy_groups(inputs: &[StateSet], completing: bool) -> Vec<Vec<usize>> {
    let mut left: Vec<usize> = (0..inputs.len()).collect();
    let mut groups = Vec::new();
    while !left.is_empty() {
        let first = left.remove(0);
        let mut group = vec![first];
        let mut needed = inputs[first];
        loop {
            let best = left
                .iter()
                .enumerate()
                .map(|(at, &k)| {
                    let with = needed.union(&inputs[k]);
                    let completed = if completing {
                        left.iter().filter(|&&j| j != k && inputs[j].minus(&with).is_empty()).count()
                    } else {
                        0
                    };
                    (with.len() - needed.len(), std::cmp::Reverse(completed), at)
                })
                .min();
            let Some((new, _, at)) = best else { break };
            if group.len() + 1 + needed.len() + new > PASS_VECTORS {
                break;
            }
            let k = left.remove(at);
            needed = needed.union(&inputs[k]);
            group.push(k);
        }
        groups.push(group);
    }
    groups
}

/// A set of registers and predicates, as bits: registers 0..[`PRED_BASE`] (a pair's or quad's
/// tail may pass 255), then predicates.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
struct StateSet([u64; 5]);

/// Where predicates start among a [`StateSet`]'s bits.
const PRED_BASE: usize = 264;

impl StateSet {
    fn of(s: StateRef) -> Self {
        let mut set = Self::default();
        set.insert(s);
        set
    }

    fn insert(&mut self, s: StateRef) {
        let bit = match s {
            StateRef::Reg(r) => (r as usize).min(PRED_BASE - 1),
            StateRef::Pred(p) => PRED_BASE + (p as usize).min(320 - PRED_BASE - 1),
        };
        self.0[bit / 64] |= 1 << (bit % 64);
    }

    fn union(&self, other: &Self) -> Self {
        Self(std::array::from_fn(|i| self.0[i] | other.0[i]))
    }

    fn minus(&self, other: &Self) -> Self {
        Self(std::array::from_fn(|i| self.0[i] & !other.0[i]))
    }

    /// Whether the two sets share a member.
    fn meets(&self, other: &Self) -> bool {
        self.0.iter().zip(&other.0).any(|(a, b)| a & b != 0)
    }

    fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }

    fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The members' bit numbers, in order.
    fn members(&self) -> impl Iterator<Item = usize> + '_ {
        (0..64 * self.0.len()).filter(|&bit| self.0[bit / 64] & (1 << (bit % 64)) != 0)
    }
}

/// What a statement reads: its operands, its guard, a `break`'s or `continue`'s predicate,
/// and, for a guarded op, what it writes (the lanes it skips keep their old values).
fn read_state(s: &Stmt) -> StateSet {
    let mut out = StateSet::default();
    if let Some(g) = s.guard {
        out.insert(StateRef::Pred(g.index));
    }
    match &s.kind {
        StmtKind::Op(inst) => {
            inst.named_state(Some(Role::Use)).for_each(|u| out.insert(u));
            if s.guard.is_some() {
                inst.named_state(Some(Role::Def)).for_each(|d| out.insert(d));
            }
        }
        StmtKind::Break { pred } | StmtKind::Continue { pred } => out.insert(StateRef::Pred(pred.index)),
        _ => {}
    }
    out
}

/// What a statement writes.
fn written_state(s: &Stmt) -> StateSet {
    let mut out = StateSet::default();
    if let StmtKind::Op(inst) = &s.kind {
        inst.named_state(Some(Role::Def)).for_each(|d| out.insert(d));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::first_loop_body as loop_body;
    use super::*;

    fn ops(pass: &[Stmt]) -> Vec<String> {
        pass.iter()
            .map(|s| match &s.kind {
                StmtKind::Op(inst) => format!("{:?} r{}", inst.op, inst.rd),
                other => format!("{other:?}").split_whitespace().next().unwrap_or_default().to_string(),
            })
            .collect()
    }

    /// An n×n block of accumulators from r8 on, row by row, over rows a0.. (the next n
    /// registers) and columns b0.. (the n after them), loaded from addresses in r100..; the
    /// loop counts down r120. n = 8 is the GPU-style GEMM's block.
    fn gemm_block(n: u32) -> String {
        let (a, b) = (8 + n * n, 8 + n * n + n);
        let mut src = String::from(
            ".kernel k\n.registers 128\n    mov_imm r120, 16\n    mov_imm r121, 0\n    mov_imm r122, 1\n    loop\n        icmp_le p1, r120, r121\n        break p1\n",
        );
        for i in 0..n {
            src += &format!("        local_load_u32 r{}, r{}\n", a + i, 100 + i);
            src += &format!("        local_load_u32 r{}, r{}\n", b + i, 100 + n + i);
        }
        for i in 0..n {
            for j in 0..n {
                let acc = 8 + n * i + j;
                src += &format!("        fma r{acc}, r{}, r{}, r{acc}\n", a + i, b + j);
            }
        }
        src += "        isub r120, r120, r122\n    endloop\n    halt\n.end\n";
        src
    }

    #[test]
    fn sixteen_accumulators_split_in_two_passes_of_two_rows() {
        let body = loop_body(&gemm_block(4));
        let passes = accumulator_passes(&body).expect("two passes");
        assert_eq!(passes.len(), 2);
        for (p, pass) in passes.iter().enumerate() {
            let ops = ops(pass);
            let fmas: Vec<&String> = ops.iter().filter(|o| o.starts_with("Fma")).collect();
            assert_eq!(fmas.len(), 8, "pass {p}: {ops:?}");
            let loads = ops.iter().filter(|o| o.starts_with("LocalLoad")).count();
            // Its two rows and all four columns.
            assert_eq!(loads, 6, "pass {p}: {ops:?}");
            // The loop's control in every pass.
            assert!(ops.iter().any(|o| o.starts_with("Break")), "{ops:?}");
            assert!(ops.iter().any(|o| o == "Isub r120"), "{ops:?}");
        }
        let rows = |pass: &[Stmt]| -> Vec<u8> {
            let mut rows: Vec<u8> = pass
                .iter()
                .filter_map(|s| match &s.kind {
                    StmtKind::Op(inst) if inst.op == wave_isa::Op::Fma => Some((inst.rd - 8) / 4),
                    _ => None,
                })
                .collect();
            rows.dedup();
            rows
        };
        assert_eq!(rows(&passes[0]), [0, 1]);
        assert_eq!(rows(&passes[1]), [2, 3]);
    }

    #[test]
    fn an_eight_by_eight_block_splits_in_eight_even_passes() {
        let passes = accumulator_passes(&loop_body(&gemm_block(8))).expect("passes");
        assert_eq!(passes.len(), 8);
        let mut seen = Vec::new();
        for (p, pass) in passes.iter().enumerate() {
            let ops = ops(pass);
            let fmas: Vec<&String> = ops.iter().filter(|o| o.starts_with("Fma")).collect();
            // 2×4 or 4×2 outputs: 8 accumulators over the 6 inputs that fill 14 registers.
            assert_eq!(fmas.len(), 8, "pass {p}: {ops:?}");
            assert_eq!(ops.iter().filter(|o| o.starts_with("LocalLoad")).count(), 6, "pass {p}: {ops:?}");
            seen.extend(fmas.into_iter().cloned());
        }
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 64, "every accumulator in one pass");
    }

    #[test]
    fn a_loop_without_accumulators_stays_one_pass() {
        let src = ".kernel k\n.registers 64\n    mov_imm r42, 16\n    loop\n        icmp_eq p1, r42, r0\n        break p1\n        iadd r42, r42, r61\n    endloop\n    halt\n.end\n";
        assert_eq!(accumulator_passes(&loop_body(src)), None);
    }

    #[test]
    fn few_accumulators_stay_one_pass() {
        let src = ".kernel k\n.registers 64\n    mov_imm r42, 16\n    loop\n        icmp_eq p1, r42, r0\n        break p1\n        local_load_u32 r24, r50\n        fma r8, r24, r24, r8\n        fma r9, r24, r24, r9\n        iadd r42, r42, r61\n    endloop\n    halt\n.end\n";
        assert_eq!(accumulator_passes(&loop_body(src)), None);
    }

    #[test]
    fn nested_control_stays_one_pass() {
        let src =
            gemm_block(4).replace("        isub r120", "        if p1\n        endif\n        isub r120");
        assert_eq!(accumulator_passes(&loop_body(&src)), None);
    }
}
