//! Running compiled waves: workgroups over rayon workers, waves of a workgroup on one worker,
//! fibers for kernels with barriers. The schedule is the engine contract's (the documentation
//! of [`wave_runtime`]), so results match the interpreter bit for bit: waves in order, each
//! until it reaches a barrier or ends.

pub mod cache;
pub mod tiers;

use crate::abi::{status, WaveCtx, MAX_LANES};
use crate::compiler::{Compiled, EntryCode};
use crate::error::JitError;
use crate::helpers::{Fault, WaveHost};
use crate::stacks::WaveStack;
use crate::translate::Flags;
use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use wave_isa::{SpecialReg, ValidKernel};
use wave_runtime::{CompileReport, Launch, RunError, RunErrorKind, RunReport, Stats};

/// What code for `launch` is compiled for; with `stats`, code that counts everything
/// `--stats` prints.
pub fn flags_for(launch: &Launch, stats: bool) -> Flags {
    Flags {
        width: launch.wave_width,
        checked: !launch.unchecked,
        fuel: launch.max_instructions > 0 || stats,
        stats,
        workgroup: launch.workgroup,
        window_wraps: crate::translate::window_wraps(launch.device_size),
    }
}

/// Where a dispatch stopped: the wave, and the fault its helper recorded.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RunFailure {
    pub workgroup: [u32; 3],
    pub wave: u32,
    pub fault: Fault,
}

impl RunFailure {
    fn into_error(self, kernel: &str) -> RunError {
        let Fault { pc, lane, kind } = self.fault;
        RunError { kernel: kernel.to_string(), workgroup: self.workgroup, wave: self.wave, lane, pc, kind }
    }
}

/// A JIT error (a compile that failed, no worker threads to be had) as the run's error kind.
fn jit_error_kind(e: JitError) -> RunErrorKind {
    match e {
        JitError::Unsupported(what) | JitError::TooLarge(what) => RunErrorKind::Unsupported(what),
        other => RunErrorKind::Unsupported(format!("JIT: {other}")),
    }
}

/// What [`JitEngine::run_or_decline`] did.
enum Ran {
    /// Boxed: the report is ten times the size of the other variants.
    Compiled(Box<RunReport>),
    /// The JIT declined the kernel, for this reason.
    Declined(String),
    /// The dispatch is cheaper to interpret than to compile (see
    /// [`tiers::small_dispatch`]), for this reason.
    Small(String),
}

/// Device memory as the compiled code sees it.
#[derive(Clone, Copy)]
pub struct DeviceView {
    /// Base of the 4 GiB + 64 KiB window.
    pub window: *mut u8,
    pub size: u64,
}
// SAFETY: the window is a plain memory mapping that outlives the run; workgroups on other
// threads touch it only through the kernel's own (racy by design, like a GPU) accesses.
unsafe impl Send for DeviceView {}
// SAFETY: as above.
unsafe impl Sync for DeviceView {}

