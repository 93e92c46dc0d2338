//! Device atomics at any byte address, atomic against every other device atomic of the
//! dispatch, whichever thread runs it.
//!
//! The value an atomic writes is [`semantics::atomic`]; this module only makes the
//! read-modify-write indivisible. wave-emu accepts unaligned atomics and does them bytewise
//! (semantics.md §5.6; the spec leaves unaligned behaviour to the implementation); the JIT
//! runs workgroups on several threads, so a plain read-modify-write there would lose updates
//! (and be a data race). How each address is done is [`method`]:
//!
//! - 4-byte aligned: a compare-exchange loop on that `AtomicU32`.
//! - unaligned, on x86_64: a compare-exchange loop of `lock cmpxchg` on the exact address
//!   (inline assembly). x86 makes locked instructions atomic at any alignment (Intel SDM
//!   vol. 3A §9.1.2.2); one that crosses a cache line is a slow "split lock", still atomic.
//!   Linux may warn about split locks, throttle them, or (with `split_lock_detect=fatal`)
//!   kill the process with SIGBUS: only an atomic that crosses a 64-byte line splits.
//! - unaligned elsewhere, inside one 8-byte aligned word (address mod 8 ∈ {1, 2, 3}): a
//!   compare-exchange loop on that `AtomicU64`.
//! - unaligned elsewhere, across an 8-byte boundary: not supported (no portable atomic spans
//!   two words); both engines stop with an `unsupported` error naming the address.
//!
//! Rust's memory model has no rule for atomics of different sizes or alignments that overlap
//! and race (an unaligned atomic overlaps aligned ones); what the hardware does with them is
//! defined (x86 locked operations are atomic whatever their size and alignment), which is
//! what the unaligned paths rely on. No path makes a plain (non-atomic) access.
//!
//! The interpreter runs one workgroup at a time on one thread, so its plain read-modify-write
//! is already indivisible; it asks [`method`] only so that both engines refuse the same
//! addresses.

use crate::semantics;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use wave_isa::Op;

/// How an atomic at a device address is made indivisible on this host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// 4-byte aligned: `AtomicU32`.
    Aligned,
    /// x86_64 `lock cmpxchg` on the exact (unaligned) address.
    Locked,
    /// Inside one 8-byte aligned word: `AtomicU64` on that word.
    InWord,
}

/// An unaligned atomic that this host cannot make indivisible.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unsupported {
    pub address: u64,
}

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "device atomic at 0x{:x} crosses an 8-byte boundary; unaligned atomics that do are \
             atomic only on x86_64 hosts",
            self.address
        )
    }
}

/// Whether this host has locked read-modify-writes at any alignment.
const HOST_LOCKS_UNALIGNED: bool = cfg!(target_arch = "x86_64");

/// How this host does a 32-bit device atomic at `address`.
pub fn method(address: u64) -> Result<Method, Unsupported> {
    method_on(address, HOST_LOCKS_UNALIGNED)
}

/// [`method`] for a host with (`locks_unaligned`) or without x86's unaligned locked ops.
fn method_on(address: u64, locks_unaligned: bool) -> Result<Method, Unsupported> {
    if address.is_multiple_of(4) {
        Ok(Method::Aligned)
    } else if locks_unaligned {
        Ok(Method::Locked)
    } else if address % 8 <= 4 {
        Ok(Method::InWord)
    } else {
        Err(Unsupported { address })
    }
}

