//! Translation of one kernel's statement tree into one Cranelift function that runs a wave
//! (the waves of a workgroup in turn: see [`Translator::new`]).
//!
//! Layout follows wasmtime's `translate/`: this module drives the statement walk and owns the
//! wave state (registers, predicates, masks) and the [`Region`] the statements run in;
//! [`control`] holds the control stack and the structured control flow, speaking to the
//! execution mask through the verbs of [`exec_mask`]; [`alu`], [`fp`], [`transcendental`],
//! [`mem`] and [`waveops`] lower each op class; the runtime layout the code reads and the
//! helpers' addresses come from a [`env::WaveEnv`]. The
//! translator reaches the runtime only through [`crate::abi`] (context layout, scratch slots,
//! the list of helpers), never through the helpers or the compiler themselves.
//!
//! A WAVE register is `W/4` `I32X4` values held in `Variable`s; predicates and masks are
//! `I32X4` lane masks (all ones = set). Every write is blended with the op's mask, so lanes
//! outside it keep their values.

pub mod alu;
pub mod chunk;
pub mod control;
pub mod count;
pub mod env;
pub mod exec_mask;
pub mod fission;
pub mod fp;
pub mod loop_bounds;
pub mod loop_fn;
pub mod mem;
pub mod phases;
pub mod pred_forms;
pub mod prefetch;
pub mod rules;
pub mod shadow;
pub mod store_run;
pub mod temporaries;
pub mod transcendental;
pub mod waveops;

use crate::abi::{helper_signature, Helper};
use crate::error::JitError;
use control::ControlStack;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{F32X4, I32, I32X4, I64, I8X16};
use cranelift_codegen::ir::{
    Block, ConstantData, Endianness, Inst, InstBuilder, MemFlagsData, SigRef, StackSlot, StackSlotData,
    StackSlotKind, Type, Value,
};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::{FunctionBuilder, Variable};
use env::WaveEnv;
use std::collections::{HashMap, HashSet};
use wave_isa::analysis::cost::{Cost, CostModel};
use wave_isa::analysis::{Uniformity, UniformityOptions};
use wave_isa::opcodes::Role;
use wave_isa::{FuncId, Instruction, Kernel, Operand, PredRef, StateRef, StmtKind, ValidKernel};

/// What a compiled function is specialised for (part of the cache key).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Flags {
    /// Wave width W (4, 8, 16, 32 or 64).
    pub width: u32,
    /// Bounds checks on every memory access.
    pub checked: bool,
    /// Count instructions against the workgroup's budget (see [`count`]).
    pub fuel: bool,
    /// Count what `--stats` prints (needs `fuel`; see [`count`]).
    pub stats: bool,
    /// Threads per workgroup (x, y, z). When x is a multiple of 4, `sr_thread_id_x` runs
    /// along the lanes of every 4-lane vector (`a[tid_x]` accesses are contiguous); when the
    /// total is a multiple of W, every lane of every wave is live; when it is below W, the
    /// code may compute only the vectors that hold threads ([`WaveView`]).
    pub workgroup: [u32; 3],
    /// Device memory reaches within 16 bytes of 2^32 (a 4 GiB device): lanes in bounds may
    /// then wrap past the top of the address space, so lane 0 of a vector no longer bounds the
    /// addresses of its other lanes (see [`window_wraps`]).
    pub window_wraps: bool,
}

/// The stack area `slot` (16-byte aligned), made or grown to at least `bytes`: one area
/// serves a function's uses one after another, sized for the largest.
fn grown_slot(b: &mut FunctionBuilder, slot: &mut Option<StackSlot>, bytes: u32) -> StackSlot {
    match *slot {
        Some(s) => {
            let data = &mut b.func.sized_stack_slots[s];
            data.size = data.size.max(bytes);
            s
        }
        None => {
            let s = b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, bytes, 4));
            *slot = Some(s);
            s
        }
    }
}

/// Whether device memory of `size` bytes makes [`Flags::window_wraps`]: some in-bounds
/// 16-byte run of addresses would cross 2^32.
pub fn window_wraps(device_size: u64) -> bool {
    device_size > (1u64 << 32) - 16
}

/// Predicates a wave state has (p0..p3; others read as 0).
pub const PREDICATES: usize = 4;

/// One wave's translation state.
pub struct Translator<'a, 'f> {
    pub b: FunctionBuilder<'f>,
    pub kernel: &'a Kernel,
    pub env: &'a dyn WaveEnv,
    pub flags: Flags,
    /// The function's parameters; the first is the context.
    pub params: Vec<Value>,
    pub ctx: Value,
    /// The wave's registers, predicates and masks (in a chunk-major loop: the chunk's).
    pub wave: WaveState,
    pub cf: ControlStack,
    /// Block taking a status (i32) and returning it.
    pub exit: Block,
    /// In the entry function: the block each wave of the workgroup starts at, taking its
    /// context (see [`Translator::new`]).
    wave_start: Option<Block>,
    helper_sig: SigRef,
    /// What the translation knows of the kernel before it starts ([`Analyses`]).
    analyses: &'a Analyses,
    /// The vectors the code computes and what is known of their lanes ([`WaveView`]).
    pub view: WaveView,
    /// What is known about the lanes that run the statements being translated.
    pub region: Region,
    /// Every lane is active for the statement being translated (and it has no guard): writes
    /// need no blend and stores no mask test.
    pub full: bool,
    /// The op being translated has a guard (`@pN`): its lanes are a subset of the vector's,
    /// so lane 0 need not be one of them.
    pub op_guarded: bool,
    /// The function whose statement is being translated.
    pub func: FuncId,
    /// In a chunk-major loop or `if` (see [`chunk`]): what its translation knows about it.
    pub chunk_loop: Option<ChunkLoop>,
    /// In the body of a loop whose device loads prefetch their next tiles ([`prefetch`]).
    pub prefetch: Option<prefetch::PrefetchPlan>,
    /// The stack homes of run-time chunk loops so far (see [`chunk::ChunkHome`]).
    pub chunk_homes: Vec<chunk::ChunkHome>,
    /// In a chunk-major loop: values kept as scalars (see [`shadow`]).
    pub shadows: shadow::Shadows,
    /// Predicates held as compare forms (see [`pred_forms`]).
    pub pred_forms: pred_forms::PredForms,
    /// Loop functions this function calls (see [`loop_fn`]), numbered from `first_loop_fn`.
    pub loop_fns: Vec<loop_fn::LoopFn>,
    first_loop_fn: usize,
    /// The stack areas of the function's own uses ([`StackAreas`]).
    areas: StackAreas,
    /// The entry function runs its barriers as phases ([`phases`]).
    phases: Option<phases::Phases>,
    /// The offset of the op being translated (for [`Translator::set_reg`]).
    pub op_offset: u32,
    /// Instructions the code being translated has counted and not yet taken from the budget
    /// (see [`count`]).
    pub pending: Cost,
    /// Variables whose scope ended, for [`Translator::scoped_var`] to hand out again.
    vars: VarPool,
    /// Whether stores share a bail-out with their run ([`store_run`]).
    pub store_runs: store_run::StoreRuns,
}

