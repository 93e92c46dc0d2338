//! Prefetching a staging loop's next tiles.
//!
//! GPU kernels stage tiles of device memory into local memory: each trip of a loop loads the
//! next tile, waits at a barrier and computes on it. A GPU hides the loads' latency behind
//! other warps; here the waves of a workgroup run in turn, and the loads of a tiled GEMM's A
//! and B tiles (64 rows, each a cache line 2–4 KiB from the next) stalled for a quarter of its
//! time at N = 1024. Cranelift has no prefetch instruction, so a loop with a barrier gathers,
//! at each device load of its body (not in a nested loop), a guess of where that load goes on
//! the next trip: its address now plus how far it moved since the last trip, for lane 0 of
//! every fourth vector (the vectors of a consecutive load share a 64-byte line by fours). Once
//! the last of those loads is translated, one call to [`Helper::Prefetch`] hands them to the
//! cache, a whole trip before they are loaded. A prefetch never faults and changes nothing, so
//! a wrong guess (the first trip's, or a load whose step changes) costs only time.

use super::Translator;
use crate::abi::Helper;
use cranelift_codegen::ir::types::{I32, I64};
use cranelift_codegen::ir::{InstBuilder, StackSlot, Value};
use std::collections::HashMap;
use wave_isa::opcodes::Class;
use wave_isa::{FuncId, Stmt, StmtKind};

/// At most this many addresses a trip (the first loads of the body keep theirs).
const MOST_PREFETCHES: usize = 64;

/// A staging loop's prefetches: its device loads and where their state lives.
#[derive(Clone, Debug)]
pub struct PrefetchPlan {
    /// Per load (by offset): the index of its first entry in the areas.
    sites: HashMap<u32, usize>,
    /// The vectors of the wave whose lane 0 each load prefetches for.
    vectors: Vec<usize>,
    /// The guesses for the next trip as host addresses (u64s, the helper's list), then each
    /// entry's lane-0 address on the trip before (u32s).
    area: StackSlot,
    entries: usize,
    /// The top-level statement of the body after which the helper is called.
    call_after: u32,
    /// The function the loop is in (offsets are per function, and calls are inlined).
    func: FuncId,
}

impl Translator<'_, '_> {
    /// The prefetch plan of a loop with this body, or None: in a chunk-major loop (which has
    /// no barrier), or for a body without a `barrier` or without a device load outside nested
    /// loops ([`staging_loads`]). Called before the loop: its guesses start at 0.
    pub fn prefetch_plan(&mut self, body: &[Stmt]) -> Option<PrefetchPlan> {
        if self.chunk_loop.is_some() {
            return None;
        }
        let vectors: Vec<usize> = (0..self.wave.n).step_by(4).collect();
        let (mut loads, call_after) = staging_loads(body)?;
        loads.truncate(MOST_PREFETCHES / vectors.len());
        let entries = loads.len() * vectors.len();
        let area = super::grown_slot(&mut self.b, &mut self.areas.prefetch, (12 * MOST_PREFETCHES) as u32);
        // The helper reads every guess: a load that has not run yet (one in an `if`) leaves 0.
        let zero = self.b.ins().iconst(I64, 0);
        for entry in 0..entries {
            self.b.ins().stack_store(I64, zero, area, 8 * entry as i32);
        }
        let sites = loads.iter().enumerate().map(|(i, &pc)| (pc, i * vectors.len())).collect();
        Some(PrefetchPlan { sites, vectors, area, entries, call_after, func: self.func })
    }

