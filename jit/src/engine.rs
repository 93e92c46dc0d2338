//! Running compiled waves: workgroups over rayon workers, waves of a workgroup on one worker,
//! fibers for kernels with barriers. The schedule is the engine contract's (the documentation
//! of [`wave_runtime`]), so results match the interpreter bit for bit: waves in order, each
//! until it reaches a barrier or ends.

use crate::compiler::{compile, compile_or_reuse, Compiled};
use crate::ctx::{status, WaveCtx, MAX_LANES};
use crate::error::JitError;
use crate::helpers::{Fault, WaveHost};
use crate::translate::Flags;
use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use wave_isa::{Kernel, SpecialReg};

/// Bytes of stack per wave fiber (spilled registers of a W=64 wave fit many times over).
const FIBER_STACK: usize = 1 << 20;

/// Most fiber stacks kept for reuse (enough for every wave of the largest workgroup on a
/// many-core host; 1 MiB of address space each, touched pages only).
const POOLED_STACKS: usize = 512;

/// Fiber stacks kept between workers and dispatches. Making one maps 1 MiB and a guard page
/// and freeing it unmaps them, which flushes the TLB of every core: rayon makes a worker per
/// job, so short dispatches of barrier kernels spent much of their time in the kernel there.
fn stack_pool() -> &'static Mutex<Vec<DefaultStack>> {
    static POOL: OnceLock<Mutex<Vec<DefaultStack>>> = OnceLock::new();
    POOL.get_or_init(|| Mutex::new(Vec::new()))
}

/// A dispatch, resolved (all overrides applied, all limits checked).
#[derive(Clone, Debug)]
pub struct RunParams {
    pub grid: [u32; 3],
    pub workgroup: [u32; 3],
    pub width: u32,
    pub local_memory: u32,
    pub initial_registers: Vec<(u8, u32)>,
    /// Per workgroup; 0 = unlimited.
    pub max_instructions: u64,
    /// Worker threads; 0 = all cores.
    pub threads: usize,
    pub checked: bool,
    /// Count everything `--stats` prints (code compiled for it).
    pub stats: bool,
    /// Bytes of device memory.
    pub device_size: u64,
}

impl RunParams {
    /// What the code for this dispatch is compiled for.
    pub fn flags(&self) -> Flags {
        Flags {
            width: self.width,
            checked: self.checked,
            fuel: self.max_instructions > 0 || self.stats,
            stats: self.stats,
            workgroup: self.workgroup,
            window_wraps: crate::translate::window_wraps(self.device_size),
        }
    }

    fn of(launch: &wave_runtime::Launch, stats: bool) -> RunParams {
        RunParams {
            grid: launch.grid,
            workgroup: launch.workgroup,
            width: launch.wave_width,
            local_memory: launch.local_memory,
            initial_registers: launch.initial_registers.clone(),
            max_instructions: launch.max_instructions,
            threads: launch.threads,
            checked: !launch.unchecked,
            stats,
            device_size: launch.device_size,
        }
    }
}

/// Where and why a dispatch stopped.
#[derive(Clone, Debug, PartialEq)]
pub struct RunFailure {
    pub workgroup: [u32; 3],
    pub wave: u32,
    pub fault: Fault,
}

/// Counters of one run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunCounts {
    pub workgroups: u64,
    pub waves: u64,
    /// Nanoseconds spent compiling (0 when the code came from the cache).
    pub compile_ns: u64,
    /// What the compiled code counted: the instructions when it had a budget (`Flags::fuel`),
    /// everything but workgroups and waves with `Flags::stats` (zeros otherwise).
    pub counted: wave_runtime::Stats,
}

