//! A first-fit allocator over device memory: free blocks in address order, merged with their
//! neighbours when a block is freed. Device memory is at most 4 GiB and buffers are few (one per
//! kernel argument, typically), so a sorted map is plenty.

use crate::error::{Error, Result};
use std::collections::BTreeMap;

/// The largest alignment accepted (an address is 32 bits).
pub(crate) const MAX_ALIGN: u64 = 1 << 31;

/// Which bytes of `[0, size)` are in use.
#[derive(Debug)]
pub(crate) struct Allocator {
    size: u64,
    /// Free blocks: start → length. Never empty blocks, never two adjacent ones.
    free: BTreeMap<u64, u64>,
    /// Live blocks: start → (length reserved, allocation number). At least 1 byte is
    /// reserved: a zero-length buffer still has an address of its own.
    used: BTreeMap<u64, (u64, u64)>,
    /// Numbers allocations, so that a freed block's handle is not taken for a later block at
    /// the same address.
    allocations: u64,
}

impl Allocator {
    pub(crate) fn new(size: u64) -> Allocator {
        Allocator { size, free: BTreeMap::from([(0, size)]), used: BTreeMap::new(), allocations: 0 }
    }

    /// A block of `len` bytes aligned to `align`, first fit from address 0: its start and its
    /// allocation number.
    pub(crate) fn alloc(&mut self, len: u64, align: u64) -> Result<(u64, u64)> {
        if !align.is_power_of_two() || align > MAX_ALIGN {
            return Err(Error::BadAlignment { align });
        }
        let reserve = len.max(1);
        let fit = self.free.iter().find_map(|(&start, &block)| {
            let aligned = start.checked_next_multiple_of(align)?;
            let end = aligned.checked_add(reserve)?;
            (end <= start + block).then_some((start, block, aligned, end))
        });
        let Some((start, block, aligned, end)) = fit else {
            return Err(Error::OutOfMemory {
                requested: len,
                align,
                largest_free: self.free.values().copied().max().unwrap_or(0),
                memory_size: self.size,
            });
        };
        self.free.remove(&start);
        if aligned > start {
            self.free.insert(start, aligned - start);
        }
        if end < start + block {
            self.free.insert(end, start + block - end);
        }
        self.allocations += 1;
        self.used.insert(aligned, (reserve, self.allocations));
        Ok((aligned, self.allocations))
    }

    /// Whether allocation number `id` is live and starts at `start`.
    pub(crate) fn is_live(&self, start: u64, id: u64) -> bool {
        self.used.get(&start).is_some_and(|&(_, live)| live == id)
    }

    /// Return the block at `start`; false if none is live there.
    pub(crate) fn free(&mut self, start: u64) -> bool {
        let Some((len, _)) = self.used.remove(&start) else {
            return false;
        };
        let (mut start, mut end) = (start, start + len);
        if let Some((&before, &before_len)) = self.free.range(..start).next_back() {
            if before + before_len == start {
                self.free.remove(&before);
                start = before;
            }
        }
        if let Some(after_len) = self.free.remove(&end) {
            end += after_len;
        }
        self.free.insert(start, end - start);
        true
    }

    /// Bytes in live blocks.
    pub(crate) fn used_bytes(&self) -> u64 {
        self.used.values().map(|&(len, _)| len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_fit_with_alignment_and_merging() {
        let mut a = Allocator::new(1024);
        let mut at = |len, align| a.alloc(len, align).unwrap().0;
        assert_eq!(at(10, 1), 0);
        assert_eq!(at(4, 16), 16);
        assert_eq!(at(100, 256), 256);
        // The gap 10..16 is free and 20..256 too: a 6-byte block goes first fit.
        assert_eq!(at(6, 1), 10);
        assert_eq!(a.used_bytes(), 120);
        assert!(a.free(16));
        assert!(!a.free(16), "double free is refused");
        assert!(a.free(0));
        assert!(a.free(10));
        // 0..256 is one free block again.
        assert_eq!(a.alloc(256, 1).unwrap().0, 0);
        assert!(a.free(0));
        assert!(a.free(256));
        assert_eq!(a.free.len(), 1);
        assert_eq!(a.free.get(&0), Some(&1024));
        assert_eq!(a.used_bytes(), 0);
    }

    #[test]
    fn zero_length_blocks_have_distinct_addresses() {
        let mut a = Allocator::new(64);
        let (x, x_id) = a.alloc(0, 4).unwrap();
        let (y, _) = a.alloc(0, 4).unwrap();
        assert_ne!(x, y);
        assert!(a.is_live(x, x_id));
    }

    #[test]
    fn a_freed_block_is_not_its_successor() {
        let mut a = Allocator::new(64);
        let (x, x_id) = a.alloc(16, 16).unwrap();
        a.free(x);
        let (y, y_id) = a.alloc(16, 16).unwrap();
        assert_eq!(x, y);
        assert!(!a.is_live(x, x_id));
        assert!(a.is_live(y, y_id));
    }

    #[test]
    fn errors_say_why() {
        let mut a = Allocator::new(100);
        a.alloc(60, 1).unwrap();
        match a.alloc(50, 1) {
            Err(Error::OutOfMemory { requested: 50, largest_free: 40, memory_size: 100, .. }) => {}
            other => panic!("expected out of memory, got {other:?}"),
        }
        assert!(matches!(a.alloc(1, 3), Err(Error::BadAlignment { align: 3 })));
        assert!(matches!(a.alloc(1, 0), Err(Error::BadAlignment { align: 0 })));
        assert!(a.alloc(u64::MAX, 1).is_err());
        // The whole 32-bit window.
        let mut full = Allocator::new(1 << 32);
        assert_eq!(full.alloc(1 << 31, MAX_ALIGN).unwrap().0, 0);
        assert_eq!(full.alloc(1 << 31, MAX_ALIGN).unwrap().0, 1 << 31);
        assert!(full.alloc(1, 1).is_err());
    }
}