    /// At the device load at `pc` with these address vectors: record the guesses for its
    /// next trip (see the module doc).
    pub fn guess_next_addresses(&mut self, pc: u32, addr: &[Value]) {
        let Some(plan) = self.prefetch.as_ref().filter(|p| p.func == self.func) else { return };
        let Some(&first) = plan.sites.get(&pc) else { return };
        if addr.len() != self.wave.n || self.chunk_loop.is_some() {
            return;
        }
        let (vectors, area) = (plan.vectors.clone(), plan.area);
        let base = self.memory_base(false);
        for (i, &k) in vectors.iter().enumerate() {
            let entry = (first + i) as i32;
            let now = self.lane0(addr[k]);
            let last = (8 * MOST_PREFETCHES) as i32 + 4 * entry;
            let before = self.b.ins().stack_load(I64, I32, area, last);
            self.b.ins().stack_store(I64, now, area, last);
            let moved = self.b.ins().isub(now, before);
            let next = self.b.ins().iadd(now, moved);
            let next = self.b.ins().uextend(I64, next);
            let host = self.b.ins().iadd(base, next);
            self.b.ins().stack_store(I64, host, area, 8 * entry);
        }
    }

    /// After the top-level statement at `offset` of a staging loop's body: hand the guesses
    /// to the cache where it is the last with a device load.
    pub fn prefetch_after(&mut self, offset: u32) {
        let Some(plan) = self.prefetch.as_ref().filter(|p| p.func == self.func) else { return };
        if plan.call_after != offset || self.chunk_loop.is_some() {
            return;
        }
        let (count, area) = (plan.entries as u32, plan.area);
        let list = self.b.ins().stack_addr(I64, area, 0);
        self.call_helper(Helper::Prefetch, count, list, offset);
    }
}

/// A staging loop's device loads (offsets, in order, outside nested loops) and the top-level
/// statement of its body that holds the last of them; None for a loop body without a
/// `barrier` or without such a load.
pub fn staging_loads(body: &[Stmt]) -> Option<(Vec<u32>, u32)> {
    if !has_barrier(body) {
        return None;
    }
    let mut loads = Vec::new();
    let mut call_after = None;
    for s in body {
        let before = loads.len();
        device_loads(std::slice::from_ref(s), &mut loads);
        if loads.len() > before {
            call_after = Some(s.offset);
        }
    }
    Some((loads, call_after?))
}

/// Whether a `barrier` is among these statements (nested ones too).
fn has_barrier(body: &[Stmt]) -> bool {
    let mut found = false;
    wave_isa::ir::walk_block(body, 0, &mut |s, _| found |= matches!(s.kind, StmtKind::Barrier));
    found
}

/// The offsets of the device loads among these statements, in order, outside nested loops.
fn device_loads(stmts: &[Stmt], out: &mut Vec<u32>) {
    for s in stmts {
        match &s.kind {
            StmtKind::Op(inst) if inst.op.class() == Class::DeviceLoad => out.push(s.offset),
            StmtKind::If { then_body, else_body, .. } => {
                device_loads(then_body, out);
                device_loads(else_body, out);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::translate::first_loop_body;

    #[test]
    fn the_tiled_gemm_prefetches_its_eight_tile_loads_before_its_first_barrier() {
        let body = first_loop_body(include_str!("../../../benches/kernels/gemm_tiled.wave"));
        let (loads, call_after) = staging_loads(&body).expect("a staging loop");
        assert_eq!(loads.len(), 8);
        assert_eq!(call_after, *loads.last().unwrap());
        let first_barrier = body.iter().position(|s| matches!(s.kind, StmtKind::Barrier)).unwrap();
        assert!(body[..first_barrier].iter().any(|s| s.offset == call_after));
    }

    #[test]
    fn loads_in_an_if_count_and_those_of_nested_loops_do_not() {
        let body = first_loop_body(
            "
.kernel k
    mov_imm r1, 0
    loop
        if p1
            device_load_u32 r2, r1
        endif
        loop
            device_load_u32 r3, r1
            break p2
        endloop
        barrier
        break p3
    endloop
.end
",
        );
        let (loads, call_after) = staging_loads(&body).expect("a staging loop");
        assert_eq!(loads.len(), 1);
        assert_eq!(call_after, body[0].offset);
    }

    #[test]
    fn a_loop_without_a_barrier_is_no_staging_loop() {
        let body = first_loop_body(
            "
.kernel k
    mov_imm r1, 0
    loop
        device_load_u32 r2, r1
        break p3
    endloop
.end
",
        );
        assert_eq!(staging_loads(&body), None);
    }
}
