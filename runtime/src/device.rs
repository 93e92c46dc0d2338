//! Device memory: one anonymous mapping of 4 GiB + 64 KiB, of which the first `size()` bytes
//! are the device memory the kernel sees. The rest is a guard band for the JIT: every 32-bit
//! address plus a 16-byte access stays inside the mapping, so unchecked accesses can never
//! leave it. Pages are only backed once touched (no swap reservation).

use crate::caps::MAX_DEVICE_MEMORY;
use memmap2::{MmapMut, MmapOptions};
use std::fmt;

/// Bytes of the whole window: the 32-bit address space plus a 64 KiB tail.
pub const WINDOW_SIZE: u64 = (1 << 32) + (64 << 10);

/// Why a device memory operation failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceError {
    /// Size 0 or above 4 GiB.
    BadSize { size: u64 },
    /// The operating system refused the mapping.
    Map(String),
    /// `offset + len` beyond `size()`.
    OutOfRange { offset: u64, len: u64, size: u64 },
}

impl fmt::Display for DeviceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceError::BadSize { size } => write!(
                f,
                "device memory size {size} is not between 1 and {MAX_DEVICE_MEMORY} bytes (4 GiB)"
            ),
            DeviceError::Map(e) => write!(f, "cannot map device memory: {e}"),
            DeviceError::OutOfRange { offset, len, size } => write!(
                f,
                "device memory range 0x{offset:x}..0x{:x} ({len} bytes) is outside the {size} bytes of device memory",
                offset.saturating_add(*len)
            ),
        }
    }
}

impl std::error::Error for DeviceError {}

/// The device memory of one run (or of several dispatches in a row: it persists).
pub struct Device {
    map: MmapMut,
    size: u64,
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Device").field("size", &self.size).finish()
    }
}

impl Device {
    /// Zero-filled device memory of `size` bytes (1 ..= 4 GiB).
    pub fn new(size: u64) -> Result<Device, DeviceError> {
        if size == 0 || size > MAX_DEVICE_MEMORY {
            return Err(DeviceError::BadSize { size });
        }
        let len = usize::try_from(WINDOW_SIZE).map_err(|_| DeviceError::Map("needs a 64-bit host".into()))?;
        let map = MmapOptions::new()
            .len(len)
            .no_reserve_swap()
            .map_anon()
            .map_err(|e| DeviceError::Map(e.to_string()))?;
        Ok(Device { map, size })
    }

    /// Usable bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    fn range(&self, offset: u64, len: u64) -> Result<std::ops::Range<usize>, DeviceError> {
        match offset.checked_add(len) {
            Some(end) if end <= self.size => Ok(offset as usize..end as usize),
            _ => Err(DeviceError::OutOfRange { offset, len, size: self.size }),
        }
    }

    /// `len` bytes at `offset`.
    pub fn read(&self, offset: u64, len: u64) -> Result<&[u8], DeviceError> {
        let r = self.range(offset, len)?;
        Ok(&self.map[r])
    }

    /// Copy `bytes` to `offset`.
    pub fn write(&mut self, offset: u64, bytes: &[u8]) -> Result<(), DeviceError> {
        let r = self.range(offset, bytes.len() as u64)?;
        self.map[r].copy_from_slice(bytes);
        Ok(())
    }

    /// Zero every usable byte (a fresh run on the same mapping).
    pub fn clear(&mut self) {
        self.bytes_mut().fill(0);
    }

    /// The `size()` usable bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.map[..self.size as usize]
    }

    /// The `size()` usable bytes, mutable.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        let size = self.size as usize;
        &mut self.map[..size]
    }

    /// Base of the whole [`WINDOW_SIZE`]-byte window (for the JIT: any 32-bit address plus up
    /// to 64 KiB stays inside it).
    pub fn window_ptr(&mut self) -> *mut u8 {
        self.map.as_mut_ptr()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_write_and_bounds() {
        let mut d = Device::new(64).unwrap();
        assert_eq!(d.size(), 64);
        d.write(60, &[1, 2, 3, 4]).unwrap();
        assert_eq!(d.read(60, 4).unwrap(), &[1, 2, 3, 4]);
        assert_eq!(d.bytes().len(), 64);
        assert!(matches!(
            d.write(61, &[0; 4]),
            Err(DeviceError::OutOfRange { offset: 61, len: 4, size: 64 })
        ));
        assert!(d.read(u64::MAX, 2).is_err());
        assert_eq!(Device::new(0).unwrap_err(), DeviceError::BadSize { size: 0 });
        assert!(Device::new((1 << 32) + 1).is_err());
    }

    #[test]
    fn whole_window_is_mapped() {
        let mut d = Device::new(4096).unwrap();
        let p = d.window_ptr();
        // SAFETY: the mapping is WINDOW_SIZE bytes long; the last byte is inside it.
        unsafe {
            *p.add(WINDOW_SIZE as usize - 1) = 7;
            assert_eq!(*p.add(WINDOW_SIZE as usize - 1), 7);
        }
    }
}
