//! Local and device memory.
//!
//! Device addresses are `window_base + zext(addr32)`; the window is 4 GiB + 64 KiB and fully
//! mapped, so every lane may load (inactive lanes too) and the result is blended. Local
//! addresses are masked into the worker's power-of-two buffer for the same reason.
//!
//! Bounds (semantics.md B.18): in checked code an unsigned vector compare against a
//! conservative limit finds candidate faulting lanes among the active ones; only then a cold
//! helper checks them exactly in lane order and records the first fault. Stores and atomics
//! touch only active lanes, in lane order: whole vectors where every lane is active, a loop
//! over the active lanes' words, one scalar store where the active lanes share an address
//! (the last one's value); where a lane may fault, and for atomics other than the inline local
//! ones, a helper that also checks.

use super::Translator;
use crate::abi::{helper_op, Helper, ADDR_SLOT, OUT_SLOT};
use crate::error::JitError;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I32X4, I64};
use cranelift_codegen::ir::{Block, BlockArg, ConstantData, InstBuilder, MemFlagsData, Value};
use wave_isa::analysis::Uniformity;
use wave_isa::opcodes::{Class, Slot};
use wave_isa::{FuncId, Instruction, Op};

/// How a memory op's address varies across the 4 lanes of each vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AddressShape {
    /// The same address in every active lane of the vector: one scalar access.
    Same,
    /// Consecutive 4-byte words (lane j at base + 4j): one vector access.
    Consecutive,
    /// Consecutive 4-byte words across the whole wave, every lane running, in checked code:
    /// lane 0's address places every vector (vector k at +16k) and bounds them all with one
    /// compare (see [`Translator::wave_consecutive`]).
    WaveConsecutive,
    /// Anything else: one access per lane.
    Scattered,
}

impl Translator<'_, '_> {
    pub fn load(&mut self, inst: &Instruction, pc: u32) -> Result<(), JitError> {
        let mask = self.op_mask(inst.guard);
        let local = inst.op.class() == Class::LocalLoad;
        let bytes = inst.op.access_bytes();
        let addr = self.reg(inst.rs1 as u32);
        let shape = match self.address_shape(inst, pc) {
            AddressShape::Consecutive | AddressShape::WaveConsecutive if bytes != 4 => {
                AddressShape::Scattered
            }
            shape => shape,
        };
        if self.flags.checked && !self.checked_at_entry(pc) {
            self.bounds_check(inst, pc, shape, &addr, &mask);
        }
        if !local {
            self.guess_next_addresses(pc, &addr);
        }
        let vals = match shape {
            AddressShape::Scattered => match self.local_load_stride(inst, pc, local, bytes) {
                Some(stride) => vec![self.load_strided_local(&addr, stride)],
                None => self.load_scattered(&addr, bytes, local),
            },
            AddressShape::Same => self.load_same(pc, &addr, &mask, bytes, local),
            AddressShape::Consecutive => vec![self.load_consecutive(pc, &addr, &mask, local)],
            AddressShape::WaveConsecutive => vec![self.load_wave_consecutive(&addr, local)],
        };
        for (i, regs) in vals.iter().enumerate() {
            self.set_reg(inst.rd as u32 + i as u32, regs, &mask);
        }
        Ok(())
    }

    /// One access per lane: for each register of the result, its vectors.
    fn load_scattered(&mut self, addr: &[Value], bytes: u32, local: bool) -> Vec<Vec<Value>> {
        let base = self.memory_base(local);
        let nregs = (bytes / 4).max(1) as usize;
        let width = bytes.min(4);
        let mut out: Vec<Vec<Value>> = vec![Vec::with_capacity(self.wave.n); nregs];
        for &a in addr {
            let lane_ptrs: Vec<Value> =
                (0..4u8).map(|lane| self.lane_pointer(base, a, lane, local)).collect();
            for (i, regs) in out.iter_mut().enumerate() {
                let mut v = self.vconst4([0; 4]);
                for (lane, &p) in lane_ptrs.iter().enumerate() {
                    let word = self.load_word(width, p, 4 * i as i32);
                    v = self.b.ins().insertlane(v, word, lane as u8);
                }
                regs.push(v);
            }
        }
        out
    }

    /// The stride of a 32-bit local load whose lanes' addresses are `a₀ + lane × stride` (by
    /// the analysis) with a stride other than 0 and 4 (a transposed tile's column: 132 bytes in
    /// the bundled transpose), where [`Self::load_strided_local`] may place every lane from
    /// lane 0: checked code where every lane runs the load, so each lane's address passed the
    /// bounds check (or the loop's check at entry), and a stride below the local size limit, so
    /// `a₀ + 3 × stride` (below 4 MiB) does not wrap and is that lane's address.
    fn local_load_stride(&self, inst: &Instruction, pc: u32, local: bool, bytes: u32) -> Option<u32> {
        if !(local && bytes == 4 && self.flags.checked && self.full) {
            return None;
        }
        let stride = match self.shadow_stride(inst.rs1 as u32) {
            Some(stride) => stride,
            None => self.operand_stride(inst, pc, Slot::Rs1)?,
        };
        (stride != 0 && stride != 4 && stride <= wave_runtime::caps::LOCAL_MEMORY_SIZE).then_some(stride)
    }

