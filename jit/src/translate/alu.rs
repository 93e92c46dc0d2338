//! Integer, bitwise, compare, select, move and conversion ops, and the op dispatcher.
//!
//! Native where Cranelift has a lane-exact vector op (shifts where the amount is the same in
//! every running lane of a vector); the rest (per-lane variable shifts,
//! division, `imul_hi`, bit counting, bit fields, f16/bf16/f64 conversions) goes through the
//! generic lane helper, which runs `wave_runtime::semantics` on every lane.

use super::Translator;
use crate::abi::{helper_op, Helper, OUT_SLOT};
use crate::error::JitError;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{F32X4, I32, I32X4};
use cranelift_codegen::ir::{InstBuilder, Value};
use wave_isa::opcodes::{Class, Role, Slot};
use wave_isa::{Instruction, Op, Operand, SpecialReg};

impl Translator<'_, '_> {
    /// Lower one data, memory, wave or MMA op.
    pub fn op(&mut self, inst: &Instruction, pc: u32) -> Result<(), JitError> {
        self.at_op(inst, pc);
        if self.writes_shadow(inst) {
            return self.scalar_op(inst, pc);
        }
        match inst.op.class() {
            Class::LocalLoad | Class::DeviceLoad => self.load(inst, pc),
            Class::LocalStore | Class::DeviceStore => self.store(inst, pc),
            Class::LocalAtomic => self.local_atomic(inst, pc),
            Class::DeviceAtomic => self.memory_helper(inst, pc),
            Class::Wave => self.wave_op(inst, pc),
            Class::Mma => self.mma(inst, pc),
            Class::Float => self.float_op(inst, pc),
            Class::Half | Class::BFloat | Class::Double => self.lane_helper(inst, pc),
            Class::Control | Class::Sync => {
                Err(JitError::Unsupported(format!("`{}` as a plain op at byte 0x{pc:x}", inst.op.mnemonic())))
            }
            _ => self.int_op(inst, pc),
        }
    }

