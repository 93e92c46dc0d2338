//! Local and device memory.
//!
//! Device addresses are `window_base + zext(addr32)`; the window is 4 GiB + 64 KiB and fully
//! mapped, so every lane may load (inactive lanes too) and the result is blended. Local
//! addresses are masked into the worker's power-of-two buffer for the same reason.
//!
//! Bounds (semantics.md B.18): in checked code an unsigned vector compare against a
//! conservative limit finds candidate faulting lanes among the active ones; only then a cold
//! helper checks them exactly in lane order and records the first fault. Stores and atomics
//! must touch only active lanes in lane order, so they run in a helper (which also checks).

use super::{Translator, ADDR_SLOT, OUT_SLOT};
use crate::error::JitError;
use crate::helpers;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I32X4, I64};
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Value};
use wave_isa::opcodes::Class;
use wave_isa::Instruction;

impl Translator<'_, '_> {
    pub fn load(&mut self, inst: &Instruction, pc: u32) -> Result<(), JitError> {
        let mask = self.op_mask(inst.guard);
        let local = inst.op.class() == Class::LocalLoad;
        let bytes = inst.op.access_bytes();
        let addr = self.reg(inst.rs1 as u32);
        if self.flags.checked {
            self.bounds_check(inst, pc, local, bytes, &addr, &mask);
        }
        let base_off = if local { self.env.local_base_offset() } else { self.env.device_base_offset() };
        let base = self.load_ctx(I64, base_off);
        let addr = if local {
            let m = self.load_ctx(I32, self.env.local_mask_offset());
            let m = self.b.ins().splat(I32X4, m);
            (0..self.n).map(|k| self.b.ins().band(addr[k], m)).collect()
        } else {
            addr
        };
        let nregs = (bytes / 4).max(1);
        let width = bytes.min(4);
        // Plain memory that never traps (the window / local buffer covers every address).
        let flags = MemFlagsData::new().with_notrap();
        for i in 0..nregs {
            let mut out = Vec::with_capacity(self.n);
            for &a in addr.iter().take(self.n) {
                let mut v = self.vconst4([0; 4]);
                for lane in 0..4u8 {
                    let x = self.b.ins().extractlane(a, lane);
                    let x = self.b.ins().uextend(I64, x);
                    let p = self.b.ins().iadd(base, x);
                    let off = 4 * i as i32;
                    let word = match width {
                        1 => self.b.ins().uload8(I32, flags, p, off),
                        2 => self.b.ins().uload16(I32, flags, p, off),
                        _ => self.b.ins().load(I32, flags, p, off),
                    };
                    v = self.b.ins().insertlane(v, word, lane);
                }
                out.push(v);
            }
            self.set_reg(inst.rd as u32 + i, &out, &mask);
        }
        Ok(())
    }

    /// Find active lanes that may fault; if any, check them exactly on a cold path.
    fn bounds_check(
        &mut self,
        inst: &Instruction,
        pc: u32,
        local: bool,
        bytes: u32,
        addr: &[Value],
        mask: &[Value],
    ) {
        let lim = self.load_ctx(I32, self.env.limit_offset(local, bytes.trailing_zeros()));
        let lim = self.b.ins().splat(I32X4, lim);
        let fault: Vec<Value> = (0..self.n)
            .map(|k| {
                let f = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, addr[k], lim);
                self.b.ins().band(f, mask[k])
            })
            .collect();
        let any = self.any(&fault);
        let cold = self.b.create_block();
        let go = self.b.create_block();
        self.b.set_cold_block(cold);
        self.b.ins().brif(any, cold, &[], go, &[]);
        self.b.switch_to_block(cold);
        self.spill(ADDR_SLOT, addr);
        let bits = self.mask_bits(&fault);
        let st = self.call_helper(helpers::bounds, super::helper_op(inst), bits, pc);
        self.b.ins().brif(st, self.exit, &[st.into()], go, &[]);
        self.b.switch_to_block(go);
    }

    /// Stores and atomics: lane by lane in a helper (only active lanes are touched).
    pub fn memory_helper(&mut self, inst: &Instruction, pc: u32) -> Result<(), JitError> {
        let mask = self.op_mask(inst.guard);
        self.spill_inputs(inst);
        let bits = self.mask_bits(&mask);
        self.call_checked(helpers::memory, super::helper_op(inst), bits, pc);
        if inst.atomic_returns() {
            let old = self.reload(OUT_SLOT);
            self.set_reg(inst.rd as u32, &old, &mask);
        }
        Ok(())
    }
}
