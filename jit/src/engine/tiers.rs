//! Tiers: which code runs a kernel and when. Small dispatches of loop-free code are
//! interpreted ([`small_dispatch`]); a large entry function is compiled quick first and
//! optimized in the background ([`Tiering`], [`Compiled`]). The code itself comes from
//! [`crate::compiler`].

use crate::compiler::{
    check_frame, check_size, compile_tier, dump_stem, mib, translate, Compiled, MAX_FRAME,
};
use crate::error::JitError;
use crate::translate::Flags;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;
use wave_isa::ValidKernel;

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

/// The flags code is cached and compiled under: counting for `--stats` is done by the
/// budget's accounting.
pub(crate) fn cache_flags(flags: Flags) -> Flags {
    Flags { fuel: flags.fuel || flags.stats, ..flags }
}

/// Compile `kernel` at `flags` afresh, bypassing the cache (neither looked up nor filled): what
/// `cache::compile` does on a cache miss, for measuring compile times. A kernel compiled in two
/// tiers still gets its optimized tier in the background ([`Compiled::wait_optimized`]).
pub fn compile_fresh(kernel: &ValidKernel, flags: Flags) -> Result<Arc<Compiled>, JitError> {
    compile_fresh_tiers(kernel, flags, true)
}

/// Like [`compile_fresh`], but without the background compile of the optimized tier: the code
/// is the first tier the compile would start with (the quick one for a large entry function,
/// [`Tiers::QuickOnly`](wave_runtime::Tiers::QuickOnly) then). For measuring the time to the first runnable code without
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
    let start = Instant::now();
    let (func, lazy) = translate(kernel, flags)?;
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
    let (entry, module) = compile_tier(func, quick, dump_stem(kernel, flags, "").as_deref())?;
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
                    compile_tier(func, false, dump.as_deref()).map_err(|e| e.to_string())?;
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
    let compiled = Compiled::new(kernel, (entry, module), lazy, quick, compile_time, optimized);
    Ok((compiled, optimized_tier))
}
