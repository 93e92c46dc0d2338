//! A loaded program: every kernel of a `.wbin` (or `.wave`) file built into a tree and
//! validated. This is the entry point engines and tools use.

use crate::asm::Diagnostics;
use crate::encoding::{Encoding, EncodingChoice};
use crate::ir::{build_kernel_in, BuildError, BuildErrorKind};
use crate::validate::{ValidKernel, ValidationError};
use crate::wbin::{self, WbinError, WbinFile};
use std::fmt;
use std::path::Path;

/// Every kernel of a file, built and validated, in file order.
#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    pub kernels: Vec<ValidKernel>,
}

/// Why a file could not be loaded.
#[derive(Debug)]
pub struct LoadError {
    /// The file, when loading from one (prefixes the message).
    pub file: Option<String>,
    pub kind: LoadErrorKind,
    /// Context printed after the message, one `note:` line each.
    pub notes: Vec<String>,
}

#[derive(Debug)]
pub enum LoadErrorKind {
    Io(std::io::Error),
    /// More than [`MAX_INPUT_BYTES`]: the size of a regular file, `None` for a stream.
    TooLarge {
        size: Option<u64>,
    },
    Wbin(WbinError),
    /// The `.wave` source did not assemble: every diagnostic.
    Assemble(Diagnostics),
    /// Neither a `.wbin` file nor UTF-8 text.
    NotWaveFile {
        /// The first bytes of the file (at most 4).
        start: Vec<u8>,
        /// Where the text stops being UTF-8.
        invalid_at: usize,
    },
    /// An encoding was forced for assembly source, which is always in the current one.
    EncodingOfSource(Encoding),
    Build(BuildError),
    /// Every rule violation of every kernel.
    Invalid(Vec<ValidationError>),
    NoSuchKernel {
        selector: String,
        available: Vec<String>,
    },
}

impl LoadError {
    /// An error of this kind, not (yet) tied to a file.
    pub fn new(kind: LoadErrorKind) -> LoadError {
        LoadError { file: None, kind, notes: Vec::new() }
    }

    fn note(mut self, note: String) -> LoadError {
        self.notes.push(note);
        self
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
        write!(f, "{}", self.kind)?;
        for note in &self.notes {
            write!(f, "\n  note: {note}")?;
        }
        Ok(())
    }
}

