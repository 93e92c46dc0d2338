//! One wave as a state machine over the lowered program, and the execution of every
//! instruction on a lane mask. Lane values come from [`crate::semantics`].

use super::lower::{MicroOp, Program};
use crate::caps;
use crate::device_atomic;
use crate::dispatch::Launch;
use crate::error::{RunError, RunErrorKind, Space};
use crate::semantics::{self as s, Fragments};
use crate::stats::Stats;
use std::io::Write;
use wave_isa::analysis::cost::CostClass;
use wave_isa::instr::PredRef;
use wave_isa::{Frag, Instruction, Op};

/// Register rows per wave: r0..r255 plus room for a pair or quad starting at r255, so that
/// no register index (u8) can fall outside the file.
const REG_ROWS: usize = 260;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    Running,
    AtBarrier,
    Ended,
}

/// What the waves of one workgroup share.
pub(crate) struct WorkgroupCtx<'a> {
    pub program: &'a Program,
    pub launch: &'a Launch,
    pub kernel: &'a str,
    pub workgroup: [u32; 3],
    pub device: &'a mut [u8],
    pub local: &'a mut [u8],
    pub stats: &'a mut Stats,
    /// Wave-instructions executed so far in this workgroup (for the limit).
    pub executed: u64,
    pub trace: Option<&'a mut dyn Write>,
}

/// One wave: masks, control stacks and registers (register-major: `regs[r * W + lane]`).
pub(crate) struct Wave {
    pub id: u32,
    pub status: Status,
    w: usize,
    full: u64,
    pc: usize,
    /// Lanes executing now.
    exec: u64,
    /// Lanes that exist and have not halted.
    live: u64,
    /// Lanes that left the innermost loop (break) / this iteration (continue) / the current
    /// call (return).
    brk: u64,
    cont: u64,
    ret: u64,
    /// (entry mask, else mask) per open `if`.
    ifs: Vec<(u64, u64)>,
    /// (entry mask, outer brk, outer cont) per open loop.
    loops: Vec<(u64, u64, u64)>,
    /// (return micro-op index, exec at the call, outer ret) per active call.
    calls: Vec<(usize, u64, u64)>,
    preds: [u64; 4],
    regs: Vec<u32>,
    /// MMA fragments: tables A, B and C by register number, one tile per lane.
    frags: Fragments,
}

impl Wave {
    pub fn new(id: u32, launch: &Launch) -> Wave {
        let w = launch.wave_width as usize;
        let mut wave = Wave {
            id,
            status: Status::Running,
            w,
            full: if w >= 64 { u64::MAX } else { (1u64 << w) - 1 },
            pc: 0,
            exec: 0,
            live: 0,
            brk: 0,
            cont: 0,
            ret: 0,
            ifs: Vec::new(),
            loops: Vec::new(),
            calls: Vec::new(),
            preds: [0; 4],
            regs: vec![0; REG_ROWS * w],
            frags: Fragments::new(w),
        };
        wave.reset(launch);
        wave
    }

    /// The state at the start of a workgroup.
    pub fn reset(&mut self, launch: &Launch) {
        self.pc = 0;
        self.live = launch.initial_live_mask(self.id);
        self.exec = self.live;
        self.brk = 0;
        self.cont = 0;
        self.ret = 0;
        self.ifs.clear();
        self.loops.clear();
        self.calls.clear();
        self.preds = [0; 4];
        // Only declared registers can have been written (resolve checks the kernel's
        // registers against the count), so only they need clearing.
        let declared = (launch.registers as usize).min(REG_ROWS) * self.w;
        self.regs[..declared].fill(0);
        for &(r, v) in &launch.initial_registers {
            let row = r as usize * self.w;
            self.regs[row..row + self.w].fill(v);
        }
        self.frags.clear();
        self.status = if self.live == 0 { Status::Ended } else { Status::Running };
    }

    fn error(&self, ctx: &WorkgroupCtx, at: usize, lane: Option<u32>, kind: RunErrorKind) -> RunError {
        RunError {
            kernel: ctx.kernel.to_string(),
            workgroup: ctx.workgroup,
            wave: self.id,
            lane,
            pc: ctx.program.pcs.get(at).copied().unwrap_or(0),
            kind,
        }
    }