/// Run compiled code for a launch: the counters (workgroups and waves; what the code counted:
/// the instructions under a budget, everything with `stats`), or where it failed.
fn run_compiled(
    code: &Arc<Compiled>,
    launch: &Launch,
    stats: bool,
    device: DeviceView,
) -> Result<Stats, RunFailure> {
    let total = launch.workgroups;
    let waves = u64::from(launch.waves_per_workgroup);
    let ran = Stats { workgroups: total, waves: total * waves, ..Stats::default() };
    if total == 0 || launch.threads_per_workgroup == 0 {
        return Ok(ran);
    }
    let wg_id = |i: u64| {
        let (gx, gy) = (launch.grid[0] as u64, launch.grid[1] as u64);
        [(i % gx) as u32, (i / gx % gy) as u32, (i / (gx * gy)) as u32]
    };
    let threads = if launch.threads == 0 { wave_runtime::host_cores() } else { launch.threads };
    let tally = Arc::new(Mutex::new(Stats::default()));
    let tallied = || {
        let counted = std::mem::take(&mut *tally.lock().unwrap_or_else(|e| e.into_inner()));
        Stats { workgroups: ran.workgroups, waves: ran.waves, ..counted }
    };
    // A worker that cannot have a stack for the code fails before its first workgroup.
    let no_stack = |why: String| RunFailure { workgroup: wg_id(0), wave: 0, fault: Fault::internal(0, why) };
    if threads <= 1 || total == 1 {
        let mut worker = Worker::new(launch, stats, &tally);
        worker
            .on_code_stack(code, |worker| {
                (0..total).try_for_each(|i| worker.run_workgroup(code, launch, wg_id(i), device))
            })
            .unwrap_or_else(|why| Err(no_stack(why)))?;
        drop(worker);
        return Ok(tallied());
    }
    let no_pool = |e| RunFailure { workgroup: wg_id(0), wave: 0, fault: Fault::at(0, jit_error_kind(e)) };
    let pool = pool(threads, launch.pin_workers).map_err(no_pool)?;
    // Workers claim runs of workgroup ids in order from one counter, and stop claiming and
    // running once any workgroup failed: a fault in a huge grid ends the dispatch at once.
    let next = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let first: Mutex<Option<(u64, RunFailure)>> = Mutex::new(None);
    pool.broadcast(|_| {
        let mut worker = Worker::new(launch, stats, &tally);
        let ran = worker.on_code_stack(code, |worker| {
            while let Some(ids) = claim(&next, total, threads as u64) {
                for i in ids {
                    if stop.load(Ordering::Relaxed) {
                        return Ok(());
                    }
                    worker.run_workgroup(code, launch, wg_id(i), device).map_err(|f| (i, f))?;
                }
            }
            Ok(())
        });
        if let Err((i, f)) = ran.unwrap_or_else(|why| Err((0, no_stack(why)))) {
            stop.store(true, Ordering::Relaxed);
            let mut first = first.lock().unwrap_or_else(|e| e.into_inner());
            // The failure reported is the one of the lowest workgroup that ran.
            if first.as_ref().is_none_or(|(j, _)| i < *j) {
                *first = Some((i, f));
            }
        }
    });
    match first.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some((_, f)) => Err(f),
        None => Ok(tallied()),
    }
}

/// Most workgroup ids one claim takes: a worker sees another's failure before each
/// workgroup anyway; this bounds how far past the other workers' ids a claim reaches.
/// Long claims let each worker stream through memory of its own: with claims of at most 64
/// ids, two workers took turns every 64 KB of a stream kernel, and 16M-element relu, vector
/// add and bias-add ran 10-25 % slower on two threads than with 1024.
pub const MAX_CLAIM: u64 = 1024;

/// The next run of workgroup ids for a worker, or `None` when all are taken: a quarter of
/// each worker's share of what is left (guided scheduling: long runs first, single ids at the
/// end to balance), at most [`MAX_CLAIM`]. The counter never passes `total`.
fn claim(next: &AtomicU64, total: u64, workers: u64) -> Option<std::ops::Range<u64>> {
    let size = |start: u64| ((total - start) / workers.max(1).saturating_mul(4)).clamp(1, MAX_CLAIM);
    let start =
        next.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| (n < total).then(|| n + size(n))).ok()?;
    Some(start..start + size(start))
}

/// A rayon pool per thread count and pinning, built once. In a pinned pool worker `i` runs on
/// core `i` (modulo the cores) only, where the host lets a thread choose its core.
fn pool(threads: usize, pinned: bool) -> Result<Arc<rayon::ThreadPool>, JitError> {
    type Pools = HashMap<(usize, bool), Arc<rayon::ThreadPool>>;
    static POOLS: OnceLock<Mutex<Pools>> = OnceLock::new();
    let mut pools = POOLS.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = pools.get(&(threads, pinned)) {
        return Ok(p.clone());
    }
    let mut builder = rayon::ThreadPoolBuilder::new().num_threads(threads);
    if pinned {
        let cores = core_affinity::get_core_ids().unwrap_or_default();
        builder = builder.start_handler(move |worker| {
            if !cores.is_empty() {
                // A host that refuses leaves the worker where the system puts it.
                let _ = core_affinity::set_for_current(cores[worker % cores.len()]);
            }
        });
    }
    let p = Arc::new(
        builder.build().map_err(|e| JitError::Host(format!("cannot start {threads} worker threads: {e}")))?,
    );
    pools.insert((threads, pinned), p.clone());
    Ok(p)
}