    /// Lane j of each vector from lane 0's pointer plus `j × stride` (see
    /// [`Self::local_load_stride`]): one lane extract per vector, where a scattered load takes
    /// one and an address computation per lane.
    fn load_strided_local(&mut self, addr: &[Value], stride: u32) -> Vec<Value> {
        let base = self.memory_base(true);
        let mut out = Vec::with_capacity(addr.len());
        for &a in addr {
            let first = self.lane0(a);
            let p = self.scalar_pointer(base, first, false);
            let mut v = self.vconst4([0; 4]);
            for lane in 0..4u8 {
                let word = self.b.ins().load(I32, plain_memory(), p, (lane as u32 * stride) as i32);
                v = self.b.ins().insertlane(v, word, lane);
            }
            out.push(v);
        }
        out
    }

    /// The same address in every active lane of each vector: one scalar access, splat.
    fn load_same(
        &mut self,
        pc: u32,
        addr: &[Value],
        mask: &[Value],
        bytes: u32,
        local: bool,
    ) -> Vec<Vec<Value>> {
        let base = self.memory_base(local);
        let nregs = (bytes / 4).max(1) as usize;
        let width = bytes.min(4);
        let mut out: Vec<Vec<Value>> = vec![Vec::with_capacity(self.wave.n); nregs];
        let exact = self.exact_lane0_offsets(pc);
        for k in 0..self.wave.n {
            let p = match &exact {
                Some(offsets) => self.b.ins().iadd(base, offsets[k]),
                None => {
                    let first = self.first_active_address(pc, addr[k], mask[k], AddressShape::Same);
                    // Checked with every lane active, the address passed its bounds check: no mask.
                    let wrap = local && !(self.flags.checked && self.full);
                    self.scalar_pointer(base, first, wrap)
                }
            };
            for (i, regs) in out.iter_mut().enumerate() {
                let word = self.load_word(width, p, 4 * i as i32);
                let splat = self.b.ins().splat(I32X4, word);
                // A scalar op or address that reads it takes the word, not its lane 0.
                self.note_lane0(splat, word);
                regs.push(splat);
            }
        }
        out
    }

    /// Consecutive 32-bit words: one 16-byte load per vector, where its four addresses are
    /// consecutive in host memory too. They are not where the vector's lane-0 address wraps
    /// past 2^32 (device) or past the end of the local buffer: lanes at the top of a 4 GiB
    /// device, an inactive lane 0 whose implied address is below zero (`a[t - 1]`), or any
    /// address in unchecked code. There every lane loads on its own (a chunk-major loop bails
    /// out instead). Checked code whose bounds check lane 0 decides needs no such test: lane 0
    /// passed it with 16 bytes of room.
    fn load_consecutive(&mut self, pc: u32, addr: &[Value], mask: &[Value], local: bool) -> Vec<Value> {
        // The entry test bounds each lane's word, so lane 0's 16 bytes hold the four unless
        // they cross 2^32 on a device whose window wraps (`lane0_decides`).
        if let Some(offsets) = self.lane0_decides(pc, local).then(|| self.exact_lane0_offsets(pc)).flatten() {
            let base = self.memory_base(local);
            return offsets
                .iter()
                .map(|&o| {
                    let pointer = self.b.ins().iadd(base, o);
                    self.b.ins().load(I32X4, plain_memory(), pointer, 0)
                })
                .collect();
        }
        let firsts: Vec<Value> = (0..self.wave.n)
            .map(|k| self.first_active_address(pc, addr[k], mask[k], AddressShape::Consecutive))
            .collect();
        let base = self.memory_base(local);
        if self.flags.checked && self.lane0_decides(pc, local) {
            // Lane 0 passed its 16-byte bounds check (or no lane of the vector runs), so the
            // address needs no mask.
            let wrap = local && !self.full;
            return firsts.iter().map(|&f| self.vector_load(base, f, wrap)).collect();
        }
        let offsets = self.access_offsets(&firsts, local);
        let wraps = self.consecutive_wraps(&offsets, local);
        let vector = self.b.create_block();
        if let Some(bail) = self.bailout() {
            self.b.ins().brif(wraps, bail, &[], vector, &[]);
            self.continue_in(vector);
            return offsets.iter().map(|&f| self.vector_load(base, f, false)).collect();
        }
        let lanes = self.b.create_block();
        let join = self.b.create_block();
        for _ in 0..self.wave.n {
            self.b.append_block_param(join, I32X4);
        }
        self.b.set_cold_block(lanes);
        self.b.ins().brif(wraps, lanes, &[], vector, &[]);
        self.b.seal_block(vector);
        self.continue_in(lanes);
        let each = self.load_each_lane(base, addr, local);
        let args: Vec<BlockArg> = each.iter().map(|&v| v.into()).collect();
        self.b.ins().jump(join, &args);
        self.b.switch_to_block(vector);
        let vals: Vec<BlockArg> = offsets.iter().map(|&f| self.vector_load(base, f, false).into()).collect();
        self.b.ins().jump(join, &vals);
        self.continue_in(join);
        self.b.block_params(join).to_vec()
    }

    /// The wave's consecutive words: its bounds check passed lane 0's address with room for
    /// all 16 × W/4 bytes, so none wraps and one pointer serves every vector.
    fn load_wave_consecutive(&mut self, addr: &[Value], local: bool) -> Vec<Value> {
        let first = self.lane0(addr[0]);
        let base = self.memory_base(local);
        let p = self.scalar_pointer(base, first, false);
        (0..self.wave.n).map(|k| self.b.ins().load(I32X4, plain_memory(), p, 16 * k as i32)).collect()
    }