    /// The lanes where a predicate reference holds (indices above 3 read false).
    #[inline]
    fn pred(&self, p: PredRef) -> u64 {
        let v = self.preds.get(p.index as usize).copied().unwrap_or(0);
        if p.negated {
            !v
        } else {
            v
        }
    }

    #[inline]
    fn guard(&self, g: Option<PredRef>) -> u64 {
        match g {
            Some(p) => self.pred(p),
            None => u64::MAX,
        }
    }

    /// Lanes still able to run: not broken, continued, returned or halted.
    #[inline]
    fn remaining(&self) -> u64 {
        self.live & !self.brk & !self.cont & !self.ret
    }

    /// Run until the wave reaches a barrier or ends.
    pub fn run(&mut self, ctx: &mut WorkgroupCtx) -> Result<(), RunError> {
        let limit = ctx.launch.max_instructions;
        loop {
            let at = self.pc;
            let Some(&op) = ctx.program.ops.get(at) else {
                // Unreachable for lowered programs (every function ends in FuncEnd).
                self.status = Status::Ended;
                return Ok(());
            };
            // What counts (wave_isa::analysis::cost, which the JIT charges statically): every
            // micro-op but a function's end and the implicit final halt.
            if !matches!(op, MicroOp::FuncEnd | MicroOp::Halt { implicit: true, .. }) {
                ctx.executed += 1;
                if limit > 0 && ctx.executed > limit {
                    return Err(self.error(ctx, at, None, RunErrorKind::InstructionLimit { limit }));
                }
                if ctx.trace.is_some() {
                    self.trace(ctx, at)?;
                }
            }
            self.pc += 1;
            match op {
                MicroOp::Exec(inst) => {
                    let mask = self.exec & self.guard(inst.guard);
                    self.execute(&inst, mask, ctx, at)?;
                }
                MicroOp::IfBegin { pred } => {
                    ctx.stats.control_ops += 1;
                    let p = self.pred(pred);
                    let else_mask = self.exec & !p;
                    if else_mask != 0 {
                        ctx.stats.divergent_branches += 1;
                    }
                    self.ifs.push((self.exec, else_mask));
                    self.exec &= p;
                }
                MicroOp::Else => {
                    ctx.stats.control_ops += 1;
                    let else_mask = self.ifs.last().map_or(0, |f| f.1);
                    self.exec = else_mask & self.remaining();
                }
                MicroOp::EndIf => {
                    ctx.stats.control_ops += 1;
                    let entry = self.ifs.pop().map_or(0, |f| f.0);
                    self.exec = entry & self.remaining();
                }
                MicroOp::LoopBegin => {
                    ctx.stats.control_ops += 1;
                    self.loops.push((self.exec, self.brk, self.cont));
                    self.brk = 0;
                    self.cont = 0;
                }
                MicroOp::LoopEnd { body } => {
                    ctx.stats.control_ops += 1;
                    let (entry, outer_brk, outer_cont) = self.loops.last().copied().unwrap_or_default();
                    self.cont = 0;
                    let next = entry & !self.brk & !self.ret & self.live;
                    if next != 0 {
                        self.exec = next;
                        self.pc = body as usize;
                    } else {
                        self.loops.pop();
                        self.exec = entry & !self.ret & self.live;
                        self.brk = outer_brk;
                        self.cont = outer_cont;
                    }
                }
                MicroOp::Break { pred } => {
                    ctx.stats.control_ops += 1;
                    let m = self.exec & self.pred(pred);
                    self.brk |= m;
                    self.exec &= !m;
                }
                MicroOp::Continue { pred } => {
                    ctx.stats.control_ops += 1;
                    let m = self.exec & self.pred(pred);
                    self.cont |= m;
                    self.exec &= !m;
                }
                MicroOp::Call { entry } => {
                    ctx.stats.control_ops += 1;
                    if self.calls.len() >= caps::MAX_CALL_DEPTH as usize {
                        let kind = RunErrorKind::CallDepth { limit: caps::MAX_CALL_DEPTH };
                        return Err(self.error(ctx, at, None, kind));
                    }
                    self.calls.push((self.pc, self.exec, self.ret));
                    self.ret = 0;
                    self.pc = entry as usize;
                }
                MicroOp::FuncEnd => match self.calls.pop() {
                    Some((return_to, entry, outer_ret)) => {
                        self.exec = entry & self.live;
                        self.ret = outer_ret;
                        self.pc = return_to;
                    }
                    None => {
                        self.live = 0;
                        self.exec = 0;
                        self.status = Status::Ended;
                        return Ok(());
                    }
                },
                MicroOp::Return { guard } => {
                    ctx.stats.control_ops += 1;
                    let m = self.exec & self.guard(guard);
                    if self.calls.is_empty() {
                        // In the entry function, return is halt.
                        if self.halt(m) {
                            return Ok(());
                        }
                    } else {
                        self.ret |= m;
                        self.exec &= !m;
                    }
                }
                MicroOp::Halt { guard, implicit } => {
                    if !implicit {
                        ctx.stats.control_ops += 1;
                    }
                    let m = self.exec & self.guard(guard);
                    if self.halt(m) {
                        return Ok(());
                    }
                }
                MicroOp::Barrier { guard } => {
                    ctx.stats.control_ops += 1;
                    if guard.is_some() && self.exec & self.guard(guard) == 0 {
                        continue;
                    }
                    self.status = Status::AtBarrier;
                    return Ok(());
                }
                MicroOp::Nop => ctx.stats.control_ops += 1,
            }
        }
    }