impl fmt::Display for LoadErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
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
            LoadErrorKind::NotWaveFile { start, invalid_at } => {
                let bytes: Vec<String> = start.iter().map(|b| format!("{b:02x}")).collect();
                write!(
                    f,
                    "not a WAVE file: a .wbin binary starts with `WAVE` (57 41 56 45), this one with {}, and it is not assembly source either (not UTF-8 text at byte {invalid_at})",
                    if bytes.is_empty() { "nothing (it is empty)".to_string() } else { bytes.join(" ") }
                )
            }
            LoadErrorKind::EncodingOfSource(encoding) => write!(
                f,
                "assembly source assembles to the current encoding; `{encoding}` applies only to .wbin binaries"
            ),
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
            LoadErrorKind::Assemble(d) => Some(d),
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
    /// Build every kernel's tree from code in `file.encoding`, then validate them all. A build
    /// error stops at that kernel; validation errors of all kernels are reported together.
    pub fn from_wbin(file: &WbinFile) -> Result<Module, LoadError> {
        let kernels = file
            .kernels
            .iter()
            .map(|k| build_kernel_in(k.meta.clone(), &k.code, file.encoding))
            .collect::<Result<Vec<_>, _>>()?;
        let mut valid = Vec::with_capacity(kernels.len());
        let mut errors: Vec<ValidationError> = Vec::new();
        for kernel in kernels {
            match ValidKernel::new(kernel) {
                Ok(kernel) => valid.push(kernel),
                Err(e) => errors.extend(e),
            }
        }
        if !errors.is_empty() {
            return Err(LoadError::new(LoadErrorKind::Invalid(errors)));
        }
        Ok(Module { kernels: valid })
    }

    /// Parse a `.wbin` image and load it in whichever encoding its code is in ([`load_wbin`]).
    pub fn from_bytes(bytes: &[u8]) -> Result<Module, LoadError> {
        load_wbin(wbin::parse(bytes)?, EncodingChoice::Auto).map(|(module, _)| module)
    }

    /// A kernel by name, or by index when the selector is a decimal number that is not also
    /// a kernel's name.
    pub fn kernel(&self, selector: &str) -> Result<&ValidKernel, LoadError> {
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

/// Load a parsed `.wbin` file, its code read in the encoding `choice` names, or with
/// [`EncodingChoice::Auto`], in the one it is in. Both encodings share the container and its
/// version, so the rule is: the current encoding, unless some kernel fails to decode, build or
/// validate in it and every kernel loads in the 0.1.2 encoding. A file valid in both (only
/// code without memory, atomic, wave or control instructions can be: their opcodes do not
/// decode in the other encoding) is therefore read as current; force the other with `choice`. The returned file has `encoding` set to the one used.
pub fn load_wbin(mut file: WbinFile, choice: EncodingChoice) -> Result<(Module, WbinFile), LoadError> {
    let encoding = match choice {
        EncodingChoice::Force(encoding) => encoding,
        EncodingChoice::Auto => Encoding::Current,
    };
    file.encoding = encoding;
    let error = match Module::from_wbin(&file) {
        Ok(module) => return Ok((module, file)),
        Err(e) => e,
    };
    if let EncodingChoice::Force(encoding) = choice {
        return Err(error.note(format!("the code was read in {}", encoding.describe())));
    }
    file.encoding = Encoding::Legacy012;
    match Module::from_wbin(&file) {
        Ok(module) => Ok((module, file)),
        // A file that decodes in the current encoding is meant to be in it: its own error
        // is the useful one. One that does not may be a broken old binary: say both.
        Err(_) if !is_decode_error(&error) => Err(error),
        Err(legacy) => {
            Err(error
                .note(format!("it does not load in {} either: {legacy}", Encoding::Legacy012.describe())))
        }
    }
}

fn is_decode_error(e: &LoadError) -> bool {
    matches!(&e.kind, LoadErrorKind::Build(b) if matches!(b.kind, BuildErrorKind::Decode(_) | BuildErrorKind::Misaligned { .. }))
}

/// The encoding to list a file's code in: the one [`load_wbin`] picks, or, for code that does
/// not load (a disassembler shows broken structure too), the first that decodes every kernel.
pub fn listing_encoding(file: &WbinFile, choice: EncodingChoice) -> Encoding {
    if let EncodingChoice::Force(encoding) = choice {
        return encoding;
    }
    if let Ok((_, loaded)) = load_wbin(file.clone(), choice) {
        return loaded.encoding;
    }
    let decodes = |encoding| {
        file.kernels.iter().all(|k| crate::ir::decode_code_in(&k.meta.name, &k.code, encoding).is_ok())
    };
    [Encoding::Current, Encoding::Legacy012].into_iter().find(|&e| decodes(e)).unwrap_or(Encoding::Current)
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
    load_file_with(path, EncodingChoice::Auto)
}

/// [`load_file`], reading a binary's code in the encoding `choice` names.
pub fn load_file_with(
    path: impl AsRef<Path>,
    choice: EncodingChoice,
) -> Result<(Module, WbinFile), LoadError> {
    let path = path.as_ref();
    let bytes = read_kernel_file(path)?;
    load_bytes_with(&bytes, &path.display().to_string(), choice).map_err(|e| e.in_file(path))
}

/// [`load_file`] on bytes already read; `file_name` is used in assembler diagnostics.
pub fn load_bytes(bytes: &[u8], file_name: &str) -> Result<(Module, WbinFile), LoadError> {
    load_bytes_with(bytes, file_name, EncodingChoice::Auto)
}

/// [`load_file_with`] on bytes already read.
pub fn load_bytes_with(
    bytes: &[u8],
    file_name: &str,
    choice: EncodingChoice,
) -> Result<(Module, WbinFile), LoadError> {
    if bytes.starts_with(&wbin::MAGIC) {
        return load_wbin(wbin::parse(bytes)?, choice);
    }
    let source = std::str::from_utf8(bytes).map_err(|e| {
        LoadError::new(LoadErrorKind::NotWaveFile {
            start: bytes.iter().take(4).copied().collect(),
            invalid_at: e.valid_up_to(),
        })
    })?;
    if let EncodingChoice::Force(encoding @ Encoding::Legacy012) = choice {
        return Err(LoadError::new(LoadErrorKind::EncodingOfSource(encoding)));
    }
    let assembled =
        crate::asm::assemble(source, file_name).map_err(|d| LoadError::new(LoadErrorKind::Assemble(d)))?;
    let file = assembled.file;
    Ok((Module::from_wbin(&file)?, file))
}
