//! `run --memory-file PATH`: device memory read from a file before the run and written back to
//! it after a successful one (how the Python SDK's emulator fallback passes its buffers).
//! The write-back goes to a temporary file in the same directory, renamed over the original,
//! so a failed run or write leaves the file as it was.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use wave_runtime::Device;

pub struct MemoryFile {
    /// The file itself (a symlink is followed, so that it stays a symlink).
    path: PathBuf,
    contents: Vec<u8>,
}

impl MemoryFile {
    pub fn read(path: &Path) -> Result<MemoryFile, String> {
        let path = std::fs::canonicalize(path)
            .map_err(|e| format!("cannot open memory file {}: {e}", path.display()))?;
        let contents =
            std::fs::read(&path).map_err(|e| format!("cannot read memory file {}: {e}", path.display()))?;
        Ok(MemoryFile { path, contents })
    }

    pub fn size(&self) -> u64 {
        self.contents.len() as u64
    }

    /// Copy the file into device memory at offset 0.
    pub fn load_into(&self, device: &mut Device) -> Result<(), String> {
        device.write(0, &self.contents).map_err(|e| format!("memory file {}: {e}", self.path.display()))
    }

    /// Replace the file with the first `size()` bytes of device memory.
    pub fn write_back(&self, device: &Device) -> Result<(), String> {
        let data = device.read(0, self.size()).map_err(|e| e.to_string())?;
        let name = self.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let temporary = self.path.with_file_name(format!(".{name}.wave-jit-{}.tmp", std::process::id()));
        let written = (|| {
            let mut file = std::fs::File::create(&temporary)?;
            file.write_all(data)?;
            file.sync_all()?;
            if let Ok(metadata) = std::fs::metadata(&self.path) {
                file.set_permissions(metadata.permissions())?;
            }
            std::fs::rename(&temporary, &self.path)
        })();
        written.map_err(|e| {
            let _ = std::fs::remove_file(&temporary);
            format!("cannot write memory file {}: {e}", self.path.display())
        })
    }
}
