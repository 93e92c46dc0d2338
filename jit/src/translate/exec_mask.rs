//! The execution mask's verbs (after gallivm's `lp_exec_mask`): the lanes running now are
//! `exec` (one `I32X4` variable per vector); lanes leave it for a construct's gathering mask
//! (`break`, `continue`, `return`: [`Translator::leave_lanes`]), rejoin from one where the
//! construct ends ([`Translator::rejoin_lanes`]), or it is replaced outright at a branch of an
//! `if` or a loop's exit ([`Translator::set_exec_mask`]). An `if` splits the lanes, inverts to
//! its `else` side and merges them ([`Translator::cond_split`], [`Translator::cond_invert`],
//! [`Translator::cond_merge`]); a loop gathers its broken and continued lanes in
//! [`LoopMasks`] ([`Translator::loop_begin`] to [`Translator::loop_end`]). Control flow
//! (`control`) speaks in these verbs, not in loads and stores of the variables.

use super::Translator;
use cranelift_codegen::ir::types::{I32X4, I64};
use cranelift_codegen::ir::{InstBuilder, StackSlot, StackSlotData, StackSlotKind, Value};
use cranelift_frontend::Variable;
use wave_isa::PredRef;

/// Where a gathering mask is kept: in variables, or in a stack slot of its own (a loop with
/// loops inside: see [`Translator::loop_begin`]).
#[derive(Clone)]
pub enum Gathering {
    Vars(Vec<Variable>),
    Slot(StackSlot),
}

/// The lanes a loop gathers while it runs: those that broke out (they run again after the
/// loop) and those that continued (they run again at the next trip).
#[derive(Clone)]
pub struct LoopMasks {
    pub broke: Gathering,
    pub continued: Gathering,
    /// No lane, made before the loop (the continued lanes restart from it every trip); none
    /// for continued lanes in a slot, which take a fresh constant where they restart.
    none: Option<Vec<Value>>,
}

/// A mask kept across a body ([`Translator::keep_mask_across`]).
pub enum KeptMask {
    Values(Vec<Value>),
    /// In a stack slot (always [`Gathering::Slot`]).
    Kept(Gathering),
}

impl Translator<'_, '_> {
    /// The lanes running now.
    pub fn exec_mask(&mut self) -> Vec<Value> {
        let vars = self.wave.exec.clone();
        self.get(&vars)
    }

    /// Make `mask` the running lanes.
    pub fn set_exec_mask(&mut self, mask: &[Value]) {
        let vars = self.wave.exec.clone();
        self.set(&vars, mask);
    }

    /// The lanes gathered in `g`.
    fn gathered(&mut self, g: &Gathering) -> Vec<Value> {
        match g {
            Gathering::Vars(vars) => self.get(vars),
            Gathering::Slot(slot) => {
                (0..self.wave.n).map(|k| self.b.ins().stack_load(I64, I32X4, *slot, 16 * k as i32)).collect()
            }
        }
    }

    /// Make `mask` the lanes gathered in `g`.
    fn set_gathered(&mut self, g: &Gathering, mask: &[Value]) {
        match g {
            Gathering::Vars(vars) => self.set(vars, mask),
            Gathering::Slot(slot) => {
                for (k, &v) in mask.iter().enumerate() {
                    self.b.ins().stack_store(I64, v, *slot, 16 * k as i32);
                }
            }
        }
    }

    /// Lanes `leaving` stop running and join the mask gathered in `into` (a loop's broken or
    /// continued lanes, a call's returned ones), where they rejoin later.
    pub fn leave_lanes(&mut self, leaving: &[Value], into: &Gathering) {
        self.gather_lanes(leaving, into);
        self.retire_lanes(leaving);
    }

    /// Add lanes `leaving` to the mask gathered in `into`.
    fn gather_lanes(&mut self, leaving: &[Value], into: &Gathering) {
        let gathered = self.gathered(into);
        let gathered = self.or(&gathered, leaving);
        self.set_gathered(into, &gathered);
    }

    /// The running lanes where `pred` holds leave for the mask gathered in `into` (a
    /// `break`, `continue` or `return` some lanes take).
    pub fn leave_where(&mut self, pred: PredRef, into: &Gathering) {
        let exec = self.exec_mask();
        let p = self.pred_ref(pred);
        let leaving = self.and(&exec, &p);
        self.leave_lanes(&leaving, into);
    }

    /// Lanes `leaving` stop running, gathered nowhere (they halt).
    pub fn retire_lanes(&mut self, leaving: &[Value]) {
        let exec = self.exec_mask();
        let exec = self.and_not(&exec, leaving);
        self.set_exec_mask(&exec);
    }

    /// The lanes gathered in `from` run again, beside those running now; returns the new mask.
    pub fn rejoin_lanes(&mut self, from: &Gathering) -> Vec<Value> {
        let exec = self.exec_mask();
        let gathered = self.gathered(from);
        let joined = self.or(&exec, &gathered);
        self.set_exec_mask(&joined);
        joined
    }