/// Stack areas of a function, each serving one kind of use: the uses of a kind come one after
/// another, so one area sized for the largest serves them all ([`grown_slot`]).
#[derive(Default)]
struct StackAreas {
    /// The wave state loop functions take (see [`loop_fn`]).
    loop_state: Option<StackSlot>,
    /// The home of run-time chunk loops (see [`chunk`]).
    chunk_home: Option<StackSlot>,
    /// Where a chunk-major loop keeps the entry values of the resident registers it names,
    /// for its bail-out (see [`chunk::memory_resident_registers`]).
    resident_backup: Option<StackSlot>,
    /// The last addresses and next guesses of staging loops' prefetches (see [`prefetch`]):
    /// shared by nested ones, which only makes an outer loop's guesses worse.
    prefetch: Option<StackSlot>,
}

/// Variables whose scope ended, by type, and how many were declared (new ones, not reused).
#[derive(Default)]
struct VarPool {
    spare: HashMap<Type, Vec<Variable>>,
    declared: usize,
}

/// The wave state the translation reads and writes, as frontend variables: per register
/// and predicate its W/4 vectors, the exec mask (the lanes running now) and the live mask
/// (the lanes the wave has). A chunk-major loop puts a chunk's part in its place.
#[derive(Clone, Debug, Default)]
pub struct WaveState {
    /// Per register (0..256), its vectors; none for a register the kernel does not use (or
    /// one kept in memory).
    regs: Vec<Option<Vec<Variable>>>,
    /// Registers kept in memory instead: a base address and the offset of their first
    /// vector (the wave's vector k, or the chunk's, 16k bytes further). The entry function's
    /// resident registers ([`chunk::memory_resident_registers`]) live in its register home;
    /// a run-time chunk loop's other accumulators in the loop's home while it runs (see
    /// `chunk::HOMED_ACCUMULATORS`).
    in_memory: HashMap<u32, (Value, i32)>,
    /// Per predicate, its vectors (lane masks).
    preds: Vec<Vec<Variable>>,
    pub exec: Vec<Variable>,
    pub live: Vec<Variable>,
    /// Vectors per register: W / 4 (in a chunk-major loop, the chunk's).
    pub n: usize,
}

/// What the translation knows about the lanes that run the statements being translated: the
/// facts that decide whether a statement runs on every lane ([`Translator::exec_is_full`]) and
/// whether lane 0 speaks for its vector. A construct opens a region of its own for its body
/// ([`Translator::in_region`]), which restores the enclosing one when the body is done.
#[derive(Clone, Copy, Debug, Default)]
pub struct Region {
    /// May run with no active lane although the analysis calls it non-divergent (the body of
    /// a uniform `if` kept masked, code after a masked uniform `break`/`continue`).
    pub maybe_empty: bool,
    /// In the coherent copy of a divergent `if` body or loop (see
    /// `control::Translator::coherent_then`): a run-time test found every lane of the wave
    /// active here, whatever the analysis says.
    pub coherent: bool,
    /// In the masked path of an `if` that has a coherent copy: nested `if`s get none.
    pub in_coherent_nest: bool,
    /// How many coherent copies enclose the statements (a copy's nested `if`s get copies of
    /// their own up to [`control::COHERENT_LEVELS`]).
    pub coherent_levels: u32,
    /// Open loops whose lanes may leave at different times, by the wave analysis and by the
    /// per-vector analysis: inside them no statement is known to run on every lane.
    pub divergent_loops: (u32, u32),
    /// The innermost inlined call was made from divergent code, so the callee's statements
    /// may run on part of a vector even where the analysis (per function) says otherwise.
    pub call_divergent: bool,
    /// Inside an inlined call (for a loop function: the loop it was made from was).
    pub in_call: bool,
}

/// The chunk-major loop or `if` being translated (see [`chunk`]): the vectors in view and
/// how a loop leaves for its wave-major copy.
#[derive(Clone, Debug)]
pub struct ChunkLoop {
    /// The first of the wave vectors the state now stands for.
    pub start: ChunkStart,
    /// Where a possible fault leaves for the wave-major copy (none in a chunk-major `if`,
    /// which holds nothing that could fault: see `chunk::Translator::chunk_major_if`).
    pub bailout: Option<Block>,
    /// With an instruction budget: the vector's repeats (back edges taken, I64), and the
    /// most the budget left at loop entry pays for (more: bail out).
    pub trips: Option<(Variable, Value)>,
    /// Accumulators whose NaN test waits for the loop's end (see
    /// `chunk::nan_sticky_accumulators`).
    pub nan_deferred: Vec<u32>,
    /// The loads whose every address the loop's entry checked, with their addresses' forms.
    pub checked_at_entry: Vec<wave_isa::analysis::induction::RangedLoad>,
}

/// A lane-wise fold of 32-bit lanes (a wave reduction, the range of a loop's addresses).
#[derive(Clone, Copy, Debug)]
pub enum LaneFold {
    Add,
    UMin,
    UMax,
    SMin,
    SMax,
}

impl LaneFold {
    /// What a lane that takes no part contributes.
    fn identity(self) -> u32 {
        match self {
            LaneFold::Add | LaneFold::UMax => 0,
            LaneFold::UMin => u32::MAX,
            LaneFold::SMin => i32::MAX as u32,
            LaneFold::SMax => i32::MIN as u32,
        }
    }

    fn combine(self, b: &mut FunctionBuilder, x: Value, y: Value) -> Value {
        match self {
            LaneFold::Add => b.ins().iadd(x, y),
            LaneFold::UMin => b.ins().umin(x, y),
            LaneFold::UMax => b.ins().umax(x, y),
            LaneFold::SMin => b.ins().smin(x, y),
            LaneFold::SMax => b.ins().smax(x, y),
        }
    }
}

/// Where the vectors a chunk-major loop has in view start among the wave's (see [`chunk`]):
/// a vector index known when translating (the wave itself, or an unrolled copy), or one the
/// run-time loop over the chunks holds (I64).
#[derive(Clone, Copy, Debug)]
pub enum ChunkStart {
    Fixed(usize),
    Dynamic(Value),
}