    /// Halt lanes `m`; true when the wave has ended.
    fn halt(&mut self, m: u64) -> bool {
        self.live &= !m;
        self.exec &= !m;
        if self.live == 0 {
            self.status = Status::Ended;
            true
        } else {
            false
        }
    }

    fn trace(&self, ctx: &mut WorkgroupCtx, at: usize) -> Result<(), RunError> {
        let [x, y, z] = ctx.workgroup;
        let pc = ctx.program.pcs[at];
        let text = wave_isa::disasm::format_instruction(&ctx.program.insts[at]);
        let result = match ctx.trace.as_mut() {
            Some(t) => writeln!(t, "wg({x},{y},{z}) wave[{}] pc=0x{pc:04x}: {text}", self.id),
            None => Ok(()),
        };
        result.map_err(|e| self.error(ctx, at, None, RunErrorKind::Trace(e.to_string())))
    }

    // ---- register rows -------------------------------------------------------------------

    #[inline(always)]
    fn row(&self, r: usize) -> &[u32] {
        &self.regs[r * self.w..(r + 1) * self.w]
    }

    /// Write `out` into register `rd` on the lanes of `mask`.
    #[inline(always)]
    fn write_row(&mut self, rd: usize, out: &[u32; 64], mask: u64) {
        let w = self.w;
        let full = self.full;
        let dst = &mut self.regs[rd * w..(rd + 1) * w];
        if mask == full {
            dst.copy_from_slice(&out[..w]);
        } else {
            for (lane, d) in dst.iter_mut().enumerate() {
                if mask >> lane & 1 != 0 {
                    *d = out[lane];
                }
            }
        }
    }

    #[inline(always)]
    fn map1(&mut self, rd: usize, a: usize, mask: u64, f: impl Fn(u32) -> u32) {
        let mut out = [0u32; 64];
        for (o, &x) in out.iter_mut().zip(self.row(a)) {
            *o = f(x);
        }
        self.write_row(rd, &out, mask);
    }

    #[inline(always)]
    fn map2(&mut self, rd: usize, a: usize, b: usize, mask: u64, f: impl Fn(u32, u32) -> u32) {
        let mut out = [0u32; 64];
        for ((o, &x), &y) in out.iter_mut().zip(self.row(a)).zip(self.row(b)) {
            *o = f(x, y);
        }
        self.write_row(rd, &out, mask);
    }

    #[inline(always)]
    fn map3(&mut self, rd: usize, a: usize, b: usize, c: usize, mask: u64, f: impl Fn(u32, u32, u32) -> u32) {
        let mut out = [0u32; 64];
        for (((o, &x), &y), &z) in out.iter_mut().zip(self.row(a)).zip(self.row(b)).zip(self.row(c)) {
            *o = f(x, y, z);
        }
        self.write_row(rd, &out, mask);
    }

    fn map4(&mut self, rd: usize, regs: [usize; 4], mask: u64, f: impl Fn(u32, u32, u32, u32) -> u32) {
        let mut out = [0u32; 64];
        for (lane, o) in out.iter_mut().enumerate().take(self.w) {
            let v = |r: usize| self.regs[r * self.w + lane];
            *o = f(v(regs[0]), v(regs[1]), v(regs[2]), v(regs[3]));
        }
        self.write_row(rd, &out, mask);
    }

