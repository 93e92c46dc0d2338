//! Dead block parameter removal.
//!
//! Every WAVE register is a frontend `Variable`, so every register a loop writes becomes a
//! parameter of the loop header and of each join after it, whether or not anything reads it
//! later. Cranelift 0.135 keeps such parameters, and the register allocator then keeps their
//! values alive across whole loops (a GEMM kernel's loaded operands stay live from one
//! iteration into the next, where they are overwritten before any read). This pass removes
//! every parameter no effect depends on, with the pure instructions nothing live reads: a
//! parameter read only by dead code (a blend or select whose result goes nowhere, such as
//! the scalar shadows' "written yet" selects) would otherwise stay, and with it its value in
//! a register or stack slot across the loop (the tiled GEMM's inner loop went from 116 to 101
//! machine instructions per trip, 32 to 20 stack accesses).

use cranelift_codegen::entity::EntityRef;
use cranelift_codegen::ir::{BlockArg, Function, Inst, InstructionData, Value, ValueDef};
use std::collections::{HashMap, HashSet};

/// Remove the block parameters (and the branch arguments feeding them) that no effect
/// depends on, with the instructions whose results nothing live reads (see
/// [`live_values`]). The entry block's parameters stay.
pub fn remove_dead_block_params(func: &mut Function) {
    let Some(entry) = func.layout.entry_block() else { return };
    let live = live_values(func, &HashSet::new());
    // Dead instructions first: they may read the parameters about to go.
    let dead_insts: Vec<Inst> = func
        .layout
        .blocks()
        .flat_map(|b| func.layout.block_insts(b))
        .filter(|&inst| {
            let results = func.dfg.inst_results(inst);
            !results.is_empty()
                && results.iter().all(|r| !live.contains(r))
                && !has_effect(func, &func.dfg.insts[inst])
        })
        .collect();
    for inst in dead_insts {
        func.layout.remove_inst(inst);
    }
    let blocks: Vec<_> = func.layout.blocks().filter(|&b| b != entry).collect();
    // Per block with a dead parameter: whether each of its parameters is dead.
    let dead: HashMap<_, Vec<bool>> = blocks
        .iter()
        .filter_map(|&b| {
            let gone: Vec<bool> = func.dfg.block_params(b).iter().map(|p| !live.contains(p)).collect();
            gone.contains(&true).then_some((b, gone))
        })
        .collect();
    if dead.is_empty() {
        return;
    }
    // Each list is rebuilt from what stays: removing entries one at a time shifts the rest
    // every time, quadratic in a loop header's hundreds of parameters at W = 64.
    // The arguments first ...
    let insts: Vec<_> =
        func.layout.blocks().flat_map(|b| func.layout.block_insts(b).collect::<Vec<_>>()).collect();
    for inst in insts {
        let dfg = &mut func.dfg;
        let dests = dfg.insts[inst].branch_destination_mut(&mut dfg.jump_tables, &mut dfg.exception_tables);
        for call in dests {
            let Some(gone) = dead.get(&call.block(&dfg.value_lists)) else { continue };
            let kept: Vec<BlockArg> =
                call.args(&dfg.value_lists).zip(gone).filter(|(_, &g)| !g).map(|(a, _)| a).collect();
            call.clear(&mut dfg.value_lists);
            call.extend(kept, &mut dfg.value_lists);
        }
    }
    // ... then the parameters.
    for (b, gone) in dead {
        let params: Vec<Value> = func.dfg.block_params(b).to_vec();
        func.dfg.detach_block_params(b);
        for (p, g) in params.into_iter().zip(gone) {
            if !g {
                func.dfg.attach_block_param(b, p);
            }
        }
    }
}

/// The values some effect depends on: the arguments of instructions with effects (stores,
/// calls, branches, returns, trapping ops, loads that may trap), and from there the
/// arguments of the instructions defining live values and the branch arguments passed to
/// live block parameters. The entry block's parameters are live. The `ignored` instructions
/// count as having no effect.
pub fn live_values(func: &Function, ignored: &HashSet<Inst>) -> LiveValues {
    LiveValues(Liveness::new(func, ignored).live)
}

/// The live values of [`live_values`], by value number.
pub struct LiveValues(Vec<bool>);

impl LiveValues {
    /// Whether `v` is live.
    pub fn contains(&self, v: &Value) -> bool {
        self.0.get(v.index()).copied().unwrap_or(false)
    }
}