/// What one worker thread keeps between workgroups.
struct Worker {
    /// Local memory: a power of two plus 16 bytes of slack (addresses are masked).
    local: Vec<u8>,
    local_mask: u32,
    ctxs: Vec<Box<WaveCtx>>,
    /// Boxed: contexts point to them, so they must not move when the vector grows.
    #[allow(clippy::vec_box)]
    hosts: Vec<Box<WaveHost>>,
    /// Stacks compiled code ran on, for the next workgroups (see [`crate::stacks`]).
    stacks: Vec<WaveStack>,
    /// While the worker runs on a stack for a kernel without barriers ([`Worker::on_code_stack`]):
    /// its usable bytes and lowest usable address; else zeros.
    code_stack: (usize, usize),
    /// The instruction budget left to the workgroup running (its waves share it); boxed: the
    /// contexts point to it.
    fuel: Box<i64>,
    /// What this worker's workgroups counted, added to `tally` when the worker is done.
    counted: Stats,
    tally: Arc<Mutex<Stats>>,
    /// The code counts everything `--stats` prints.
    stats: bool,
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.tally.lock().unwrap_or_else(|e| e.into_inner()).merge(&self.counted);
        WaveStack::recycle(self.stacks.drain(..));
    }
}

impl Worker {
    fn new(launch: &Launch, stats: bool, tally: &Arc<Mutex<Stats>>) -> Worker {
        let pow2 = (launch.local_memory.max(1) as usize).next_power_of_two();
        Worker {
            local: vec![0; pow2 + 16],
            local_mask: (pow2 - 1) as u32,
            ctxs: Vec::new(),
            hosts: Vec::new(),
            stacks: Vec::new(),
            code_stack: (0, 0),
            fuel: Box::new(0),
            counted: Stats::default(),
            tally: tally.clone(),
            stats,
        }
    }

    /// Fill the contexts of a workgroup's waves. What is the same for every workgroup of the
    /// dispatch (thread ids, limits, arguments, the budget's place) is set once, when a wave's
    /// context is made; per workgroup only its ids, and what a wave may have left in its host
    /// state. Waves without barriers touch their host state only to fail (which ends the
    /// dispatch), to use MMA fragments, or to count loop functions run on a stack of their
    /// own: resetting all of it per wave was 12 % of a one-thread bias-add (16M: 8.9 → 7.9 ms).
    fn prepare(&mut self, code: &Compiled, launch: &Launch, wg: [u32; 3], device: DeviceView) -> usize {
        let waves = launch.waves_per_workgroup as usize;
        while self.ctxs.len() < waves {
            let wave = self.ctxs.len();
            let mut c = WaveCtx::zeroed();
            self.hosts.push(Box::new(WaveHost::new(launch.wave_width)));
            self.init_wave(&mut c, code, launch, wave, device);
            self.ctxs.push(c);
        }
        // Every workgroup starts with zeroed local memory; one that cannot write it finds it
        // as the buffer was made.
        if code.writes_local {
            self.local.fill(0);
        }
        for wave in 0..waves {
            let host = &mut self.hosts[wave];
            debug_assert!(host.fault.is_none(), "a wave failed, yet its worker goes on");
            if code.has_barrier {
                // Their fibers' stacks give the limit (see `run_fibers`).
                host.reset(0);
            } else if code.uses_mma {
                host.mma.clear();
            }
            let c = &mut self.ctxs[wave];
            if self.stats {
                c.counters = Default::default();
            }
            c.special[SpecialReg::WorkgroupIdX as usize..=SpecialReg::WorkgroupIdZ as usize]
                .copy_from_slice(&wg);
        }
        // Without barriers one call runs the workgroup's waves in turn; on fibers each wave
        // runs alone.
        let mut next: *mut WaveCtx = std::ptr::null_mut();
        for c in self.ctxs[..waves].iter_mut().rev() {
            c.next_wave = next;
            if !code.has_barrier {
                next = &mut **c;
            }
        }
        waves
    }