    /// f64 pair op: rd:rd+1 ← f(a:a+1, b:b+1, c:c+1).
    fn map_pairs(&mut self, rd: usize, [a, b, c]: [usize; 3], mask: u64, f: impl Fn(u64, u64, u64) -> u64) {
        let (mut lo, mut hi) = ([0u32; 64], [0u32; 64]);
        for lane in 0..self.w {
            let v = |r: usize| s::pair(self.regs[r * self.w + lane], self.regs[(r + 1) * self.w + lane]);
            (lo[lane], hi[lane]) = s::unpair(f(v(a), v(b), v(c)));
        }
        self.write_row(rd, &lo, mask);
        self.write_row(rd + 1, &hi, mask);
    }

    /// Write predicate `pd` (writes to indices above 3 are dropped) on the lanes of `mask`.
    #[inline]
    fn write_pred(&mut self, pd: u8, bits: u64, mask: u64) {
        if let Some(p) = self.preds.get_mut(pd as usize) {
            *p = (*p & !mask) | (bits & mask);
        }
    }

    #[inline]
    fn lanes(mask: u64) -> impl Iterator<Item = usize> {
        let mut m = mask;
        std::iter::from_fn(move || {
            (m != 0).then(|| {
                let lane = m.trailing_zeros() as usize;
                m &= m - 1;
                lane
            })
        })
    }

    // ---- instructions --------------------------------------------------------------------

