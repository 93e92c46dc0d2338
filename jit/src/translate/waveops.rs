//! Cross-lane wave ops and MMA: whole-wave helpers that see every lane's value and the
//! active mask; results are blended into the active lanes.

use super::Translator;
use crate::abi::{helper_op, Helper, OUT_SLOT};
use crate::error::JitError;
use wave_isa::{Instruction, Op};

impl Translator<'_, '_> {
    pub fn wave_op(&mut self, inst: &Instruction, pc: u32) -> Result<(), JitError> {
        let mask = self.op_mask(inst.guard);
        self.spill_inputs(inst);
        let bits = self.mask_bits(&mask);
        self.call_checked(Helper::Wave, helper_op(inst), bits, pc);
        self.write_outputs(inst, &mask);
        if inst.op == Op::WaveBallot && self.flags.width == 64 {
            // B.15: at W = 64 the high 32 lanes go to rd + 1.
            let hi = self.reload(OUT_SLOT + 1);
            self.set_reg(inst.rd as u32 + 1, &hi, &mask);
        }
        Ok(())
    }

    pub fn mma(&mut self, inst: &Instruction, pc: u32) -> Result<(), JitError> {
        let mask = self.op_mask(inst.guard);
        self.spill_inputs(inst);
        let bits = self.mask_bits(&mask);
        self.call_checked(Helper::Mma, helper_op(inst), bits, pc);
        Ok(())
    }
}
