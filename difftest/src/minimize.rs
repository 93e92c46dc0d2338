//! Shrink a failing program while it keeps failing: delete statements, flatten ifs and loops,
//! drop guards, empty functions, shrink the dispatch. Every edit keeps the program valid.

use crate::program::{Node, Program};

/// One structural edit of the node with a given preorder number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Edit {
    Remove,
    ThenOnly,
    ElseOnly,
    DropElse,
    /// Replace a loop by its body, without the breaks and continues that belonged to it.
    Unloop,
    FewerTrips,
    Unguard,
}

const EDITS: [Edit; 7] = [
    Edit::Remove,
    Edit::ThenOnly,
    Edit::ElseOnly,
    Edit::DropElse,
    Edit::Unloop,
    Edit::FewerTrips,
    Edit::Unguard,
];

/// Greedy minimisation: try candidate edits, biggest first, keep the first that still fails,
/// start over; stop when no edit keeps the failure or after `max_tries` runs of `fails`.
pub fn minimize(program: &Program, max_tries: usize, fails: &mut dyn FnMut(&Program) -> bool) -> Program {
    let mut best = prune_functions(program);
    if !fails(&best) {
        best = program.clone();
    }
    let mut tries = 0usize;
    'outer: loop {
        for candidate in candidates(&best) {
            if tries >= max_tries {
                break 'outer;
            }
            tries += 1;
            if fails(&candidate) {
                // Pruning uncalled functions cannot change a run; check anyway, cheaply.
                let pruned = prune_functions(&candidate);
                best = if pruned != candidate && fails(&pruned) { pruned } else { candidate };
                continue 'outer;
            }
        }
        break;
    }
    best
}

/// Every single-step simplification of `p`, roughly in order of how much each removes.
fn candidates(p: &Program) -> Vec<Program> {
    let mut out = Vec::new();
    // Whole functions first.
    for f in 0..p.funcs.len() {
        if !p.funcs[f].is_empty() {
            let mut c = p.clone();
            c.funcs[f].clear();
            out.push(c);
        }
    }
    let nodes = p.statement_count();
    for edit in EDITS {
        for n in 0..nodes {
            let mut c = p.clone();
            if apply_anywhere(&mut c, n, edit) {
                out.push(c);
            }
        }
    }
    // Then the dispatch and the memory contents.
    let s = &p.shape;
    let mut shrink = |f: &dyn Fn(&mut Program)| {
        let mut c = p.clone();
        f(&mut c);
        if c != *p {
            out.push(c);
        }
    };
    shrink(&|c| c.shape.grid = [1, 1]);
    shrink(&|c| c.shape.workgroup[1] = 1);
    for x in [1, s.wave_width, s.workgroup[0] / 2] {
        if x >= 1 && x < s.workgroup[0] {
            shrink(&|c| c.shape.workgroup[0] = x);
        }
    }
    shrink(&|c| c.shape.initial_registers.clear());
    shrink(&|c| c.data.iter_mut().for_each(|b| *b = 0));
    out
}

/// Apply `edit` to the node numbered `target` (preorder over the entry, then the functions).
fn apply_anywhere(p: &mut Program, target: usize, edit: Edit) -> bool {
    let mut counter = 0usize;
    if let Some(done) = apply(&mut p.entry, &mut counter, target, edit) {
        return done;
    }
    for f in &mut p.funcs {
        if let Some(done) = apply(f, &mut counter, target, edit) {
            return done;
        }
    }
    false
}