#[derive(Debug)]
pub enum RunOutcome {
    Failed(RunFailure),
    Jit(JitError),
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

/// Run a kernel on the JIT.
pub fn run_kernel(kernel: &Kernel, p: &RunParams, device: DeviceView) -> Result<RunCounts, RunOutcome> {
    let (code, compiled_now) = compile_or_reuse(kernel, p.flags()).map_err(RunOutcome::Jit)?;
    let total = p.grid.iter().map(|&g| g as u64).product::<u64>();
    let tpw: u32 = p.workgroup.iter().product();
    let waves = tpw.div_ceil(p.width) as u64;
    let mut counts = RunCounts {
        workgroups: total,
        waves: total * waves,
        compile_ns: if compiled_now { code.compile_time.as_nanos() as u64 } else { 0 },
        counted: wave_runtime::Stats::default(),
    };
    if total == 0 || tpw == 0 {
        return Ok(counts);
    }
    let wg_id = |i: u64| {
        let (gx, gy) = (p.grid[0] as u64, p.grid[1] as u64);
        [(i % gx) as u32, (i / gx % gy) as u32, (i / (gx * gy)) as u32]
    };
    let threads = if p.threads == 0 { wave_runtime::host_cores() } else { p.threads };
    let tally = Arc::new(Mutex::new(wave_runtime::Stats::default()));
    let tallied = |counts: &mut RunCounts| {
        counts.counted = std::mem::take(&mut *tally.lock().unwrap_or_else(|e| e.into_inner()));
    };
    if threads <= 1 || total == 1 {
        let mut worker = Worker::new(p, &tally);
        for i in 0..total {
            worker.run_workgroup(&code, p, wg_id(i), device).map_err(RunOutcome::Failed)?;
        }
        drop(worker);
        tallied(&mut counts);
        return Ok(counts);
    }
    let pool = pool(threads).map_err(RunOutcome::Jit)?;
    // Workers claim runs of workgroup ids in order from one counter, and stop claiming and
    // running once any workgroup failed: a fault in a huge grid ends the dispatch at once.
    let next = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let first: Mutex<Option<(u64, RunFailure)>> = Mutex::new(None);
    pool.broadcast(|_| {
        let mut worker = Worker::new(p, &tally);
        while let Some(ids) = claim(&next, total, threads as u64) {
            for i in ids {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                if let Err(f) = worker.run_workgroup(&code, p, wg_id(i), device) {
                    stop.store(true, Ordering::Relaxed);
                    let mut first = first.lock().unwrap_or_else(|e| e.into_inner());
                    // The failure reported is the one of the lowest workgroup that ran.
                    if first.as_ref().is_none_or(|(j, _)| i < *j) {
                        *first = Some((i, f));
                    }
                    return;
                }
            }
        }
    });
    match first.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some((_, f)) => Err(RunOutcome::Failed(f)),
        None => {
            tallied(&mut counts);
            Ok(counts)
        }
    }
}

/// Most workgroup ids one claim takes: a worker sees another's failure before each
/// workgroup anyway; this bounds how far past the other workers' ids a claim reaches.
pub const MAX_CLAIM: u64 = 64;

/// The next run of workgroup ids for a worker, or `None` when all are taken: a quarter of
/// each worker's share of what is left (guided scheduling: long runs first, single ids at the
/// end to balance), at most [`MAX_CLAIM`]. The counter never passes `total`.
fn claim(next: &AtomicU64, total: u64, workers: u64) -> Option<std::ops::Range<u64>> {
    let size = |start: u64| ((total - start) / workers.max(1).saturating_mul(4)).clamp(1, MAX_CLAIM);
    let start =
        next.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| (n < total).then(|| n + size(n))).ok()?;
    Some(start..start + size(start))
}

/// A rayon pool per thread count, built once.
fn pool(threads: usize) -> Result<Arc<rayon::ThreadPool>, JitError> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let mut pools = POOLS.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = pools.get(&threads) {
        return Ok(p.clone());
    }
    let p = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| JitError::Host(format!("cannot start {threads} worker threads: {e}")))?,
    );
    pools.insert(threads, p.clone());
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
    stacks: Vec<DefaultStack>,
    /// What this worker's workgroups counted, added to `tally` when the worker is done.
    counted: wave_runtime::Stats,
    tally: Arc<Mutex<wave_runtime::Stats>>,
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.tally.lock().unwrap_or_else(|e| e.into_inner()).merge(&self.counted);
        if let Ok(mut pool) = stack_pool().lock() {
            let room = POOLED_STACKS.saturating_sub(pool.len());
            pool.extend(self.stacks.drain(..).take(room));
        }
    }
}