/// [`live_values`], kept open for more roots: [`Liveness::add_root`] makes an ignored
/// instruction an effect after all and marks what it depends on, without walking the whole
/// function again (loop-state pruning adds stores one by one: recomputing per store was
/// quadratic in the number of loops). Tables are indexed by value number: with hash sets this
/// was a seventh of the first-tier compile time of `nest_loop_64` (20,000 block parameters).
pub struct Liveness<'f> {
    func: &'f Function,
    live: Vec<bool>,
    work: Vec<Value>,
    /// The values passed to parameter `p` are `fed[feed_start[p]..feed_start[p + 1]]`.
    feed_start: Vec<u32>,
    fed: Vec<Value>,
    /// Values marked live since the last [`Liveness::take_new`], in marking order.
    new: Vec<Value>,
}

impl<'f> Liveness<'f> {
    /// The live values of `func` with the `ignored` instructions counted as effect-free.
    pub fn new(func: &'f Function, ignored: &HashSet<Inst>) -> Liveness<'f> {
        let dfg = &func.dfg;
        let values = dfg.num_values();
        let mut l = Liveness {
            func,
            live: vec![false; values],
            work: Vec::new(),
            feed_start: Vec::new(),
            fed: Vec::new(),
            new: Vec::new(),
        };
        if let Some(entry) = func.layout.entry_block() {
            for &p in dfg.block_params(entry) {
                l.mark(p);
            }
        }
        // What each branch passes to each parameter, counted first and then placed.
        let mut edges: Vec<(Value, Value)> = Vec::new();
        for block in func.layout.blocks() {
            for inst in func.layout.block_insts(block) {
                let data = &dfg.insts[inst];
                for call in data.branch_destination(&dfg.jump_tables, &dfg.exception_tables) {
                    let params = dfg.block_params(call.block(&dfg.value_lists));
                    for (i, arg) in call.args(&dfg.value_lists).enumerate() {
                        let Some(&param) = params.get(i) else { continue };
                        match arg {
                            BlockArg::Value(v) => edges.push((param, v)),
                            // Not a plain value (try_call results, which we never emit): keep it.
                            _ => l.mark(param),
                        }
                    }
                }
                if has_effect(func, data) && !ignored.contains(&inst) {
                    l.add_args(inst);
                }
            }
        }
        let mut start = vec![0u32; values + 1];
        for &(param, _) in &edges {
            start[param.index() + 1] += 1;
        }
        for i in 0..values {
            start[i + 1] += start[i];
        }
        let mut next = start.clone();
        let mut fed = vec![Value::from_u32(0); edges.len()];
        for (param, v) in edges {
            let at = &mut next[param.index()];
            fed[*at as usize] = v;
            *at += 1;
        }
        l.feed_start = start;
        l.fed = fed;
        l.propagate();
        l
    }

    /// Whether `v` is live.
    pub fn contains(&self, v: &Value) -> bool {
        self.live.get(v.index()).copied().unwrap_or(false)
    }

    /// Count `inst` as an effect: its arguments and what they depend on are live.
    pub fn add_root(&mut self, inst: Inst) {
        self.add_args(inst);
        self.propagate();
    }

    /// The values that became live since the last call (or since [`Liveness::new`]).
    pub fn take_new(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.new)
    }

    fn add_args(&mut self, inst: Inst) {
        for &arg in self.func.dfg.inst_args(inst) {
            self.mark(arg);
        }
    }

    fn mark(&mut self, v: Value) {
        let v = self.func.dfg.resolve_aliases(v);
        if let Some(slot) = self.live.get_mut(v.index()) {
            if !*slot {
                *slot = true;
                self.work.push(v);
                self.new.push(v);
            }
        }
    }

    fn propagate(&mut self) {
        let dfg = &self.func.dfg;
        while let Some(v) = self.work.pop() {
            match dfg.value_def(v) {
                ValueDef::Result(inst, _) => self.add_args(inst),
                // A parameter is marked once: its feeds are not needed again.
                ValueDef::Param(..) => {
                    let (from, to) = (self.feed_start[v.index()], self.feed_start[v.index() + 1]);
                    for k in from..to {
                        let s = self.fed[k as usize];
                        self.mark(s);
                    }
                }
                _ => {}
            }
        }
    }
}

/// Whether an instruction must stay even if nothing reads its results.
fn has_effect(func: &Function, data: &InstructionData) -> bool {
    let op = data.opcode();
    let may_trap = match *data {
        InstructionData::Load { flags, .. } => !func.dfg.mem_flags[flags].notrap(),
        _ => op.can_trap(),
    };
    op.is_call()
        || op.is_branch()
        || op.is_terminator()
        || op.is_return()
        || op.can_store()
        || op.other_side_effects()
        || may_trap
}