    /// An `if` opens (cond push): the lanes of `entry` split by `pred` into those taking
    /// `then` and those taking `else`.
    pub fn cond_split(&mut self, entry: &[Value], pred: &[Value]) -> (Vec<Value>, Vec<Value>) {
        (self.and(entry, pred), self.and_not(entry, pred))
    }

    /// The `then` side is done (cond invert): the `else` lanes run. Returns the lanes that
    /// left `then` still running.
    pub fn cond_invert(&mut self, else_mask: &[Value]) -> Vec<Value> {
        let after_then = self.exec_mask();
        self.set_exec_mask(else_mask);
        after_then
    }

    /// A mask the code needs again after `body` (an `if`'s `else` lanes across its `then`
    /// side, its `then` lanes across its `else` side): kept in a stack slot where `body` has
    /// a loop inside, else as the values themselves. As values, an `if`'s masks were live
    /// across every loop nested in it, W/4 vectors each, and the register allocator carried
    /// them all through the loops (64 levels of `if` and loop at W = 64: most of the
    /// optimized tier's compile time). Not for `if`s in `if`s only: those run a vector at a
    /// time where they can ([`Translator::chunk_major_if`]), and the stores only got in the way.
    pub fn keep_mask_across(&mut self, mask: Vec<Value>, body: &[wave_isa::Stmt]) -> KeptMask {
        if !super::control::contains_loop(body) {
            return KeptMask::Values(mask);
        }
        let slot = self.mask_slot();
        self.set_gathered(&slot, &mask);
        KeptMask::Kept(slot)
    }

    /// The mask [`Translator::keep_mask_across`] kept.
    pub fn kept_mask(&mut self, kept: &KeptMask) -> Vec<Value> {
        match kept {
            KeptMask::Values(mask) => mask.clone(),
            KeptMask::Kept(slot) => self.gathered(slot),
        }
    }

    /// The `if` closes (cond pop): the lanes running after either side run on.
    pub fn cond_merge(&mut self, after_then: &[Value]) {
        let after_else = self.exec_mask();
        let merged = self.or(after_then, &after_else);
        self.set_exec_mask(&merged);
    }

    /// A stack slot for one mask of the vectors in view.
    fn mask_slot(&mut self) -> Gathering {
        let data = StackSlotData::new(StackSlotKind::ExplicitSlot, 16 * self.wave.n as u32, 4);
        Gathering::Slot(self.b.create_sized_stack_slot(data))
    }

    /// A loop opens: no lane has broken out or continued yet. A loop with loops inside
    /// (`has_inner_loops`) keeps its gathered masks in stack slots (the continued lanes only
    /// where it has a `continue` of its own: `has_continue`). As variables they were live
    /// across every inner loop, each vector a value the register allocator carried through
    /// all of them (64 nested loops: up to 568 block parameters, and most of the optimized
    /// tier's compile time); the loop reads and writes them only at its own exits and latch.
    pub fn loop_begin(&mut self, has_inner_loops: bool, has_continue: bool) -> LoopMasks {
        let none = self.zeros();
        let broke = if has_inner_loops {
            let slot = self.mask_slot();
            self.set_gathered(&slot, &none);
            slot
        } else {
            Gathering::Vars(self.new_vars(&none))
        };
        if has_inner_loops && has_continue {
            return LoopMasks { broke, continued: self.mask_slot(), none: None };
        }
        let continued = Gathering::Vars(self.new_vars(&none));
        LoopMasks { broke, continued, none: Some(none) }
    }

    /// A trip starts: no lane has continued in it yet.
    pub fn trip_begin(&mut self, masks: &LoopMasks) {
        let none = masks.none.clone().unwrap_or_else(|| self.zeros());
        self.set_gathered(&masks.continued, &none);
    }

    /// Every running lane breaks out together (a uniform `break` taken as a real branch):
    /// they join the broken lanes; the code after the branch does not run.
    pub fn break_all(&mut self, masks: &LoopMasks) {
        let exec = self.exec_mask();
        self.gather_lanes(&exec, &masks.broke);
    }

    /// A trip ends (at the latch): lanes that continued run again beside those that reached
    /// the end (`has_continue`: the body has a `continue` of its own). Returns the lanes for
    /// the next trip.
    pub fn trip_end(&mut self, masks: &LoopMasks, has_continue: bool) -> Vec<Value> {
        if has_continue {
            self.rejoin_lanes(&masks.continued)
        } else {
            self.exec_mask()
        }
    }

    /// The loop closes: the lanes that broke out are the running ones.
    pub fn loop_end(&mut self, masks: LoopMasks) {
        let broke = self.gathered(&masks.broke);
        self.set_exec_mask(&broke);
        self.release_gathering(masks.broke);
        self.release_gathering(masks.continued);
    }

    /// A gathering mask is done with: its variables (if it has them) go back to the pool.
    pub fn release_gathering(&mut self, g: Gathering) {
        if let Gathering::Vars(vars) = g {
            self.release_vars(I32X4, &vars);
        }
    }
}
