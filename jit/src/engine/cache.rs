//! The compile cache: the code of each (kernel, flags) the engine ran, compiled once
//! ([`super::tiers`]) and kept while it is among the [`CACHE_ENTRIES`] most recently used.

use super::tiers::{cache_flags, compile_fresh};
use crate::compiler::Compiled;
use crate::error::JitError;
use crate::translate::Flags;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock};
use wave_isa::{Kernel, StmtKind, ValidKernel};

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

fn lookup(hash: u64, flags: Flags, kernel: &ValidKernel) -> Option<Result<Arc<Compiled>, JitError>> {
    let mut cache = cache().lock().unwrap_or_else(|e| e.into_inner());
    cache.find(hash, flags, kernel).map(|e| e.compiled.clone())
}