    fn int_op(&mut self, inst: &Instruction, pc: u32) -> Result<(), JitError> {
        if super::rules::lowering(inst.op) == super::rules::Lowering::NativeWhenUniformAmount
            && self.lane0_runs_with_its_vector(pc)
            && self.operand_stride(inst, pc, Slot::Rs2) == Some(0)
        {
            return self.uniform_shift(inst);
        }
        if !super::rules::is_native(inst.op) {
            return self.lane_helper(inst, pc);
        }
        let mask = self.op_mask(inst.guard);
        let (rd, a, b, c) = (inst.rd, inst.rs1, inst.rs2, inst.rs3);
        let n = self.wave.n;
        macro_rules! bin {
            ($f:ident) => {{
                let x = self.reg(a as u32);
                let y = self.reg(b as u32);
                (0..n).map(|k| self.b.ins().$f(x[k], y[k])).collect::<Vec<_>>()
            }};
        }
        macro_rules! un {
            ($f:ident) => {{
                let x = self.reg(a as u32);
                (0..n).map(|k| self.b.ins().$f(x[k])).collect::<Vec<_>>()
            }};
        }
        if let Some(cc) = int_compare(inst.op) {
            // A new form replaces the old one (it covers every lane); otherwise `set_pred`
            // writes the old form out before it blends.
            if self.record_pred_form(inst, cc, pc) {
                return Ok(());
            }
            let x = self.reg(a as u32);
            let y = self.reg(b as u32);
            let r: Vec<Value> = (0..n).map(|k| self.b.ins().icmp(cc, x[k], y[k])).collect();
            self.set_pred(rd as u32, &r, &mask);
            return Ok(());
        }
        let result = match inst.op {
            Op::Iadd => bin!(iadd),
            Op::Isub => bin!(isub),
            Op::Imul => bin!(imul),
            Op::Imin => bin!(smin),
            Op::Imax => bin!(smax),
            Op::And => bin!(band),
            Op::Or => bin!(bor),
            Op::Xor => bin!(bxor),
            Op::Not => un!(bnot),
            Op::Ineg => un!(ineg),
            Op::Iabs => un!(iabs),
            Op::Imad => {
                let x = self.reg(a as u32);
                let y = self.reg(b as u32);
                let z = self.reg(c as u32);
                (0..n)
                    .map(|k| {
                        let m = self.b.ins().imul(x[k], y[k]);
                        self.b.ins().iadd(m, z[k])
                    })
                    .collect()
            }
            Op::Iclamp => {
                // B.13: min(max(x, lo), hi), signed.
                let x = self.reg(a as u32);
                let lo = self.reg(b as u32);
                let hi = self.reg(c as u32);
                (0..n)
                    .map(|k| {
                        let m = self.b.ins().smax(x[k], lo[k]);
                        self.b.ins().smin(m, hi[k])
                    })
                    .collect()
            }
            Op::FcmpEq | Op::FcmpNe | Op::FcmpLt | Op::FcmpLe | Op::FcmpGt | Op::FcmpOrd | Op::FcmpUnord => {
                let cc = match inst.op {
                    Op::FcmpEq => FloatCC::Equal,
                    // true when either is NaN (§5.3)
                    Op::FcmpNe => FloatCC::NotEqual,
                    Op::FcmpLt => FloatCC::LessThan,
                    Op::FcmpLe => FloatCC::LessThanOrEqual,
                    Op::FcmpGt => FloatCC::GreaterThan,
                    Op::FcmpOrd => FloatCC::Ordered,
                    _ => FloatCC::Unordered,
                };
                let x = self.reg(a as u32);
                let y = self.reg(b as u32);
                let r: Vec<Value> = (0..n)
                    .map(|k| {
                        let fx = self.as_f32(x[k]);
                        let fy = self.as_f32(y[k]);
                        self.b.ins().fcmp(cc, fx, fy)
                    })
                    .collect();
                self.set_pred(rd as u32, &r, &mask);
                return Ok(());
            }
            Op::Select => {
                // select rd, p, x, y: the predicate number sits in rs1.
                let p = self.pred(a as u32);
                let x = self.reg(b as u32);
                let y = self.reg(c as u32);
                self.blend(&p, &x, &y)
            }
            Op::Mov => self.reg(a as u32),
            Op::MovImm => self.splat_u32(inst.imm),
            Op::MovSr => self.special(a),
            Op::CvtF32I32 => {
                let x = self.reg(a as u32);
                (0..n)
                    .map(|k| {
                        let f = self.b.ins().fcvt_from_sint(F32X4, x[k]);
                        self.as_i32(f)
                    })
                    .collect()
            }
            Op::CvtF32U32 => {
                let x = self.reg(a as u32);
                (0..n)
                    .map(|k| {
                        let f = self.b.ins().fcvt_from_uint(F32X4, x[k]);
                        self.as_i32(f)
                    })
                    .collect()
            }
            Op::CvtI32F32 | Op::CvtU32F32 => {
                // Saturating, NaN → 0: exactly CLIF's `_sat` conversions (§5.4).
                let signed = inst.op == Op::CvtI32F32;
                let x = self.reg(a as u32);
                (0..n)
                    .map(|k| {
                        let f = self.as_f32(x[k]);
                        if signed {
                            self.b.ins().fcvt_to_sint_sat(I32X4, f)
                        } else {
                            self.b.ins().fcvt_to_uint_sat(I32X4, f)
                        }
                    })
                    .collect()
            }
            _ => return Err(super::rules::no_lowering(inst.op)),
        };
        if !matches!(inst.op, Op::Mov | Op::MovImm | Op::MovSr) {
            self.note_scalar_forms(inst, &result);
        }
        self.set_reg(rd as u32, &result, &mask);
        Ok(())
    }

