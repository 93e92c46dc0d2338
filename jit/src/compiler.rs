//! Compiling a kernel for one (W, flags) into machine code, with an in-process cache.

use crate::abi::{entry_signature, loop_fn_signature, LoopCode, LoopFnPtr, LoopFunctions, LoopTable, WaveFn};
pub use crate::abi::{MAX_FRAME, STACK_MARGIN};
use crate::error::JitError;
use crate::helpers;
use crate::translate::env::CtxEnv;
use crate::translate::loop_fn::{prune_loop_state, LoopFn};
use crate::translate::{Analyses, Flags, Translator};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::Module;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use wave_isa::{Kernel, StmtKind, ValidKernel};
pub use wave_runtime::Tiers;

/// The runtime the code is compiled for: the context layout of [`crate::abi`] and the
/// helpers of [`crate::helpers`].
static RUNTIME_ENV: CtxEnv = CtxEnv::new(helpers::address);

/// One compiled kernel.
///
/// A large entry function is compiled in two tiers: first with Cranelift's single-pass
/// register allocator (a fraction of the compile time, slower code), then, on a thread of its
/// own, with the backtracking allocator; the optimized code takes over for the waves that
/// start after it is ready. Both tiers come from the same CLIF, so they compute the same
/// results; the register allocator is most of the compile time of a large kernel (a GEMM's
/// chunk-major loops at W = 32), and a short dispatch should not wait for it.
pub struct Compiled {
    /// The first tier's entry function (the only one unless tiered).
    first: EntryCode,
    /// The optimized tier's entry function, once it took over.
    second: OnceLock<EntryCode>,
    /// The loop functions the entry calls on a bail-out ([`LazyLoops`], behind
    /// `WaveCtx::lazy_loops`).
    pub lazy: LoopTable,
    /// Whether the kernel has barriers (waves then run as fibers).
    pub has_barrier: bool,
    /// Whether the kernel may write local memory (otherwise its local buffer, zeroed when
    /// made, needs no zeroing between workgroups).
    pub writes_local: bool,
    /// Time until the first runnable code: translation and the first tier.
    pub compile_time: Duration,
    /// The first tier was the quick one.
    quick_first: bool,
    /// When the optimized tier took over (time since the compile began), or why it did not;
    /// set with the first tier when that is the optimized one (or the only one).
    optimized: OnceLock<Result<Duration, String>>,
    /// Own the code memory of both tiers (waves may still run the first).
    modules: Mutex<Vec<ModuleOwner>>,
}

impl Compiled {
    /// The entry function of the best tier ready now.
    pub fn entry(&self) -> EntryCode {
        *self.second.get().unwrap_or(&self.first)
    }

    /// The entry function of the best tier ready now that fits a stack of `stack_bytes`
    /// ([`EntryCode::stack_needed`]): the optimized tier, unless its frame is larger than the
    /// stack made before it was ready.
    pub fn entry_within(&self, stack_bytes: usize) -> Option<EntryCode> {
        let fits = |code: &&EntryCode| code.stack_needed() <= stack_bytes;
        self.second.get().filter(fits).or(Some(&self.first).filter(fits)).copied()
    }

    /// Wait until the optimized tier runs; its time since the compile began.
    pub fn wait_optimized(&self) -> Result<Duration, String> {
        self.optimized.wait().clone()
    }

    /// How the code came to be, as far as is settled now (see [`Compiled::wait_optimized`]).
    pub fn tiers(&self) -> Tiers {
        match (self.quick_first, self.optimized.get()) {
            (false, _) => Tiers::One,
            (true, None) => Tiers::Pending,
            (true, Some(Ok(t))) => Tiers::OptimizedAfter(*t),
            (true, Some(Err(why))) => Tiers::QuickOnly(why.clone()),
        }
    }

    /// Whether the first tier was the quick one.
    pub fn tiered(&self) -> bool {
        self.quick_first
    }

    fn install_optimized(&self, result: Result<(EntryCode, ModuleOwner), String>, begun: Instant) {
        let time = result.map(|(entry, module)| {
            self.modules.lock().unwrap_or_else(|e| e.into_inner()).push(module);
            let _ = self.second.set(entry);
            begun.elapsed()
        });
        let _ = self.optimized.set(time);
    }
}

