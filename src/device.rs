//! [`Device`]: device memory with an allocator, and synchronous kernel launches on the JIT or
//! the interpreter.

use crate::alloc::Allocator;
use crate::error::{Error, Result};
use crate::module::Kernel;
use std::fmt;
use std::ops::Range;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use wave_runtime::{Dispatch, Engine, Interpreter, Stats};

/// Device memory a [`Device`] gets when [`DeviceConfig`] does not say: 256 MiB. Pages are
/// backed only once touched, so a large size costs nothing until it is used.
pub const DEFAULT_MEMORY: u64 = 256 << 20;

/// Alignment of [`Device::alloc`] and [`Device::alloc_from`]: 256 bytes, as GPU runtimes give.
pub const DEFAULT_ALIGN: u64 = 256;

/// Which engine runs a device's kernels. Both give bit-for-bit the same device memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum EngineKind {
    /// The Cranelift JIT: kernels are compiled to host SIMD code on their first launch (cached
    /// by kernel, wave width and flags), workgroups run on all cores.
    #[default]
    Jit,
    /// The reference interpreter: single-threaded, exact, slow. For checking and debugging.
    Interpreter,
}

impl EngineKind {
    /// `"jit"` or `"interp"`, as the command line's `--engine` takes.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Jit => "jit",
            EngineKind::Interpreter => "interp",
        }
    }
}

impl FromStr for EngineKind {
    type Err = String;

    /// `jit`, or `interp` / `interpreter`.
    fn from_str(s: &str) -> std::result::Result<EngineKind, String> {
        match s {
            "jit" => Ok(EngineKind::Jit),
            "interp" | "interpreter" => Ok(EngineKind::Interpreter),
            other => Err(format!("unknown engine `{other}` (choose interp or jit)")),
        }
    }
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How to make a [`Device`]. `Default` gives 256 MiB, all cores, the JIT.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceConfig {
    /// Bytes of device memory, 1 to 4 GiB (addresses are 32 bits).
    pub memory: u64,
    /// JIT worker threads; 0 = all cores. The interpreter is single-threaded.
    pub threads: usize,
    /// The engine that runs kernels.
    pub engine: EngineKind,
    /// JIT: pin each worker thread to a core of its own (off by default; see README,
    /// Performance, for what it changes).
    pub pin_threads: bool,
}

impl Default for DeviceConfig {
    fn default() -> DeviceConfig {
        DeviceConfig { memory: DEFAULT_MEMORY, threads: 0, engine: EngineKind::Jit, pin_threads: false }
    }
}

/// A block of device memory from [`Device::alloc`]. A plain value: copy it freely, and pass it
/// to [`Device::free`] once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Buffer {
    device: u64,
    /// The allocator's number for it (a later buffer at the same address is another).
    id: u64,
    address: u32,
    len: u64,
}

impl Buffer {
    /// The device address of its first byte: what a kernel receives for it.
    pub fn address(&self) -> u32 {
        self.address
    }

    /// Its length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether it has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// One kernel argument. Argument `i` of a launch is the initial value of register `i` in every
/// thread (the reference runtime's convention): a buffer's device address, a `u32` as it is,
/// an `i32` as its two's-complement bits, an `f32` as its IEEE bits.
///
/// Every argument type converts with `into()`: `&buffer`, `5u32`, `-1i32`, `2.5f32`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arg {
    /// A buffer: its device address.
    Buffer(Buffer),
    /// An unsigned integer.
    U32(u32),
    /// A signed integer.
    I32(i32),
    /// A float.
    F32(f32),
}

impl From<Buffer> for Arg {
    fn from(b: Buffer) -> Arg {
        Arg::Buffer(b)
    }
}

impl From<&Buffer> for Arg {
    fn from(b: &Buffer) -> Arg {
        Arg::Buffer(*b)
    }
}

impl From<u32> for Arg {
    fn from(v: u32) -> Arg {
        Arg::U32(v)
    }
}

impl From<i32> for Arg {
    fn from(v: i32) -> Arg {
        Arg::I32(v)
    }
}

impl From<f32> for Arg {
    fn from(v: f32) -> Arg {
        Arg::F32(v)
    }
}