    /// `shl`, `shr` or `sar` by an amount the same in every running lane of each vector: one
    /// vector shift per vector by lane 0's amount, masked to 5 bits as `semantics` masks it.
    fn uniform_shift(&mut self, inst: &Instruction) -> Result<(), JitError> {
        let mask = self.op_mask(inst.guard);
        let x = self.reg(inst.rs1 as u32);
        let amounts = self.reg(inst.rs2 as u32);
        let result: Vec<Value> = (0..self.wave.n)
            .map(|k| {
                let amount = self.lane0(amounts[k]);
                let amount = self.b.ins().band_imm_u(amount, 31);
                match inst.op {
                    Op::Shl => self.b.ins().ishl(x[k], amount),
                    Op::Shr => self.b.ins().ushr(x[k], amount),
                    _ => self.b.ins().sshr(x[k], amount),
                }
            })
            .collect();
        self.set_reg(inst.rd as u32, &result, &mask);
        Ok(())
    }

    /// `mov_sr`: uniform values are splatted from the context; lane and thread ids per lane.
    fn special(&mut self, index: u8) -> Vec<Value> {
        match SpecialReg::from_index(index) {
            Some(SpecialReg::LaneId) => self.lane_ids(),
            Some(sr @ (SpecialReg::ThreadIdX | SpecialReg::ThreadIdY | SpecialReg::ThreadIdZ)) => {
                let dim = sr as usize - SpecialReg::ThreadIdX as usize;
                let base = self.env.thread_id_offset(dim);
                (0..self.wave.n)
                    .map(|k| {
                        let (at, offset) = self.ctx_vector(base, k);
                        let v = self.load_ctx_at(I32X4, at, offset);
                        let lane0 = self.load_ctx_at(I32, at, offset);
                        self.note_lane0(v, lane0);
                        v
                    })
                    .collect()
            }
            Some(sr) => {
                // The wave's id is its own; every other special register here is the
                // workgroup's or the dispatch's.
                let lane0 = if sr == SpecialReg::WaveId {
                    self.load_ctx(I32, self.env.special_offset(sr as u8))
                } else {
                    self.load_workgroup_field(I32, self.env.special_offset(sr as u8))
                };
                let v = self.b.ins().splat(I32X4, lane0);
                self.note_lane0(v, lane0);
                vec![v; self.wave.n]
            }
            None => self.zeros(),
        }
    }

    /// Any single- or multi-register lane op: spill inputs, run `semantics` on every lane in a
    /// helper, blend the results into the destination registers.
    pub fn lane_helper(&mut self, inst: &Instruction, pc: u32) -> Result<(), JitError> {
        let mask = self.op_mask(inst.guard);
        self.spill_inputs(inst);
        let zero = self.b.ins().iconst(cranelift_codegen::ir::types::I64, 0);
        self.call_checked(Helper::Lanes, helper_op(inst), zero, pc);
        self.write_outputs(inst, &mask);
        Ok(())
    }

    /// Blend the helper's results (scratch slots OUT_SLOT..) into the def operand.
    pub fn write_outputs(&mut self, inst: &Instruction, mask: &[Value]) {
        for (spec, operand) in inst.operands() {
            if spec.role != Role::Def {
                continue;
            }
            match operand {
                Operand::Reg(r) | Operand::Pair(r) | Operand::Quad(r) => {
                    for i in 0..spec.kind.register_span() {
                        let v = self.reload(OUT_SLOT + i as usize);
                        self.set_reg(r as u32 + i, &v, mask);
                    }
                }
                Operand::Pred(p) => {
                    let v = self.reload(OUT_SLOT);
                    self.set_pred(p as u32, &v, mask);
                }
                _ => {}
            }
        }
    }
}

/// The condition of an integer compare op.
pub fn int_compare(op: Op) -> Option<IntCC> {
    Some(match op {
        Op::IcmpEq => IntCC::Equal,
        Op::IcmpNe => IntCC::NotEqual,
        Op::IcmpLt => IntCC::SignedLessThan,
        Op::IcmpLe => IntCC::SignedLessThanOrEqual,
        Op::IcmpGt => IntCC::SignedGreaterThan,
        Op::IcmpGe => IntCC::SignedGreaterThanOrEqual,
        Op::UcmpLt => IntCC::UnsignedLessThan,
        Op::UcmpLe => IntCC::UnsignedLessThanOrEqual,
        _ => return None,
    })
}