    /// The parts of wave `wave`'s context that no workgroup changes.
    fn init_wave(
        &mut self,
        c: &mut WaveCtx,
        code: &Compiled,
        launch: &Launch,
        wave: usize,
        device: DeviceView,
    ) {
        let (tpw, w) = (launch.threads_per_workgroup, launch.wave_width);
        let host = &mut self.hosts[wave];
        host.instruction_limit = launch.max_instructions;
        // The stack for code of a kernel without barriers, made for the whole dispatch.
        host.stack_limit = self.code_stack.1;
        c.fuel = &mut *self.fuel;
        c.lazy_loops = &code.lazy;
        let mut init = [0u32; 256];
        for &(r, v) in &launch.initial_registers {
            init[r as usize] = v;
        }
        c.device_base = device.window;
        c.local_base = self.local.as_mut_ptr();
        c.host = self.hosts[wave].as_host_state();
        c.local_mask = self.local_mask;
        c.live_lanes = (tpw - wave as u32 * w).min(w);
        c.checked = u32::from(!launch.unchecked);
        c.device_size = device.size;
        c.local_size = launch.local_memory as u64;
        c.device_limit = WaveCtx::limits_for(device.size);
        c.local_limit = WaveCtx::limits_for(launch.local_memory as u64);
        // The runtime's one definition of what each special register reads: the uniform
        // ones here (the workgroup ids are set per workgroup), thread ids per lane.
        use wave_runtime::special::{special_register, LanePlace};
        let shape = launch.shape();
        let at = |lane: usize| LanePlace { workgroup_id: [0; 3], wave: wave as u32, lane: lane as u32 };
        for (index, value) in c.special.iter_mut().enumerate() {
            *value = special_register(index as u8, &shape, at(0));
        }
        for lane in 0..MAX_LANES {
            for (dim, ids) in c.thread_id.iter_mut().enumerate() {
                ids[lane] = special_register(SpecialReg::ThreadIdX as u8 + dim as u8, &shape, at(lane));
            }
        }
        c.init_regs = init;
    }

    fn run_workgroup(
        &mut self,
        code: &Compiled,
        launch: &Launch,
        wg: [u32; 3],
        device: DeviceView,
    ) -> Result<(), RunFailure> {
        let limit = launch.max_instructions;
        let budget: i64 = if limit == 0 { i64::MAX } else { limit.min(i64::MAX as u64) as i64 };
        *self.fuel = budget;
        let waves = self.prepare(code, launch, wg, device);
        let fail = |host: &WaveHost, wave: usize| RunFailure {
            workgroup: wg,
            wave: wave as u32,
            fault: host
                .fault
                .clone()
                .unwrap_or_else(|| Fault::internal(0, "wave failed without a recorded fault")),
        };
        let ran = if code.has_barrier {
            // The tier ready now, for every wave: their fibers' stacks are made for it.
            self.run_fibers(code.entry(), waves)
        } else {
            self.run_waves(code, waves)
        };
        ran.map_err(|wave| fail(&self.hosts[wave], wave))?;
        self.count_workgroup(waves, budget - *self.fuel);
        Ok(())
    }

    /// Add a finished workgroup's counts (`used`: the budget its code took).
    fn count_workgroup(&mut self, waves: usize, used: i64) {
        self.counted.instructions += used as u64;
        if self.stats {
            for c in &self.ctxs[..waves] {
                c.add_counters_to(&mut self.counted);
            }
            // Every round but the last ends in a release, and each wave waited at every
            // release until it ended: the releases are the most barriers a wave waited at.
            self.counted.barriers += self.hosts[..waves].iter().map(|h| h.barriers).max().unwrap_or(0);
        }
    }

    /// A stack of at least `needed` bytes: one this worker used before if large enough, else
    /// a new one.
    fn take_stack(&mut self, needed: usize) -> Result<WaveStack, String> {
        match self.stacks.iter().position(|s| s.bytes() >= needed) {
            Some(i) => Ok(self.stacks.swap_remove(i)),
            None => WaveStack::with_room(needed),
        }
    }