impl Worker {
    fn new(p: &RunParams, tally: &Arc<Mutex<wave_runtime::Stats>>) -> Worker {
        let pow2 = (p.local_memory.max(1) as usize).next_power_of_two();
        Worker {
            local: vec![0; pow2 + 16],
            local_mask: (pow2 - 1) as u32,
            ctxs: Vec::new(),
            hosts: Vec::new(),
            stacks: Vec::new(),
            counted: wave_runtime::Stats::default(),
            tally: tally.clone(),
        }
    }

    /// Fill the contexts of a workgroup's waves. What is the same for every workgroup of the
    /// dispatch (thread ids, limits, arguments) is set once, when a wave's context is made.
    fn prepare(
        &mut self,
        code: &Compiled,
        p: &RunParams,
        wg: [u32; 3],
        device: DeviceView,
        fuel: *mut i64,
    ) -> usize {
        let tpw: u32 = p.workgroup.iter().product();
        let waves = tpw.div_ceil(p.width) as usize;
        let w = p.width;
        while self.ctxs.len() < waves {
            let wave = self.ctxs.len();
            let mut c = WaveCtx::zeroed();
            self.hosts.push(Box::new(WaveHost::new(w)));
            self.init_wave(&mut c, p, wave, waves, device);
            self.ctxs.push(c);
        }
        // Every workgroup starts with zeroed local memory; one that cannot write it finds it
        // as the buffer was made.
        if code.writes_local {
            self.local.fill(0);
        }
        for wave in 0..waves {
            let host = &mut self.hosts[wave];
            **host = WaveHost::new(w);
            let c = &mut self.ctxs[wave];
            c.fuel = fuel;
            c.lazy_loops = &code.lazy;
            if p.stats {
                c.counters = Default::default();
            }
            c.special[SpecialReg::WorkgroupIdX as usize..=SpecialReg::WorkgroupIdZ as usize]
                .copy_from_slice(&wg);
        }
        waves
    }

    /// The parts of wave `wave`'s context that no workgroup changes.
    fn init_wave(&mut self, c: &mut WaveCtx, p: &RunParams, wave: usize, waves: usize, device: DeviceView) {
        let tpw: u32 = p.workgroup.iter().product();
        let w = p.width;
        let mut init = [0u32; 256];
        for &(r, v) in &p.initial_registers {
            init[r as usize] = v;
        }
        c.device_base = device.window;
        c.local_base = self.local.as_mut_ptr();
        c.host = &mut *self.hosts[wave];
        c.local_mask = self.local_mask;
        c.live_lanes = (tpw - wave as u32 * w).min(w);
        c.checked = p.checked as u32;
        c.device_size = device.size;
        c.local_size = p.local_memory as u64;
        c.device_limit = WaveCtx::limits_for(device.size);
        c.local_limit = WaveCtx::limits_for(p.local_memory as u64);
        let mut sr = [0u32; 20];
        sr[SpecialReg::WaveId as usize] = wave as u32;
        sr[SpecialReg::WorkgroupSizeX as usize..=SpecialReg::WorkgroupSizeZ as usize]
            .copy_from_slice(&p.workgroup);
        sr[SpecialReg::GridSizeX as usize..=SpecialReg::GridSizeZ as usize].copy_from_slice(&p.grid);
        sr[SpecialReg::WaveWidth as usize] = w;
        sr[SpecialReg::NumWaves as usize] = waves as u32;
        sr[SpecialReg::MmaSupported as usize] = wave_runtime::caps::CAP_MMA as u32;
        sr[SpecialReg::MmaM as usize] = wave_runtime::caps::MMA_M;
        sr[SpecialReg::MmaN as usize] = wave_runtime::caps::MMA_N;
        sr[SpecialReg::MmaK as usize] = wave_runtime::caps::MMA_K;
        c.special = sr;
        let [sx, sy, _] = p.workgroup;
        for lane in 0..MAX_LANES {
            let t = wave as u32 * w + lane as u32;
            c.thread_id[0][lane] = t % sx;
            c.thread_id[1][lane] = t / sx % sy;
            c.thread_id[2][lane] = t / (sx * sy);
        }
        c.init_regs = init;
    }