/// The analyses a translation reads (run once per kernel and flags): two uniformity
/// analyses and the instruction counts.
pub struct Analyses {
    shapes: Uniformity,
    waves: Uniformity,
    costs: CostModel,
    unblended: HashSet<(u32, StateRef)>,
    /// The registers and predicates a cross-lane op (wave op, MMA) names, in any function:
    /// the only ones whose values in lanes that do not run can be read.
    cross_lane: HashSet<StateRef>,
    /// Some `halt` may stop part of a vector's lanes, which then keep stale values.
    partial_halts: bool,
    /// The kernel has no loop (see [`Translator::load_workgroup_field`]).
    loop_free: bool,
}

impl Analyses {
    pub fn new(kernel: &ValidKernel, flags: Flags) -> Analyses {
        let lanes = flags.width.max(1);
        Analyses {
            shapes: kernel.uniformity(UniformityOptions {
                rows_fill_waves: flags.workgroup[0].is_multiple_of(4),
                lanes_log2: 2,
            }),
            waves: kernel.uniformity(UniformityOptions {
                rows_fill_waves: flags.workgroup[0].is_multiple_of(lanes),
                lanes_log2: lanes.trailing_zeros() as u8,
            }),
            costs: CostModel::new(kernel),
            unblended: temporaries::unblended_writes(kernel),
            cross_lane: kernel.funcs.iter().flat_map(|f| temporaries::cross_lane_state(&f.body)).collect(),
            partial_halts: partial_halts(kernel),
            loop_free: is_loop_free(kernel),
        }
    }
}

/// Vector bitcasts keep lane order: little endian, as the host.
pub fn lane_order() -> MemFlagsData {
    MemFlagsData::new().with_endianness(Endianness::Little)
}

/// Context fields and scratch slots: plain memory, never trapping.
pub(super) fn ctx_flags() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}

impl<'a, 'f> Translator<'a, 'f> {
    /// Set up the entry block (its parameters are the function's) and the translation state;
    /// the wave state itself is set up by the caller ([`Translator::new`] or
    /// [`Translator::for_loop`]).
    pub fn bare(
        mut b: FunctionBuilder<'f>,
        kernel: &'a Kernel,
        env: &'a dyn WaveEnv,
        analyses: &'a Analyses,
        flags: Flags,
        call_conv: CallConv,
        first_loop_fn: usize,
    ) -> Translator<'a, 'f> {
        let view = WaveView::of(kernel, flags);
        let n = view.vectors;
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let params = b.block_params(entry).to_vec();
        let ctx = params[0];
        let exit = b.create_block();
        b.append_block_param(exit, I32);
        if flags.fuel {
            // The instructions counted and not paid for where the wave leaves, and its pc.
            b.append_block_param(exit, I64);
            b.append_block_param(exit, I32);
        }
        let helper_sig = b.import_signature(helper_signature(call_conv));
        Translator {
            b,
            kernel,
            env,
            flags,
            params,
            ctx,
            wave: WaveState { regs: vec![None; 256], n, ..WaveState::default() },
            cf: ControlStack::default(),
            exit,
            wave_start: None,
            helper_sig,
            analyses,
            view,
            region: Region::default(),
            full: false,
            op_guarded: false,
            func: 0,
            chunk_loop: None,
            prefetch: None,
            chunk_homes: Vec::new(),
            shadows: shadow::Shadows::default(),
            pred_forms: pred_forms::PredForms::new(),
            loop_fns: Vec::new(),
            first_loop_fn,
            areas: StackAreas::default(),
            phases: None,
            op_offset: 0,
            pending: Cost::ZERO,
            vars: VarPool::default(),
            store_runs: store_run::StoreRuns::default(),
        }
    }

