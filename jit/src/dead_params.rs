//! Dead block parameter removal.
//!
//! Every WAVE register is a frontend `Variable`, so every register a loop writes becomes a
//! parameter of the loop header and of each join after it, whether or not anything reads it
//! later. Cranelift 0.135 keeps such parameters, and the register allocator then keeps their
//! values alive across whole loops (a GEMM kernel's loaded operands stay live from one
//! iteration into the next, where they are overwritten before any read). This pass removes
//! every parameter whose value reaches no real use, only other parameters.

use cranelift_codegen::ir::{BlockArg, Function, Value};
use std::collections::{HashMap, HashSet};

/// Remove the block parameters (and the branch arguments feeding them) that no instruction
/// reads, directly or through other parameters. The entry block's parameters stay.
pub fn remove_dead_block_params(func: &mut Function) {
    let Some(entry) = func.layout.entry_block() else { return };
    let mut live: HashSet<Value> = HashSet::new();
    // Values passed to each parameter, by parameter.
    let mut feeds: HashMap<Value, Vec<Value>> = HashMap::new();
    let mut pinned: HashSet<Value> = HashSet::new();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            for &arg in func.dfg.inst_args(inst) {
                live.insert(func.dfg.resolve_aliases(arg));
            }
            let data = &func.dfg.insts[inst];
            for call in data.branch_destination(&func.dfg.jump_tables, &func.dfg.exception_tables) {
                let target = call.block(&func.dfg.value_lists);
                let params = func.dfg.block_params(target);
                for (i, arg) in call.args(&func.dfg.value_lists).enumerate() {
                    let Some(&param) = params.get(i) else { continue };
                    match arg {
                        BlockArg::Value(v) => {
                            feeds.entry(param).or_default().push(func.dfg.resolve_aliases(v))
                        }
                        // Not a plain value (try_call results, which we never emit): keep it.
                        _ => {
                            pinned.insert(param);
                        }
                    }
                }
            }
        }
    }
    live.extend(pinned);
    live.extend(func.dfg.block_params(entry).iter().copied());
    // A live parameter makes everything passed to it live.
    let mut work: Vec<Value> = live.iter().copied().collect();
    while let Some(v) = work.pop() {
        if let Some(sources) = feeds.get(&v) {
            for &s in sources {
                if live.insert(s) {
                    work.push(s);
                }
            }
        }
    }
    let blocks: Vec<_> = func.layout.blocks().filter(|&b| b != entry).collect();
    let dead: HashMap<_, Vec<usize>> = blocks
        .iter()
        .filter_map(|&b| {
            let idx: Vec<usize> = func
                .dfg
                .block_params(b)
                .iter()
                .enumerate()
                .filter(|(_, p)| !live.contains(p))
                .map(|(i, _)| i)
                .collect();
            (!idx.is_empty()).then_some((b, idx))
        })
        .collect();
    if dead.is_empty() {
        return;
    }
    // Drop the arguments first (highest index first, so the others keep their places) ...
    let insts: Vec<_> =
        func.layout.blocks().flat_map(|b| func.layout.block_insts(b).collect::<Vec<_>>()).collect();
    for inst in insts {
        let dfg = &mut func.dfg;
        let dests = dfg.insts[inst].branch_destination_mut(&mut dfg.jump_tables, &mut dfg.exception_tables);
        for call in dests {
            let Some(idx) = dead.get(&call.block(&dfg.value_lists)) else { continue };
            for &i in idx.iter().rev() {
                call.remove(i, &mut dfg.value_lists);
            }
        }
    }
    // ... then the parameters.
    for (b, idx) in dead {
        let params: Vec<Value> = func.dfg.block_params(b).to_vec();
        for &i in idx.iter().rev() {
            func.dfg.remove_block_param(params[i]);
        }
    }
}