    /// A 16-byte load at `base + offset` (the offset masked into the local buffer with `wrap`).
    fn vector_load(&mut self, base: Value, offset: Value, wrap: bool) -> Value {
        let p = self.scalar_pointer(base, offset, wrap);
        self.b.ins().load(I32X4, plain_memory(), p, 0)
    }

    /// Each vector's first address as an offset from the memory's base: local ones masked into
    /// the buffer.
    fn access_offsets(&mut self, firsts: &[Value], local: bool) -> Vec<Value> {
        if !local {
            return firsts.to_vec();
        }
        let m = self.load_workgroup_field(I32, self.env.local_mask_offset());
        firsts.iter().map(|&f| self.b.ins().band(f, m)).collect()
    }

    /// Whether some vector's 16 bytes from `offsets` (see [`Self::access_offsets`]) would not
    /// hold its four consecutive addresses: past 2^32 on the device (whose window then
    /// holds the 64 KiB tail, not address 0), past the buffer's power of two locally (whose
    /// masked lanes restart at 0). An i8.
    fn consecutive_wraps(&mut self, offsets: &[Value], local: bool) -> Value {
        let mut top = offsets[0];
        for &o in &offsets[1..] {
            top = self.b.ins().umax(top, o);
        }
        if local {
            // offset + 16 > mask + 1; the masked offset is below 64 KiB, so no overflow.
            let m = self.load_workgroup_field(I32, self.env.local_mask_offset());
            let end = self.b.ins().iadd_imm_u(top, 15);
            self.b.ins().icmp(IntCC::UnsignedGreaterThan, end, m)
        } else {
            self.b.ins().icmp_imm_u(IntCC::UnsignedGreaterThan, top, (u32::MAX - 15) as i64)
        }
    }

    /// Every lane's 32-bit word loaded on its own, in a run-time loop over the wave's lanes
    /// (the code stays small at any W: this is the rare path). Inactive lanes load too: any
    /// 32-bit address plus 4 stays inside the device window, and masked local addresses
    /// inside the buffer's 16 bytes of slack.
    fn load_each_lane(&mut self, base: Value, addr: &[Value], local: bool) -> Vec<Value> {
        self.spill(ADDR_SLOT, addr);
        let mask =
            if local { Some(self.load_workgroup_field(I32, self.env.local_mask_offset())) } else { None };
        let head = self.b.create_block();
        let after = self.b.create_block();
        self.b.set_cold_block(head);
        self.b.set_cold_block(after);
        self.b.append_block_param(head, I64);
        let zero = self.b.ins().iconst(I64, 0);
        self.b.ins().jump(head, &[zero.into()]);
        self.b.switch_to_block(head);
        let byte = self.b.block_params(head)[0];
        let slot = self.b.ins().iadd(self.ctx, byte);
        let a = self.b.ins().load(I32, scratch_memory(), slot, self.env.scratch_offset(ADDR_SLOT));
        let a = match mask {
            Some(m) => self.b.ins().band(a, m),
            None => a,
        };
        let p = self.scalar_pointer(base, a, false);
        let word = self.b.ins().load(I32, plain_memory(), p, 0);
        self.b.ins().store(scratch_memory(), word, slot, self.env.scratch_offset(OUT_SLOT));
        let next = self.b.ins().iadd_imm_u(byte, 4);
        let more = self.b.ins().icmp_imm_u(IntCC::UnsignedLessThan, next, 16 * self.wave.n as i64);
        self.b.ins().brif(more, head, &[next.into()], after, &[]);
        self.b.seal_block(head);
        self.continue_in(after);
        self.reload(OUT_SLOT)
    }

    /// The address of a vector's first lane, or, where that lane may be inactive while others
    /// run, the address the active lanes agree on (taken back to lane 0 for consecutive ones).
    fn first_active_address(&mut self, pc: u32, addr: Value, mask: Value, shape: AddressShape) -> Value {
        if self.lane0_runs_with_its_vector(pc) {
            return self.lane0(addr);
        }
        let lane_offsets = if shape == AddressShape::Consecutive { [0, 4, 8, 12] } else { [0; 4] };
        let offsets = self.vconst4(lane_offsets);
        let base = self.b.ins().isub(addr, offsets);
        // Inactive lanes become 0; the unsigned maximum is then the active lanes' base.
        let base = self.b.ins().band(base, mask);
        let swapped = self.shuffle_lanes(base, [2, 3, 0, 1]);
        let m = self.b.ins().umax(base, swapped);
        let swapped = self.shuffle_lanes(m, [1, 0, 3, 2]);
        let m = self.b.ins().umax(m, swapped);
        self.b.ins().extractlane(m, 0)
    }

    /// Permute the four 32-bit lanes of a vector.
    pub(super) fn shuffle_lanes(&mut self, v: Value, lanes: [u8; 4]) -> Value {
        let bytes: Vec<u8> = lanes.iter().flat_map(|&l| (0..4).map(move |b| 4 * l + b)).collect();
        let mask = self.b.func.dfg.immediates.push(ConstantData::from(bytes));
        let v8 = self.as_bytes(v);
        let r = self.b.ins().shuffle(v8, v8, mask);
        self.as_i32(r)
    }

    /// Where the statement runs, is every live lane of a vector active or none? Then lane 0
    /// holds the vector's address. Not so for a guarded op (its guard may turn lane 0 off), in
    /// divergent code, in a callee called from divergent code, or after a partial `halt`.
    pub(super) fn lane0_runs_with_its_vector(&self, pc: u32) -> bool {
        self.full
            || !self.op_guarded
                && !self.analyses.partial_halts
                && !self.region.call_divergent
                && self.region.divergent_loops.1 == 0
                && self.shapes().get(self.func, pc).is_some_and(|info| !info.divergent)
    }