    /// Run `work` (this worker's workgroups of a dispatch) on a stack made for `code`'s
    /// entry function, if the kernel has no barriers: its waves then run on that stack (one
    /// switch per worker and dispatch; one per workgroup cost 15 ns more per workgroup of the
    /// empty kernel, half again what it costs).
    /// A kernel with barriers runs each wave on a fiber of its own, so `work` runs here.
    fn on_code_stack<R>(
        &mut self,
        code: &Compiled,
        work: impl FnOnce(&mut Worker) -> R,
    ) -> Result<R, String> {
        if code.has_barrier {
            return Ok(work(self));
        }
        let mut stack = self.take_stack(code.entry().stack_needed())?;
        self.code_stack = (stack.bytes(), stack.limit());
        let result = corosensei::on_stack(&mut stack.stack, || work(self));
        self.code_stack = (0, 0);
        self.stacks.push(stack);
        Ok(result)
    }

    /// Kernels without barriers: the waves one after the other, on the worker's stack for
    /// code ([`Worker::on_code_stack`]). Returns the failing wave.
    fn run_waves(&mut self, code: &Compiled, waves: usize) -> Result<(), usize> {
        let stack_bytes = self.code_stack.0;
        // The optimized tier if it took over and its frame fits the stack, else the quick one
        // (the stack was made for one of them).
        let Some(entry) = code.entry_within(stack_bytes) else {
            let why = format!("no compiled code fits a stack of {stack_bytes} bytes");
            self.hosts[0].fault = Some(Fault::internal(0, why));
            return Err(0);
        };
        if waves == 0 {
            return Ok(());
        }
        let first: *mut WaveCtx = &mut *self.ctxs[0];
        // SAFETY: the contexts of the `waves` waves are fully initialised and chained by
        // `next_wave` (`prepare`), each pointing to live device/local memory and host state;
        // the code was compiled for this layout and runs the chain's waves in turn. It runs
        // on the worker's stack for code, which has `entry.stack_needed()` bytes or more: its
        // frame (probed page by page, one frame for all the waves) and below it the margin for
        // the helpers it calls (above it the engine's few frames, also in the margin).
        let st = unsafe { (entry.function)(first) };
        if st != status::DONE {
            // The wave that stopped is the one that recorded why (waves without barriers
            // touch their host state only to fail, and a failure ends the chain).
            return Err(self.hosts[..waves].iter().position(|h| h.fault.is_some()).unwrap_or(0));
        }
        Ok(())
    }

    /// A stack with room for `entry` for wave `wave`'s fiber; the wave's fault says why
    /// there is none.
    fn fiber_stack(&mut self, entry: EntryCode, wave: usize) -> Result<WaveStack, usize> {
        self.take_stack(entry.stack_needed()).map_err(|why| {
            self.hosts[wave].fault = Some(Fault::internal(0, why));
            wave
        })
    }

    /// Kernels with barriers: one fiber per wave, on a stack made for `entry`; rounds in wave
    /// order, each wave running until its next barrier or its end. Returns the failing wave.
    fn run_fibers(&mut self, entry: EntryCode, waves: usize) -> Result<(), usize> {
        let abort = AtomicBool::new(false);
        let mut fibers: Vec<Option<Coroutine<(), (), u32, DefaultStack>>> = Vec::with_capacity(waves);
        let mut stack_bytes = Vec::with_capacity(waves);
        for wave in 0..waves {
            // On failure the fibers made so far, which never ran, go with their stacks.
            let stack = self.fiber_stack(entry, wave)?;
            stack_bytes.push(stack.bytes());
            let ctx: *mut WaveCtx = &mut *self.ctxs[wave];
            let host: *mut WaveHost = &mut *self.hosts[wave];
            // SAFETY: `host` lives in `self.hosts`, untouched until the fibers finish.
            unsafe {
                (*host).abort = &abort;
                (*host).stack_limit = stack.limit();
            }
            fibers.push(Some(Coroutine::with_stack(stack.stack, move |y: &Yielder<(), ()>, ()| {
                // SAFETY: as above; the yielder outlives the call (it belongs to this fiber).
                unsafe { (*host).yielder = y };
                // SAFETY: as in `run_waves`, for this wave alone (`prepare` leaves its
                // `next_wave` null where the kernel has barriers, so the call runs no other
                // wave); this fiber's stack has `entry.stack_needed()` bytes or more.
                unsafe { (entry.function)(ctx) }
            })));
        }
        let mut failed = None;
        let mut started = vec![false; waves];
        let mut running = waves;
        while running > 0 {
            for (wave, slot) in fibers.iter_mut().enumerate() {
                let Some(fiber) = slot else { continue };
                if failed.is_some() && !started[wave] {
                    // Never ran: nothing to unwind; it must not run now.
                    *slot = None;
                    running -= 1;
                    continue;
                }
                started[wave] = true;
                // After a failure, suspended waves resume only to see the abort and return.
                if let CoroutineResult::Return(st) = fiber.resume(()) {
                    if st == status::ERROR && failed.is_none() {
                        failed = Some(wave);
                        abort.store(true, Ordering::Relaxed);
                    }
                    if let Some(f) = slot.take() {
                        self.stacks.push(WaveStack::from_parts(f.into_stack(), stack_bytes[wave]));
                    }
                    running -= 1;
                }
            }
        }
        match failed {
            Some(w) => Err(w),
            None => Ok(()),
        }
    }
}