/// The shape and limits of a launch. [`LaunchConfig::new`] takes the grid and workgroup and
/// gives the reference runtime's defaults for the rest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Workgroups in x, y, z.
    pub grid: [u32; 3],
    /// Threads per workgroup in x, y, z (a kernel's `.workgroup_size` replaces it).
    pub workgroup: [u32; 3],
    /// Lanes per wave: 4, 8, 16, 32 (the default) or 64.
    pub wave_width: u32,
    /// Wave-instructions per workgroup before the launch stops with an error; 0 = unlimited.
    pub max_instructions: u64,
    /// JIT only: no bounds checks on memory accesses (they still cannot leave the device's
    /// private 4 GiB window). Faster, but an out-of-bounds access is no longer reported.
    pub unchecked: bool,
}

impl LaunchConfig {
    /// `grid` workgroups of `workgroup` threads, default wave width (32) and limits.
    pub fn new(grid: [u32; 3], workgroup: [u32; 3]) -> LaunchConfig {
        let defaults = Dispatch::default();
        LaunchConfig {
            grid,
            workgroup,
            wave_width: defaults.wave_width,
            max_instructions: defaults.max_instructions,
            unchecked: defaults.unchecked,
        }
    }
}

/// What a finished launch reports.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaunchReport {
    /// Execution counters: all of them from the interpreter; workgroups and waves from the JIT
    /// (per-operation counters would cost instructions in its code).
    pub stats: Stats,
    /// Time the JIT spent compiling the kernel for this launch: zero when its cache had the
    /// code (a kernel with the same code, wave width, workgroup size and flags ran before in
    /// this process), and always with the interpreter.
    pub compile_time: Duration,
}

/// A value that device memory holds as little-endian bytes: `u8`, `i8`, `u16`, `i16`, `u32`,
/// `i32`, `u64`, `i64`, `f32`, `f64`.
pub trait Element: Copy + sealed::Sealed {
    /// Bytes per value.
    const SIZE: usize;
    /// Write `self` to `out` (`SIZE` bytes), little-endian.
    fn store(self, out: &mut [u8]);
    /// Read a value from `bytes` (`SIZE` bytes), little-endian.
    fn load(bytes: &[u8]) -> Self;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! element {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn store(self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_le_bytes());
            }
            fn load(bytes: &[u8]) -> $t {
                let mut le = [0u8; std::mem::size_of::<$t>()];
                le.copy_from_slice(bytes);
                <$t>::from_le_bytes(le)
            }
        }
    )*};
}
element!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

/// The engine instance a device runs kernels on.
#[derive(Debug)]
enum EngineImpl {
    Jit(wave_jit_codegen::JitEngine),
    Interpreter(Interpreter),
}

/// A WAVE device on the CPU: device memory (a 32-bit address space, zero-filled when created),
/// an allocator over it, and an engine that runs kernels on it.
///
/// Launches are synchronous: when [`launch`](Device::launch) returns, the kernel has finished
/// and its writes are in device memory.
///
/// ```
/// use wave_jit::{Device, Module};
///
/// let module = Module::from_source(
///     ".kernel double                       ; r0 = data, r1 = n
///          mov r2, sr_workgroup_id_x
///          mov r3, sr_workgroup_size_x
///          mov r4, sr_thread_id_x
///          imad r2, r2, r3, r4             ; i
///          icmp_lt p0, r2, r1              ; i < n
///          if p0
///              mov_imm r3, 2
///              shl r3, r2, r3              ; byte offset i * 4
///              iadd r3, r0, r3
///              device_load_u32 r4, r3
///              iadd r4, r4, r4
///              device_store_u32 r3, r4
///          endif
///          halt
///      .end",
///     "double.wave",
/// )?;
/// let kernel = module.kernel("double")?;
///
/// let mut device = Device::new()?;
/// let data = device.alloc_from(&[1u32, 2, 3, 4, 5])?;
/// device.launch(&kernel, [1, 1, 1], [32, 1, 1], &[data.into(), 5u32.into()])?;
/// assert_eq!(device.read::<u32>(&data)?, [2, 4, 6, 8, 10]);
/// device.free(data)?;
/// # Ok::<(), wave_jit::Error>(())
/// ```
pub struct Device {
    memory: wave_runtime::Device,
    allocator: Allocator,
    engine: EngineImpl,
    threads: usize,
    pin_threads: bool,
    /// Tells this device's buffers from other devices'.
    id: u64,
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Device")
            .field("memory", &self.memory.size())
            .field("used", &self.allocator.used_bytes())
            .field("engine", &self.engine_kind())
            .field("threads", &self.threads)
            .field("pin_threads", &self.pin_threads)
            .finish()
    }
}