    /// Count `inst` in the statistics (as wave-emu does) and run it on `mask`.
    fn execute(
        &mut self,
        inst: &Instruction,
        mask: u64,
        ctx: &mut WorkgroupCtx,
        at: usize,
    ) -> Result<(), RunError> {
        ctx.stats.add_class(CostClass::of(inst.op), 1);
        if mask == 0 {
            return Ok(());
        }
        let (rd, a, b, c, d) =
            (inst.rd as usize, inst.rs1 as usize, inst.rs2 as usize, inst.rs3 as usize, inst.rs4 as usize);
        macro_rules! un {
            ($f:path) => {
                self.map1(rd, a, mask, $f)
            };
        }
        macro_rules! bin {
            ($f:path) => {
                self.map2(rd, a, b, mask, $f)
            };
        }
        macro_rules! tri {
            ($f:path) => {
                self.map3(rd, a, b, c, mask, $f)
            };
        }
        macro_rules! cmp {
            ($f:path) => {{
                let mut bits = 0u64;
                for (lane, (&x, &y)) in self.row(a).iter().zip(self.row(b)).enumerate() {
                    bits |= ($f(x, y) as u64) << lane;
                }
                self.write_pred(inst.rd, bits, mask)
            }};
        }
        // Lane operations: one arm per op of the semantics table (`lane_ops!`), each calling
        // its function lane by lane (monomorphised, as if written here).
        macro_rules! lane_arms {
            (
                unary: [$($u:ident $uf:ident),* $(,)?],
                binary: [$($b:ident $bf:ident),* $(,)?],
                ternary: [$($t:ident $tf:ident),* $(,)?],
                quaternary: [$($q:ident $qf:ident),* $(,)?],
                compare: [$($c:ident $cf:ident),* $(,)?],
                pair_unary: [$($pu:ident $puf:ident),* $(,)?],
                pair_binary: [$($pb:ident $pbf:ident),* $(,)?],
                pair_ternary: [$($pt:ident $ptf:ident),* $(,)?] $(,)?
            ) => {
                match inst.op {
                    $(Op::$u => return Ok(un!(s::$uf)),)*
                    $(Op::$b => return Ok(bin!(s::$bf)),)*
                    $(Op::$t => return Ok(tri!(s::$tf)),)*
                    $(Op::$q => return Ok(self.map4(rd, [a, b, c, d], mask, s::$qf)),)*
                    $(Op::$c => return Ok(cmp!(s::$cf)),)*
                    $(Op::$pu => return Ok(self.map_pairs(rd, [a, a, a], mask, |x, _, _| s::$puf(x))),)*
                    $(Op::$pb => return Ok(self.map_pairs(rd, [a, b, c], mask, |x, y, _| s::$pbf(x, y))),)*
                    $(Op::$pt => return Ok(self.map_pairs(rd, [a, b, c], mask, s::$ptf)),)*
                    _ => {}
                }
            };
        }
        crate::lane_ops!(lane_arms);
        use Op::*;
        match inst.op {
            Select => {
                let p = self.pred(PredRef { index: inst.rs1, negated: false });
                let mut out = [0u32; 64];
                for (lane, (o, (&x, &y))) in
                    out.iter_mut().zip(self.row(b).iter().zip(self.row(c))).enumerate()
                {
                    *o = if p >> lane & 1 != 0 { x } else { y };
                }
                self.write_row(rd, &out, mask);
            }
            CvtF32F64 => {
                let mut out = [0u32; 64];
                for (o, (&lo, &hi)) in out.iter_mut().zip(self.row(a).iter().zip(self.row(a + 1))) {
                    *o = s::cvt_f32_f64(s::pair(lo, hi));
                }
                self.write_row(rd, &out, mask);
            }
            CvtF64F32 => {
                let (mut lo, mut hi) = ([0u32; 64], [0u32; 64]);
                for (lane, &x) in self.row(a).iter().enumerate() {
                    (lo[lane], hi[lane]) = s::unpair(s::cvt_f64_f32(x));
                }
                self.write_row(rd, &lo, mask);
                self.write_row(rd + 1, &hi, mask);
            }
            MovImm => self.write_row(rd, &[inst.imm; 64], mask),
            MovSr => {
                let mut out = [0u32; 64];
                for (lane, o) in out.iter_mut().enumerate().take(self.w) {
                    *o = self.special(inst.rs1, lane as u32, ctx);
                }
                self.write_row(rd, &out, mask);
            }
            LocalLoadU8 | LocalLoadU16 | LocalLoadU32 | LocalLoadU64 => {
                self.load(inst, mask, Space::Local, ctx, at)?
            }
            DeviceLoadU8 | DeviceLoadU16 | DeviceLoadU32 | DeviceLoadU64 | DeviceLoadU128 => {
                self.load(inst, mask, Space::Device, ctx, at)?
            }
            LocalStoreU8 | LocalStoreU16 | LocalStoreU32 | LocalStoreU64 => {
                self.store(inst, mask, Space::Local, ctx, at)?
            }
            DeviceStoreU8 | DeviceStoreU16 | DeviceStoreU32 | DeviceStoreU64 | DeviceStoreU128 => {
                self.store(inst, mask, Space::Device, ctx, at)?
            }
            LocalAtomicAdd | LocalAtomicSub | LocalAtomicMin | LocalAtomicMax | LocalAtomicAnd
            | LocalAtomicOr | LocalAtomicXor | LocalAtomicExchange | LocalAtomicCas => {
                self.atomic(inst, mask, Space::Local, ctx, at)?
            }
            AtomicAdd | AtomicSub | AtomicMin | AtomicMax | AtomicAnd | AtomicOr | AtomicXor
            | AtomicExchange | AtomicCas => self.atomic(inst, mask, Space::Device, ctx, at)?,
            WaveShuffle | WaveShuffleUp | WaveShuffleDown | WaveShuffleXor | WaveBroadcast
            | WavePrefixSum | WaveReduceAdd | WaveReduceMin | WaveReduceMax => {
                let out = s::wave_row(inst.op, self.w, mask, self.row(a), self.row(b)).unwrap_or([0; 64]);
                self.write_row(rd, &out, mask);
            }
            WaveBallot => {
                let pred = self.pred(PredRef { index: inst.rs1, negated: false });
                let ballot = s::wave_ballot(self.w, mask, pred);
                self.write_row(rd, &[ballot.low; 64], mask);
                if let Some(high) = ballot.high {
                    self.write_row(rd + 1, &[high; 64], mask);
                }
            }
            WaveAny | WaveAll => {
                let p = self.pred(PredRef { index: inst.rs1, negated: false });
                let holds = if inst.op == WaveAny {
                    s::wave_any(self.w, mask, p)
                } else {
                    s::wave_all(self.w, mask, p)
                };
                self.write_pred(inst.rd, if holds { u64::MAX } else { 0 }, mask);
            }
            MmaLoadA | MmaLoadB => self.mma_load(inst, mask, ctx, at)?,
            MmaStoreC => self.mma_store(inst, mask, ctx, at)?,
            MmaCompute => {
                let id = |table| inst.fragment(table).unwrap_or(0);
                self.frags.compute(id(Frag::A), id(Frag::B), id(Frag::C), Self::lanes(mask));
            }
            If | Else | Endif | Loop | Break | Continue | Endloop | Call | Return | Halt | Barrier
            | FenceAcquire | FenceRelease | FenceAcqRel | Wait | Nop => {
                // Structural and synchronisation ops never reach here: the lowering turns
                // them into micro-ops.
                let what = format!("`{}` as a data operation", inst.op.mnemonic());
                return Err(self.error(ctx, at, None, RunErrorKind::Unsupported(what)));
            }
            _ => {
                // Every lane operation returned above (the semantics table's arms).
                let what = format!("`{}`: no interpreter path", inst.op.mnemonic());
                return Err(self.error(ctx, at, None, RunErrorKind::Unsupported(what)));
            }
        }
        Ok(())
    }
}