    /// The uniformity analysis run with the 4 lanes of one vector as the "wave": how values
    /// vary inside each vector (memory ops use it to load and store whole vectors).
    pub fn shapes(&self) -> &'a Uniformity {
        &self.analyses.shapes
    }

    /// The uniformity analysis over whole waves: uniform predicates become real branches.
    pub fn waves(&self) -> &'a Uniformity {
        &self.analyses.waves
    }

    /// The static instruction counts of the kernel's regions.
    pub fn costs(&self) -> &'a CostModel {
        &self.analyses.costs
    }

    /// Writes that need no blend, as (statement offset, register or predicate): see
    /// [`temporaries`].
    pub fn unblended(&self) -> &'a HashSet<(u32, StateRef)> {
        &self.analyses.unblended
    }

    /// The kernel's entry function: registers from their initial values, every live lane on.
    pub fn new(
        b: FunctionBuilder<'f>,
        kernel: &'a Kernel,
        env: &'a dyn WaveEnv,
        analyses: &'a Analyses,
        flags: Flags,
        call_conv: CallConv,
    ) -> Translator<'a, 'f> {
        let mut t = Translator::bare(b, kernel, env, analyses, flags, call_conv, 0);
        // The workgroup's waves run one after another in one call: the body is a loop over
        // their contexts (`WaveCtx::next_wave`), each trip a wave from its initial state. A
        // call per wave cost its prologue, epilogue and the engine's loop each time.
        let wave_start = t.b.create_block();
        t.b.append_block_param(wave_start, I64);
        t.b.ins().jump(wave_start, &[t.ctx.into()]);
        t.b.switch_to_block(wave_start);
        t.ctx = t.b.block_params(wave_start)[0];
        t.wave_start = Some(wave_start);
        t.init_state();
        t
    }

    fn init_state(&mut self) {
        let used = used_registers(self.kernel);
        let resident = chunk::memory_resident_registers(self.kernel, self.flags, self.wave.n);
        let stride = 16 * self.wave.n as i32;
        let home = (!resident.is_empty()).then(|| {
            let bytes = stride as u32 * resident.len() as u32;
            let slot =
                self.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, bytes, 4));
            self.b.ins().stack_addr(I64, slot, 0)
        });
        // A resident register whose initial value no lane can read needs none in its home:
        // every lane is live and stays so (no `halt` stops part of a wave, which would leave
        // it unwritten for a wave op to read), and the entry function, calling nothing, writes
        // it before any read.
        let exposed = if self.view.all_live && !self.analyses.partial_halts && self.kernel.funcs.len() == 1 {
            loop_fn::exposed_state(&self.kernel.funcs[0].body)
        } else {
            (0..=255).map(StateRef::Reg).collect()
        };
        for (r, _) in used.iter().enumerate().filter(|(_, &u)| u) {
            let init = self.load_workgroup_field(I32, self.env.init_reg_offset(r as u8));
            let v = self.b.ins().splat(I32X4, init);
            match (home, resident.iter().position(|&q| q == r as u32)) {
                (Some(home), Some(i)) => {
                    let place = (home, i as i32 * stride);
                    if exposed.contains(&StateRef::Reg(r as u32)) {
                        self.store_vectors(place, &vec![v; self.wave.n]);
                    }
                    self.wave.in_memory.insert(r as u32, place);
                }
                _ => {
                    self.note_lane0(v, init);
                    let vars = self.new_vars(&vec![v; self.wave.n]);
                    self.wave.regs[r] = Some(vars);
                }
            }
        }
        let zero = self.zeros();
        for _ in 0..PREDICATES {
            let vars = self.new_vars(&zero);
            self.wave.preds.push(vars);
        }
        // live = lane < live_lanes; a constant when every wave is full (the engine then
        // passes live_lanes = W) or when the workgroup is one wave (live_lanes = its threads).
        let live: Vec<Value> = if self.view.all_live {
            self.splat_u32(u32::MAX)
        } else if let Some(threads) = self.view.live_lanes {
            (0..self.wave.n as u32)
                .map(|k| {
                    self.vconst4(std::array::from_fn(
                        |i| if 4 * k + (i as u32) < threads { u32::MAX } else { 0 },
                    ))
                })
                .collect()
        } else {
            let count = self.load_ctx(I32, self.env.live_lanes_offset());
            let count = self.b.ins().splat(I32X4, count);
            let iota = self.lane_ids();
            iota.iter().map(|&l| self.b.ins().icmp(IntCC::UnsignedLessThan, l, count)).collect()
        };
        self.wave.live = self.new_vars(&live);
        self.wave.exec = self.new_vars(&live);
    }

    /// One variable per vector, defined here (from the spare ones where there are).
    pub fn new_vars(&mut self, vals: &[Value]) -> Vec<Variable> {
        vals.iter()
            .map(|&v| {
                let var = self.scoped_var(I32X4);
                self.b.def_var(var, v);
                var
            })
            .collect()
    }

    /// A variable of type `ty`: one given back by [`Translator::release_vars`] if there is
    /// one, else a new one. The caller defines it before any use, so its earlier values are
    /// never seen. Cranelift's SSA builder keeps, per variable, a table over the blocks up to
    /// the last one defining it: a new variable for every loop, call and chunk made those
    /// tables quadratic in the kernel's size (a kernel of 10,000 instructions in 833 loops
    /// took 10 GB at W = 32).
    pub fn scoped_var(&mut self, ty: Type) -> Variable {
        match self.vars.spare.get_mut(&ty).and_then(Vec::pop) {
            Some(var) => var,
            None => {
                self.vars.declared += 1;
                self.b.declare_var(ty)
            }
        }
    }

    /// Give back variables of type `ty` whose scope has ended (nothing reads them again).
    pub fn release_vars(&mut self, ty: Type, vars: &[Variable]) {
        self.vars.spare.entry(ty).or_default().extend_from_slice(vars);
    }

    pub fn get(&mut self, vars: &[Variable]) -> Vec<Value> {
        vars.iter().map(|&v| self.b.use_var(v)).collect()
    }

    pub fn set(&mut self, vars: &[Variable], vals: &[Value]) {
        for (&var, &v) in vars.iter().zip(vals) {
            self.b.def_var(var, v);
        }
    }

    /// A 128-bit constant made of four u32 lanes.
    pub fn vconst4(&mut self, lanes: [u32; 4]) -> Value {
        let bytes: Vec<u8> = lanes.iter().flat_map(|l| l.to_le_bytes()).collect();
        let c = self.b.func.dfg.constants.insert(ConstantData::from(bytes));
        self.b.ins().vconst(I32X4, c)
    }

    pub fn zeros(&mut self) -> Vec<Value> {
        let z = self.vconst4([0; 4]);
        vec![z; self.wave.n]
    }

    pub fn splat_u32(&mut self, x: u32) -> Vec<Value> {
        let v = self.vconst4([x; 4]);
        let lane0 = self.b.ins().iconst(I32, x as i32 as i64);
        self.note_lane0(v, lane0);
        vec![v; self.wave.n]
    }

    /// Lane ids 0..W as vectors (of the vectors in view: see [`Translator::chunk_start`]).
    pub fn lane_ids(&mut self) -> Vec<Value> {
        match self.chunk_start() {
            ChunkStart::Fixed(first) => {
                let first = first as u32;
                (first..first + self.wave.n as u32)
                    .map(|k| {
                        let v = self.vconst4([4 * k, 4 * k + 1, 4 * k + 2, 4 * k + 3]);
                        let lane0 = self.b.ins().iconst(I32, 4 * k as i64);
                        self.note_lane0(v, lane0);
                        v
                    })
                    .collect()
            }
            ChunkStart::Dynamic(first) => {
                let first = self.b.ins().ireduce(I32, first);
                let first_lane = self.b.ins().ishl_imm_u(first, 2);
                let splat = self.b.ins().splat(I32X4, first_lane);
                (0..self.wave.n as u32)
                    .map(|k| {
                        let offsets = self.vconst4([4 * k, 4 * k + 1, 4 * k + 2, 4 * k + 3]);
                        let v = self.b.ins().iadd(splat, offsets);
                        let lane0 = self.b.ins().iadd_imm_s(first_lane, 4 * k as i64);
                        self.note_lane0(v, lane0);
                        v
                    })
                    .collect()
            }
        }
    }

    /// `fold` over the lanes of `values` that `mask` keeps (the others count as its
    /// identity), the total in every lane of the result.
    pub fn fold_lanes(&mut self, values: &[Value], mask: &[Value], fold: LaneFold) -> Value {
        let identity = self.vconst4([fold.identity(); 4]);
        let kept: Vec<Value> =
            values.iter().zip(mask).map(|(&v, &m)| self.b.ins().bitselect(m, v, identity)).collect();
        self.fold_every_lane(&kept, fold)
    }

    /// `fold` over every lane of `values`, the total in every lane of the result.
    pub fn fold_every_lane(&mut self, values: &[Value], fold: LaneFold) -> Value {
        let identity = self.vconst4([fold.identity(); 4]);
        let mut total =
            values.iter().copied().reduce(|a, v| fold.combine(&mut self.b, a, v)).unwrap_or(identity);
        // Across the four lanes: every lane ends with the whole.
        for lanes in [[2, 3, 0, 1], [1, 0, 3, 2]] {
            let swapped = self.shuffle_lanes(total, lanes);
            total = fold.combine(&mut self.b, total, swapped);
        }
        total
    }

    /// The context address of vector `k` in view of a per-lane context field at `base`
    /// (16 bytes a vector), as an address value and a constant offset.
    pub fn ctx_vector(&mut self, base: i32, k: usize) -> (Value, i32) {
        match self.chunk_start() {
            ChunkStart::Fixed(first) => (self.ctx, base + 16 * (first + k) as i32),
            ChunkStart::Dynamic(first) => {
                let bytes = self.b.ins().ishl_imm_u(first, 4);
                (self.b.ins().iadd(self.ctx, bytes), base + 16 * k as i32)
            }
        }
    }

    // ---- registers and predicates -------------------------------------------------------

    /// The vectors of register `r` (0 for registers outside 0..256, as the reference).
    pub fn reg(&mut self, r: u32) -> Vec<Value> {
        if let Some(vs) = self.shadowed_reg(r) {
            return vs;
        }
        if let Some(&(base, offset)) = self.wave.in_memory.get(&r) {
            return self.load_vectors(I32X4, (base, offset));
        }
        match self.wave.regs.get(r as usize).cloned().flatten() {
            Some(vars) => self.get(&vars),
            None => self.zeros(),
        }
    }

    /// The vectors of register `r` as f32 lanes. One kept in memory is loaded as such: an
    /// `fma` then takes its addend straight from memory (a bitcast between would keep the
    /// load a separate instruction).
    pub fn reg_f32(&mut self, r: u32) -> Vec<Value> {
        match self.wave.in_memory.get(&r) {
            Some(&place) if !self.is_shadowed_reg(r) => self.load_vectors(F32X4, place),
            _ => self.reg(r).into_iter().map(|v| self.as_f32(v)).collect(),
        }
    }

    /// The wave's (or the chunk's) vectors of type `ty` at `place` (a base and the offset of
    /// the first; vector k 16k bytes further): a register kept in memory.
    pub fn load_vectors(&mut self, ty: Type, (base, offset): (Value, i32)) -> Vec<Value> {
        (0..self.wave.n).map(|k| self.b.ins().load(ty, ctx_flags(), base, offset + 16 * k as i32)).collect()
    }

    /// Store `vals` at `place` as [`Translator::load_vectors`] reads them; the stores.
    pub fn store_vectors(&mut self, (base, offset): (Value, i32), vals: &[Value]) -> Vec<Inst> {
        vals.iter()
            .enumerate()
            .map(|(k, &v)| self.b.ins().store(ctx_flags(), v, base, offset + 16 * k as i32))
            .collect()
    }

    /// Write register `r` on the lanes of `mask` (the op's mask; all lanes when `full`).
    pub fn set_reg(&mut self, r: u32, vals: &[Value], mask: &[Value]) {
        debug_assert!(!self.is_shadowed_reg(r), "vector write to shadowed r{r}");
        if let Some(&place) = self.wave.in_memory.get(&r) {
            let new = if self.writes_every_lane(StateRef::Reg(r)) {
                vals.to_vec()
            } else {
                let old = self.reg(r);
                self.blend(mask, vals, &old)
            };
            self.store_vectors(place, &new);
            return;
        }
        let Some(vars) = self.wave.regs.get(r as usize).cloned().flatten() else { return };
        if self.writes_every_lane(StateRef::Reg(r)) {
            self.set(&vars, vals);
            return;
        }
        let old = self.get(&vars);
        let new = self.blend(mask, vals, &old);
        self.set(&vars, &new);
    }

    /// Note the op being translated (its guard and offset), for the writes it makes.
    pub fn at_op(&mut self, inst: &Instruction, pc: u32) {
        self.op_guarded = inst.guard.is_some();
        self.op_offset = pc;
    }

    /// Whether the op being translated may write `state` in every lane, with no blend: every
    /// lane runs it, or what it leaves in the others is never read: a loop temporary (see
    /// [`temporaries`]), or a value no cross-lane op names written where every live lane runs
    /// (the lanes past the threads of a partial last wave never run and never become live, so
    /// only a wave op, reading another lane's stale value, could see what they hold).
    fn writes_every_lane(&self, state: StateRef) -> bool {
        self.full
            || !self.op_guarded
                && (self.unblended().contains(&(self.op_offset, state))
                    || !self.analyses.cross_lane.contains(&state)
                        && self.every_live_lane_runs(self.op_offset))
    }

    /// `mask ? new : old`, lane by lane.
    pub fn blend(&mut self, mask: &[Value], new: &[Value], old: &[Value]) -> Vec<Value> {
        (0..self.wave.n).map(|k| self.b.ins().blendv(mask[k], new[k], old[k])).collect()
    }

    pub fn pred(&mut self, p: u32) -> Vec<Value> {
        if let Some(vs) = self.shadowed_pred(p) {
            return vs;
        }
        if let Some(vs) = self.pred_form_masks(p) {
            return vs;
        }
        match self.wave.preds.get(p as usize).cloned() {
            Some(vars) => self.get(&vars),
            None => self.zeros(),
        }
    }

    pub fn set_pred(&mut self, p: u32, vals: &[Value], mask: &[Value]) {
        debug_assert!(!self.is_shadowed_pred(p), "vector write to shadowed p{p}");
        // A blend reads the old value, and the variables must hold what the form stood for.
        self.materialize_pred_form(p);
        let Some(vars) = self.wave.preds.get(p as usize).cloned() else { return };
        if self.writes_every_lane(StateRef::Pred(p as u8)) {
            self.set(&vars, vals);
            return;
        }
        let old = self.get(&vars);
        let new = self.blend(mask, vals, &old);
        self.set(&vars, &new);
    }

    /// Write every lane of register `r` (no blend): a value it held before, put back.
    pub fn restore_reg(&mut self, r: u32, vals: &[Value]) {
        if let Some(&place) = self.wave.in_memory.get(&r) {
            self.store_vectors(place, vals);
        } else if let Some(vars) = self.wave.regs.get(r as usize).cloned().flatten() {
            self.set(&vars, vals);
        }
    }

    /// Whether register `r` lives in memory rather than in variables.
    pub fn in_memory(&self, r: u32) -> bool {
        self.wave.in_memory.contains_key(&r)
    }

    /// Whether the kernel uses register `r` (it then has variables, or a place in memory).
    pub fn has_register(&self, r: u32) -> bool {
        self.wave.regs.get(r as usize).is_some_and(Option::is_some) || self.wave.in_memory.contains_key(&r)
    }

    /// The variables of register `r` (none for an unused register, or one kept in memory).
    pub fn reg_vars(&self, r: u32) -> Vec<Variable> {
        self.wave.regs.get(r as usize).cloned().flatten().unwrap_or_default()
    }

    /// The variables of predicate `p`.
    pub fn pred_vars(&self, p: u32) -> Vec<Variable> {
        self.wave.preds.get(p as usize).cloned().unwrap_or_default()
    }

    /// The lanes where a predicate reference (maybe negated) holds.
    pub fn pred_ref(&mut self, p: PredRef) -> Vec<Value> {
        let v = self.pred(p.index as u32);
        if p.negated {
            self.not(&v)
        } else {
            v
        }
    }

    /// Translate with `region` in force, then restore the enclosing region.
    pub fn in_region<R>(&mut self, region: Region, translate: impl FnOnce(&mut Self) -> R) -> R {
        let outer = std::mem::replace(&mut self.region, region);
        let result = translate(self);
        self.region = outer;
        result
    }

    /// Whether every lane runs the statement: all lanes live, no partial halt, not inside an
    /// inlined call (a uniform `return` empties the mask), not in a maybe-empty region, and
    /// not divergent by the analysis. Real branches for uniform control keep this exact.
    pub fn exec_is_full(&self, offset: u32) -> bool {
        self.region.coherent || self.view.all_live && self.every_live_lane_runs(offset)
    }

    /// Whether every live lane runs the statement ([`Translator::exec_is_full`] but for lanes
    /// that are not live: those past the threads of a partial last wave).
    fn every_live_lane_runs(&self, offset: u32) -> bool {
        self.region.coherent
            || !self.analyses.partial_halts
                && !self.region.maybe_empty
                && self.region.divergent_loops.0 == 0
                && !self.inside_call()
                && self.waves().get(self.func, offset).is_some_and(|info| !info.divergent)
    }

    /// Whether the statements being translated are inside an inlined call (here, or around the
    /// loop a loop function was made from).
    pub fn inside_call(&self) -> bool {
        self.region.in_call || self.cf.frames.iter().any(|f| matches!(f, control::Frame::Call { .. }))
    }

    /// exec ∧ guard: the lanes an op runs on.
    pub fn op_mask(&mut self, guard: Option<PredRef>) -> Vec<Value> {
        let exec = self.exec_mask();
        match guard {
            Some(g) => {
                let p = self.pred_ref(g);
                self.and(&exec, &p)
            }
            None => exec,
        }
    }

    // ---- mask arithmetic ----------------------------------------------------------------

    pub fn and(&mut self, a: &[Value], c: &[Value]) -> Vec<Value> {
        (0..self.wave.n).map(|k| self.b.ins().band(a[k], c[k])).collect()
    }
    pub fn or(&mut self, a: &[Value], c: &[Value]) -> Vec<Value> {
        (0..self.wave.n).map(|k| self.b.ins().bor(a[k], c[k])).collect()
    }
    /// a ∧ ¬c
    pub fn and_not(&mut self, a: &[Value], c: &[Value]) -> Vec<Value> {
        (0..self.wave.n).map(|k| self.b.ins().band_not(a[k], c[k])).collect()
    }
    pub fn not(&mut self, a: &[Value]) -> Vec<Value> {
        (0..self.wave.n).map(|k| self.b.ins().bnot(a[k])).collect()
    }

    /// Whether any lane of a mask is set (an i8 truth value).
    pub fn any(&mut self, mask: &[Value]) -> Value {
        let mut acc = mask[0];
        for &m in &mask[1..] {
            acc = self.b.ins().bor(acc, m);
        }
        self.b.ins().vany_true(acc)
    }

    /// The mask as a bit set (bit i = lane i), for helpers.
    pub fn mask_bits(&mut self, mask: &[Value]) -> Value {
        let mut acc = self.b.ins().iconst(I64, 0);
        for (k, &m) in mask.iter().enumerate() {
            let bits = self.b.ins().vhigh_bits(I32, m);
            let bits = self.b.ins().uextend(I64, bits);
            let bits = if k == 0 { bits } else { self.b.ins().ishl_imm_s(bits, 4 * k as i64) };
            acc = self.b.ins().bor(acc, bits);
        }
        acc
    }

    // ---- vector views -------------------------------------------------------------------

    pub fn as_f32(&mut self, v: Value) -> Value {
        self.b.ins().bitcast(F32X4, lane_order(), v)
    }
    pub fn as_i32(&mut self, v: Value) -> Value {
        self.b.ins().bitcast(I32X4, lane_order(), v)
    }
    pub fn as_bytes(&mut self, v: Value) -> Value {
        self.b.ins().bitcast(I8X16, lane_order(), v)
    }

    // ---- context access -----------------------------------------------------------------

    /// Load a context field that stays constant while the wave runs (bases, sizes, limits,
    /// ids): marked read-only and movable, so Cranelift keeps one copy and hoists it.
    pub fn load_ctx(&mut self, ty: Type, offset: i32) -> Value {
        self.load_ctx_at(ty, self.ctx, offset)
    }

    /// Load a context field that holds the same value in every wave of the workgroup (the
    /// memories' bases and limits, the initial registers, the workgroup's ids and sizes). The
    /// entry function runs the workgroup's waves in a loop, each on its own context. In a
    /// kernel without loops, the field is read from the context the function was called
    /// with (the first wave's): invariant in that loop, Cranelift loads it once per workgroup
    /// instead of once per wave (the instructions a full wave runs at W = 32: vecadd 79 → 67,
    /// ReLU 86 → 75). Not where the kernel has loops: its values then lived across the
    /// whole function, through the helper calls that clobber the scratch registers, and the
    /// register allocator reloaded three of them from the stack on every trip of the
    /// reduction's grid-stride loop.
    pub fn load_workgroup_field(&mut self, ty: Type, offset: i32) -> Value {
        let ctx = if self.analyses.loop_free { self.params[0] } else { self.ctx };
        self.load_ctx_at(ty, ctx, offset)
    }

    /// [`Translator::load_ctx`] at `at + offset`, `at` an address inside the context (an entry
    /// of a per-lane field or a table picked at run time).
    pub fn load_ctx_at(&mut self, ty: Type, at: Value, offset: i32) -> Value {
        let flags = ctx_flags().with_readonly().with_can_move();
        self.b.ins().load(ty, flags, at, offset)
    }

    /// Store a register's vectors into scratch slot `slot`.
    pub fn spill(&mut self, slot: usize, vals: &[Value]) {
        for (k, &v) in vals.iter().enumerate() {
            let off = self.env.scratch_offset(slot) + 16 * k as i32;
            self.b.ins().store(ctx_flags(), v, self.ctx, off);
        }
    }

    /// Load scratch slot `slot` as a register's vectors.
    pub fn reload(&mut self, slot: usize) -> Vec<Value> {
        (0..self.wave.n)
            .map(|k| {
                let off = self.env.scratch_offset(slot) + 16 * k as i32;
                self.b.ins().load(I32X4, ctx_flags(), self.ctx, off)
            })
            .collect()
    }

    /// Call a helper; returns its status.
    pub fn call_helper(&mut self, helper: Helper, op: u32, exec_bits: Value, pc: u32) -> Value {
        // Helpers see whole waves; chunk-major loops hold only ops that need none.
        debug_assert!(self.chunk_loop.is_none(), "helper call in a chunk-major loop (pc 0x{pc:x})");
        let addr = self.b.ins().iconst(I64, self.env.helper_address(helper) as i64);
        let op = self.b.ins().iconst(I32, op as i64);
        let pc = self.b.ins().iconst(I32, pc as i64);
        self.call_helper_at(addr, op, exec_bits, pc)
    }

    /// Call a helper with its `op` and `pc` arguments as values.
    pub fn call_helper_with(&mut self, helper: Helper, op: Value, exec_bits: Value, pc: Value) -> Value {
        let addr = self.b.ins().iconst(I64, self.env.helper_address(helper) as i64);
        self.call_helper_at(addr, op, exec_bits, pc)
    }

    fn call_helper_at(&mut self, addr: Value, op: Value, exec_bits: Value, pc: Value) -> Value {
        let sig = self.helper_sig;
        let call = self.b.ins().call_indirect(sig, addr, &[self.ctx, op, exec_bits, pc]);
        self.b.inst_results(call)[0]
    }

    /// Leave the function with the status when it is not 0; go on otherwise.
    pub fn check_status(&mut self, status: Value) {
        let next = self.b.create_block();
        self.leave_if(status, next);
        self.continue_in(next);
    }

    /// Go on in `block`, every branch to which is now emitted. Sealed first, it reads a value
    /// of its predecessors as that value itself, not through a block parameter made while its
    /// predecessors were unknown: so the lane-0 forms recorded for the value still apply, and
    /// the vector code that only fed them stays dead.
    pub fn continue_in(&mut self, block: Block) {
        self.b.seal_block(block);
        self.b.switch_to_block(block);
    }

    /// Call a helper and leave on a non-zero status.
    pub fn call_checked(&mut self, helper: Helper, op: u32, exec_bits: Value, pc: u32) {
        let s = self.call_helper(helper, op, exec_bits, pc);
        self.check_status(s);
    }

    /// Spill the register (and predicate) inputs of an instruction to scratch slots 0.. in
    /// assembly order; a pair or quad takes consecutive slots.
    pub fn spill_inputs(&mut self, inst: &Instruction) {
        let mut slot = 0;
        for (spec, operand) in inst.operands() {
            if spec.role != Role::Use {
                continue;
            }
            match operand {
                Operand::Reg(r) | Operand::Pair(r) | Operand::Quad(r) => {
                    for i in 0..spec.kind.register_span() {
                        let v = self.reg(r as u32 + i);
                        self.spill(slot, &v);
                        slot += 1;
                    }
                }
                Operand::Pred(p) => {
                    let v = self.pred(p as u32);
                    self.spill(slot, &v);
                    slot += 1;
                }
                _ => {}
            }
        }
    }

    /// Finish: make the exit block return its status, and hand the function to Cranelift.
    pub fn finish(mut self, config: cranelift_codegen::isa::TargetFrontendConfig) {
        // The code's end is the end of the entry function (a loop function's caller has
        // cleared what the loop's first trip counted: that is the caller's).
        self.leave_done(0);
        self.b.switch_to_block(self.exit);
        if let Some(phases) = &self.phases {
            // The exit is reached from every phase: the wave's context is the one in force.
            self.ctx = self.b.use_var(phases.context());
        }
        let s = if self.flags.fuel { self.settle_at_exit() } else { self.b.block_params(self.exit)[0] };
        match (self.wave_start, self.phases.take()) {
            (Some(_), Some(phases)) => {
                // A wave that ended well hands over in its phase; an error returns.
                let ended = self.b.create_block();
                let out = self.b.create_block();
                self.b.append_block_param(out, I32);
                self.b.ins().brif(s, out, &[s.into()], ended, &[]);
                self.continue_in(ended);
                self.finish_phases(&phases);
                self.b.switch_to_block(out);
                let s = self.b.block_params(out)[0];
                self.b.ins().return_(&[s]);
            }
            (Some(wave_start), None) => {
                // A wave that ended well hands over to the next one, if any.
                let next_wave = self.b.create_block();
                let out = self.b.create_block();
                self.b.append_block_param(out, I32);
                self.b.ins().brif(s, out, &[s.into()], next_wave, &[]);
                self.continue_in(next_wave);
                let next = self.b.ins().load(I64, ctx_flags(), self.ctx, self.env.next_wave_offset());
                self.b.ins().brif(next, wave_start, &[next.into()], out, &[s.into()]);
                self.continue_in(out);
                let s = self.b.block_params(out)[0];
                self.b.ins().return_(&[s]);
            }
            (None, _) => {
                self.b.ins().return_(&[s]);
            }
        }
        self.b.seal_all_blocks();
        self.b.finalize(config);
    }

    /// Translate the whole kernel (entry function, calls inlined).
    pub fn translate(&mut self) -> Result<(), JitError> {
        let body = &self
            .kernel
            .funcs
            .first()
            .ok_or_else(|| JitError::Unsupported("kernel has no code".into()))?
            .body;
        match self.phases.take() {
            Some(phases) => {
                let result = self.translate_phases(&phases, body);
                self.phases = Some(phases);
                result
            }
            None => self.block(body, 0),
        }
    }
}