impl Device {
    /// A device with the default configuration: 256 MiB, all cores, the JIT.
    pub fn new() -> Result<Device> {
        Device::with_config(DeviceConfig::default())
    }

    /// A device as `config` says.
    ///
    /// ```
    /// use wave_jit::{Device, DeviceConfig, EngineKind};
    ///
    /// let config = DeviceConfig { memory: 1 << 20, threads: 1, engine: EngineKind::Interpreter, pin_threads: false };
    /// let device = Device::with_config(config)?;
    /// assert_eq!(device.memory_size(), 1 << 20);
    /// assert!(Device::with_config(DeviceConfig { memory: 0, ..DeviceConfig::default() }).is_err());
    /// # Ok::<(), wave_jit::Error>(())
    /// ```
    pub fn with_config(config: DeviceConfig) -> Result<Device> {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        let memory = wave_runtime::Device::new(config.memory)?;
        let engine = match config.engine {
            // The JIT itself, always: a launch never silently runs on the interpreter (the
            // CLI's default engine interprets small dispatches and kernels the JIT declines).
            EngineKind::Jit => EngineImpl::Jit(wave_jit_codegen::JitEngine::strict()),
            EngineKind::Interpreter => EngineImpl::Interpreter(Interpreter::new()),
        };
        Ok(Device {
            allocator: Allocator::new(memory.size()),
            memory,
            engine,
            threads: config.threads,
            pin_threads: config.pin_threads,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        })
    }

    /// Bytes of device memory.
    pub fn memory_size(&self) -> u64 {
        self.memory.size()
    }

    /// Bytes held by live buffers.
    pub fn used_bytes(&self) -> u64 {
        self.allocator.used_bytes()
    }

    /// The engine that runs this device's kernels.
    pub fn engine_kind(&self) -> EngineKind {
        match self.engine {
            EngineImpl::Jit(_) => EngineKind::Jit,
            EngineImpl::Interpreter(_) => EngineKind::Interpreter,
        }
    }

    /// A zero-filled buffer of `len` bytes, aligned to [`DEFAULT_ALIGN`].
    pub fn alloc(&mut self, len: u64) -> Result<Buffer> {
        self.alloc_aligned(len, DEFAULT_ALIGN)
    }

    /// A zero-filled buffer of `len` bytes whose address is a multiple of `align` (a power of
    /// two). Allocation is first fit from address 0, so the first buffers of a fresh device lie
    /// one after another from address 0.
    ///
    /// ```
    /// let mut device = wave_jit::Device::new()?;
    /// let a = device.alloc_aligned(10, 4)?;
    /// let b = device.alloc_aligned(8, 16)?;
    /// assert_eq!((a.address(), b.address()), (0, 16));
    /// assert!(device.alloc_aligned(8, 3).is_err());
    /// # Ok::<(), wave_jit::Error>(())
    /// ```
    pub fn alloc_aligned(&mut self, len: u64, align: u64) -> Result<Buffer> {
        let buffer = self.reserve(len, align)?;
        let range = self.range(&buffer, 0, len)?;
        self.memory.bytes_mut()[range].fill(0);
        Ok(buffer)
    }

    /// A buffer holding `data`, aligned to [`DEFAULT_ALIGN`].
    pub fn alloc_from<T: Element>(&mut self, data: &[T]) -> Result<Buffer> {
        let buffer = self.reserve(byte_len::<T>(data.len()), DEFAULT_ALIGN)?;
        self.write(&buffer, data)?;
        Ok(buffer)
    }