    fn run_workgroup(
        &mut self,
        code: &Compiled,
        p: &RunParams,
        wg: [u32; 3],
        device: DeviceView,
    ) -> Result<(), RunFailure> {
        let budget: i64 =
            if p.max_instructions == 0 { i64::MAX } else { p.max_instructions.min(i64::MAX as u64) as i64 };
        let mut fuel = budget;
        let waves = self.prepare(code, p, wg, device, &mut fuel);
        let fail = |host: &WaveHost, wave: usize| RunFailure {
            workgroup: wg,
            wave: wave as u32,
            fault: host.fault.clone().unwrap_or(Fault {
                pc: 0,
                lane: None,
                kind: crate::helpers::FaultKind::Internal("wave failed without a recorded fault".into()),
            }),
        };
        if !code.has_barrier {
            for wave in 0..waves {
                let ctx: *mut WaveCtx = &mut *self.ctxs[wave];
                // SAFETY: the context is fully initialised for this wave and points to live
                // device/local memory and host state; the code was compiled for this layout.
                let st = unsafe { (code.entry())(ctx) };
                if st != status::DONE {
                    return Err(fail(&self.hosts[wave], wave));
                }
            }
        } else {
            self.run_fibers(code, waves).map_err(|wave| fail(&self.hosts[wave], wave))?;
        }
        self.count_workgroup(p, waves, budget - fuel);
        Ok(())
    }

    /// Add a finished workgroup's counts (`used`: the budget its code took).
    fn count_workgroup(&mut self, p: &RunParams, waves: usize, used: i64) {
        self.counted.instructions += used as u64;
        if p.stats {
            for c in &self.ctxs[..waves] {
                c.add_counters_to(&mut self.counted);
            }
            // Every round but the last ends in a release, and each wave waited at every
            // release until it ended: the releases are the most barriers a wave waited at.
            self.counted.barriers += self.hosts[..waves].iter().map(|h| h.barriers).max().unwrap_or(0);
        }
    }