/// The Cranelift JIT as a [`wave_runtime::Engine`].
#[derive(Clone, Copy, Debug, Default)]
pub struct JitEngine {
    /// Compile code that counts everything `--stats` prints (slower code).
    stats: bool,
    /// What [`wave_runtime::Engine::run`] does with a kernel too large for the JIT.
    pub too_large: TooLargePolicy,
}

/// What the JIT engine does with a kernel it declines as too large ([`JitError::TooLarge`]:
/// see [`crate::compiler::COMPILE_BUDGET`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TooLargePolicy {
    /// Run it on the interpreter, with a note on stderr and in [`RunReport::fallback`].
    #[default]
    Interpret,
    /// Fail with the error: where the JIT itself is under test (conformance, fuzz-diff, tests,
    /// benchmarks), so it is never silently replaced.
    Fail,
}

/// The JIT engine the CLI's `run` uses (and the default for library callers): declined
/// kernels run on the interpreter.
pub fn jit_engine() -> JitEngine {
    JitEngine::new()
}

impl JitEngine {
    /// Declined kernels run on the interpreter.
    pub const fn new() -> JitEngine {
        JitEngine { stats: false, too_large: TooLargePolicy::Interpret }
    }

    /// Declined kernels fail: only the JIT ever runs.
    pub const fn strict() -> JitEngine {
        JitEngine { stats: false, too_large: TooLargePolicy::Fail }
    }

    /// This engine, compiling code that counts (`true`) or does not count everything
    /// `--stats` prints. Without, `run` counts instructions only, and only under an
    /// instruction limit.
    pub fn with_stats(self, stats: bool) -> JitEngine {
        JitEngine { stats, ..self }
    }

    /// Whether `run` fills every counter of its `Stats`.
    pub fn counts_stats(&self) -> bool {
        self.stats
    }