/// Whether no function of the kernel has a loop.
fn is_loop_free(kernel: &Kernel) -> bool {
    let mut loops = false;
    kernel.walk(&mut |_, stmt, _| loops |= matches!(stmt.kind, StmtKind::Loop { .. }));
    !loops
}

/// Whether a `halt` (or a `return` of the entry function) can stop only some lanes: one that
/// is guarded, nested in a construct, or inside a called function.
fn partial_halts(kernel: &Kernel) -> bool {
    let mut partial = false;
    kernel.walk(&mut |func, stmt, depth| {
        let halts = match stmt.kind {
            StmtKind::Halt { .. } => true,
            StmtKind::Return => func == 0,
            _ => false,
        };
        partial |= halts && (func != 0 || depth > 0 || stmt.guard.is_some());
    });
    partial
}

/// The vectors of a wave the code computes, and what is known of their lanes when compiling.
///
/// A workgroup of T < W threads is one wave whose lanes T.. never run: nothing writes their
/// registers, which keep their initial values. Only an op that reads other lanes' registers
/// (the shuffles, `wave_broadcast`, MMA) could see them; the others combine active lanes only
/// (reductions, the prefix sum, ballot, any, all) or one lane each. Without such an op the code
/// computes the first ⌈T/4⌉ vectors only: a 14-thread kernel at W = 64 is 4 vectors of code,
/// not 16, and compiles and runs as fast as at W = 16. Helpers still take W-lane slots: lanes
/// past the computed ones are never in an exec mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaveView {
    /// 4-lane vectors a wave's code computes.
    pub vectors: usize,
    /// The live lanes of the workgroup's one wave (T ≤ W: known when compiling); None where
    /// they vary by wave (the context's `live_lanes` then says).
    pub live_lanes: Option<u32>,
    /// Every lane of the vectors computed, in every wave, is live.
    pub all_live: bool,
}