    /// Whether lane 0's address bounds its vector's consecutive or equal addresses: it runs
    /// with its vector, and no address in bounds lies within 16 bytes of 2^32 (where the next
    /// lanes would wrap to address 0 while lane 0 sits near the top: a 4 GiB device).
    fn lane0_decides(&self, pc: u32, local: bool) -> bool {
        self.lane0_runs_with_its_vector(pc) && (local || !self.flags.window_wraps)
    }

    /// The address operand's shape from the per-vector analysis (and the wave analysis).
    fn address_shape(&self, inst: &Instruction, pc: u32) -> AddressShape {
        if let Some(stride) = self.shadow_stride(inst.rs1 as u32) {
            // A shadow's vectors are rebuilt from its lane 0 with this very stride.
            let local = matches!(inst.op.class(), Class::LocalLoad | Class::LocalStore);
            return match stride {
                0 => AddressShape::Same,
                4 if self.full && self.wave.n > 1 && self.flags.checked && self.lane0_decides(pc, local) => {
                    AddressShape::WaveConsecutive
                }
                4 => AddressShape::Consecutive,
                _ => AddressShape::Scattered,
            };
        }
        match self.operand_stride(inst, pc, Slot::Rs1) {
            Some(0) => AddressShape::Same,
            Some(4) if self.wave_consecutive(inst, pc) => AddressShape::WaveConsecutive,
            Some(4) => AddressShape::Consecutive,
            _ => AddressShape::Scattered,
        }
    }

    /// Whether the address is `base + 4 × lane` across the whole wave (the wave analysis) and
    /// every lane runs the access: then vector k's lane 0 is lane 0's address plus 16k. The
    /// analysis describes the lanes that run a statement, so the form holds for all W lanes
    /// only where all of them run it (`full`: unguarded, every lane live and active, by the
    /// analysis or by the run-time test of a coherent copy). Checked code only, where lane 0
    /// decides the bounds (its one compare covers every vector), and not in chunk-major loops
    /// (their vectors are not the wave's).
    fn wave_consecutive(&self, inst: &Instruction, pc: u32) -> bool {
        let local = matches!(inst.op.class(), Class::LocalLoad | Class::LocalStore);
        self.full
            && self.wave.n > 1
            && self.chunk_loop.is_none()
            && self.flags.checked
            && self.lane0_decides(pc, local)
            && stride_in(self.waves(), self.func, inst, pc, Slot::Rs1) == Some(4)
    }

    /// How the operand in `slot` varies across the lanes of each vector, from the per-vector
    /// analysis: `base + lane × stride` in the running lanes, or unknown.
    pub(super) fn operand_stride(&self, inst: &Instruction, pc: u32, slot: Slot) -> Option<u32> {
        stride_in(self.shapes(), self.func, inst, pc, slot)
    }

    /// The same across the whole wave, from the wave analysis (which describes the lanes that
    /// run the statement: all of them where every lane runs it).
    pub(super) fn wave_operand_stride(&self, inst: &Instruction, pc: u32, slot: Slot) -> Option<u32> {
        stride_in(self.waves(), self.func, inst, pc, slot)
    }

    /// Base pointer of device memory or of the worker's local buffer.
    pub(super) fn memory_base(&mut self, local: bool) -> Value {
        let off = if local { self.env.local_base_offset() } else { self.env.device_base_offset() };
        self.load_workgroup_field(I64, off)
    }

    /// `base + zext(addr)`, with `wrap` (local memory) the address masked into the buffer first.
    fn scalar_pointer(&mut self, base: Value, addr: Value, wrap: bool) -> Value {
        let addr = if wrap {
            let m = self.load_workgroup_field(I32, self.env.local_mask_offset());
            self.b.ins().band(addr, m)
        } else {
            addr
        };
        let wide = self.b.ins().uextend(I64, addr);
        self.b.ins().iadd(base, wide)
    }

    fn lane_pointer(&mut self, base: Value, addr: Value, lane: u8, local: bool) -> Value {
        let a = self.b.ins().extractlane(addr, lane);
        self.scalar_pointer(base, a, local)
    }

    /// A zero-extended 1-, 2- or 4-byte load.
    fn load_word(&mut self, width: u32, p: Value, offset: i32) -> Value {
        match width {
            1 => self.b.ins().uload8(I32, plain_memory(), p, offset),
            2 => self.b.ins().uload16(I32, plain_memory(), p, offset),
            _ => self.b.ins().load(I32, plain_memory(), p, offset),
        }
    }