    /// A buffer of `len` bytes whose contents are whatever device memory held there: for a
    /// caller that writes all of it next.
    pub(crate) fn reserve(&mut self, len: u64, align: u64) -> Result<Buffer> {
        let (address, id) = self.allocator.alloc(len, align)?;
        // The allocator works inside `memory_size()` ≤ 4 GiB, so the address fits 32 bits.
        let address = u32::try_from(address).map_err(|_| Error::OutOfMemory {
            requested: len,
            align,
            largest_free: 0,
            memory_size: self.memory.size(),
        })?;
        Ok(Buffer { device: self.id, id, address, len })
    }

    /// Give a buffer's memory back. Using the buffer afterwards is an error
    /// ([`Error::UnknownBuffer`]).
    pub fn free(&mut self, buffer: Buffer) -> Result<()> {
        self.check(&buffer)?;
        self.allocator.free(buffer.address as u64);
        Ok(())
    }

    /// Copy `data` to the start of `buffer`.
    pub fn write<T: Element>(&mut self, buffer: &Buffer, data: &[T]) -> Result<()> {
        self.write_at(buffer, 0, data)
    }

    /// Copy `data` into `buffer` from byte `offset` on.
    pub fn write_at<T: Element>(&mut self, buffer: &Buffer, offset: u64, data: &[T]) -> Result<()> {
        let range = self.range(buffer, offset, byte_len::<T>(data.len()))?;
        let bytes = &mut self.memory.bytes_mut()[range];
        for (out, &value) in bytes.chunks_exact_mut(T::SIZE).zip(data) {
            value.store(out);
        }
        Ok(())
    }

    /// Copy `data` into `buffer` from byte `offset` on (one `memcpy`).
    pub fn write_bytes(&mut self, buffer: &Buffer, offset: u64, data: &[u8]) -> Result<()> {
        let range = self.range(buffer, offset, data.len() as u64)?;
        self.memory.bytes_mut()[range].copy_from_slice(data);
        Ok(())
    }

    /// The whole buffer as values of `T` (its length must be a multiple of `T`'s size).
    pub fn read<T: Element>(&self, buffer: &Buffer) -> Result<Vec<T>> {
        if !buffer.len.is_multiple_of(T::SIZE as u64) {
            return Err(Error::PartialElement { buffer_len: buffer.len, element_size: T::SIZE });
        }
        let range = self.range(buffer, 0, buffer.len)?;
        Ok(self.memory.bytes()[range].chunks_exact(T::SIZE).map(T::load).collect())
    }

    /// Fill `out` with values of `T` read from `buffer` from byte `offset` on.
    pub fn read_at<T: Element>(&self, buffer: &Buffer, offset: u64, out: &mut [T]) -> Result<()> {
        let range = self.range(buffer, offset, byte_len::<T>(out.len()))?;
        for (value, bytes) in out.iter_mut().zip(self.memory.bytes()[range].chunks_exact(T::SIZE)) {
            *value = T::load(bytes);
        }
        Ok(())
    }

    /// Fill `out` with bytes of `buffer` from byte `offset` on (one `memcpy`).
    pub fn read_bytes(&self, buffer: &Buffer, offset: u64, out: &mut [u8]) -> Result<()> {
        let range = self.range(buffer, offset, out.len() as u64)?;
        out.copy_from_slice(&self.memory.bytes()[range]);
        Ok(())
    }

    /// All of device memory, whatever the buffers: for programs that place data at fixed
    /// addresses themselves.
    pub fn memory(&self) -> &[u8] {
        self.memory.bytes()
    }

    /// All of device memory, writable.
    pub fn memory_mut(&mut self) -> &mut [u8] {
        self.memory.bytes_mut()
    }

    /// Run `kernel` over `grid` workgroups of `workgroup` threads with `args` in registers 0,
    /// 1, ... (see [`Arg`]), default wave width and limits. Returns when the kernel has
    /// finished.
    pub fn launch(
        &mut self,
        kernel: &Kernel,
        grid: [u32; 3],
        workgroup: [u32; 3],
        args: &[Arg],
    ) -> Result<LaunchReport> {
        self.launch_with(kernel, &LaunchConfig::new(grid, workgroup), args)
    }