/// `Some(applied)` once the target was found, `None` while still searching.
fn apply(block: &mut Vec<Node>, counter: &mut usize, target: usize, edit: Edit) -> Option<bool> {
    for i in 0..block.len() {
        if *counter == target {
            return Some(edit_at(block, i, edit));
        }
        *counter += 1;
        let found = match &mut block[i] {
            Node::If { then_body, else_body, .. } => {
                apply(then_body, counter, target, edit).or_else(|| match else_body {
                    Some(e) => apply(e, counter, target, edit),
                    None => None,
                })
            }
            Node::Loop { body, .. } => apply(body, counter, target, edit),
            _ => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

fn edit_at(block: &mut Vec<Node>, i: usize, edit: Edit) -> bool {
    let node = block[i].clone();
    let replacement: Vec<Node> = match (edit, node) {
        (Edit::Remove, _) => Vec::new(),
        (Edit::ThenOnly, Node::If { then_body, .. }) => then_body,
        (Edit::ElseOnly, Node::If { else_body: Some(e), .. }) => e,
        (Edit::DropElse, Node::If { pred, then_body, else_body: Some(_) }) => {
            vec![Node::If { pred, then_body, else_body: None }]
        }
        (Edit::Unloop, Node::Loop { body, .. }) => strip_loop_exits(body),
        (Edit::FewerTrips, Node::Loop { trips, body }) if trips > 0 => {
            vec![Node::Loop { trips: trips - 1, body }]
        }
        (Edit::Unguard, Node::Op(mut inst)) if inst.guard.is_some() => {
            inst.guard = None;
            vec![Node::Op(inst)]
        }
        (Edit::Unguard, Node::Mem { area, addr, mask, offset, mut inst }) if inst.guard.is_some() => {
            inst.guard = None;
            vec![Node::Mem { area, addr, mask, offset, inst }]
        }
        _ => return false,
    };
    block.splice(i..=i, replacement);
    true
}

/// A loop body without the breaks and continues of that loop (those of inner loops stay).
fn strip_loop_exits(body: Vec<Node>) -> Vec<Node> {
    body.into_iter()
        .filter(|n| !matches!(n, Node::Break(_) | Node::Continue(_)))
        .map(|n| match n {
            Node::If { pred, then_body, else_body } => Node::If {
                pred,
                then_body: strip_loop_exits(then_body),
                else_body: else_body.map(strip_loop_exits),
            },
            other => other,
        })
        .collect()
}

/// Drop functions nothing calls (transitively from the entry) and renumber the calls.
pub fn prune_functions(p: &Program) -> Program {
    let mut reached = vec![false; p.funcs.len()];
    let mut stack = Vec::new();
    calls(&p.entry, &mut stack);
    while let Some(f) = stack.pop() {
        if f < reached.len() && !reached[f] {
            reached[f] = true;
            calls(&p.funcs[f], &mut stack);
        }
    }
    let mut new_index = vec![usize::MAX; p.funcs.len()];
    let mut next = 0;
    for (f, &r) in reached.iter().enumerate() {
        if r {
            new_index[f] = next;
            next += 1;
        }
    }
    let mut out = p.clone();
    out.funcs = p.funcs.iter().zip(&reached).filter(|(_, &r)| r).map(|(f, _)| f.clone()).collect();
    renumber(&mut out.entry, &new_index);
    for f in &mut out.funcs {
        renumber(f, &new_index);
    }
    out
}

fn calls(block: &[Node], out: &mut Vec<usize>) {
    for n in block {
        match n {
            Node::Call(f) => out.push(*f),
            Node::If { then_body, else_body, .. } => {
                calls(then_body, out);
                if let Some(e) = else_body {
                    calls(e, out);
                }
            }
            Node::Loop { body, .. } => calls(body, out),
            _ => {}
        }
    }
}

fn renumber(block: &mut [Node], new_index: &[usize]) {
    for n in block {
        match n {
            Node::Call(f) => *f = new_index.get(*f).copied().unwrap_or(*f),
            Node::If { then_body, else_body, .. } => {
                renumber(then_body, new_index);
                if let Some(e) = else_body {
                    renumber(e, new_index);
                }
            }
            Node::Loop { body, .. } => renumber(body, new_index),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{generate, GenConfig};
    use crate::rng::SplitMix64;
    use wave_isa::Class;

    fn contains_float(block: &[Node]) -> bool {
        block.iter().any(|n| match n {
            Node::Op(i)
            | Node::Mem { inst: i, .. }
            | Node::LinearMem { inst: i, .. }
            | Node::MmaMem { inst: i, .. } => i.op.class() == Class::Float,
            Node::If { then_body, else_body, .. } => {
                contains_float(then_body) || else_body.as_ref().is_some_and(|e| contains_float(e))
            }
            Node::Loop { body, .. } => contains_float(body),
            _ => false,
        })
    }

    /// A synthetic failure ("the program contains an f32 op"): the minimiser must keep exactly
    /// the statements needed for it and every intermediate program must still build.
    #[test]
    fn shrinks_to_the_failing_statement() {
        let mut shrunk_some = 0;
        for seed in 0..40 {
            let p = generate(&mut SplitMix64::new(seed), 8, &GenConfig::default());
            let mut fails = |c: &Program| {
                let meta = wave_isa::KernelMeta { name: "m".into(), registers: 32, ..Default::default() };
                assert!(wave_isa::ir::build_kernel(meta, &c.code()).is_ok());
                contains_float(&c.entry) || c.funcs.iter().any(|f| contains_float(f))
            };
            if !fails(&p) {
                continue;
            }
            let m = minimize(&p, 5000, &mut fails);
            assert!(fails(&m));
            // The f32 op itself, plus the call when it sits in a function.
            assert!(m.statement_count() <= 2, "{} statements left", m.statement_count());
            assert_eq!(m.shape.grid, [1, 1]);
            shrunk_some += 1;
        }
        assert!(shrunk_some > 20, "the generator should produce f32 ops in most of 40 programs");
    }
}
