//! [`Module`] and [`Kernel`]: programs loaded once (parsed, built into trees, validated), then
//! launched any number of times on any device.

use crate::error::{Error, Result};
use std::path::Path;
use std::sync::Arc;

/// Every kernel of a `.wbin` binary or `.wave` source, loaded and validated.
///
/// Loading does all the checking: a kernel that loads can be launched without being parsed or
/// validated again. A module is cheap to clone and can be shared between threads and devices.
///
/// ```
/// let module = wave_jit::Module::from_source(
///     ".kernel first\n    halt\n.end\n.kernel second\n    halt\n.end\n",
///     "two.wave",
/// )?;
/// assert_eq!(module.len(), 2);
/// assert_eq!(module.kernel("second")?.index(), 1);
/// assert_eq!(module.kernel_at(0)?.name(), "first");
/// # Ok::<(), wave_jit::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Module {
    inner: Arc<wave_isa::Module>,
}

impl Module {
    /// Load a `.wbin` binary (as written by `wave-jit asm` or the reference `wave-asm`).
    pub fn from_wbin(bytes: &[u8]) -> Result<Module> {
        Ok(Module::of(wave_isa::Module::from_bytes(bytes)?))
    }

    /// Assemble `.wave` source and load it. `file_name` is used in error messages, which give
    /// every error of the file as `file_name:line:column` with the line and a hint.
    pub fn from_source(source: &str, file_name: &str) -> Result<Module> {
        Module::from_bytes(source.as_bytes(), file_name)
    }

    /// Load a `.wbin` binary (recognised by its `WAVE` magic) or `.wave` source (anything else;
    /// `file_name` names it in error messages).
    pub fn from_bytes(bytes: &[u8], file_name: &str) -> Result<Module> {
        let (module, _) = wave_isa::module::load_bytes(bytes, file_name)?;
        Ok(Module::of(module))
    }

    /// Load a `.wbin` or `.wave` file.
    pub fn load(path: impl AsRef<Path>) -> Result<Module> {
        let (module, _) = wave_isa::load_file(path)?;
        Ok(Module::of(module))
    }

    fn of(module: wave_isa::Module) -> Module {
        Module { inner: Arc::new(module) }
    }

    /// How many kernels the module has.
    pub fn len(&self) -> usize {
        self.inner.kernels.len()
    }

    /// Whether the module has no kernels.
    pub fn is_empty(&self) -> bool {
        self.inner.kernels.is_empty()
    }

    /// The kernel called `name`, or, when `name` is a decimal number that is not a kernel's
    /// name, the kernel with that index.
    pub fn kernel(&self, name: &str) -> Result<Kernel> {
        let by_name = self.inner.kernels.iter().position(|k| k.meta.name == name);
        let by_index = || name.parse::<usize>().ok().filter(|&i| i < self.len());
        match by_name.or_else(by_index) {
            Some(index) => Ok(Kernel { module: self.inner.clone(), index }),
            None => Err(self.no_such_kernel(name.to_string())),
        }
    }

    /// The kernel at `index` (file order, from 0).
    pub fn kernel_at(&self, index: usize) -> Result<Kernel> {
        if index < self.len() {
            Ok(Kernel { module: self.inner.clone(), index })
        } else {
            Err(self.no_such_kernel(index.to_string()))
        }
    }

    /// Every kernel, in file order.
    pub fn kernels(&self) -> impl ExactSizeIterator<Item = Kernel> + '_ {
        (0..self.len()).map(|index| Kernel { module: self.inner.clone(), index })
    }

    /// The loaded program (statement trees), for the crates underneath.
    pub fn ir(&self) -> &wave_isa::Module {
        &self.inner
    }

    fn no_such_kernel(&self, selector: String) -> Error {
        Error::NoSuchKernel {
            selector,
            available: self.inner.kernels.iter().map(|k| k.meta.name.clone()).collect(),
        }
    }
}

/// One kernel of a [`Module`], ready to launch with [`Device::launch`](crate::Device::launch).
///
/// It keeps its module alive: a kernel can outlive the `Module` value it came from.
#[derive(Clone, Debug)]
pub struct Kernel {
    module: Arc<wave_isa::Module>,
    index: usize,
}

impl Kernel {
    /// The kernel's name (`.kernel NAME`).
    pub fn name(&self) -> &str {
        &self.ir().meta.name
    }

    /// Its index in the module.
    pub fn index(&self) -> usize {
        self.index
    }

    /// Registers per thread (`.registers`): arguments go to registers 0, 1, ..., so at most
    /// this many arguments.
    pub fn registers(&self) -> u32 {
        let declared = self.ir().meta.registers;
        if declared > 0 {
            declared
        } else {
            wave_runtime::Dispatch::default().registers
        }
    }

    /// The kernel's statement tree, for the crates underneath.
    pub fn ir(&self) -> &wave_isa::ValidKernel {
        &self.module.kernels[self.index]
    }
}

/// Assemble `.wave` source into `.wbin` bytes (byte-compatible with the reference `wave-asm`).
/// `file_name` names the source in error messages (`file_name:line:column`).
///
/// ```
/// let wbin = wave_jit::assemble(".kernel k\n    halt\n.end\n", "k.wave")?;
/// assert_eq!(&wbin[..4], b"WAVE");
/// assert_eq!(wave_jit::Module::from_wbin(&wbin)?.kernel_at(0)?.name(), "k");
///
/// let error = wave_jit::assemble(".kernel k\n    hlt\n.end\n", "k.wave").unwrap_err();
/// assert!(error.to_string().contains("k.wave:2:"), "{error}");
/// # Ok::<(), wave_jit::Error>(())
/// ```
pub fn assemble(source: &str, file_name: &str) -> Result<Vec<u8>> {
    match wave_isa::asm::assemble(source, file_name) {
        Ok(assembled) => Ok(wave_isa::wbin::write(&assembled.file, false)),
        // The error loading the source gives: `does not assemble:` and every diagnostic.
        Err(diagnostics) => {
            Err(Error::Load(wave_isa::LoadError::new(wave_isa::module::LoadErrorKind::Assemble(diagnostics))))
        }
    }
}