    /// [`launch`](Device::launch) with every setting of `config`.
    ///
    /// ```
    /// use wave_jit::{Device, LaunchConfig, Module};
    ///
    /// let module = Module::from_source(".kernel spin\n loop\n  mov r0, r0\n endloop\n halt\n.end\n", "spin.wave")?;
    /// let mut device = Device::new()?;
    /// let config = LaunchConfig { max_instructions: 1000, ..LaunchConfig::new([1, 1, 1], [32, 1, 1]) };
    /// let error = device.launch_with(&module.kernel("spin")?, &config, &[]).unwrap_err();
    /// assert!(error.to_string().contains("instruction limit of 1000"), "{error}");
    /// # Ok::<(), wave_jit::Error>(())
    /// ```
    pub fn launch_with(
        &mut self,
        kernel: &Kernel,
        config: &LaunchConfig,
        args: &[Arg],
    ) -> Result<LaunchReport> {
        let registers = kernel.registers();
        if args.len() > registers as usize {
            return Err(Error::TooManyArguments {
                kernel: kernel.name().to_string(),
                given: args.len(),
                registers,
            });
        }
        let mut initial = Vec::with_capacity(args.len());
        for (register, arg) in (0..=u8::MAX).zip(args) {
            let value = match *arg {
                Arg::Buffer(buffer) => {
                    self.check(&buffer)?;
                    buffer.address
                }
                Arg::U32(v) => v,
                Arg::I32(v) => v as u32,
                Arg::F32(v) => v.to_bits(),
            };
            initial.push((register, value));
        }
        self.launch_with_registers(kernel, config, initial)
    }

    /// Launch with explicit `(register, value)` pairs set in every thread, for kernels that
    /// take their arguments in other registers than 0, 1, ... (as `wave-jit run --set-reg`).
    pub fn launch_with_registers(
        &mut self,
        kernel: &Kernel,
        config: &LaunchConfig,
        registers: Vec<(u8, u32)>,
    ) -> Result<LaunchReport> {
        let dispatch = Dispatch {
            grid: config.grid,
            workgroup: config.workgroup,
            wave_width: config.wave_width,
            initial_registers: registers,
            max_instructions: config.max_instructions,
            threads: self.threads,
            pin_workers: self.pin_threads,
            unchecked: config.unchecked,
            ..Dispatch::default()
        };
        let engine: &dyn Engine = match &self.engine {
            EngineImpl::Jit(jit) => jit,
            EngineImpl::Interpreter(interp) => interp,
        };
        let report = engine.run(kernel.ir(), &dispatch, &mut self.memory)?;
        let compile_time = report.compile.filter(|c| c.compiled_now).map_or(Duration::ZERO, |c| c.first_code);
        Ok(LaunchReport { stats: report.stats, compile_time })
    }

    /// `buffer` is one of this device's live buffers.
    fn check(&self, buffer: &Buffer) -> Result<()> {
        if buffer.device == self.id && self.allocator.is_live(buffer.address as u64, buffer.id) {
            Ok(())
        } else {
            Err(Error::UnknownBuffer { address: buffer.address, len: buffer.len })
        }
    }

    /// Device memory bytes `offset..offset + len` of `buffer`, checked.
    fn range(&self, buffer: &Buffer, offset: u64, len: u64) -> Result<Range<usize>> {
        self.check(buffer)?;
        match offset.checked_add(len) {
            Some(end) if end <= buffer.len => {
                let start = buffer.address as usize + offset as usize;
                Ok(start..start + len as usize)
            }
            _ => Err(Error::BufferRange { address: buffer.address, buffer_len: buffer.len, offset, len }),
        }
    }
}