    /// The lanes of `mask` whose address may fault (a conservative vector compare).
    fn fault_candidates(&mut self, local: bool, bytes: u32, addr: &[Value], mask: &[Value]) -> Vec<Value> {
        let lim = self.load_workgroup_field(I32, self.env.limit_offset(local, bytes.trailing_zeros()));
        let lim = self.b.ins().splat(I32X4, lim);
        (0..self.wave.n)
            .map(|k| {
                let f = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, addr[k], lim);
                if self.full {
                    f
                } else {
                    self.b.ins().band(f, mask[k])
                }
            })
            .collect()
    }

    /// Whether some active lane's address may fault, as an i8. Where lane 0 runs with its
    /// vector and the shape is known, lane 0's address says it (consecutive words are one
    /// 16-byte access); otherwise the largest active address against the conservative limit
    /// (inactive lanes count as address 0). `firsts`: each vector's lane 0, where the caller
    /// has them already.
    #[allow(clippy::too_many_arguments)]
    fn may_fault(
        &mut self,
        pc: u32,
        shape: AddressShape,
        local: bool,
        bytes: u32,
        addr: &[Value],
        mask: &[Value],
        firsts: Option<&[Value]>,
    ) -> Value {
        if shape == AddressShape::WaveConsecutive {
            // The last vector's lane 0, in 64 bits: past 2^32 it is out of bounds, not wrapped.
            let first = self.lane0(addr[0]);
            let first = self.b.ins().uextend(I64, first);
            let top = self.b.ins().iadd_imm_u(first, 16 * (self.wave.n as i64 - 1));
            let lim = self.load_workgroup_field(I32, self.env.limit_offset(local, 16u32.trailing_zeros()));
            let lim = self.b.ins().uextend(I64, lim);
            return self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, top, lim);
        }
        let lane0_decides = shape != AddressShape::Scattered && self.lane0_decides(pc, local);
        let mut top: Option<Value> = None;
        for k in 0..self.wave.n {
            let a = if lane0_decides {
                firsts.map_or_else(|| self.lane0(addr[k]), |f| f[k])
            } else if self.full {
                addr[k]
            } else {
                self.b.ins().band(addr[k], mask[k])
            };
            top = Some(match top {
                Some(t) => self.b.ins().umax(t, a),
                None => a,
            });
        }
        let top = if lane0_decides {
            top.unwrap_or_else(|| self.b.ins().iconst(I32, 0))
        } else {
            let top = top.unwrap_or_else(|| self.vconst4([0; 4]));
            let swapped = self.shuffle_lanes(top, [2, 3, 0, 1]);
            let top = self.b.ins().umax(top, swapped);
            let swapped = self.shuffle_lanes(top, [1, 0, 3, 2]);
            let top = self.b.ins().umax(top, swapped);
            self.b.ins().extractlane(top, 0)
        };
        let span = if lane0_decides && shape == AddressShape::Consecutive { 16 } else { bytes };
        let lim = self.load_workgroup_field(I32, self.env.limit_offset(local, span.trailing_zeros()));
        self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, top, lim)
    }

    /// Find active lanes that may fault; if any, check them exactly on a cold path.
    fn bounds_check(
        &mut self,
        inst: &Instruction,
        pc: u32,
        shape: AddressShape,
        addr: &[Value],
        mask: &[Value],
    ) {
        let local = inst.op.class() == Class::LocalLoad;
        let bytes = inst.op.access_bytes();
        let any = self.may_fault(pc, shape, local, bytes, addr, mask, None);
        let go = self.b.create_block();
        if let Some(bail) = self.bailout() {
            // Chunk-major: a possible fault is found again, in interpreter order, wave-major.
            self.b.ins().brif(any, bail, &[], go, &[]);
            self.continue_in(go);
            return;
        }
        let cold = self.b.create_block();
        self.b.set_cold_block(cold);
        self.b.ins().brif(any, cold, &[], go, &[]);
        self.continue_in(cold);
        if self.full
            && shape != AddressShape::Scattered
            && (local || bytes > 1)
            && self.lane0_decides(pc, local)
        {
            // Every lane is active and lane 0 of each vector decided with an exact limit: some
            // lane faults, and the helper finds the first one in lane order. Only the addresses
            // go to it (no candidate mask to build inline: this is most of a wave-major
            // access's code).
            self.spill(ADDR_SLOT, addr);
            let all = self.all_lanes_bits();
            let st = self.call_helper(Helper::BoundsFault, helper_op(inst), all, pc);
            self.leave(st);
            self.continue_in(go);
            return;
        }
        let fault = self.fault_candidates(local, bytes, addr, mask);
        let bits = self.mask_bits(&fault);
        if local || bytes > 1 {
            // The limit is exact here (only a 1-byte device access on a 4 GiB device saturates
            // it), so a candidate is a fault and the path never comes back: no value of the
            // hot path lives across the call, and none is spilled for it.
            let none = self.b.ins().icmp_imm_u(IntCC::Equal, bits, 0);
            let report = self.b.create_block();
            self.b.set_cold_block(report);
            self.b.ins().brif(none, go, &[], report, &[]);
            self.continue_in(report);
            self.spill(ADDR_SLOT, addr);
            let st = self.call_helper(Helper::BoundsFault, helper_op(inst), bits, pc);
            self.leave(st);
        } else {
            self.spill(ADDR_SLOT, addr);
            let st = self.call_helper(Helper::Bounds, helper_op(inst), bits, pc);
            self.leave_if(st, go);
        }
        self.continue_in(go);
    }

    /// A 32-bit store to consecutive addresses runs as vector stores when every lane is active
    /// (and, checked, none may fault; and the 16 bytes from each vector's lane 0 hold its four
    /// addresses, see `load_consecutive`); other 32-bit stores as `scattered_store` does;
    /// anything else takes the lane-order helper.
    pub fn store(&mut self, inst: &Instruction, pc: u32) -> Result<(), JitError> {
        let shape = self.address_shape(inst, pc);
        let consecutive = inst.op.access_bytes() == 4
            && matches!(shape, AddressShape::Consecutive | AddressShape::WaveConsecutive);
        if self.stores_same_word(inst, pc) {
            return self.store_same(inst, pc);
        }
        if !consecutive {
            if inst.op.access_bytes() == 4 {
                return self.scattered_store(inst, pc);
            }
            return self.memory_helper(inst, pc);
        }
        let local = inst.op.class() == Class::LocalStore;
        let mask = self.op_mask(inst.guard);
        let addr = self.reg(inst.rs1 as u32);
        let value = self.reg(inst.rs2 as u32);
        // Why the vector path may not run (an i8 each, non-zero: take the lanes path): some
        // lane inactive, some active lane may fault, the addresses may wrap. Branching on their
        // OR spares the fully active wave a negation and a test per store.
        let mut slow: Vec<Value> = Vec::new();
        if !self.full {
            let every = self.all_true(&mask);
            slow.push(self.b.ins().bxor_imm_u(every, 1));
        }
        // Every lane is active on the vector path, so lane 0 holds each vector's first address.
        let firsts: Vec<Value> = addr.iter().map(|&a| self.lane0(a)).collect();
        // Checked, the vector path runs only where every lane is in bounds: below 2^32 - 16
        // (unless the device reaches the top) and below the local size, so its 16 bytes hold
        // the four addresses.
        let proven = self.vector_store_proven(local);
        let any_may_fault =
            self.flags.checked.then(|| self.may_fault(pc, shape, local, 4, &addr, &mask, Some(&firsts)));
        slow.extend(any_may_fault);
        let offsets = if proven { firsts } else { self.access_offsets(&firsts, local) };
        if !proven {
            let wraps = self.consecutive_wraps(&offsets, local);
            slow.push(wraps);
        }
        let slow = slow.into_iter().reduce(|a, b| self.b.ins().bor(a, b));
        let run_bail = self.run_bail().filter(|_| self.full && proven);
        if let (Some(bail), Some(slow)) = (run_bail, slow) {
            // In a store run, whose bail-out runs the run again with this store's exact
            // fault path (see `store_run`): only a fault comes here, as below.
            let vector = self.b.create_block();
            self.b.ins().brif(slow, bail, &[], vector, &[]);
            self.continue_in(vector);
            self.vector_stores(shape, local, proven, &offsets, &value);
            return Ok(());
        }
        let vector = self.b.create_block();
        let lanes = self.b.create_block();
        let done = self.b.create_block();
        match slow {
            Some(slow) => self.b.ins().brif(slow, lanes, &[], vector, &[]),
            None => self.b.ins().jump(vector, &[]),
        };
        self.continue_in(vector);
        self.vector_stores(shape, local, proven, &offsets, &value);
        self.b.ins().jump(done, &[]);
        // Its one predecessor is the branch above: sealed, it reads the values defined
        // before it directly (with their lane-0 forms).
        self.continue_in(lanes);
        if self.full && proven {
            // Every lane is active, so only a possible fault comes here, and lane 0 of each
            // vector decided it exactly: some lane faults. The helper stores the lanes before
            // it in lane order and reports it; the wave ends there (no mask to build inline,
            // and no way back for the hot path's values to be kept across the call).
            self.b.set_cold_block(lanes);
            self.spill_inputs(inst);
            let all = self.all_lanes_bits();
            let st = self.call_helper(Helper::MemoryFault, helper_op(inst), all, pc);
            self.leave(st);
        } else {
            // Some lane inactive (or the device window wraps): where no active lane may
            // fault, the active lanes store inline, else the helper stores them in lane order
            // up to the first fault.
            let inline = self.b.create_block();
            let helper = self.b.create_block();
            match any_may_fault {
                Some(any) => self.b.ins().brif(any, helper, &[], inline, &[]),
                None => self.b.ins().jump(inline, &[]),
            };
            self.continue_in(inline);
            self.masked_lane_stores(local, &addr, &value, &mask);
            self.b.ins().jump(done, &[]);
            self.continue_in(helper);
            self.memory_helper(inst, pc)?;
            self.b.ins().jump(done, &[]);
        }
        self.continue_in(done);
        Ok(())
    }

    /// Whether `store` takes `store_same` for this store: every lane's address is the same.
    fn stores_same_word(&self, inst: &Instruction, pc: u32) -> bool {
        matches!(inst.op.access_bytes(), 1 | 2 | 4)
            && self.wave_operand_stride(inst, pc, Slot::Rs1) == Some(0)
    }

    /// Whether `store` would take its vector path for this store with every lane active and
    /// an exact bounds check (the case whose fault path a store run shares, see
    /// [`super::store_run`]), where every lane runs it.
    pub(super) fn store_shares_run_bail(&self, inst: &Instruction, pc: u32) -> bool {
        let local = inst.op.class() == Class::LocalStore;
        let shape = self.address_shape(inst, pc);
        inst.op.access_bytes() == 4
            && matches!(shape, AddressShape::Consecutive | AddressShape::WaveConsecutive)
            && !self.stores_same_word(inst, pc)
            && inst.guard.is_none()
            && self.exec_is_full(pc)
            && self.vector_store_proven(local)
    }

    /// Whether `store`'s vector path has its bounds checked exactly (checked code, and below
    /// 2^32 - 16 or the local size, so that each vector's 16 bytes hold its four addresses).
    fn vector_store_proven(&self, local: bool) -> bool {
        self.flags.checked && (local || !self.flags.window_wraps)
    }

    /// The vector path of `store`: each vector of `value` at its first address.
    fn vector_stores(
        &mut self,
        shape: AddressShape,
        local: bool,
        proven: bool,
        offsets: &[Value],
        value: &[Value],
    ) {
        let base = self.memory_base(local);
        if shape == AddressShape::WaveConsecutive {
            // Every vector from lane 0's pointer: the bounds check covered them all.
            let p = self.scalar_pointer(base, offsets[0], false);
            for (k, &v) in value.iter().enumerate() {
                self.b.ins().store(plain_memory(), v, p, 16 * k as i32);
            }
        } else {
            for (k, &offset) in offsets.iter().enumerate() {
                let p = self.scalar_pointer(base, offset, local && proven);
                self.b.ins().store(plain_memory(), value[k], p, 0);
            }
        }
    }

    /// A 32-bit store whose lanes' addresses follow no pattern the analyses know (a transposed
    /// tile's slots): where no active lane may fault (checked by one compare of the largest
    /// active address; unchecked code has no faults), the active lanes store inline in lane
    /// order ([`Self::masked_lane_stores`]), so where lanes share an address the last one's
    /// word stays. A possible fault takes the lane-order helper, which stores the lanes before
    /// the first fault and reports it. Every such store took the helper before: the GPU-style
    /// GEMM's transposed staging of A spent 3.4 % of its run in it. (The lanes' stores
    /// unrolled for a fully active wave ran no faster and made its first code 14 % slower.)
    fn scattered_store(&mut self, inst: &Instruction, pc: u32) -> Result<(), JitError> {
        let local = inst.op.class() == Class::LocalStore;
        let mask = self.op_mask(inst.guard);
        let addr = self.reg(inst.rs1 as u32);
        let value = self.reg(inst.rs2 as u32);
        let done = self.b.create_block();
        if self.flags.checked {
            let any = self.may_fault(pc, AddressShape::Scattered, local, 4, &addr, &mask, None);
            self.helper_if_may_fault(any, inst, pc, done)?;
        }
        self.masked_lane_stores(local, &addr, &value, &mask);
        self.b.ins().jump(done, &[]);
        self.continue_in(done);
        Ok(())
    }

    /// A store of 1, 2 or 4 bytes whose address every active lane of the wave shares (by the
    /// wave analysis): in lane order the last active lane's value is the one that stays, so one
    /// scalar store of it, and none without an active lane. A wave's result written by one of
    /// its lanes (`@p local_store`, `p` = lane 0: the prefix sum, softmax) took the lane-order
    /// helper, its operands spilled, on every wave. Where the address may fault, the helper
    /// runs instead: it stops at the first active lane, as the interpreter does.
    fn store_same(&mut self, inst: &Instruction, pc: u32) -> Result<(), JitError> {
        let local = inst.op.class() == Class::LocalStore;
        let bytes = inst.op.access_bytes();
        let mask = self.op_mask(inst.guard);
        let bits = self.mask_bits(&mask);
        let some = self.b.create_block();
        let done = self.b.create_block();
        self.b.ins().brif(bits, some, &[], done, &[]);
        self.continue_in(some);
        // The last active lane's address (the active lanes' one) and value, from the scratch
        // slots by its index (63 - leading zeros of the lane bits).
        let addr = self.reg(inst.rs1 as u32);
        let value = self.reg(inst.rs2 as u32);
        self.spill(0, &addr);
        self.spill(1, &value);
        let zeros = self.b.ins().clz(bits);
        let last = self.b.ins().bxor_imm_u(zeros, 63);
        let (a, v) = self.spilled_lane(last);
        if self.flags.checked {
            let lim = self.load_workgroup_field(I32, self.env.limit_offset(local, bytes.trailing_zeros()));
            let may_fault = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, a, lim);
            self.helper_if_may_fault(may_fault, inst, pc, done)?;
        }
        let base = self.memory_base(local);
        let p = self.scalar_pointer(base, a, local);
        match bytes {
            1 => self.b.ins().istore8(plain_memory(), v, p, 0),
            2 => self.b.ins().istore16(plain_memory(), v, p, 0),
            _ => self.b.ins().store(plain_memory(), v, p, 0),
        };
        self.b.ins().jump(done, &[]);
        self.continue_in(done);
        Ok(())
    }

    /// Where `may_fault` (an i8) is set, the lane-order memory helper runs the store on a cold
    /// path (it reports the first fault) and goes on to `done`; the code continues where no
    /// lane may fault.
    fn helper_if_may_fault(
        &mut self,
        may_fault: Value,
        inst: &Instruction,
        pc: u32,
        done: Block,
    ) -> Result<(), JitError> {
        let inline = self.b.create_block();
        let helper = self.b.create_block();
        self.b.set_cold_block(helper);
        self.b.ins().brif(may_fault, helper, &[], inline, &[]);
        self.continue_in(helper);
        self.memory_helper(inst, pc)?;
        self.b.ins().jump(done, &[]);
        self.continue_in(inline);
        Ok(())
    }

    /// Store the active lanes of `value` at their addresses, none of which may fault: the
    /// addresses and values go to the helper's scratch slots, and a loop over the mask's set
    /// bits stores each active lane's word (inactive lanes' memory is never touched: another
    /// thread may own it). A partial wave used to call the memory helper, 3.5 % of a
    /// one-thread bias-add (one wave in 32 ends a row). The loop is the same few blocks at
    /// every width, where a test and a branch per lane were 12 blocks per vector.
    fn masked_lane_stores(&mut self, local: bool, addr: &[Value], value: &[Value], mask: &[Value]) {
        self.spill(0, addr);
        self.spill(1, value);
        let bits = self.mask_bits(mask);
        let base = self.memory_base(local);
        let header = self.b.create_block();
        let lane = self.b.create_block();
        let done = self.b.create_block();
        self.b.append_block_param(header, I64);
        self.b.ins().jump(header, &[bits.into()]);
        self.b.switch_to_block(header);
        let left = self.b.block_params(header)[0];
        self.b.ins().brif(left, lane, &[], done, &[]);
        self.continue_in(lane);
        let index = self.b.ins().ctz(left);
        let (a, v) = self.spilled_lane(index);
        let p = self.scalar_pointer(base, a, local);
        self.b.ins().store(plain_memory(), v, p, 0);
        let lower = self.b.ins().iadd_imm_s(left, -1);
        let rest = self.b.ins().band(left, lower);
        self.b.ins().jump(header, &[rest.into()]);
        self.b.seal_block(header);
        self.continue_in(done);
    }

    /// Lane `index`'s (I64) address and value words, spilled to scratch slots 0 and 1.
    fn spilled_lane(&mut self, index: Value) -> (Value, Value) {
        let byte = self.b.ins().ishl_imm_s(index, 2);
        let slot = self.b.ins().iadd(self.ctx, byte);
        let flags = super::ctx_flags();
        let a = self.b.ins().load(I32, flags, slot, self.env.scratch_offset(0));
        let v = self.b.ins().load(I32, flags, slot, self.env.scratch_offset(1));
        (a, v)
    }

    /// Every lane of the vectors the wave's code computes as a helper's lane bit set.
    fn all_lanes_bits(&mut self) -> Value {
        let lanes = (4 * self.view.vectors as u32).clamp(1, 64);
        self.b.ins().iconst(I64, (u64::MAX >> (64 - lanes)) as i64)
    }

    /// Local atomics with an identity element (add, sub, and, or, xor, unsigned min/max) as
    /// inline code, lane after lane: local memory belongs to this worker alone (fibers switch
    /// only at barriers), so a plain load and store is atomic, and an inactive lane applies
    /// the identity (its address masked into the buffer), which changes nothing. Where some
    /// active lane may fault, the helper runs instead and reports the first fault in lane
    /// order. Exchange and CAS (no identity) always take the helper.
    pub fn local_atomic(&mut self, inst: &Instruction, pc: u32) -> Result<(), JitError> {
        let identity = match inst.op {
            Op::LocalAtomicAdd | Op::LocalAtomicSub | Op::LocalAtomicOr | Op::LocalAtomicXor => 0,
            Op::LocalAtomicMax => 0,
            Op::LocalAtomicAnd | Op::LocalAtomicMin => u32::MAX,
            _ => return self.memory_helper(inst, pc),
        };
        let mask = self.op_mask(inst.guard);
        let addr = self.reg(inst.rs1 as u32);
        let value = self.reg(inst.rs2 as u32);
        let done = self.b.create_block();
        if self.flags.checked {
            let any = self.may_fault(pc, AddressShape::Scattered, true, 4, &addr, &mask, None);
            self.helper_if_may_fault(any, inst, pc, done)?;
        }
        let base = self.memory_base(true);
        let neutral = self.vconst4([identity; 4]);
        let mut old = Vec::with_capacity(self.wave.n);
        for k in 0..self.wave.n {
            let v = if self.full { value[k] } else { self.b.ins().blendv(mask[k], value[k], neutral) };
            let mut olds = self.vconst4([0; 4]);
            for lane in 0..4u8 {
                let p = self.lane_pointer(base, addr[k], lane, true);
                let before = self.b.ins().load(I32, plain_memory(), p, 0);
                let operand = self.b.ins().extractlane(v, lane);
                let after = match inst.op {
                    Op::LocalAtomicAdd => self.b.ins().iadd(before, operand),
                    Op::LocalAtomicSub => self.b.ins().isub(before, operand),
                    Op::LocalAtomicOr => self.b.ins().bor(before, operand),
                    Op::LocalAtomicXor => self.b.ins().bxor(before, operand),
                    Op::LocalAtomicAnd => self.b.ins().band(before, operand),
                    Op::LocalAtomicMin => self.b.ins().umin(before, operand),
                    _ => self.b.ins().umax(before, operand),
                };
                self.b.ins().store(plain_memory(), after, p, 0);
                olds = self.b.ins().insertlane(olds, before, lane);
            }
            old.push(olds);
        }
        if inst.atomic_returns() {
            self.set_reg(inst.rd as u32, &old, &mask);
        }
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
        Ok(())
    }

    /// Stores and atomics: lane by lane in a helper (only active lanes are touched).
    pub fn memory_helper(&mut self, inst: &Instruction, pc: u32) -> Result<(), JitError> {
        let mask = self.op_mask(inst.guard);
        self.spill_inputs(inst);
        let bits = self.mask_bits(&mask);
        self.call_checked(Helper::Memory, helper_op(inst), bits, pc);
        if inst.atomic_returns() {
            let old = self.reload(OUT_SLOT);
            self.set_reg(inst.rd as u32, &old, &mask);
        }
        Ok(())
    }
}

/// How the operand in `slot` of `inst` varies across the lanes the analysis `shapes` describes
/// (one vector's or the whole wave's): `base + lane × stride`, or unknown.
fn stride_in(shapes: &Uniformity, func: FuncId, inst: &Instruction, pc: u32, slot: Slot) -> Option<u32> {
    shapes.operand(func, pc, inst, slot)?.stride()
}

/// The context's scratch slots: plain memory, never trapping.
fn scratch_memory() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}

/// Plain memory that never traps: the device window and the local buffer cover every address.
fn plain_memory() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}
