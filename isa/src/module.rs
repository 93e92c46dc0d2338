//! A loaded program: every kernel of a `.wbin` (or `.wave`) file built into a tree and
//! validated. This is the entry point engines and tools use.

use crate::ir::{build_kernel, BuildError, Kernel};
use crate::validate::{validate, ValidationError};
use crate::wbin::{self, WbinError, WbinFile};
use std::fmt;
use std::path::Path;

/// Every kernel of a file, built and validated, in file order.
#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    pub kernels: Vec<Kernel>,
}

/// Why a file could not be loaded.
#[derive(Debug)]
pub struct LoadError {
    /// The file, when loading from one (prefixes the message).
    pub file: Option<String>,
    pub kind: LoadErrorKind,
}

#[derive(Debug)]
pub enum LoadErrorKind {
    Io(std::io::Error),
    /// More than [`MAX_INPUT_BYTES`]: the size of a regular file, `None` for a stream.
    TooLarge {
        size: Option<u64>,
    },
    Wbin(WbinError),
    /// The `.wave` source did not assemble; the assembler's rendered diagnostics.
    Assemble(String),
    Build(BuildError),
    /// Every rule violation of every kernel.
    Invalid(Vec<ValidationError>),
    NoSuchKernel {
        selector: String,
        available: Vec<String>,
    },
}

impl LoadError {
    fn new(kind: LoadErrorKind) -> LoadError {
        LoadError { file: None, kind }
    }

    fn in_file(mut self, path: &Path) -> LoadError {
        self.file = Some(path.display().to_string());
        self
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{file}: ")?;
        }
        match &self.kind {
            LoadErrorKind::Io(e) => write!(f, "cannot read: {e}"),
            LoadErrorKind::TooLarge { size: Some(size) } => write!(
                f,
                "{size} bytes is more than the {MAX_INPUT_BYTES} bytes ({} MiB) a .wave or .wbin file may have",
                MAX_INPUT_BYTES >> 20
            ),
            LoadErrorKind::TooLarge { size: None } => write!(
                f,
                "not a regular file, and more than the {MAX_INPUT_BYTES} bytes ({} MiB) a .wave or .wbin file may have",
                MAX_INPUT_BYTES >> 20
            ),
            LoadErrorKind::Wbin(e) => write!(f, "{e}"),
            LoadErrorKind::Assemble(diagnostics) => write!(f, "does not assemble:\n{diagnostics}"),
            LoadErrorKind::Build(e) => write!(f, "{e}"),
            LoadErrorKind::Invalid(errors) => {
                let plural = if errors.len() == 1 { "" } else { "s" };
                write!(f, "{} validation error{plural}", errors.len())?;
                for e in errors {
                    write!(f, "\n  {e}")?;
                }
                Ok(())
            }
            LoadErrorKind::NoSuchKernel { selector, available } => {
                write!(f, "no kernel `{selector}`; ")?;
                if available.is_empty() {
                    return write!(f, "the file has no kernels");
                }
                let list: Vec<String> =
                    available.iter().enumerate().map(|(i, name)| format!("{i}: {name}")).collect();
                write!(f, "available kernels (name or index): {}", list.join(", "))
            }
        }
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            LoadErrorKind::Io(e) => Some(e),
            LoadErrorKind::Wbin(e) => Some(e),
            LoadErrorKind::Build(e) => Some(e),
            _ => None,
        }
    }
}

impl From<WbinError> for LoadError {
    fn from(e: WbinError) -> LoadError {
        LoadError::new(LoadErrorKind::Wbin(e))
    }
}

impl From<BuildError> for LoadError {
    fn from(e: BuildError) -> LoadError {
        LoadError::new(LoadErrorKind::Build(e))
    }
}

impl Module {
    /// Build every kernel's tree, then validate them all. A build error stops at that
    /// kernel; validation errors of all kernels are reported together.
    pub fn from_wbin(file: &WbinFile) -> Result<Module, LoadError> {
        let kernels = file
            .kernels
            .iter()
            .map(|k| build_kernel(k.meta.clone(), &k.code))
            .collect::<Result<Vec<_>, _>>()?;
        let errors: Vec<ValidationError> =
            kernels.iter().filter_map(|k| validate(k).err()).flatten().collect();
        if !errors.is_empty() {
            return Err(LoadError::new(LoadErrorKind::Invalid(errors)));
        }
        Ok(Module { kernels })
    }