    /// Run on the JIT; or, with `decline`, only say why not if the JIT declines the kernel
    /// ([`JitError::TooLarge`]) or the dispatch is too small to be worth a compile.
    fn run_or_decline(
        &self,
        kernel: &ValidKernel,
        dispatch: &wave_runtime::Dispatch,
        device: &mut wave_runtime::Device,
        decline: bool,
    ) -> Result<Ran, RunError> {
        let name = kernel.meta.name.as_str();
        // Checked first either way: a dispatch error comes before the JIT declines.
        let launch = wave_runtime::resolve(kernel, dispatch, device)
            .map_err(|e| RunError::before_run(name, RunErrorKind::Dispatch(e)))?;
        let flags = flags_for(&launch, self.stats);
        // One look into the cache: a cached dispatch (the common case) hashes its kernel once.
        let cached = cache::cached(kernel, flags);
        // Unchecked code has no interpreter twin (the interpreter always checks bounds).
        if decline && !launch.unchecked && cached.is_none() {
            let threads = launch.workgroups.saturating_mul(launch.threads_per_workgroup as u64);
            // A kernel the JIT declines says so (below), however small the dispatch.
            let fits = crate::compiler::check_size(kernel, launch.wave_width).is_ok();
            if let Some(why) = tiers::small_dispatch(kernel, threads).filter(|_| fits) {
                return Ok(Ran::Small(why));
            }
        }
        let compiled = match cached {
            Some(code) => code.map(|code| (code, false)),
            None => cache::compile_or_reuse(kernel, flags),
        };
        let (code, compiled_now) = match compiled {
            Err(JitError::TooLarge(why)) if decline => return Ok(Ran::Declined(why)),
            compiled => compiled.map_err(|e| RunError::before_run(name, jit_error_kind(e)))?,
        };
        let view = DeviceView { size: device.size(), window: device.window_ptr() };
        let stats = run_compiled(&code, &launch, self.stats, view).map_err(|f| f.into_error(name))?;
        let compile = CompileReport { first_code: code.compile_time, compiled_now, tiers: code.tiers() };
        Ok(Ran::Compiled(Box::new(RunReport { stats, fallback: None, compile: Some(compile) })))
    }
}

impl wave_runtime::Engine for JitEngine {
    fn name(&self) -> &'static str {
        "jit"
    }

    /// Stats: workgroups and waves; the instructions under an instruction limit; everything
    /// with [`JitEngine::with_stats`] (the counting costs time, so only then). The report's
    /// `compile` tells how the code came to be; `fallback` is set when the interpreter ran
    /// the kernel instead.
    fn run(
        &self,
        kernel: &ValidKernel,
        dispatch: &wave_runtime::Dispatch,
        device: &mut wave_runtime::Device,
    ) -> Result<RunReport, RunError> {
        let interpreted = |device: &mut wave_runtime::Device, why: String| {
            let report = wave_runtime::Interpreter::new().run(kernel, dispatch, device)?;
            Ok(RunReport { fallback: Some(why), ..report })
        };
        match self.run_or_decline(kernel, dispatch, device, self.too_large == TooLargePolicy::Interpret)? {
            Ran::Compiled(report) => Ok(*report),
            // Declined before anything ran: too many instructions, or a stack frame too large.
            Ran::Declined(why) => {
                let note = format!("{why}: running it on the interpreter");
                eprintln!("note: {note}");
                interpreted(device, note)
            }
            // The interpreter is the JIT's exact twin: same results, same errors.
            Ran::Small(why) => interpreted(device, why),
        }
    }
}

#[cfg(test)]
mod stack_tests;

#[cfg(all(test, target_os = "linux"))]
mod pinning_tests {
    use super::pool;

    /// The CPUs the calling thread may run on, as the kernel lists them ("0-1", "1").
    fn allowed_cpus() -> String {
        let status = std::fs::read_to_string("/proc/thread-self/status").unwrap_or_default();
        let line = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:"));
        line.unwrap_or_default().trim().to_string()
    }

    #[test]
    fn pinned_pools_keep_each_worker_on_one_core() {
        let cores = core_affinity::get_core_ids().unwrap_or_default();
        if cores.len() < 2 {
            eprintln!(
                "TEST DID NOT RUN: pinning needs two cores the process may use, it has {}",
                cores.len()
            );
            return;
        }
        let threads = 2;
        let on = |pinned| -> Vec<String> {
            let pool = pool(threads, pinned).unwrap_or_else(|e| panic!("{e}"));
            let (tx, rx) = std::sync::mpsc::channel();
            pool.broadcast(|ctx| tx.send((ctx.index(), allowed_cpus())).unwrap_or(()));
            let mut seen: Vec<(usize, String)> = rx.try_iter().collect();
            seen.sort();
            seen.into_iter().map(|(_, cpus)| cpus).collect()
        };
        let expected: Vec<String> = cores[..threads].iter().map(|c| c.id.to_string()).collect();
        assert_eq!(on(true), expected, "worker i runs on core i only");
        // Unpinned workers may run anywhere the process may.
        assert!(on(false).iter().all(|cpus| *cpus == allowed_cpus()), "{:?}", on(false));
    }
}
