//! The execution mask's verbs (after gallivm's `lp_exec_mask`): the lanes running now are
//! `exec` (one `I32X4` variable per vector); lanes leave it for a construct's gathering mask
//! (`break`, `continue`, `return`: [`Translator::leave_lanes`]), rejoin from one where the
//! construct ends ([`Translator::rejoin_lanes`]), or it is replaced outright at a branch of an
//! `if` or a loop's exit ([`Translator::set_exec_mask`]). Control flow (`control`) speaks in
//! these verbs, not in loads and stores of the variables.

use super::Translator;
use cranelift_codegen::ir::Value;
use cranelift_frontend::Variable;

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

    /// Lanes `leaving` stop running and join the mask gathered in `into` (a loop's broken or
    /// continued lanes, a call's returned ones), where they rejoin later.
    pub fn leave_lanes(&mut self, leaving: &[Value], into: &[Variable]) {
        let gathered = self.get(into);
        let gathered = self.or(&gathered, leaving);
        self.set(into, &gathered);
        let exec = self.exec_mask();
        let exec = self.and_not(&exec, leaving);
        self.set_exec_mask(&exec);
    }

    /// The lanes gathered in `from` run again, beside those running now; returns the new mask.
    pub fn rejoin_lanes(&mut self, from: &[Variable]) -> Vec<Value> {
        let exec = self.exec_mask();
        let gathered = self.get(from);
        let joined = self.or(&exec, &gathered);
        self.set_exec_mask(&joined);
        joined
    }
}