    /// Parse a `.wbin` image and load it.
    pub fn from_bytes(bytes: &[u8]) -> Result<Module, LoadError> {
        Module::from_wbin(&wbin::parse(bytes)?)
    }

    /// A kernel by name, or by index when the selector is a decimal number that is not also
    /// a kernel's name.
    pub fn kernel(&self, selector: &str) -> Result<&Kernel, LoadError> {
        let by_name = self.kernels.iter().find(|k| k.meta.name == selector);
        let by_index = || selector.parse::<usize>().ok().and_then(|i| self.kernels.get(i));
        by_name.or_else(by_index).ok_or_else(|| {
            LoadError::new(LoadErrorKind::NoSuchKernel {
                selector: selector.to_string(),
                available: self.kernels.iter().map(|k| k.meta.name.clone()).collect(),
            })
        })
    }
}

/// The largest `.wave` or `.wbin` file the tools read: 64 MiB (a `.wbin` of 16 million
/// instructions, assembly source of some 2 million). A larger file is refused before it is
/// read in full.
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// Why [`read_at_most`] returned no bytes.
#[derive(Debug)]
pub enum ReadError {
    Io(std::io::Error),
    /// More than the limit: the size of a regular file, `None` for anything else.
    TooLarge {
        size: Option<u64>,
    },
}

/// The bytes of the file at `path` if it has at most `limit`. A regular file is refused by
/// its size before anything is read; anything else (a pipe, `/dev/zero`) is read until more
/// than `limit` bytes came, so memory stays bounded either way.
pub fn read_at_most(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(ReadError::Io)?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    if meta.is_file() && meta.len() > limit {
        return Err(ReadError::TooLarge { size: Some(meta.len()) });
    }
    let mut bytes = Vec::with_capacity(if meta.is_file() { meta.len() as usize } else { 0 });
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        // A regular file that grew since, or a stream.
        return Err(ReadError::TooLarge { size: meta.is_file().then_some(bytes.len() as u64) });
    }
    Ok(bytes)
}

/// A `.wave` or `.wbin` file's bytes, at most [`MAX_INPUT_BYTES`].
pub fn read_kernel_file(path: &Path) -> Result<Vec<u8>, LoadError> {
    read_at_most(path, MAX_INPUT_BYTES)
        .map_err(|e| {
            LoadError::new(match e {
                ReadError::Io(e) => LoadErrorKind::Io(e),
                ReadError::TooLarge { size } => LoadErrorKind::TooLarge { size },
            })
        })
        .map_err(|e| e.in_file(path))
}

/// Load a `.wbin` file (recognised by its `WAVE` magic) or `.wave` assembly source
/// (anything else), returning the module and the container it came from.
pub fn load_file(path: impl AsRef<Path>) -> Result<(Module, WbinFile), LoadError> {
    let path = path.as_ref();
    let bytes = read_kernel_file(path)?;
    load_bytes(&bytes, &path.display().to_string()).map_err(|e| e.in_file(path))
}

/// [`load_file`] on bytes already read; `file_name` is used in assembler diagnostics.
pub fn load_bytes(bytes: &[u8], file_name: &str) -> Result<(Module, WbinFile), LoadError> {
    let file = if bytes.starts_with(&wbin::MAGIC) {
        wbin::parse(bytes)?
    } else {
        let source = std::str::from_utf8(bytes).map_err(|e| {
            LoadError::new(LoadErrorKind::Assemble(format!(
                "neither a .wbin file (no `WAVE` magic) nor UTF-8 assembly source (invalid byte at {})",
                e.valid_up_to()
            )))
        })?;
        let assembled = crate::asm::assemble(source, file_name)
            .map_err(|d| LoadError::new(LoadErrorKind::Assemble(d.to_string())))?;
        assembled.file
    };
    Ok((Module::from_wbin(&file)?, file))
}
