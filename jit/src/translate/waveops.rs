//! Cross-lane wave ops and MMA: whole-wave helpers that see every lane's value and the
//! active mask; results are blended into the active lanes. In vector code instead: the
//! reductions and the prefix sum (inactive lanes hold the operation's identity); and, where
//! every lane runs them, the shuffles whose rs2 is the same in every lane (`_xor`, `_up`,
//! `_down`: the butterflies and shifts of reductions, scans and softmax; `wave_shuffle` of
//! one lane) and `wave_broadcast`.

use super::{ctx_flags, LaneFold, Translator};
use crate::abi::{helper_op, Helper, OUT_SLOT};
use crate::error::JitError;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I32X4, I64, I8, I8X16};
use cranelift_codegen::ir::{ConstantData, InstBuilder, Value};
use wave_isa::opcodes::Slot;
use wave_isa::{Instruction, Op};

impl Translator<'_, '_> {
    pub fn wave_op(&mut self, inst: &Instruction, pc: u32) -> Result<(), JitError> {
        // Every lane runs it and (but for `wave_broadcast`, which reads the first active
        // lane's, lane 0's here) rs2 is the same in all of them: vector code.
        let uniform_selector = || self.wave_operand_stride(inst, pc, Slot::Rs2) == Some(0);
        if self.full && self.chunk_loop.is_none() {
            match inst.op {
                Op::WaveShuffleXor if uniform_selector() => {
                    self.uniform_shuffle_xor(inst);
                    return Ok(());
                }
                Op::WaveShuffleUp | Op::WaveShuffleDown if uniform_selector() => {
                    self.uniform_shuffle_shift(inst);
                    return Ok(());
                }
                Op::WaveBroadcast => {
                    self.broadcast_lane(inst);
                    return Ok(());
                }
                Op::WaveShuffle if uniform_selector() => {
                    self.broadcast_lane(inst);
                    return Ok(());
                }
                _ => {}
            }
        }
        let mask = self.op_mask(inst.guard);
        if let Some(reduction) = reduction_of(inst.op) {
            self.wave_reduce(inst, reduction, &mask);
            return Ok(());
        }
        if inst.op == Op::WavePrefixSum {
            self.wave_prefix_sum(inst, &mask);
            return Ok(());
        }
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

impl Translator<'_, '_> {
    /// `wave_shuffle_xor rd, rs1, rs2` where every lane runs it and rs2 is the same mask `m`
    /// in all of them (lane 0's): lane `l` gets rs1 of lane `l ^ m`, or 0 when that is no
    /// lane (`m >= W`). rs1's vectors go to scratch slot 0; output vector `j` loads vector
    /// `j ^ (m >> 2)` from there and permutes its lanes by `m & 3` (one byte shuffle).
    fn uniform_shuffle_xor(&mut self, inst: &Instruction) {
        let src = self.reg(inst.rs1 as u32);
        let selector = self.reg(inst.rs2 as u32);
        let m = self.lane0(selector[0]);
        self.spill(0, &src);
        let in_range = self.b.ins().icmp_imm_u(IntCC::UnsignedLessThan, m, i64::from(self.flags.width));
        // The byte offset of the source vector, kept inside the slot for an `m` out of range.
        let m64 = self.b.ins().uextend(I64, m);
        let vector_bits = self.b.ins().ushr_imm_s(m64, 2);
        let vector_bits = self.b.ins().ishl_imm_s(vector_bits, 4);
        let slot_bytes = 16 * self.wave.n as i64;
        let vector_bits = self.b.ins().band_imm_u(vector_bits, slot_bytes - 1);
        // Byte b of a vector comes from byte b ^ 4·(m & 3).
        let lane_bits = self.b.ins().band_imm_u(m, 3);
        let lane_bits = self.b.ins().ishl_imm_s(lane_bits, 2);
        let lane_bits = self.b.ins().ireduce(I8, lane_bits);
        let lane_bits = self.b.ins().splat(I8X16, lane_bits);
        let iota = self.b.func.dfg.constants.insert(ConstantData::from((0..16u8).collect::<Vec<u8>>()));
        let iota = self.b.ins().vconst(I8X16, iota);
        let order = self.b.ins().bxor(iota, lane_bits);
        let zero = self.vconst4([0; 4]);
        let slot = self.env.scratch_offset(0);
        let out: Vec<Value> = (0..self.wave.n)
            .map(|j| {
                let from = self.b.ins().bxor_imm_u(vector_bits, 16 * j as i64);
                let at = self.b.ins().iadd(self.ctx, from);
                let v = self.b.ins().load(I32X4, ctx_flags(), at, slot);
                let v = self.as_bytes(v);
                let v = self.b.ins().swizzle(v, order);
                let v = self.as_i32(v);
                self.b.ins().select(in_range, v, zero)
            })
            .collect();
        let mask = self.op_mask(inst.guard);
        self.set_reg(inst.rd as u32, &out, &mask);
    }
}

impl Translator<'_, '_> {
    /// Scratch slot 1 holds rs1's vectors for the shuffles below, with zeros in the W lanes'
    /// worth of bytes before (the end of slot 0) and after them: a source lane outside the
    /// wave reads 0 there.
    fn spill_between_zeros(&mut self, src: &[Value]) -> i32 {
        let data = self.env.scratch_offset(1);
        let zero = self.vconst4([0; 4]);
        let wave_bytes = 16 * self.wave.n as i32;
        for k in 0..self.wave.n as i32 {
            self.b.ins().store(ctx_flags(), zero, self.ctx, data - wave_bytes + 16 * k);
            self.b.ins().store(ctx_flags(), zero, self.ctx, data + wave_bytes + 16 * k);
        }
        self.spill(1, src);
        data
    }

    /// rs1 in the zero-framed copy ([`Self::spill_between_zeros`], at the returned offset), and
    /// 4 × lane 0's rs2 as bytes, at most 4·W (which reads the frame's zeros).
    fn spill_for_selector(&mut self, inst: &Instruction) -> (i32, Value) {
        let src = self.reg(inst.rs1 as u32);
        let selector = self.reg(inst.rs2 as u32);
        let lanes = self.lane0(selector[0]);
        let data = self.spill_between_zeros(&src);
        let width = self.b.ins().iconst(I32, i64::from(self.flags.width));
        let lanes = self.b.ins().umin(lanes, width);
        let lanes = self.b.ins().uextend(I64, lanes);
        (data, self.b.ins().ishl_imm_s(lanes, 2))
    }

    /// `wave_shuffle_down`/`_up rd, rs1, rs2` with the same delta `d` in every lane: lane `l`
    /// gets lane `l + d` (`l - d`), 0 past the wave. One unaligned load per vector, `4·d`
    /// bytes after (before) it in the zero-framed copy; `d` beyond W reads zeros only.
    fn uniform_shuffle_shift(&mut self, inst: &Instruction) {
        let (data, bytes) = self.spill_for_selector(inst);
        let at = if inst.op == Op::WaveShuffleDown {
            self.b.ins().iadd(self.ctx, bytes)
        } else {
            self.b.ins().isub(self.ctx, bytes)
        };
        let out: Vec<Value> = (0..self.wave.n)
            .map(|k| self.b.ins().load(I32X4, ctx_flags(), at, data + 16 * k as i32))
            .collect();
        let mask = self.op_mask(inst.guard);
        self.set_reg(inst.rd as u32, &out, &mask);
    }

    /// `wave_broadcast rd, rs1, rs2` (rs2 of the first active lane, lane 0 here) and
    /// `wave_shuffle` with the same rs2 `k` in every lane: every lane gets lane `k`'s rs1, or
    /// 0 when `k` is no lane.
    fn broadcast_lane(&mut self, inst: &Instruction) {
        let (data, bytes) = self.spill_for_selector(inst);
        let at = self.b.ins().iadd(self.ctx, bytes);
        let value = self.b.ins().load(I32, ctx_flags(), at, data);
        let v = self.b.ins().splat(I32X4, value);
        self.note_lane0(v, value);
        let out = vec![v; self.wave.n];
        let mask = self.op_mask(inst.guard);
        self.set_reg(inst.rd as u32, &out, &mask);
    }
}

/// The wave reductions (`semantics::wave_reduce_add`, `_min` and `_max`, unsigned) as folds.
fn reduction_of(op: Op) -> Option<LaneFold> {
    match op {
        Op::WaveReduceAdd => Some(LaneFold::Add),
        Op::WaveReduceMin => Some(LaneFold::UMin),
        Op::WaveReduceMax => Some(LaneFold::UMax),
        _ => None,
    }
}

impl Translator<'_, '_> {
    /// `wave_reduce_* rd, rs1`: the active lanes' values combined, to every active lane (with
    /// no active lane nothing is written, so the helper's 0 for that case never shows).
    fn wave_reduce(&mut self, inst: &Instruction, reduction: LaneFold, mask: &[Value]) {
        let src = self.reg(inst.rs1 as u32);
        let total = self.fold_lanes(&src, mask, reduction);
        let out = vec![total; self.wave.n];
        self.set_reg(inst.rd as u32, &out, mask);
    }

    /// `wave_prefix_sum rd, rs1`: each active lane gets the wrapping sum of the active lanes
    /// before it (exclusive; inactive lanes add 0 and are not written).
    fn wave_prefix_sum(&mut self, inst: &Instruction, mask: &[Value]) {
        let src = self.reg(inst.rs1 as u32);
        let zero = self.vconst4([0; 4]);
        let mut carry = zero;
        let mut out = Vec::with_capacity(self.wave.n);
        for (&v, &m) in src.iter().zip(mask) {
            let v = self.b.ins().band(v, m);
            // Inclusive sums inside the vector: add it moved up one lane, then two.
            let up1 = self.lanes_up(v, 1);
            let sum = self.b.ins().iadd(v, up1);
            let up2 = self.lanes_up(sum, 2);
            let inclusive = self.b.ins().iadd(sum, up2);
            let exclusive = self.b.ins().isub(inclusive, v);
            out.push(self.b.ins().iadd(exclusive, carry));
            let total = self.shuffle_lanes(inclusive, [3, 3, 3, 3]);
            carry = self.b.ins().iadd(carry, total);
        }
        self.set_reg(inst.rd as u32, &out, mask);
    }

    /// Lane `l` of the result is lane `l - by` of `v` (0 below lane `by`).
    fn lanes_up(&mut self, v: Value, by: u8) -> Value {
        let bytes: Vec<u8> = (0..16u8).map(|b| if b < 4 * by { 16 + b } else { b - 4 * by }).collect();
        let order = self.b.func.dfg.immediates.push(ConstantData::from(bytes));
        let zero = self.vconst4([0; 4]);
        let (v, zero) = (self.as_bytes(v), self.as_bytes(zero));
        let moved = self.b.ins().shuffle(v, zero, order);
        self.as_i32(moved)
    }
}