/// Bytes of `count` values of `T` (slices never exceed `isize::MAX` bytes, so this fits).
fn byte_len<T: Element>(count: usize) -> u64 {
    (count * T::SIZE) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Module;

    #[test]
    fn buffers_are_checked() {
        let mut device =
            Device::with_config(DeviceConfig { memory: 4096, ..DeviceConfig::default() }).unwrap();
        let mut other =
            Device::with_config(DeviceConfig { memory: 4096, ..DeviceConfig::default() }).unwrap();
        let a = device.alloc(16).unwrap();
        let foreign = other.alloc(16).unwrap();
        assert!(matches!(device.write(&foreign, &[1u32]), Err(Error::UnknownBuffer { .. })));
        assert!(matches!(
            device.write_at(&a, 8, &[1u32, 2, 3]),
            Err(Error::BufferRange { offset: 8, len: 12, buffer_len: 16, .. })
        ));
        assert!(matches!(device.write_at(&a, u64::MAX, &[1u8]), Err(Error::BufferRange { .. })));
        device.write_at(&a, 4, &[-2i32, 7]).unwrap();
        assert_eq!(device.read::<i32>(&a).unwrap(), [0, -2, 7, 0]);
        let mut bytes = [0u8; 4];
        device.read_bytes(&a, 8, &mut bytes).unwrap();
        assert_eq!(bytes, 7u32.to_le_bytes());
        let odd = device.alloc(12).unwrap();
        assert!(matches!(device.read::<f64>(&odd), Err(Error::PartialElement { .. })));
        device.free(a).unwrap();
        assert!(matches!(device.free(a), Err(Error::UnknownBuffer { .. })));
        assert!(matches!(device.read::<u8>(&a), Err(Error::UnknownBuffer { .. })));
        assert!(matches!(device.alloc(1 << 20), Err(Error::OutOfMemory { .. })));
    }

    #[test]
    fn fresh_buffers_are_zero() {
        let mut device =
            Device::with_config(DeviceConfig { memory: 4096, ..DeviceConfig::default() }).unwrap();
        let a = device.alloc_from(&[0xffu8; 64]).unwrap();
        device.free(a).unwrap();
        let b = device.alloc(64).unwrap();
        assert_eq!(b.address(), a.address());
        assert_eq!(device.read::<u8>(&b).unwrap(), [0; 64]);
        // The freed handle does not reach the new buffer at its address.
        assert!(matches!(device.write(&a, &[1u8]), Err(Error::UnknownBuffer { .. })));
    }

    #[test]
    fn arguments_follow_the_reference_convention() {
        // Each thread 0 stores its registers r0..r4 to r0 + 4*i.
        let module = Module::from_source(
            ".kernel regs
                 mov r9, sr_thread_id_x
                 mov_imm r8, 0
                 icmp_eq p0, r9, r8
                 if p0
                     device_store_u32 r0, r0
                     mov_imm r7, 4
                     iadd r6, r0, r7
                     device_store_u32 r6, r1
                     iadd r6, r6, r7
                     device_store_u32 r6, r2
                     iadd r6, r6, r7
                     device_store_u32 r6, r3
                 endif
                 halt
             .end",
            "regs.wave",
        )
        .unwrap();
        let kernel = module.kernel("regs").unwrap();
        for engine in [EngineKind::Jit, EngineKind::Interpreter] {
            let mut device = Device::with_config(DeviceConfig { engine, ..DeviceConfig::default() }).unwrap();
            let _first = device.alloc(4).unwrap();
            let out = device.alloc(16).unwrap();
            device
                .launch(
                    &kernel,
                    [1, 1, 1],
                    [32, 1, 1],
                    &[out.into(), 7u32.into(), (-3i32).into(), 1.5f32.into()],
                )
                .unwrap();
            assert_eq!(
                device.read::<u32>(&out).unwrap(),
                [out.address(), 7, (-3i32) as u32, 1.5f32.to_bits()],
                "{engine}"
            );
            let too_many = vec![Arg::U32(0); 33];
            let error = device.launch(&kernel, [1, 1, 1], [32, 1, 1], &too_many).unwrap_err();
            assert!(matches!(error, Error::TooManyArguments { given: 33, registers: 32, .. }), "{error}");
            let freed = device.alloc(4).unwrap();
            device.free(freed).unwrap();
            let error = device.launch(&kernel, [1, 1, 1], [32, 1, 1], &[freed.into()]).unwrap_err();
            assert!(matches!(error, Error::UnknownBuffer { .. }), "{error}");
        }
    }
}
