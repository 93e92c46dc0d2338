//! Compiling a kernel for one (W, flags) into machine code, with an in-process cache.

use crate::ctx::WaveCtx;
use crate::error::JitError;
use crate::translate::env::CtxEnv;
use crate::translate::{Flags, Translator};
use cranelift_codegen::ir::types::{I32, I64};
use cranelift_codegen::ir::AbiParam;
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Linkage, Module};
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use wave_isa::{Kernel, StmtKind};

/// The compiled entry: runs one wave to its end (or to an error); returns a `ctx::status`.
pub type WaveFn = unsafe extern "C" fn(*mut WaveCtx) -> u32;

/// One compiled kernel.
pub struct Compiled {
    pub entry: WaveFn,
    /// Whether the kernel has barriers (waves then run as fibers).
    pub has_barrier: bool,
    /// Time spent in translation + Cranelift.
    pub compile_time: Duration,
    /// Owns the code memory `entry` points into.
    _module: ModuleOwner,
}

/// Keeps the JIT module (and so the code) alive.
struct ModuleOwner(#[allow(dead_code)] JITModule);
// SAFETY: the module is never used again after finalisation; it only owns the executable
// memory, which is immutable and may be shared and called from any thread.
unsafe impl Send for ModuleOwner {}
// SAFETY: as above; no method is called on it through a shared reference.
unsafe impl Sync for ModuleOwner {}

struct CacheEntry {
    hash: u64,
    flags: Flags,
    kernel: Kernel,
    compiled: Arc<Compiled>,
}

fn cache() -> &'static Mutex<Vec<CacheEntry>> {
    static CACHE: OnceLock<Mutex<Vec<CacheEntry>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(Vec::new()))
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

/// The compiled code for `kernel` at `flags`, from the cache or freshly compiled.
pub fn compile(kernel: &Kernel, flags: Flags) -> Result<Arc<Compiled>, JitError> {
    let hash = kernel_hash(kernel);
    {
        let cache = cache().lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = cache.iter().find(|e| e.hash == hash && e.flags == flags && e.kernel == *kernel) {
            return Ok(e.compiled.clone());
        }
    }
    let compiled = Arc::new(compile_uncached(kernel, flags)?);
    let mut cache = cache().lock().unwrap_or_else(|e| e.into_inner());
    cache.push(CacheEntry { hash, flags, kernel: kernel.clone(), compiled: compiled.clone() });
    Ok(compiled)
}

/// The host ISA with native features and `opt_level=speed` (built once).
pub fn host_isa() -> Result<OwnedTargetIsa, JitError> {
    static ISA: OnceLock<Result<OwnedTargetIsa, JitError>> = OnceLock::new();
    ISA.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        if !std::arch::is_x86_feature_detected!("sse4.1") {
            return Err(JitError::Host("SSE4.1 is required (vector rounding and blends)".into()));
        }
        let mut f = settings::builder();
        let set = |f: &mut settings::Builder, k: &str, v: &str| {
            f.set(k, v).map_err(|e| JitError::Codegen(format!("setting {k}={v}: {e}")))
        };
        set(&mut f, "opt_level", "speed")?;
        set(&mut f, "enable_verifier", if cfg!(debug_assertions) { "true" } else { "false" })?;
        let builder = cranelift_native::builder().map_err(|e| JitError::Host(e.to_string()))?;
        builder.finish(settings::Flags::new(f)).map_err(|e| JitError::Host(e.to_string()))
    })
    .clone()
}

/// Whether a kernel contains a barrier anywhere (its waves then need fibers).
pub fn has_barrier(kernel: &Kernel) -> bool {
    let mut found = false;
    kernel.walk(&mut |_, s, _| found |= matches!(s.kind, StmtKind::Barrier));
    found
}

fn compile_uncached(kernel: &Kernel, flags: Flags) -> Result<Compiled, JitError> {
    if ![4, 8, 16, 32, 64].contains(&flags.width) {
        return Err(JitError::Unsupported(format!("wave width {}", flags.width)));
    }
    let start = Instant::now();
    let isa = host_isa()?;
    let call_conv = isa.default_call_conv();
    let config = isa.frontend_config();
    let mut module = JITModule::new(JITBuilder::with_isa(isa, cranelift_module::default_libcall_names()));
    let mut ctx = module.make_context();
    ctx.func.signature.call_conv = call_conv;
    ctx.func.signature.params.push(AbiParam::new(I64));
    ctx.func.signature.returns.push(AbiParam::new(I32));
    let mut fctx = FunctionBuilderContext::new();
    {
        let fb = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        let env = CtxEnv;
        let mut t = Translator::new(fb, kernel, &env, flags, call_conv);
        t.translate()?;
        t.finish(config);
    }
    crate::dead_params::remove_dead_block_params(&mut ctx.func);
    let id = module
        .declare_function("wave", Linkage::Local, &ctx.func.signature)
        .map_err(|e| JitError::Codegen(e.to_string()))?;
    // Developer aid: WAVE_JIT_DUMP=DIR writes the CLIF (`@pc` marks each statement's code), the
    // machine code, Cranelift's pass timings and the code's load address of each compile.
    let dump = std::env::var_os("WAVE_JIT_DUMP")
        .map(|dir| std::path::PathBuf::from(dir).join(format!("{}_w{}", kernel.meta.name, flags.width)));
    let clif = dump.as_ref().map(|_| ctx.func.display().to_string());
    ctx.set_disasm(dump.is_some());
    if dump.is_some() {
        // Start the pass timings of this compile from zero.
        let _ = cranelift_codegen::timing::take_current();
    }
    module.define_function(id, &mut ctx).map_err(|e| JitError::Codegen(format!("{e:?}")))?;
    if let (Some(stem), Some(clif)) = (&dump, clif) {
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
    module.clear_context(&mut ctx);
    module.finalize_definitions().map_err(|e| JitError::Codegen(e.to_string()))?;
    let ptr = module.get_finalized_function(id);
    if let Some(stem) = &dump {
        // Where the code was loaded, to place `perf` samples in the `.bin` (best effort).
        let _ = std::fs::write(stem.with_extension("addr"), format!("{:x}\n", ptr as usize));
    }
    // SAFETY: the function was declared with exactly this signature (one i64 pointer in,
    // an i32 status out) in the ISA's default calling convention, which is "C" here.
    let entry: WaveFn = unsafe { std::mem::transmute::<*const u8, WaveFn>(ptr) };
    Ok(Compiled {
        entry,
        has_barrier: has_barrier(kernel),
        compile_time: start.elapsed(),
        _module: ModuleOwner(module),
    })
}
