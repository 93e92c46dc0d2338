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

    /// Replace the file with the first `size()` bytes of device memory. A file that is not a
    /// regular one (`/dev/null`, a pipe) is written in place: renamed over, the device node
    /// or pipe itself would be replaced by a plain file (`run --memory-file /dev/null` as
    /// root turned `/dev/null` into a file that every later writer appended to).
    pub fn write_back(&self, device: &Device) -> Result<(), String> {
        let data = device.read(0, self.size()).map_err(|e| e.to_string())?;
        let regular = std::fs::metadata(&self.path).map(|m| m.file_type().is_file()).unwrap_or(true);
        if !regular {
            return std::fs::OpenOptions::new()
                .write(true)
                .open(&self.path)
                .and_then(|mut file| file.write_all(data))
                .map_err(|e| format!("cannot write memory file {}: {e}", self.path.display()));
        }
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

#[cfg(test)]
mod tests {
    use super::MemoryFile;
    use std::os::unix::fs::FileTypeExt;
    use wave_runtime::Device;

    /// A pipe as the memory file stays a pipe, and the memory goes into it (a reader takes it).
    #[test]
    fn a_pipe_is_written_in_place() {
        let dir = std::env::temp_dir().join(format!("wave-jit-memory-fifo-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("memory.fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
        assert!(made.success(), "mkfifo {}", fifo.display());
        let contents: Vec<u8> = (0..64u8).collect();
        let file = MemoryFile { path: fifo.clone(), contents: contents.clone() };
        let mut device = Device::new(4096).unwrap();
        let after: Vec<u8> = contents.iter().map(|b| b ^ 0x5a).collect();
        device.write(0, &after).unwrap();
        // Opening a pipe to read waits for a writer: the write-back.
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        file.write_back(&device).unwrap();
        let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        assert!(kind.is_fifo(), "the memory file is no longer a pipe: {kind:?}");
        assert_eq!(reader.join().unwrap(), after);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