/// Perform device atomic `op` (operands `value`, `desired` as in [`semantics::atomic`]) on the
/// 4 bytes at `p`, by `method` (from [`method`] for the device address of `p`); returns the
/// old value.
///
/// # Safety
/// `p` must be valid for reads and writes of 4 bytes, and for [`Method::InWord`] so must the
/// whole 8-byte aligned word around it. `p` must have the alignment of the device address
/// `method` was chosen for, modulo 8 (the device window is page aligned). Every access that
/// may run concurrently with this one to these bytes must be atomic (this function, or an
/// aligned atomic).
pub unsafe fn rmw(p: *mut u8, method: Method, op: Op, value: u32, desired: u32) -> u32 {
    let apply = |old: u32| semantics::atomic(op, old, value, desired).unwrap_or(old);
    match method {
        Method::Aligned => {
            // SAFETY: `p` is 4-aligned (the address is, and the window base is page aligned)
            // and valid for 4 bytes; concurrent accesses are atomic (caller).
            let cell = unsafe { AtomicU32::from_ptr(p.cast()) };
            // Device memory is little-endian; the atomic holds native-endian values.
            let mut seen = cell.load(Ordering::Relaxed);
            loop {
                let old = u32::from_le(seen);
                let new = apply(old).to_le();
                match cell.compare_exchange_weak(seen, new, Ordering::SeqCst, Ordering::Relaxed) {
                    Ok(_) => return old,
                    Err(now) => seen = now,
                }
            }
        }
        Method::InWord => {
            let shift = 8 * (p as usize % 8) as u32;
            // SAFETY: the caller guarantees the aligned word around `p` is valid; concurrent
            // accesses are atomic.
            let word = unsafe { AtomicU64::from_ptr(p.wrapping_sub(p as usize % 8).cast()) };
            let mut seen = word.load(Ordering::Relaxed);
            loop {
                // Byte k of the word is bits 8k.. of its little-endian value.
                let bytes = u64::from_le(seen);
                let old = (bytes >> shift) as u32;
                let new = (bytes & !(0xFFFF_FFFF_u64 << shift) | (apply(old) as u64) << shift).to_le();
                match word.compare_exchange_weak(seen, new, Ordering::SeqCst, Ordering::Relaxed) {
                    Ok(_) => return old,
                    Err(now) => seen = now,
                }
            }
        }
        Method::Locked => {
            #[cfg(target_arch = "x86_64")]
            {
                // SAFETY: `p` is valid for reads and writes of 4 bytes (caller).
                let mut old = unsafe { x86::guess(p) };
                loop {
                    // SAFETY: as above.
                    let seen = unsafe { x86::compare_exchange(p, old, apply(old)) };
                    if seen == old {
                        return old;
                    }
                    old = seen;
                }
            }
            #[cfg(not(target_arch = "x86_64"))]
            {
                unreachable!("`method` gives Locked only on x86_64")
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    /// The 4 bytes at `p`, read by one plain `mov` (a first guess for [`compare_exchange`],
    /// which checks it; it may be torn when another thread writes meanwhile).
    ///
    /// # Safety
    /// `p` must be valid for reads of 4 bytes.
    #[inline]
    pub unsafe fn guess(p: *const u8) -> u32 {
        let v: u32;
        // SAFETY: `p` is readable for 4 bytes (caller); x86 allows unaligned loads. The
        // block only reads those bytes and touches neither the stack nor the flags.
        unsafe {
            std::arch::asm!(
                "mov {v:e}, dword ptr [{p}]",
                p = in(reg) p,
                v = out(reg) v,
                options(nostack, preserves_flags, readonly),
            )
        };
        v
    }

    /// `lock cmpxchg` on the 4 bytes at `p`: if they hold `expected`, store `new`; returns
    /// what they held. Atomic at any alignment, even across a cache line (a split lock).
    ///
    /// # Safety
    /// `p` must be valid for reads and writes of 4 bytes.
    #[inline]
    pub unsafe fn compare_exchange(p: *mut u8, expected: u32, new: u32) -> u32 {
        let seen: u32;
        // SAFETY: `p` is readable and writable for 4 bytes (caller). The locked instruction
        // is a full barrier (sequentially consistent, as the aligned path); the block
        // clobbers only eax (declared) and the flags (not declared preserved).
        unsafe {
            std::arch::asm!(
                "lock cmpxchg dword ptr [{p}], {new:e}",
                p = in(reg) p,
                new = in(reg) new,
                inout("eax") expected => seen,
                options(nostack),
            )
        };
        seen
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn methods_by_address_and_host() {
        for a in [0u64, 4, 8, 0x1000, 0xFFFF_FFFC] {
            assert_eq!(method_on(a, true), Ok(Method::Aligned));
            assert_eq!(method_on(a, false), Ok(Method::Aligned));
        }
        for a in [1u64, 2, 3, 5, 6, 7, 63, 0x1001] {
            assert_eq!(method_on(a, true), Ok(Method::Locked), "{a}");
        }
        for a in [1u64, 2, 3, 9, 0x1003] {
            assert_eq!(method_on(a, false), Ok(Method::InWord), "{a}");
        }
        for a in [5u64, 6, 7, 13, 63] {
            assert_eq!(method_on(a, false), Err(Unsupported { address: a }), "{a}");
        }
        assert!(Unsupported { address: 0x3d }.to_string().contains("0x3d crosses an 8-byte boundary"));
    }

    /// Every method gives the value semantics::atomic gives, at every offset it serves,
    /// leaving the neighbouring bytes alone.
    #[test]
    fn every_method_applies_the_op_and_keeps_neighbours() {
        let ops = [
            (Op::AtomicAdd, 0x0102_0304, 0),
            (Op::AtomicSub, 5, 0),
            (Op::AtomicMin, 0x8000_0000, 0),
            (Op::AtomicMax, 0x8000_0000, 0),
            (Op::AtomicAnd, 0xF0F0_F0F0, 0),
            (Op::AtomicOr, 0x0F0F_0000, 0),
            (Op::AtomicXor, 0xFFFF_0000, 0),
            (Op::AtomicExchange, 0xCAFE_F00D, 0),
            (Op::AtomicCas, 0x4433_2211, 0x1234_5678),
            (Op::AtomicCas, 0, 0x1234_5678),
        ];
        let mut methods = vec![(Method::Aligned, 0..1), (Method::InWord, 1..5)];
        if HOST_LOCKS_UNALIGNED {
            methods.push((Method::Locked, 1..13));
        }
        for (method, offsets) in methods {
            for offset in offsets.filter(|o| (method == Method::Aligned) == (o % 4 == 0)) {
                for &(op, value, desired) in &ops {
                    let cells =
                        [AtomicU64::new(0xA5A5_A5A5_A5A5_A5A5), AtomicU64::new(0x5A5A_5A5A_5A5A_5A5A)];
                    let base = cells.as_ptr() as *mut u8;
                    // SAFETY: 16 bytes, 8-aligned; the 4 bytes at `offset` (< 13) and the
                    // aligned word around them are inside; no other thread sees them.
                    let p = unsafe { base.add(offset) };
                    let mut before = [0u8; 16];
                    // SAFETY: as above; nothing else touches the cells meanwhile.
                    unsafe { std::ptr::copy_nonoverlapping(base, before.as_mut_ptr(), 16) };
                    let want_old = u32::from_le_bytes(before[offset..offset + 4].try_into().unwrap());
                    // SAFETY: as above.
                    let old = unsafe { rmw(p, method, op, value, desired) };
                    assert_eq!(old, want_old, "{method:?} {op:?} at {offset}");
                    let mut after = [0u8; 16];
                    // SAFETY: as above.
                    unsafe { std::ptr::copy_nonoverlapping(base, after.as_mut_ptr(), 16) };
                    let new = semantics::atomic(op, old, value, desired).unwrap();
                    let mut want = before;
                    want[offset..offset + 4].copy_from_slice(&new.to_le_bytes());
                    assert_eq!(after, want, "{method:?} {op:?} at {offset}");
                }
            }
        }
    }

    /// Two threads adding to the same unaligned counter lose nothing, by each method that
    /// serves the offset on this host (an aligned neighbour counted at the same time too).
    #[test]
    fn concurrent_adds_are_not_lost() {
        // Adds per thread; fewer across a cache line (a split lock took 160 µs on a VM).
        let mut cases = vec![(Method::InWord, 2usize, 100_000u32)];
        if HOST_LOCKS_UNALIGNED {
            cases.extend([
                (Method::Locked, 2, 100_000),
                (Method::Locked, 6, 100_000),
                (Method::Locked, 62, 1000),
            ]);
        }
        for (method, offset, n) in cases {
            // One cache line and the next: offset 62 crosses the boundary between them.
            #[repr(align(64))]
            struct Lines([AtomicU64; 16]);
            let cells = Lines(std::array::from_fn(|_| AtomicU64::new(0)));
            let base = cells.0.as_ptr() as usize;
            std::thread::scope(|s| {
                for _ in 0..2 {
                    s.spawn(move || {
                        for _ in 0..n {
                            // SAFETY: 128 bytes, 64-aligned; `offset` + 4 and its aligned word
                            // are inside; every access to these bytes is an atomic `rmw`.
                            unsafe { rmw((base + offset) as *mut u8, method, Op::AtomicAdd, 1, 0) };
                        }
                    });
                }
            });
            let mut bytes = [0u8; 128];
            // SAFETY: the threads have ended.
            unsafe { std::ptr::copy_nonoverlapping(base as *const u8, bytes.as_mut_ptr(), 128) };
            let got = u32::from_le_bytes(bytes[offset..offset + 4].try_into().unwrap());
            assert_eq!(got, 2 * n, "{method:?} at {offset}");
        }
    }
}