/// Bytes of a memory access by op, and whether a load/store is 64- or 128-bit (rows).
fn access_words(bytes: u32) -> usize {
    (bytes as usize / 4).max(1)
}

impl Wave {
    /// A special register's value for `lane` (wave-format §3.4); unknown indices read 0.
    fn special(&self, index: u8, lane: u32, ctx: &WorkgroupCtx) -> u32 {
        let at = crate::special::LanePlace { workgroup_id: ctx.workgroup, wave: self.id, lane };
        crate::special::special_register(index, &ctx.launch.shape(), at)
    }

    fn oob(
        &self,
        ctx: &WorkgroupCtx,
        at: usize,
        lane: usize,
        space: Space,
        address: u64,
        bytes: u32,
    ) -> RunError {
        let size = match space {
            Space::Local => ctx.local.len(),
            Space::Device => ctx.device.len(),
        } as u64;
        self.error(ctx, at, Some(lane as u32), RunErrorKind::OutOfBounds { space, address, bytes, size })
    }

    fn load(
        &mut self,
        inst: &Instruction,
        mask: u64,
        space: Space,
        ctx: &mut WorkgroupCtx,
        at: usize,
    ) -> Result<(), RunError> {
        let bytes = inst.op.access_bytes();
        let words = access_words(bytes);
        let (rd, a, w) = (inst.rd as usize, inst.rs1 as usize, self.w);
        for lane in Self::lanes(mask) {
            let address = self.regs[a * w + lane] as u64;
            let mem: &[u8] = match space {
                Space::Local => ctx.local,
                Space::Device => ctx.device,
            };
            let Some(src) = mem.get(address as usize..address as usize + bytes as usize) else {
                return Err(self.oob(ctx, at, lane, space, address, bytes));
            };
            let mut buf = [0u8; 16];
            buf[..src.len()].copy_from_slice(src);
            for k in 0..words {
                let v = u32::from_le_bytes([buf[4 * k], buf[4 * k + 1], buf[4 * k + 2], buf[4 * k + 3]]);
                self.regs[(rd + k) * w + lane] = v;
            }
            match space {
                Space::Local => {
                    ctx.stats.local_loads += 1;
                    ctx.stats.local_load_bytes += bytes as u64;
                }
                Space::Device => {
                    ctx.stats.device_loads += 1;
                    ctx.stats.device_load_bytes += bytes as u64;
                }
            }
        }
        Ok(())
    }

    fn store(
        &mut self,
        inst: &Instruction,
        mask: u64,
        space: Space,
        ctx: &mut WorkgroupCtx,
        at: usize,
    ) -> Result<(), RunError> {
        let bytes = inst.op.access_bytes();
        let words = access_words(bytes);
        let (a, b, w) = (inst.rs1 as usize, inst.rs2 as usize, self.w);
        for lane in Self::lanes(mask) {
            let address = self.regs[a * w + lane] as u64;
            let mut buf = [0u8; 16];
            for k in 0..words {
                buf[4 * k..4 * k + 4].copy_from_slice(&self.regs[(b + k) * w + lane].to_le_bytes());
            }
            let mem: &mut [u8] = match space {
                Space::Local => ctx.local,
                Space::Device => ctx.device,
            };
            let Some(dst) = mem.get_mut(address as usize..address as usize + bytes as usize) else {
                return Err(self.oob(ctx, at, lane, space, address, bytes));
            };
            dst.copy_from_slice(&buf[..bytes as usize]);
            match space {
                Space::Local => {
                    ctx.stats.local_stores += 1;
                    ctx.stats.local_store_bytes += bytes as u64;
                }
                Space::Device => {
                    ctx.stats.device_stores += 1;
                    ctx.stats.device_store_bytes += bytes as u64;
                }
            }
        }
        Ok(())
    }

