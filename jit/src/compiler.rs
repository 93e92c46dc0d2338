//! Codegen: compiling a kernel for one (W, flags) into machine code. The entry function is
//! translated once (`translate`) and compiled per tier (`compile_tier`: Cranelift's
//! single-pass or backtracking register allocator) into a [`Compiled`]; its loop functions are
//! compiled on first use ([`LazyLoops`]). What the engine does with the code (the compile
//! cache, which tiers to compile and when) is the engine runtime's (`engine::cache`,
//! `engine::tiers`).

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
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};
use wave_isa::{Kernel, ValidKernel};
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
    /// Whether the kernel has MMA ops (otherwise its waves' fragment tables stay empty).
    pub uses_mma: bool,
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

    /// The code of `kernel` whose first tier is `first`, with the loop functions of `lazy`.
    /// Its optimized tier is settled when `optimized` is set (see [`Compiled::tiers`]); else it
    /// comes with [`Compiled::install_optimized`].
    pub(crate) fn new(
        kernel: &ValidKernel,
        first: (EntryCode, ModuleOwner),
        lazy: LazyLoops,
        quick_first: bool,
        compile_time: Duration,
        optimized: OnceLock<Result<Duration, String>>,
    ) -> Compiled {
        let (entry, module) = first;
        Compiled {
            first: entry,
            second: OnceLock::new(),
            quick_first,
            has_barrier: kernel.info().uses_barriers && !lazy.phased,
            writes_local: kernel.info().writes_local_memory,
            uses_mma: kernel.info().uses_mma,
            compile_time,
            optimized,
            lazy: LoopTable::new(lazy),
            modules: Mutex::new(vec![module]),
        }
    }

    /// Install the optimized tier compiled for this code (or why there is none), `begun` being
    /// when the compile began.
    pub(crate) fn install_optimized(&self, result: Result<(EntryCode, ModuleOwner), String>, begun: Instant) {
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
pub(crate) fn mib(bytes: usize) -> String {
    format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
}

/// Owns a finalised JIT module: its code lives as long as this, and its memory is given back
/// when this is dropped. A `ModuleOwner` lives in a [`Compiled`] (an entry tier, or a loop
/// function of its [`LazyLoops`]), and code from it runs only while its caller holds an
/// `Arc<Compiled>`: a dispatch holds one from before its first wave until after its last, and
/// the optimized tier's thread receives one before it installs its code.
pub(crate) struct ModuleOwner(Option<JITModule>);

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
/// runs or was compiled outside the cache (bounded by the cache's size,
/// `engine::cache::CACHE_ENTRIES`, when no one holds other code).
pub fn live_modules() -> usize {
    LIVE_MODULES.load(Ordering::Relaxed)
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

/// The host ISA with native features and inline stack probes (built once): `opt_level=speed`
/// with the backtracking register allocator, or (`quick`) no e-graph pass and the single-pass
/// allocator. The e-graph pass was a third of the quick tier's compile time of the largest
/// conformance kernel (`nest_loop_64`, 18 of 53 ms at W = 32), and the quick tier's code did
/// not get slower for it on the whole (GEMM N = 512 quick tier only: GPU-style 30 → 28 ms,
/// tiled 26 → 29 ms, naive unchanged).
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
            set(&mut f, "opt_level", if quick { "none" } else { "speed" })?;
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

/// Translate `kernel`'s entry function for `flags` into CLIF, to be compiled by
/// [`compile_tier`] (once per tier); with its loop functions, to be compiled on first use.
pub(crate) fn translate(
    kernel: &ValidKernel,
    flags: Flags,
) -> Result<(cranelift_codegen::ir::Function, LazyLoops), JitError> {
    if ![4, 8, 16, 32, 64].contains(&flags.width) {
        return Err(JitError::Unsupported(format!("wave width {}", flags.width)));
    }
    let analyses = Analyses::new(kernel, flags);
    let Entry { func, loop_fns, phased } = translate_entry(kernel, flags, &analyses)?;
    let lazy = LazyLoops {
        kernel: kernel.kernel().clone(),
        flags,
        analyses,
        loops: Mutex::new(loop_fns.into_iter().map(|f| LazyLoop { f, code: None }).collect()),
        phased,
    };
    Ok((func, lazy))
}

/// Compile an entry function from [`translate`] in a module of its own, as the quick tier
/// (`quick`: the single-pass register allocator) or the optimized one; dumped to `dump` when
/// asked ([`dump_stem`]).
pub(crate) fn compile_tier(
    func: cranelift_codegen::ir::Function,
    quick: bool,
    dump: Option<&std::path::Path>,
) -> Result<(EntryCode, ModuleOwner), JitError> {
    let (entry, module) = define_alone(func, quick, dump)?;
    Ok((entry_code(entry), module))
}

/// Translate `kernel`'s entry function for `flags` (calls inlined) into CLIF, without
/// compiling it; with the loop functions it calls on a bail-out, their unread state pruned.
pub(crate) fn translate_entry(kernel: &Kernel, flags: Flags, analyses: &Analyses) -> Result<Entry, JitError> {
    if let Some(entry) = translate_entry_with(kernel, flags, analyses, true)? {
        return Ok(entry);
    }
    // The phases did not close (see `translate::phases`): fibers.
    translate_entry_with(kernel, flags, analyses, false)?
        .ok_or_else(|| JitError::Codegen("the entry function without phases was refused".into()))
}

/// An entry function in CLIF, with the loop functions it calls on a bail-out.
pub(crate) struct Entry {
    pub func: cranelift_codegen::ir::Function,
    pub loop_fns: Vec<LoopFn>,
    /// It runs the kernel's barriers as phases (no fibers: see `translate::phases`).
    pub phased: bool,
}

/// [`translate_entry`], in phases where `phases` allows and the kernel can; `None` where the
/// phases it built do not close (a value reaches a phase's start from another wave) or the
/// function fails Cranelift's verifier.
fn translate_entry_with(
    kernel: &Kernel,
    flags: Flags,
    analyses: &Analyses,
    phases: bool,
) -> Result<Option<Entry>, JitError> {
    let isa = host_isa(false)?;
    let call_conv = isa.default_call_conv();
    let mut func = cranelift_codegen::ir::Function::new();
    func.signature = entry_signature(call_conv);
    let mut fctx = FunctionBuilderContext::new();
    let (mut loop_fns, homes, phase_blocks) = {
        let fb = FunctionBuilder::new(&mut func, &mut fctx);
        let mut t = Translator::new(fb, kernel, &RUNTIME_ENV, analyses, flags, call_conv);
        if phases {
            t.use_barrier_phases();
        }
        let phase_blocks = t.phase_entry_blocks();
        t.translate()?;
        if !t.phases_worth_it() {
            return Ok(None);
        }
        let fns = std::mem::take(&mut t.loop_fns);
        let homes = std::mem::take(&mut t.chunk_homes);
        t.finish(isa.frontend_config());
        (fns, homes, phase_blocks)
    };
    if let Some(blocks) = &phase_blocks {
        let closed = Translator::phases_are_closed(&func, blocks);
        if !closed || cranelift_codegen::verify_function(&func, &*isa).is_err() {
            return Ok(None);
        }
    }
    prune_loop_state(&mut func, &mut loop_fns, &homes);
    Ok(Some(Entry { func, loop_fns, phased: phase_blocks.is_some() }))
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
pub(crate) fn dump_stem(kernel: &Kernel, flags: Flags, suffix: &str) -> Option<std::path::PathBuf> {
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
    /// The entry function they belong to runs the kernel's barriers as phases.
    pub(crate) phased: bool,
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
        let (mut more, homes) = {
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
        prune_loop_state(&mut func, &mut more, &homes);
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