/// A compiled entry function and the stack its frame takes.
#[derive(Clone, Copy, Debug)]
pub struct EntryCode {
    pub function: WaveFn,
    /// Bytes of stack the function's frame takes, return address included (`frame_bytes`).
    pub frame: usize,
}

impl EntryCode {
    /// Bytes of stack a wave starting in this function needs: its frame and [`STACK_MARGIN`].
    pub fn stack_needed(&self) -> usize {
        self.frame + STACK_MARGIN
    }
}

/// Bytes of stack the function just compiled in `ctx` takes: its frame below the frame
/// pointer, then the saved frame pointer and the return address.
fn frame_bytes(ctx: &cranelift_codegen::Context) -> Result<usize, JitError> {
    let layout = ctx.compiled_code().and_then(|code| code.buffer.frame_layout());
    let layout = layout.ok_or_else(|| JitError::Codegen("no frame layout for a compiled function".into()))?;
    Ok(layout.frame_to_fp_offset as usize + 16)
}

/// In MiB with one decimal, for messages.
fn mib(bytes: usize) -> String {
    format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
}

/// How entry functions are compiled (see [`Compiled`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tiering {
    /// Large functions quick first and optimized in the background; small ones optimized.
    Auto,
    /// The quick tier only (to test its code).
    QuickOnly,
    /// The optimized tier only.
    OptimizedOnly,
}

/// 0: not chosen by `set_tiering` (then `WAVE_JIT_TIERS` decides), else `Tiering as u8 + 1`.
static TIERING: AtomicU8 = AtomicU8::new(0);

/// Choose how entry functions compiled from now on are tiered (process-wide).
pub fn set_tiering(tiering: Tiering) {
    TIERING.store(tiering as u8 + 1, Ordering::Relaxed);
}

/// The tiering in force: `set_tiering`'s, or the developer aid `WAVE_JIT_TIERS=quick|optimized`
/// (for running a whole suite in one tier), or `Auto`.
fn tiering() -> Tiering {
    static FROM_ENV: OnceLock<Tiering> = OnceLock::new();
    match TIERING.load(Ordering::Relaxed) {
        1 => Tiering::Auto,
        2 => Tiering::QuickOnly,
        3 => Tiering::OptimizedOnly,
        _ => *FROM_ENV.get_or_init(|| match std::env::var("WAVE_JIT_TIERS").as_deref() {
            Ok("quick") => Tiering::QuickOnly,
            Ok("optimized") => Tiering::OptimizedOnly,
            _ => Tiering::Auto,
        }),
    }
}

/// Entry functions of at least this many CLIF instructions get a quick tier first (below it
/// the optimized compile takes a few milliseconds).
const QUICK_TIER_MIN_INSTS: usize = 2500;

/// Owns a finalised JIT module: its code lives as long as this, and its memory is given back
/// when this is dropped. A `ModuleOwner` lives in a [`Compiled`] (an entry tier, or a loop
/// function of its [`LazyLoops`]), and code from it runs only while its caller holds an
/// `Arc<Compiled>`: a dispatch holds one from before its first wave until after its last, and
/// the optimized tier's thread receives one before it installs its code.
struct ModuleOwner(Option<JITModule>);

impl ModuleOwner {
    fn new(module: JITModule) -> ModuleOwner {
        LIVE_MODULES.fetch_add(1, Ordering::Relaxed);
        ModuleOwner(Some(module))
    }
}