    /// Kernels with barriers: one fiber per wave; rounds in wave order, each wave running
    /// until its next barrier or its end. Returns the failing wave.
    fn run_fibers(&mut self, code: &Compiled, waves: usize) -> Result<(), usize> {
        let abort = AtomicBool::new(false);
        let entry = code.entry();
        let mut fibers: Vec<Option<Coroutine<(), (), u32, DefaultStack>>> = Vec::with_capacity(waves);
        for wave in 0..waves {
            let stack = match self.stacks.pop().or_else(|| stack_pool().lock().ok()?.pop()) {
                Some(s) => s,
                None => match DefaultStack::new(FIBER_STACK) {
                    Ok(s) => s,
                    Err(_) => {
                        self.hosts[wave].fault = Some(Fault {
                            pc: 0,
                            lane: None,
                            kind: crate::helpers::FaultKind::Internal("cannot allocate a fiber stack".into()),
                        });
                        return Err(wave);
                    }
                },
            };
            let ctx: *mut WaveCtx = &mut *self.ctxs[wave];
            let host: *mut WaveHost = &mut *self.hosts[wave];
            // SAFETY: `host` lives in `self.hosts`, untouched until the fibers finish.
            unsafe { (*host).abort = &abort };
            fibers.push(Some(Coroutine::with_stack(stack, move |y: &Yielder<(), ()>, ()| {
                // SAFETY: as above; the yielder outlives the call (it belongs to this fiber).
                unsafe { (*host).yielder = y };
                // SAFETY: see `run_workgroup`.
                unsafe { entry(ctx) }
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
                        self.stacks.push(f.into_stack());
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
    /// Run it on the interpreter, with a note on stderr and in [`wave_runtime::Stats::fallback`].
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

    /// The compiled code `run` uses for this dispatch (from the cache once it ran).
    pub fn code_for(
        &self,
        kernel: &Kernel,
        dispatch: &wave_runtime::Dispatch,
        device: &wave_runtime::Device,
    ) -> Result<Arc<Compiled>, String> {
        let launch = wave_runtime::resolve(kernel, dispatch, device).map_err(|e| e.to_string())?;
        compile(kernel, RunParams::of(&launch, self.stats).flags()).map_err(|e| e.to_string())
    }

    /// Run and also return the JIT's own counters (compile time, waves).
    pub fn run_counted(
        &self,
        kernel: &Kernel,
        dispatch: &wave_runtime::Dispatch,
        device: &mut wave_runtime::Device,
    ) -> Result<RunCounts, wave_runtime::RunError> {
        use wave_runtime::{RunError, RunErrorKind, Space};
        let name = kernel.meta.name.as_str();
        let launch = wave_runtime::resolve(kernel, dispatch, device)
            .map_err(|e| RunError::before_run(name, RunErrorKind::Dispatch(e)))?;
        let params = RunParams::of(&launch, self.stats);
        let view = DeviceView { size: device.size(), window: device.window_ptr() };
        run_kernel(kernel, &params, view).map_err(|outcome| match outcome {
            RunOutcome::Jit(e) => {
                let kind = match e {
                    JitError::Unsupported(what) | JitError::TooLarge(what) => RunErrorKind::Unsupported(what),
                    other => RunErrorKind::Unsupported(format!("JIT: {other}")),
                };
                RunError::before_run(name, kind)
            }
            RunOutcome::Failed(f) => {
                let kind = match f.fault.kind {
                    crate::helpers::FaultKind::OutOfBounds { space, address, bytes, size } => {
                        let space = match space {
                            crate::helpers::MemSpace::Local => Space::Local,
                            crate::helpers::MemSpace::Device => Space::Device,
                        };
                        RunErrorKind::OutOfBounds { space, address, bytes, size }
                    }
                    crate::helpers::FaultKind::InstructionLimit => {
                        RunErrorKind::InstructionLimit { limit: launch.max_instructions }
                    }
                    crate::helpers::FaultKind::CallDepth => {
                        RunErrorKind::CallDepth { limit: wave_isa::ir::MAX_CALL_DEPTH }
                    }
                    crate::helpers::FaultKind::Unsupported(what) => RunErrorKind::Unsupported(what),
                    crate::helpers::FaultKind::Internal(what) => {
                        RunErrorKind::Unsupported(format!("JIT internal: {what}"))
                    }
                };
                RunError {
                    kernel: name.to_string(),
                    workgroup: f.workgroup,
                    wave: f.wave,
                    lane: f.fault.lane,
                    pc: f.fault.pc,
                    kind,
                }
            }
        })
    }
}

impl wave_runtime::Engine for JitEngine {
    fn name(&self) -> &'static str {
        "jit"
    }

    /// Stats: workgroups and waves; the instructions under an instruction limit; everything
    /// with [`JitEngine::with_stats`] (the counting costs time, so only then).
    fn run(
        &self,
        kernel: &Kernel,
        dispatch: &wave_runtime::Dispatch,
        device: &mut wave_runtime::Device,
    ) -> Result<wave_runtime::Stats, wave_runtime::RunError> {
        if self.too_large == TooLargePolicy::Interpret {
            // Declined before anything runs (the dispatch is checked first either way).
            let launch = wave_runtime::resolve(kernel, dispatch, device).map_err(|e| {
                wave_runtime::RunError::before_run(&kernel.meta.name, wave_runtime::RunErrorKind::Dispatch(e))
            })?;
            if let Err(JitError::TooLarge(why)) = crate::compiler::check_size(kernel, launch.wave_width) {
                let note = format!("{why}: running it on the interpreter");
                eprintln!("note: {note}");
                let stats = wave_runtime::Interpreter::new().run(kernel, dispatch, device)?;
                return Ok(wave_runtime::Stats { fallback: Some(note), ..stats });
            }
        }
        let counts = self.run_counted(kernel, dispatch, device)?;
        Ok(wave_runtime::Stats { workgroups: counts.workgroups, waves: counts.waves, ..counts.counted })
    }
}