    /// Atomics lane by lane in lane order; each lane sees the earlier lanes' updates and gets
    /// the old value (unless rd = r0: non-returning).
    fn atomic(
        &mut self,
        inst: &Instruction,
        mask: u64,
        space: Space,
        ctx: &mut WorkgroupCtx,
        at: usize,
    ) -> Result<(), RunError> {
        let (rd, a, b, c, w) =
            (inst.rd as usize, inst.rs1 as usize, inst.rs2 as usize, inst.rs3 as usize, self.w);
        for lane in Self::lanes(mask) {
            let address = self.regs[a * w + lane] as u64;
            let value = self.regs[b * w + lane];
            let desired = self.regs[c * w + lane];
            let mem: &mut [u8] = match space {
                Space::Local => ctx.local,
                Space::Device => ctx.device,
            };
            let Some(cell) = mem.get_mut(address as usize..address as usize + 4) else {
                return Err(self.oob(ctx, at, lane, space, address, 4));
            };
            // One thread runs the whole dispatch, so this plain read-modify-write is
            // indivisible; refuse what the JIT cannot make atomic on this host.
            if space == Space::Device {
                if let Err(e) = device_atomic::method(address) {
                    return Err(self.error(
                        ctx,
                        at,
                        Some(lane as u32),
                        RunErrorKind::Unsupported(e.to_string()),
                    ));
                }
            }
            let old = u32::from_le_bytes([cell[0], cell[1], cell[2], cell[3]]);
            let new = s::atomic(inst.op, old, value, desired).unwrap_or(old);
            cell.copy_from_slice(&new.to_le_bytes());
            if rd != 0 {
                self.regs[rd * w + lane] = old;
            }
            ctx.stats.atomic_ops += 1;
        }
        Ok(())
    }

    /// Read a 4×4 f32 tile per lane from local memory (address rs1, row stride rs2 in bytes)
    /// into fragment rd of table A or B.
    fn mma_load(
        &mut self,
        inst: &Instruction,
        mask: u64,
        ctx: &mut WorkgroupCtx,
        at: usize,
    ) -> Result<(), RunError> {
        let table = if inst.op == Op::MmaLoadA { Frag::A } else { Frag::B };
        let id = inst.fragment(table).unwrap_or(0);
        let (a, b, w) = (inst.rs1 as usize, inst.rs2 as usize, self.w);
        for lane in Self::lanes(mask) {
            let (base, stride) = (self.regs[a * w + lane], self.regs[b * w + lane]);
            let mut tile = [0u32; s::MMA_DIM * s::MMA_DIM];
            for (i, v) in tile.iter_mut().enumerate() {
                let address = s::mma_element_address(base, stride, i);
                let Some(src) = ctx.local.get(address as usize..address as usize + 4) else {
                    return Err(self.oob(ctx, at, lane, Space::Local, address, 4));
                };
                *v = u32::from_le_bytes([src[0], src[1], src[2], src[3]]);
            }
            *self.frags.tile_mut(table, id, lane) = tile;
        }
        Ok(())
    }

    /// Write C fragment rs2's tile per lane to local memory (address rd, row stride rs1).
    fn mma_store(
        &mut self,
        inst: &Instruction,
        mask: u64,
        ctx: &mut WorkgroupCtx,
        at: usize,
    ) -> Result<(), RunError> {
        let (addr_reg, stride_reg, w) = (inst.rd as usize, inst.rs1 as usize, self.w);
        let id = inst.fragment(Frag::C).unwrap_or(0);
        for lane in Self::lanes(mask) {
            let (base, stride) = (self.regs[addr_reg * w + lane], self.regs[stride_reg * w + lane]);
            let tile = self.frags.tile(Frag::C, id, lane);
            for (i, v) in tile.iter().enumerate() {
                let address = s::mma_element_address(base, stride, i);
                let Some(dst) = ctx.local.get_mut(address as usize..address as usize + 4) else {
                    return Err(self.oob(ctx, at, lane, Space::Local, address, 4));
                };
                dst.copy_from_slice(&v.to_le_bytes());
            }
        }
        Ok(())
    }
}