impl Drop for ModuleOwner {
    fn drop(&mut self) {
        if let Some(module) = self.0.take() {
            // SAFETY: dropped with its `Compiled` (or before it ever got one: a tier that failed
            // a check), when no `Arc<Compiled>` is left (see the type's documentation), so no
            // function of the module is running and none of its pointers is called again.
            unsafe { module.free_memory() };
            LIVE_MODULES.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

// SAFETY: the module is never used again after finalisation; it only owns the executable
// memory, which is immutable and may be shared and called from any thread, and is freed
// once, by the owner's drop.
unsafe impl Send for ModuleOwner {}
// SAFETY: as above; no method is called on it through a shared reference.
unsafe impl Sync for ModuleOwner {}

/// JIT modules whose code memory is held now (entry tiers and loop functions of every
/// `Compiled` alive).
static LIVE_MODULES: AtomicUsize = AtomicUsize::new(0);

/// How many JIT modules hold code memory now: what the compile cache keeps, plus code that
/// runs or was compiled outside the cache (bounded by [`CACHE_ENTRIES`] when no one holds
/// other code).
pub fn live_modules() -> usize {
    LIVE_MODULES.load(Ordering::Relaxed)
}

/// The most entries (a kernel at one set of flags each) the compile cache keeps; beyond it the
/// least recently used one goes, and its code memory with it once no dispatch runs it. A
/// process that loads kernels without end (a runtime embedding wave-jit) thus keeps its memory
/// bounded.
pub const CACHE_ENTRIES: usize = 256;

struct CacheEntry {
    hash: u64,
    flags: Flags,
    kernel: ValidKernel,
    /// When it was last looked up or added (a tick of [`cache`]'s counter).
    last_used: u64,
    /// Errors too: a kernel declined for its frame is not compiled again at every dispatch.
    compiled: Result<Arc<Compiled>, JitError>,
}

/// The compile cache: at most [`CACHE_ENTRIES`] entries, and a use counter.
#[derive(Default)]
struct Cache {
    entries: Vec<CacheEntry>,
    ticks: u64,
}

impl Cache {
    /// The entry for `kernel` at `flags`, marked as just used.
    fn find(&mut self, hash: u64, flags: Flags, kernel: &ValidKernel) -> Option<&CacheEntry> {
        self.ticks += 1;
        let now = self.ticks;
        let entry =
            self.entries.iter_mut().find(|e| e.hash == hash && e.flags == flags && e.kernel == *kernel)?;
        entry.last_used = now;
        Some(entry)
    }

    /// Add an entry; the least recently used one, if the cache was full, is returned (to be
    /// dropped once the lock is released: dropping it may free code memory).
    fn insert(&mut self, mut entry: CacheEntry) -> Option<CacheEntry> {
        self.ticks += 1;
        entry.last_used = self.ticks;
        let mut evicted = None;
        if self.entries.len() >= CACHE_ENTRIES {
            let oldest = self.entries.iter().enumerate().min_by_key(|(_, e)| e.last_used).map(|(i, _)| i);
            evicted = oldest.map(|i| self.entries.swap_remove(i));
        }
        self.entries.push(entry);
        evicted
    }
}

fn cache() -> &'static Mutex<Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

fn kernel_hash(kernel: &Kernel) -> u64 {
    let mut h = DefaultHasher::new();
    kernel.meta.name.hash(&mut h);
    kernel.code_size.hash(&mut h);
    kernel.funcs.len().hash(&mut h);
    kernel.walk(&mut |f, s, d| {
        (f, s.offset, d).hash(&mut h);
        if let StmtKind::Op(i) = &s.kind {
            i.encode_words().hash(&mut h);
        }
    });
    h.finish()
}

/// The compile budget of one kernel, in units: each of its instructions once calls are
/// inlined ([`wave_isa::analysis::inlined_instructions`]) costs W/4 + 2 units, one per 4-lane
/// vector it becomes and two for what it costs at any width (analyses, control flow, the
/// per-vector copies of loops and their wave-major copy). Measured on the development
/// machine, release build: about 10 µs and 1.5 KB per unit for straight-line code, 70-90 µs
/// and 5 KB for loops of a few float operations each (the worst shape seen), so a compile at
/// the limit takes about 1.5 s and 230 MB, or 10-12 s and 800 MB. Larger kernels get
/// [`JitError::TooLarge`]; the engine then runs them on the interpreter (or fails, in strict
/// mode).
pub const COMPILE_BUDGET: u64 = 1 << 17;

/// The most instructions (calls inlined) the JIT compiles at wave width `width`: 43,690 at
/// W = 4, 13,107 at W = 32, 7,281 at W = 64.
pub fn instruction_limit(width: u32) -> u64 {
    COMPILE_BUDGET / (u64::from(width / 4) + 2)
}

/// [`JitError::TooLarge`] for a kernel beyond [`instruction_limit`] at `width`.
pub fn check_size(kernel: &ValidKernel, width: u32) -> Result<(), JitError> {
    let inlined = kernel.info().inlined_instructions;
    let limit = instruction_limit(width);
    if inlined <= limit {
        return Ok(());
    }
    Err(JitError::TooLarge(format!(
        "kernel `{}` is too large for the JIT ({inlined} instructions after inlining calls, limit {limit} at wave width {width})",
        kernel.meta.name
    )))
}

/// The compiled code for `kernel` at `flags`, from the cache or freshly compiled.
pub fn compile(kernel: &ValidKernel, flags: Flags) -> Result<Arc<Compiled>, JitError> {
    compile_or_reuse(kernel, flags).map(|(compiled, _)| compiled)
}

/// [`compile`], also telling whether this call compiled the code (false: it came from the cache).
pub fn compile_or_reuse(kernel: &ValidKernel, flags: Flags) -> Result<(Arc<Compiled>, bool), JitError> {
    let flags = cache_flags(flags);
    let hash = kernel_hash(kernel);
    if let Some(compiled) = lookup(hash, flags, kernel) {
        return compiled.map(|compiled| (compiled, false));
    }
    // Errors are cached too: a kernel the JIT declines is not compiled again at every dispatch.
    let compiled = compile_fresh(kernel, flags);
    let entry = CacheEntry { hash, flags, kernel: kernel.clone(), last_used: 0, compiled: compiled.clone() };
    let evicted = cache().lock().unwrap_or_else(|e| e.into_inner()).insert(entry);
    drop(evicted);
    compiled.map(|compiled| (compiled, true))
}

/// Compile `kernel` at `flags` afresh, bypassing the cache (neither looked up nor filled): what
/// [`compile`] does on a cache miss, for measuring compile times. A kernel compiled in two
/// tiers still gets its optimized tier in the background ([`Compiled::wait_optimized`]).
pub fn compile_fresh(kernel: &ValidKernel, flags: Flags) -> Result<Arc<Compiled>, JitError> {
    compile_fresh_tiers(kernel, flags, true)
}

/// Like [`compile_fresh`], but without the background compile of the optimized tier: the code
/// is the first tier the compile would start with (the quick one for a large entry function,
/// [`Tiers::QuickOnly`] then). For measuring the time to the first runnable code without
/// leaving a compile running.
pub fn compile_first_tier(kernel: &ValidKernel, flags: Flags) -> Result<Arc<Compiled>, JitError> {
    compile_fresh_tiers(kernel, flags, false)
}

fn compile_fresh_tiers(
    kernel: &ValidKernel,
    flags: Flags,
    background: bool,
) -> Result<Arc<Compiled>, JitError> {
    let flags = cache_flags(flags);
    check_size(kernel, flags.width)?;
    let (compiled, optimized) = compile_uncached(kernel, flags, background)?;
    let compiled = Arc::new(compiled);
    if let Some(install) = optimized {
        // The optimized tier's thread installs its code into this `Compiled` when ready.
        let _ = install.send(compiled.clone());
    }
    Ok(compiled)
}

/// What the compile cache holds for `kernel` at `flags` (the code, or why the JIT declined
/// the kernel), without compiling.
pub fn cached(kernel: &ValidKernel, flags: Flags) -> Option<Result<Arc<Compiled>, JitError>> {
    let flags = cache_flags(flags);
    lookup(kernel_hash(kernel), flags, kernel)
}

/// Whether code for `kernel` and `flags` is in the compile cache (compiled, or declined).
pub fn is_cached(kernel: &ValidKernel, flags: Flags) -> bool {
    cached(kernel, flags).is_some()
}

/// The flags code is cached and compiled under: counting for `--stats` is done by the
/// budget's accounting.
fn cache_flags(flags: Flags) -> Flags {
    Flags { fuel: flags.fuel || flags.stats, ..flags }
}

fn lookup(hash: u64, flags: Flags, kernel: &ValidKernel) -> Option<Result<Arc<Compiled>, JitError>> {
    let mut cache = cache().lock().unwrap_or_else(|e| e.into_inner());
    cache.find(hash, flags, kernel).map(|e| e.compiled.clone())
}

/// Lane-instructions (threads × instructions once calls are inlined) under which a dispatch
/// of loop-free code costs the interpreter less than compiling it: the interpreter runs a
/// wave-instruction in tens of nanoseconds, a compile takes milliseconds (a 1K-element vector
/// add: about 2 ms end to end interpreted against 40 ms with its compile).
pub const INTERPRET_BELOW_LANE_INSTRUCTIONS: u64 = 1 << 20;

/// Why a dispatch of `threads` threads is better interpreted than compiled, or `None`: its
/// code has no loop (so its size bounds its work) and the work is small. A loop's trip count
/// is unknown before it runs, so kernels with loops are always compiled.
pub fn small_dispatch(kernel: &ValidKernel, threads: u64) -> Option<String> {
    let info = kernel.info();
    if info.uses_loops {
        return None;
    }
    let work = threads.saturating_mul(info.inlined_instructions);
    (work < INTERPRET_BELOW_LANE_INSTRUCTIONS)
        .then(|| format!("a small dispatch ({work} lane-instructions, no loop): interpreted, not compiled"))
}

/// The host ISA with native features, `opt_level=speed` and inline stack probes (built once),
/// with the backtracking register allocator, or (`quick`) the single-pass one.
pub fn host_isa(quick: bool) -> Result<OwnedTargetIsa, JitError> {
    static ISA: OnceLock<Result<OwnedTargetIsa, JitError>> = OnceLock::new();
    static QUICK_ISA: OnceLock<Result<OwnedTargetIsa, JitError>> = OnceLock::new();
    (if quick { &QUICK_ISA } else { &ISA })
        .get_or_init(|| {
            #[cfg(target_arch = "x86_64")]
            if !std::arch::is_x86_feature_detected!("sse4.1") {
                return Err(JitError::Host("SSE4.1 is required (vector rounding and blends)".into()));
            }
            let mut f = settings::builder();
            let set = |f: &mut settings::Builder, k: &str, v: &str| {
                f.set(k, v).map_err(|e| JitError::Codegen(format!("setting {k}={v}: {e}")))
            };
            set(&mut f, "opt_level", "speed")?;
            set(&mut f, "regalloc_algorithm", if quick { "single_pass" } else { "backtracking" })?;
            set(&mut f, "enable_verifier", if cfg!(debug_assertions) { "true" } else { "false" })?;
            // A frame larger than a page touches each of its pages from the top down in the
            // prologue, so a frame larger than the stack left hits the guard page below it
            // (a crash) instead of reaching past it into other memory, such as the stack of
            // the next wave's fiber. The engine sizes the stacks so that it never comes to
            // that ([`EntryCode::stack_needed`]).
            set(&mut f, "enable_probestack", "true")?;
            set(&mut f, "probestack_strategy", "inline")?;
            let builder = cranelift_native::builder().map_err(|e| JitError::Host(e.to_string()))?;
            builder.finish(settings::Flags::new(f)).map_err(|e| JitError::Host(e.to_string()))
        })
        .clone()
}

/// The channel a background compile of the optimized tier waits on for the `Compiled` to
/// install its code into.
type InstallOptimized = std::sync::mpsc::Sender<Arc<Compiled>>;

/// Compile `kernel`'s entry function. With a quick first tier, the optimized one is then
/// compiled on a thread of its own (unless not `background`), which installs it once it gets
/// the `Compiled`.
fn compile_uncached(
    kernel: &ValidKernel,
    flags: Flags,
    background: bool,
) -> Result<(Compiled, Option<InstallOptimized>), JitError> {
    if ![4, 8, 16, 32, 64].contains(&flags.width) {
        return Err(JitError::Unsupported(format!("wave width {}", flags.width)));
    }
    let start = Instant::now();
    let analyses = Analyses::new(kernel, flags);
    let (func, loop_fns) = translate_entry(kernel, flags, &analyses)?;
    let tiering = tiering();
    let quick = match tiering {
        Tiering::Auto => {
            func.layout.blocks().map(|b| func.layout.block_insts(b).count()).sum::<usize>()
                >= QUICK_TIER_MIN_INSTS
        }
        Tiering::QuickOnly => true,
        Tiering::OptimizedOnly => false,
    };
    let optimized_later = background && quick && tiering != Tiering::QuickOnly;
    let background = optimized_later.then(|| func.clone());
    let (entry, module) = define_alone(func, quick, dump_stem(kernel, flags, "").as_deref())?;
    let entry = entry_code(entry);
    check_frame(&kernel.meta.name, flags.width, entry.frame)?;
    let compile_time = start.elapsed();
    // The optimized tier starts once the quick one is done, so that the first code is ready
    // as soon as can be (on two cores, the two compiles side by side slow the quick one).
    let optimized_tier = background.and_then(|func| {
        let (install, installer) = std::sync::mpsc::channel::<Arc<Compiled>>();
        let dump = dump_stem(kernel, flags, "_optimized");
        let name = kernel.meta.name.clone();
        let spawned = std::thread::Builder::new().name("wave-jit optimized tier".into()).spawn(move || {
            let result = std::panic::catch_unwind(|| {
                let (entry, module) =
                    define_alone(func, false, dump.as_deref()).map_err(|e| e.to_string())?;
                let entry = entry_code(entry);
                // Waves then stay in the quick tier, whose frame was accepted.
                if entry.frame > MAX_FRAME {
                    return Err(format!(
                        "the optimized code of `{name}` has a stack frame of {}, over the limit of {} MiB",
                        mib(entry.frame),
                        MAX_FRAME >> 20
                    ));
                }
                Ok((entry, module))
            })
            .unwrap_or_else(|_| Err("the JIT panicked".into()));
            // No `Compiled` comes if the kernel's compile failed after all: nothing to install.
            if let Ok(target) = installer.recv() {
                target.install_optimized(result, start);
            }
        });
        // No thread to be had: the quick tier stays (the reason is recorded below).
        spawned.ok().map(|_| install)
    });
    let optimized = OnceLock::new();
    if optimized_tier.is_none() {
        let _ = optimized.set(match (quick, tiering) {
            (false, _) => Ok(compile_time),
            (true, Tiering::QuickOnly) => Err("only the quick tier was asked for".into()),
            (true, _) if !optimized_later => Err("only the first tier was asked for".into()),
            (true, _) => Err("no thread for the optimized tier".into()),
        });
    }
    let compiled = Compiled {
        first: entry,
        second: OnceLock::new(),
        quick_first: quick,
        has_barrier: kernel.info().uses_barriers,
        writes_local: kernel.info().writes_local_memory,
        compile_time,
        optimized,
        lazy: LoopTable::new(LazyLoops {
            kernel: kernel.kernel().clone(),
            flags,
            analyses,
            loops: Mutex::new(loop_fns.into_iter().map(|f| LazyLoop { f, code: None }).collect()),
        }),
        modules: Mutex::new(vec![module]),
    };
    Ok((compiled, optimized_tier))
}

/// Translate `kernel`'s entry function for `flags` (calls inlined) into CLIF, without
/// compiling it; with the loop functions it calls on a bail-out, their unread state pruned.
pub(crate) fn translate_entry(
    kernel: &Kernel,
    flags: Flags,
    analyses: &Analyses,
) -> Result<(cranelift_codegen::ir::Function, Vec<LoopFn>), JitError> {
    let isa = host_isa(false)?;
    let call_conv = isa.default_call_conv();
    let mut func = cranelift_codegen::ir::Function::new();
    func.signature = entry_signature(call_conv);
    let mut fctx = FunctionBuilderContext::new();
    let mut loop_fns = {
        let fb = FunctionBuilder::new(&mut func, &mut fctx);
        let mut t = Translator::new(fb, kernel, &RUNTIME_ENV, analyses, flags, call_conv);
        t.translate()?;
        let fns = std::mem::take(&mut t.loop_fns);
        t.finish(isa.frontend_config());
        fns
    };
    prune_loop_state(&mut func, &mut loop_fns);
    Ok((func, loop_fns))
}

/// [`JitError::TooLarge`] for an entry function whose frame is larger than [`MAX_FRAME`].
pub fn check_frame(kernel: &str, width: u32, frame: usize) -> Result<(), JitError> {
    if frame <= MAX_FRAME {
        return Ok(());
    }
    Err(JitError::TooLarge(format!(
        "kernel `{kernel}` is too deep for the JIT (stack frame of {} at wave width {width}, limit {} MiB)",
        mib(frame),
        MAX_FRAME >> 20
    )))
}

/// A function compiled in a module of its own.
struct Defined {
    address: *const u8,
    /// Bytes of stack it takes ([`frame_bytes`]).
    frame: usize,
}

/// An entry function compiled by [`define_alone`].
fn entry_code(defined: Defined) -> EntryCode {
    // SAFETY: entry functions are declared with exactly this signature (one i64 pointer in,
    // an i32 status out) in the ISA's default calling convention, which is "C" here; the
    // caller keeps the module that owns the code alive as long as the `Compiled`.
    let function = unsafe { std::mem::transmute::<*const u8, WaveFn>(defined.address) };
    EntryCode { function, frame: defined.frame }
}

/// Compile `func` in a module of its own (the quick or the optimized tier); where it is and
/// the stack it takes.
fn define_alone(
    func: cranelift_codegen::ir::Function,
    quick: bool,
    dump: Option<&std::path::Path>,
) -> Result<(Defined, ModuleOwner), JitError> {
    let isa = host_isa(quick)?;
    let mut module = JITModule::new(JITBuilder::with_isa(isa, cranelift_module::default_libcall_names()));
    let mut ctx = module.make_context();
    ctx.func = func;
    let (id, frame) = define(&mut module, &mut ctx, dump)?;
    module.finalize_definitions().map_err(|e| JitError::Codegen(e.to_string()))?;
    let address = module.get_finalized_function(id);
    if let Some(stem) = dump {
        // Where the code was loaded, to place `perf` samples in the `.bin` (best effort).
        let _ = std::fs::write(stem.with_extension("addr"), format!("{:x}\n", address as usize));
    }
    Ok((Defined { address, frame }, ModuleOwner::new(module)))
}

/// Developer aid: with WAVE_JIT_DUMP=DIR, where a function's CLIF (`@pc` marks each
/// statement's code), machine code, Cranelift pass timings and load address go
/// (`DIR/<kernel>_w<W><suffix>.*`).
fn dump_stem(kernel: &Kernel, flags: Flags, suffix: &str) -> Option<std::path::PathBuf> {
    let dir = std::env::var_os("WAVE_JIT_DUMP")?;
    Some(std::path::PathBuf::from(dir).join(format!("{}_w{}{suffix}", kernel.meta.name, flags.width)))
}

/// Compile the function in `ctx` into the module (and dump it when asked); its id and the
/// bytes of stack it takes.
fn define(
    module: &mut JITModule,
    ctx: &mut cranelift_codegen::Context,
    dump: Option<&std::path::Path>,
) -> Result<(cranelift_module::FuncId, usize), JitError> {
    crate::dead_params::remove_dead_block_params(&mut ctx.func);
    let id = module
        .declare_anonymous_function(&ctx.func.signature)
        .map_err(|e| JitError::Codegen(e.to_string()))?;
    let clif = dump.map(|_| ctx.func.display().to_string());
    ctx.set_disasm(dump.is_some());
    if dump.is_some() {
        // Start the pass timings of this function from zero.
        let _ = cranelift_codegen::timing::take_current();
    }
    module.define_function(id, ctx).map_err(|e| JitError::Codegen(format!("{e:?}")))?;
    let frame = frame_bytes(ctx)?;
    if let (Some(stem), Some(clif)) = (dump, clif) {
        let asm = ctx.compiled_code().and_then(|c| c.vcode.clone()).unwrap_or_default();
        let bytes = ctx.compiled_code().map(|c| c.code_buffer().to_vec()).unwrap_or_default();
        let timing = cranelift_codegen::timing::take_current().to_string();
        // Best effort: a failed dump must not fail the compile.
        let _ = std::fs::create_dir_all(stem.parent().unwrap_or(stem))
            .and_then(|_| std::fs::write(stem.with_extension("clif"), clif))
            .and_then(|_| std::fs::write(stem.with_extension("s"), asm))
            .and_then(|_| std::fs::write(stem.with_extension("bin"), bytes))
            .and_then(|_| std::fs::write(stem.with_extension("timing"), timing));
    }
    module.clear_context(ctx);
    Ok((id, frame))
}

/// The wave-major functions of a kernel's chunk-major loops (`translate::chunk`), compiled on
/// first use: only a bail-out (a possible fault, a NaN operand, a spent budget) needs one, and
/// they are cold code as large as the rest of the kernel.
pub struct LazyLoops {
    kernel: Kernel,
    flags: Flags,
    analyses: Analyses,
    /// Indexed by `LoopFn::index`; compiling one may add more (loops nested in it).
    loops: Mutex<Vec<LazyLoop>>,
}

struct LazyLoop {
    f: LoopFn,
    code: Option<Result<(LoopCode, ModuleOwner), String>>,
}

impl LoopFunctions for LazyLoops {
    fn function(&self, index: usize) -> Result<LoopCode, String> {
        // One compile at a time: it is rare, and new loop functions take the next numbers.
        let mut loops = self.loops.lock().unwrap_or_else(|e| e.into_inner());
        let first_new = loops.len();
        let lazy = loops.get_mut(index).ok_or_else(|| format!("no loop function {index}"))?;
        if lazy.code.is_none() {
            let f = lazy.f.clone();
            // On a thread of its own: a wave may run on a fiber, whose stack is small for
            // Cranelift.
            let compiled = std::thread::scope(|s| {
                match std::thread::Builder::new().spawn_scoped(s, || self.compile(&f, first_new)) {
                    Ok(thread) => thread.join().unwrap_or_else(|_| Err("the JIT panicked".into())),
                    Err(e) => Err(format!("no thread to compile on: {e}")),
                }
            });
            let (code, more) = match compiled {
                Ok((code, module, more)) => (Ok((code, module)), more),
                Err(e) => (Err(format!("compiling the loop at byte 0x{:x}: {e}", f.offset)), Vec::new()),
            };
            loops[index].code = Some(code);
            loops.extend(more.into_iter().map(|f| LazyLoop { f, code: None }));
        }
        match &loops[index].code {
            Some(Ok((code, _))) => Ok(*code),
            Some(Err(e)) => Err(e.clone()),
            None => Err(format!("loop function {index} was not compiled")),
        }
    }

    fn compiled(&self) -> usize {
        let loops = self.loops.lock().unwrap_or_else(|e| e.into_inner());
        loops.iter().filter(|l| l.code.is_some()).count()
    }
}

impl LazyLoops {
    fn compile(&self, f: &LoopFn, first_new: usize) -> Result<(LoopCode, ModuleOwner, Vec<LoopFn>), String> {
        let isa = host_isa(false).map_err(|e| e.to_string())?;
        let call_conv = isa.default_call_conv();
        let mut func = cranelift_codegen::ir::Function::new();
        func.signature = loop_fn_signature(call_conv);
        let mut fctx = FunctionBuilderContext::new();
        let (kernel, flags) = (&self.kernel, self.flags);
        let mut more = {
            let fb = FunctionBuilder::new(&mut func, &mut fctx);
            let t = Translator::for_loop(
                fb,
                kernel,
                &RUNTIME_ENV,
                &self.analyses,
                flags,
                call_conv,
                first_new,
                f,
            );
            t.translate_loop_fn(f, isa.frontend_config()).map_err(|e| e.to_string())?
        };
        prune_loop_state(&mut func, &mut more);
        let dump = dump_stem(kernel, flags, &format!("_loop{}", f.index));
        let (defined, module) = define_alone(func, false, dump.as_deref()).map_err(|e| e.to_string())?;
        // SAFETY: declared with `loop_fn_signature`: three i64 (pointers) in, an i32 status
        // out, in the ISA's default calling convention, which is "C" here; `LazyLoops` keeps
        // the module that owns the code alive as long as the `Compiled`.
        let function = unsafe { std::mem::transmute::<*const u8, LoopFnPtr>(defined.address) };
        let code = LoopCode { function, out_offset: f.state.in_bytes(), frame: defined.frame };
        Ok((code, module, more))
    }
}
