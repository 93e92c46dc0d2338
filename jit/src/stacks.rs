//! The stacks compiled code runs on.
//!
//! A compiled function's frame grows with the kernel's nesting (the quick tier's quadratically:
//! 8.4 MiB for 256 nested loops at W = 64), so no wave runs on a stack the engine did not make
//! for its code: each has room for the frame of the entry function it starts in and
//! [`STACK_MARGIN`] below it. A loop function called on a bail-out (helper `wave_loop`) runs
//! on a stack of its own when the wave's has too little room left for it. The stack probes
//! in compiled code make a frame that would not fit fault on the guard page instead of
//! reaching past it.
//!
//! [`STACK_MARGIN`]: crate::abi::STACK_MARGIN

use corosensei::stack::{DefaultStack, Stack};
use std::sync::{Mutex, OnceLock};

/// Bytes of the smallest stack a wave gets (spilled registers of a W = 64 wave fit many times
/// over), the size the pool keeps.
pub const DEFAULT_STACK: usize = 1 << 20;

/// Stacks are made in whole MiB, so that a few sizes come up.
const STACK_GRANULE: usize = 1 << 20;

/// Most default stacks kept for reuse (enough for every wave of the largest workgroup on a
/// many-core host; 1 MiB of address space each, touched pages only).
const POOLED_STACKS: usize = 512;

/// Default stacks kept between workers and dispatches. Making one maps 1 MiB and a guard page
/// and freeing it unmaps them, which flushes the TLB of every core: rayon makes a worker per
/// job, so short dispatches of barrier kernels spent much of their time in the kernel there.
/// Larger stacks are not pooled: only kernels with deep frames need them, and the pages
/// their frames touched would stay resident.
fn pool() -> &'static Mutex<Vec<DefaultStack>> {
    static POOL: OnceLock<Mutex<Vec<DefaultStack>>> = OnceLock::new();
    POOL.get_or_init(|| Mutex::new(Vec::new()))
}

/// A stack with a known number of usable bytes above its guard page.
pub struct WaveStack {
    pub stack: DefaultStack,
    bytes: usize,
}

impl WaveStack {
    /// A stack of at least `needed` usable bytes: from the pool if the default size is enough.
    pub fn with_room(needed: usize) -> Result<WaveStack, String> {
        let bytes = needed.max(DEFAULT_STACK).next_multiple_of(STACK_GRANULE);
        if bytes == DEFAULT_STACK {
            if let Some(stack) = pool().lock().ok().and_then(|mut pool| pool.pop()) {
                return Ok(WaveStack { stack, bytes });
            }
        }
        // `DefaultStack::new(bytes)` maps `bytes` usable bytes (rounded up to pages) above a
        // guard page.
        match DefaultStack::new(bytes) {
            Ok(stack) => Ok(WaveStack { stack, bytes }),
            Err(e) => Err(format!("cannot allocate a stack of {} MiB for a wave: {e}", bytes >> 20)),
        }
    }

    /// `stack` as a stack of `bytes` usable bytes (at most what it has): one made by
    /// [`WaveStack::with_room`], taken back from a fiber.
    pub fn from_parts(stack: DefaultStack, bytes: usize) -> WaveStack {
        WaveStack { stack, bytes }
    }

    /// Usable bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The lowest address code may use (the guard page lies below it).
    pub fn limit(&self) -> usize {
        self.stack.base().get() - self.bytes
    }

    /// Give default stacks to the pool (while it has room); free the others.
    pub fn recycle(stacks: impl IntoIterator<Item = WaveStack>) {
        let mut kept = stacks.into_iter().filter(|s| s.bytes == DEFAULT_STACK).map(|s| s.stack).peekable();
        if kept.peek().is_none() {
            return;
        }
        if let Ok(mut pool) = pool().lock() {
            let room = POOLED_STACKS.saturating_sub(pool.len());
            pool.extend(kept.take(room));
        }
    }
}

/// Bytes of stack left below the caller's frame, on a stack whose lowest usable address is
/// `limit` (0 when not known: then none).
#[inline(never)]
pub fn room_left(limit: usize) -> usize {
    let here = 0u8;
    let address = std::hint::black_box(&here) as *const u8 as usize;
    if limit == 0 {
        0
    } else {
        address.saturating_sub(limit)
    }
}