impl WaveView {
    /// The view of `kernel`'s waves compiled with `flags`.
    pub fn of(kernel: &Kernel, flags: Flags) -> WaveView {
        let width = flags.width.max(4);
        let threads: u64 = flags.workgroup.iter().map(|&d| u64::from(d)).product();
        let whole = WaveView {
            vectors: (width / 4) as usize,
            live_lanes: None,
            all_live: threads.is_multiple_of(u64::from(width)),
        };
        if threads == 0 || threads > u64::from(width) {
            return whole;
        }
        let threads = threads as u32;
        let lanes = if reads_other_lanes(kernel) { width } else { threads.div_ceil(4) * 4 };
        WaveView { vectors: (lanes / 4) as usize, live_lanes: Some(threads), all_live: threads == lanes }
    }
}

/// Whether some op of the kernel reads registers of lanes other than its own, active or not
/// (see [`WaveView`]).
fn reads_other_lanes(kernel: &Kernel) -> bool {
    let mut reads = false;
    kernel.walk(&mut |_, stmt, _| {
        if let StmtKind::Op(inst) = &stmt.kind {
            reads |= inst.op.class() == wave_isa::opcodes::Class::Mma
                || matches!(
                    inst.op,
                    wave_isa::Op::WaveShuffle
                        | wave_isa::Op::WaveShuffleUp
                        | wave_isa::Op::WaveShuffleDown
                        | wave_isa::Op::WaveShuffleXor
                        | wave_isa::Op::WaveBroadcast
                );
        }
    });
    reads
}

/// Registers the kernel names anywhere (defs and uses, pairs and quads expanded).
pub(super) fn used_registers(kernel: &Kernel) -> Vec<bool> {
    let mut used = vec![false; 256];
    kernel.walk(&mut |_, stmt, _| {
        if let wave_isa::StmtKind::Op(inst) = &stmt.kind {
            for named in inst.named_state(None) {
                if let wave_isa::StateRef::Reg(r) = named {
                    if let Some(u) = used.get_mut(r as usize) {
                        *u = true;
                    }
                }
            }
        }
    });
    used
}

/// The body of the first loop (depth first) of `source`'s first kernel: for the unit tests of
/// the loop rules (`chunk`, `fission`).
#[cfg(test)]
fn first_loop_body(source: &str) -> Vec<wave_isa::Stmt> {
    let (module, _) =
        wave_isa::module::load_bytes(source.as_bytes(), "k.wave").unwrap_or_else(|e| panic!("{e}"));
    let mut body = None;
    wave_isa::ir::walk_block(&module.kernels[0].funcs[0].body, 0, &mut |s, _| {
        if let StmtKind::Loop { body: b, .. } = &s.kind {
            body.get_or_insert_with(|| b.clone());
        }
    });
    body.expect("a loop")
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_frontend::FunctionBuilderContext;

    /// Variables the entry function of `source`'s kernel declares.
    fn declared_vars(source: &str, flags: Flags) -> usize {
        let (module, _) =
            wave_isa::module::load_bytes(source.as_bytes(), "k.wave").unwrap_or_else(|e| panic!("{e}"));
        let kernel = &module.kernels[0];
        let host = cranelift_native::builder().unwrap_or_else(|e| panic!("{e}"));
        let call_conv = CallConv::triple_default(host.triple());
        let mut func = cranelift_codegen::ir::Function::new();
        func.signature = crate::abi::entry_signature(call_conv);
        let mut fctx = FunctionBuilderContext::new();
        let analyses = Analyses::new(kernel, flags);
        let b = FunctionBuilder::new(&mut func, &mut fctx);
        // The code is never run: no helper needs an address.
        let env = env::CtxEnv::new(|_| 0);
        let mut t = Translator::new(b, kernel, &env, &analyses, flags, call_conv);
        t.translate().unwrap_or_else(|e| panic!("{e}"));
        t.vars.declared
    }

    /// `count` loops in a row: chunk-major ones (lane-local bodies) and wave-major ones
    /// (a call in the body), each with a `break` and shadowed counters.
    fn loops(count: usize) -> String {
        let mut s = String::from(
            ".kernel loops\n    mov_sr r1, sr_thread_id_x\n    mov_imm r3, 4\n    mov_imm r4, 1\n",
        );
        for i in 0..count {
            s += "    mov_imm r2, 0\n    loop\n        icmp_ge p1, r2, r3\n        break p1\n";
            s += "        iadd r5, r5, r1\n";
            if i % 2 == 1 {
                s += "        call f\n";
            }
            s += "        iadd r2, r2, r4\n    endloop\n";
        }
        s + "    halt\nf:\n    iadd r6, r6, r5\n    return\n.end\n"
    }

    /// The SSA builder's memory grows with variables times blocks: variables must not grow
    /// with the number of loops and calls (a fresh set for each made a 10,000-instruction
    /// kernel of loops take 10 GB to compile).
    #[test]
    fn variables_do_not_grow_with_the_number_of_loops() {
        for width in [4, 32] {
            let flags = Flags {
                width,
                checked: true,
                fuel: true,
                workgroup: [width, 1, 1],
                stats: false,
                window_wraps: false,
            };
            let few = declared_vars(&loops(4), flags);
            let many = declared_vars(&loops(40), flags);
            assert_eq!(few, many, "W = {width}: {few} variables for 4 loops, {many} for 40");
        }
    }
}
