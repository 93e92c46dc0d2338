//! Devices, modules, kernels, buffers and launches through the C ABI: each function is a thin
//! shell over the Rust API (argument checks, status codes).

use super::{
    bytes, bytes_mut, clear, deref, guard, guard_value, put, text, Failure, WAVE_ERROR_ARGUMENT,
    WAVE_ERROR_INTERNAL, WAVE_ERROR_READ, WAVE_ERROR_RUN, WAVE_ERROR_WRITE,
};
use crate::{Arg, Buffer, Device, DeviceConfig, EngineKind, Kernel, LaunchConfig, Module, DEFAULT_MEMORY};
use std::ffi::{c_char, c_void};
use std::sync::{Arc, Mutex, MutexGuard};

/// Run kernels on the JIT (the default).
pub const WAVE_ENGINE_JIT: u32 = 0;
/// Run kernels on the reference interpreter.
pub const WAVE_ENGINE_INTERPRETER: u32 = 1;

/// A device: device memory, its allocator and an engine. Calls on one device (and on its
/// buffers) are serialised.
pub struct WaveDevice {
    shared: Arc<Mutex<Device>>,
}

/// A loaded module (immutable).
pub struct WaveModule {
    module: Module,
}

/// One kernel of a module (immutable; keeps its module alive).
pub struct WaveKernel {
    kernel: Kernel,
}

/// A block of device memory (keeps its device's memory alive).
pub struct WaveBuffer {
    device: Arc<Mutex<Device>>,
    buffer: Buffer,
}

/// The device, locked for this call; refused after a panic broke an earlier call on it.
fn lock(device: &Mutex<Device>) -> Result<MutexGuard<'_, Device>, Failure> {
    device.lock().map_err(|_| {
        Failure::new(
            WAVE_ERROR_INTERNAL,
            "the device is unusable: an earlier call on it stopped with an internal error",
        )
    })
}

/// Make a device. `memory_size`: bytes of device memory, 1 to 4 GiB (0 = 256 MiB; pages are
/// backed only when touched). `threads`: JIT worker threads (0 = all cores). `engine`:
/// `WAVE_ENGINE_JIT` or `WAVE_ENGINE_INTERPRETER`. On success `*device` is the new device
/// (release it with `wave_device_free`); on failure NULL.
///
/// # Safety
/// `device` is NULL or points to a writable `WaveDevice *`.
#[no_mangle]
pub unsafe extern "C" fn wave_device_new(
    memory_size: u64,
    threads: u32,
    engine: u32,
    device: *mut *mut WaveDevice,
) -> i32 {
    guard("wave_device_new", || {
        // SAFETY: the caller's contract for `device`.
        unsafe { clear(device) };
        let engine = match engine {
            WAVE_ENGINE_JIT => EngineKind::Jit,
            WAVE_ENGINE_INTERPRETER => EngineKind::Interpreter,
            other => {
                return Err(Failure::argument(format!(
                    "engine {other} is neither WAVE_ENGINE_JIT (0) nor WAVE_ENGINE_INTERPRETER (1)"
                )))
            }
        };
        let memory = if memory_size == 0 { DEFAULT_MEMORY } else { memory_size };
        let config = DeviceConfig { memory, threads: threads as usize, engine, pin_threads: false };
        let made = Device::with_config(config).map_err(|e| Failure::of(e, WAVE_ERROR_ARGUMENT))?;
        let handle = Box::new(WaveDevice { shared: Arc::new(Mutex::new(made)) });
        // SAFETY: the caller's contract for `device`.
        unsafe { put(device, "device", Box::into_raw(handle)) }
    })
}

/// Release a device (NULL: nothing). Its memory lives on while buffers of it are not freed.
///
/// # Safety
/// `device` is NULL or a device from `wave_device_new` not yet freed.
#[no_mangle]
pub unsafe extern "C" fn wave_device_free(device: *mut WaveDevice) {
    guard_value("wave_device_free", (), || {
        if !device.is_null() {
            // SAFETY: made by `Box::into_raw` in `wave_device_new`, freed once (contract).
            drop(unsafe { Box::from_raw(device) });
        }
    })
}

/// Bytes of device memory (0 when `device` is NULL).
///
/// # Safety
/// `device` is NULL or a live device.
#[no_mangle]
pub unsafe extern "C" fn wave_device_memory_size(device: *const WaveDevice) -> u64 {
    guard_value("wave_device_memory_size", 0, || {
        // SAFETY: the caller's contract.
        let Ok(device) = (unsafe { deref(device, "device") }) else { return 0 };
        lock(&device.shared).map_or(0, |d| d.memory_size())
    })
}

/// Copy `len` bytes from `data` to device memory at `address`, whatever the buffers there (for
/// programs that lay out device memory themselves).
///
/// # Safety
/// `device` is NULL or a live device; `data` is NULL or readable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn wave_device_write(
    device: *mut WaveDevice,
    address: u64,
    data: *const c_void,
    len: usize,
) -> i32 {
    guard("wave_device_write", || {
        // SAFETY: the caller's contract.
        let (device, data) = unsafe { (deref(device, "device")?, bytes(data.cast(), len, "data")?) };
        let mut device = lock(&device.shared)?;
        let size = device.memory_size();
        let end = address
            .checked_add(len as u64)
            .filter(|&end| end <= size)
            .ok_or_else(|| Failure::new(WAVE_ERROR_WRITE, out_of_device(address, len, size)))?;
        device.memory_mut()[address as usize..end as usize].copy_from_slice(data);
        Ok(())
    })
}

/// Copy `len` bytes of device memory at `address` to `data`.
///
/// # Safety
/// `device` is NULL or a live device; `data` is NULL or writable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn wave_device_read(
    device: *mut WaveDevice,
    address: u64,
    data: *mut c_void,
    len: usize,
) -> i32 {
    guard("wave_device_read", || {
        // SAFETY: the caller's contract.
        let (device, data) = unsafe { (deref(device, "device")?, bytes_mut(data.cast(), len, "data")?) };
        let device = lock(&device.shared)?;
        let size = device.memory_size();
        let end = address
            .checked_add(len as u64)
            .filter(|&end| end <= size)
            .ok_or_else(|| Failure::new(WAVE_ERROR_READ, out_of_device(address, len, size)))?;
        data.copy_from_slice(&device.memory()[address as usize..end as usize]);
        Ok(())
    })
}

fn out_of_device(address: u64, len: usize, size: u64) -> String {
    format!(
        "device memory range 0x{address:x}..0x{:x} ({len} bytes) is outside the {size} bytes of device memory",
        address.saturating_add(len as u64)
    )
}

/// Load a module from `len` bytes at `data`: a `.wbin` binary (recognised by its `WAVE` magic)
/// or `.wave` assembly source. `name` (NULL: `"<source>"`) names the source in assembly errors,
/// which give every error as `name:line:column`. On success `*module` is the new module
/// (release it with `wave_module_free`).
///
/// # Safety
/// `data` is NULL or readable for `len` bytes; `name` is NULL or a NUL-terminated string;
/// `module` is NULL or points to a writable `WaveModule *`.
#[no_mangle]
pub unsafe extern "C" fn wave_module_load(
    data: *const u8,
    len: usize,
    name: *const c_char,
    module: *mut *mut WaveModule,
) -> i32 {
    guard("wave_module_load", || {
        // SAFETY: the caller's contract.
        unsafe { clear(module) };
        // SAFETY: the caller's contract.
        let data = unsafe { bytes(data, len, "data")? };
        // SAFETY: the caller's contract.
        let name = if name.is_null() { "<source>" } else { unsafe { text(name, "name")? } };
        let loaded = Module::from_bytes(data, name).map_err(|e| Failure::of(e, WAVE_ERROR_ARGUMENT))?;
        // SAFETY: the caller's contract.
        unsafe { put(module, "module", Box::into_raw(Box::new(WaveModule { module: loaded }))) }
    })
}

/// Load a module from a `.wbin` or `.wave` file.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string; `module` is NULL or points to a writable
/// `WaveModule *`.
#[no_mangle]
pub unsafe extern "C" fn wave_module_load_file(path: *const c_char, module: *mut *mut WaveModule) -> i32 {
    guard("wave_module_load_file", || {
        // SAFETY: the caller's contract.
        unsafe { clear(module) };
        // SAFETY: the caller's contract.
        let path = unsafe { text(path, "path")? };
        let loaded = Module::load(path).map_err(|e| Failure::of(e, WAVE_ERROR_ARGUMENT))?;
        // SAFETY: the caller's contract.
        unsafe { put(module, "module", Box::into_raw(Box::new(WaveModule { module: loaded }))) }
    })
}

/// Release a module (NULL: nothing). Its kernels stay usable.
///
/// # Safety
/// `module` is NULL or a module not yet freed.
#[no_mangle]
pub unsafe extern "C" fn wave_module_free(module: *mut WaveModule) {
    guard_value("wave_module_free", (), || {
        if !module.is_null() {
            // SAFETY: made by `Box::into_raw` in a load function, freed once (contract).
            drop(unsafe { Box::from_raw(module) });
        }
    })
}

/// How many kernels the module has (0 when `module` is NULL).
///
/// # Safety
/// `module` is NULL or a live module.
#[no_mangle]
pub unsafe extern "C" fn wave_module_kernel_count(module: *const WaveModule) -> usize {
    guard_value("wave_module_kernel_count", 0, || {
        // SAFETY: the caller's contract.
        unsafe { deref(module, "module") }.map_or(0, |m| m.module.len())
    })
}

/// The kernel called `name` (or, when `name` is a decimal number that is no kernel's name, the
/// kernel with that index). `WAVE_ERROR_NOT_FOUND` names the kernels there are. Release the
/// kernel with `wave_kernel_free`.
///
/// # Safety
/// `module` is NULL or a live module; `name` is NULL or a NUL-terminated string; `kernel` is
/// NULL or points to a writable `WaveKernel *`.
#[no_mangle]
pub unsafe extern "C" fn wave_module_kernel(
    module: *const WaveModule,
    name: *const c_char,
    kernel: *mut *mut WaveKernel,
) -> i32 {
    guard("wave_module_kernel", || {
        // SAFETY: the caller's contract.
        unsafe { clear(kernel) };
        // SAFETY: the caller's contract.
        let (module, name) = unsafe { (deref(module, "module")?, text(name, "name")?) };
        let found = module.module.kernel(name).map_err(|e| Failure::of(e, WAVE_ERROR_ARGUMENT))?;
        // SAFETY: the caller's contract.
        unsafe { put(kernel, "kernel", Box::into_raw(Box::new(WaveKernel { kernel: found }))) }
    })
}

/// The kernel at `index` (file order, from 0).
///
/// # Safety
/// `module` is NULL or a live module; `kernel` is NULL or points to a writable `WaveKernel *`.
#[no_mangle]
pub unsafe extern "C" fn wave_module_kernel_at(
    module: *const WaveModule,
    index: usize,
    kernel: *mut *mut WaveKernel,
) -> i32 {
    guard("wave_module_kernel_at", || {
        // SAFETY: the caller's contract.
        unsafe { clear(kernel) };
        // SAFETY: the caller's contract.
        let module = unsafe { deref(module, "module")? };
        let found = module.module.kernel_at(index).map_err(|e| Failure::of(e, WAVE_ERROR_ARGUMENT))?;
        // SAFETY: the caller's contract.
        unsafe { put(kernel, "kernel", Box::into_raw(Box::new(WaveKernel { kernel: found }))) }
    })
}

/// Release a kernel (NULL: nothing).
///
/// # Safety
/// `kernel` is NULL or a kernel not yet freed.
#[no_mangle]
pub unsafe extern "C" fn wave_kernel_free(kernel: *mut WaveKernel) {
    guard_value("wave_kernel_free", (), || {
        if !kernel.is_null() {
            // SAFETY: made by `Box::into_raw` in `wave_module_kernel*`, freed once (contract).
            drop(unsafe { Box::from_raw(kernel) });
        }
    })
}

/// The kernel's name: `*len` bytes of UTF-8, not NUL-terminated, valid while the kernel lives
/// (NULL and 0 when `kernel` is NULL).
///
/// # Safety
/// `kernel` is NULL or a live kernel; `len` is NULL or points to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn wave_kernel_name(kernel: *const WaveKernel, len: *mut usize) -> *const u8 {
    let (ptr, n) = guard_value("wave_kernel_name", (std::ptr::null(), 0), || {
        // SAFETY: the caller's contract.
        unsafe { deref(kernel, "kernel") }.map_or((std::ptr::null(), 0), |k| {
            let name = k.kernel.name();
            (name.as_ptr(), name.len())
        })
    });
    if !len.is_null() {
        // SAFETY: the caller's contract.
        unsafe { *len = n };
    }
    ptr
}

/// Registers per thread of the kernel: it takes at most this many arguments (0 when `kernel`
/// is NULL).
///
/// # Safety
/// `kernel` is NULL or a live kernel.
#[no_mangle]
pub unsafe extern "C" fn wave_kernel_registers(kernel: *const WaveKernel) -> u32 {
    guard_value("wave_kernel_registers", 0, || {
        // SAFETY: the caller's contract.
        unsafe { deref(kernel, "kernel") }.map_or(0, |k| k.kernel.registers())
    })
}

/// Allocate `size` bytes of device memory, zero-filled, at an address that is a multiple of
/// `align` (a power of two; 0 = 256). First fit from address 0. Release the buffer with
/// `wave_buffer_free`.
///
/// # Safety
/// `device` is NULL or a live device; `buffer` is NULL or points to a writable `WaveBuffer *`.
#[no_mangle]
pub unsafe extern "C" fn wave_buffer_alloc(
    device: *mut WaveDevice,
    size: u64,
    align: u64,
    buffer: *mut *mut WaveBuffer,
) -> i32 {
    guard("wave_buffer_alloc", || {
        // SAFETY: the caller's contract.
        unsafe { clear(buffer) };
        // SAFETY: the caller's contract.
        let device = unsafe { deref(device, "device")? };
        let align = if align == 0 { crate::DEFAULT_ALIGN } else { align };
        let made =
            lock(&device.shared)?.alloc_aligned(size, align).map_err(|e| Failure::of(e, WAVE_ERROR_WRITE))?;
        let handle = Box::new(WaveBuffer { device: device.shared.clone(), buffer: made });
        // SAFETY: the caller's contract.
        unsafe { put(buffer, "buffer", Box::into_raw(handle)) }
    })
}

/// Give a buffer's device memory back and release the handle (NULL: nothing).
///
/// # Safety
/// `buffer` is NULL or a buffer not yet freed.
#[no_mangle]
pub unsafe extern "C" fn wave_buffer_free(buffer: *mut WaveBuffer) {
    guard_value("wave_buffer_free", (), || {
        if buffer.is_null() {
            return;
        }
        // SAFETY: made by `Box::into_raw` in `wave_buffer_alloc`, freed once (contract).
        let handle = unsafe { Box::from_raw(buffer) };
        if let Ok(mut device) = lock(&handle.device) {
            // It is live: only this handle frees it, once.
            let _ = device.free(handle.buffer);
        };
    })
}

/// The buffer's device address: what a kernel receives for it (0 when `buffer` is NULL).
///
/// # Safety
/// `buffer` is NULL or a live buffer.
#[no_mangle]
pub unsafe extern "C" fn wave_buffer_address(buffer: *const WaveBuffer) -> u32 {
    guard_value("wave_buffer_address", 0, || {
        // SAFETY: the caller's contract.
        unsafe { deref(buffer, "buffer") }.map_or(0, |b| b.buffer.address())
    })
}

/// The buffer's size in bytes (0 when `buffer` is NULL).
///
/// # Safety
/// `buffer` is NULL or a live buffer.
#[no_mangle]
pub unsafe extern "C" fn wave_buffer_size(buffer: *const WaveBuffer) -> u64 {
    guard_value("wave_buffer_size", 0, || {
        // SAFETY: the caller's contract.
        unsafe { deref(buffer, "buffer") }.map_or(0, |b| b.buffer.len())
    })
}

/// Copy `len` bytes from `data` into the buffer from byte `offset` on.
///
/// # Safety
/// `buffer` is NULL or a live buffer; `data` is NULL or readable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn wave_buffer_write(
    buffer: *const WaveBuffer,
    offset: u64,
    data: *const c_void,
    len: usize,
) -> i32 {
    guard("wave_buffer_write", || {
        // SAFETY: the caller's contract.
        let (buffer, data) = unsafe { (deref(buffer, "buffer")?, bytes(data.cast(), len, "data")?) };
        lock(&buffer.device)?
            .write_bytes(&buffer.buffer, offset, data)
            .map_err(|e| Failure::of(e, WAVE_ERROR_WRITE))
    })
}

/// Copy `len` bytes of the buffer from byte `offset` on to `data`.
///
/// # Safety
/// `buffer` is NULL or a live buffer; `data` is NULL or writable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn wave_buffer_read(
    buffer: *const WaveBuffer,
    offset: u64,
    data: *mut c_void,
    len: usize,
) -> i32 {
    guard("wave_buffer_read", || {
        // SAFETY: the caller's contract.
        let (buffer, data) = unsafe { (deref(buffer, "buffer")?, bytes_mut(data.cast(), len, "data")?) };
        lock(&buffer.device)?
            .read_bytes(&buffer.buffer, offset, data)
            .map_err(|e| Failure::of(e, WAVE_ERROR_READ))
    })
}

/// Argument kind: a buffer (`value.buffer`); the register gets its device address.
pub const WAVE_ARG_BUFFER: u32 = 0;
/// Argument kind: an unsigned integer (`value.uint32`).
pub const WAVE_ARG_U32: u32 = 1;
/// Argument kind: a signed integer (`value.int32`), as its two's-complement bits.
pub const WAVE_ARG_I32: u32 = 2;
/// Argument kind: a float (`value.float32`), as its IEEE bits.
pub const WAVE_ARG_F32: u32 = 3;
/// Argument kind: host memory (`value.host`) copied into a temporary buffer before the launch
/// and, if `copy_back` is nonzero, back after it; the register gets the temporary buffer's
/// address. Temporary buffers are allocated in argument order, first fit, so on a device with
/// no other buffers they lie one after another from address 0.
pub const WAVE_ARG_HOST: u32 = 4;

/// Host memory passed as a kernel argument (`WAVE_ARG_HOST`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct WaveHostArray {
    /// The bytes (NULL allowed when `len` is 0).
    pub data: *mut c_void,
    /// How many bytes.
    pub len: u64,
    /// Alignment of the temporary buffer's address: a power of two, 0 = 4.
    pub align: u32,
    /// Nonzero: copy the buffer back to `data` after a successful launch.
    pub copy_back: u32,
}

/// The value of a kernel argument; `WaveArg::kind` says which member is set.
#[repr(C)]
#[derive(Clone, Copy)]
pub union WaveArgValue {
    /// `WAVE_ARG_BUFFER`.
    pub buffer: *const WaveBuffer,
    /// `WAVE_ARG_U32`.
    pub uint32: u32,
    /// `WAVE_ARG_I32`.
    pub int32: i32,
    /// `WAVE_ARG_F32`.
    pub float32: f32,
    /// `WAVE_ARG_HOST`.
    pub host: WaveHostArray,
}

/// One kernel argument. Argument `i` is the initial value of register `i` in every thread.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct WaveArg {
    /// `WAVE_ARG_BUFFER`, `WAVE_ARG_U32`, `WAVE_ARG_I32`, `WAVE_ARG_F32` or `WAVE_ARG_HOST`.
    pub kind: u32,
    /// The member `kind` names.
    pub value: WaveArgValue,
}

/// Settings of a launch beyond its shape. Pass NULL for the defaults (wave width 32,
/// 10,000,000 wave-instructions per workgroup, bounds checks on).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct WaveLaunchOptions {
    /// Lanes per wave: 4, 8, 16, 32 or 64 (0 = 32).
    pub wave_width: u32,
    /// Nonzero: the JIT drops bounds checks (accesses still stay inside the device's private
    /// 4 GiB window).
    pub unchecked: u32,
    /// Wave-instructions per workgroup before the launch stops with an error (0 = unlimited).
    pub max_instructions: u64,
}

/// Run `kernel` on `device` over `grid` workgroups of `workgroup` threads, with `arg_count`
/// arguments in registers 0, 1, ... Synchronous: on return the kernel has finished. On a failed
/// launch (`WAVE_ERROR_RUN`) device memory is as the kernel left it at the failure and no
/// `WAVE_ARG_HOST` memory is copied back.
///
/// # Safety
/// `device` and `kernel` are NULL or live; `grid` and `workgroup` are NULL or point to 3
/// `uint32_t`; `args` is NULL or points to `arg_count` arguments, each of whose `kind` names
/// the member of `value` it set, with live buffers and host memory valid for `len` bytes
/// (writable when `copy_back` is set); `options` is NULL or points to options.
#[no_mangle]
pub unsafe extern "C" fn wave_launch(
    device: *mut WaveDevice,
    kernel: *const WaveKernel,
    grid: *const [u32; 3],
    workgroup: *const [u32; 3],
    args: *const WaveArg,
    arg_count: usize,
    options: *const WaveLaunchOptions,
) -> i32 {
    guard("wave_launch", || {
        // SAFETY: the caller's contract for each pointer.
        let (device, kernel, grid, workgroup) = unsafe {
            (
                deref(device, "device")?,
                deref(kernel, "kernel")?,
                deref(grid, "grid")?,
                deref(workgroup, "workgroup")?,
            )
        };
        let args: &[WaveArg] = if arg_count == 0 {
            &[]
        } else if args.is_null() {
            return Err(Failure::argument(format!("`args` is NULL but `arg_count` is {arg_count}")));
        } else {
            // SAFETY: not NULL; the caller's contract makes `arg_count` arguments readable.
            unsafe { std::slice::from_raw_parts(args, arg_count) }
        };
        let mut config = LaunchConfig::new(*grid, *workgroup);
        if !options.is_null() {
            // SAFETY: not NULL; the caller's contract.
            let options = unsafe { *options };
            if options.wave_width != 0 {
                config.wave_width = options.wave_width;
            }
            config.unchecked = options.unchecked != 0;
            config.max_instructions = options.max_instructions;
        }
        let mut device = lock(&device.shared)?;
        let mut temporaries = Vec::new();
        let launched = launch_with_host_arrays(&mut device, &kernel.kernel, &config, args, &mut temporaries);
        for (buffer, _) in temporaries {
            // Allocated just above, freed once.
            let _ = device.free(buffer);
        }
        launched
    })
}

/// The body of `wave_launch` once the device is locked: host arrays copied into temporary
/// buffers (pushed to `temporaries`, which the caller frees whatever happens), the launch, and
/// the copies back.
fn launch_with_host_arrays(
    device: &mut Device,
    kernel: &Kernel,
    config: &LaunchConfig,
    args: &[WaveArg],
    temporaries: &mut Vec<(Buffer, WaveHostArray)>,
) -> Result<(), Failure> {
    let mut converted = Vec::with_capacity(args.len());
    for (index, arg) in args.iter().enumerate() {
        // Reading a union member: the caller of `wave_launch` set the member `kind` names (its
        // contract). Every member is plain data; pointers are checked before use.
        let value = arg.value;
        let converted_arg = match arg.kind {
            // SAFETY: `kind` says `uint32` was set (see above).
            WAVE_ARG_U32 => Arg::U32(unsafe { value.uint32 }),
            // SAFETY: `kind` says `int32` was set.
            WAVE_ARG_I32 => Arg::I32(unsafe { value.int32 }),
            // SAFETY: `kind` says `float32` was set.
            WAVE_ARG_F32 => Arg::F32(unsafe { value.float32 }),
            WAVE_ARG_BUFFER => {
                // SAFETY: `kind` says `buffer` was set, and it is NULL or live (contract). A
                // buffer of another device is refused by the launch (`UnknownBuffer`).
                let handle = unsafe { deref(value.buffer, &format!("args[{index}].value.buffer"))? };
                Arg::Buffer(handle.buffer)
            }
            WAVE_ARG_HOST => {
                // SAFETY: `kind` says `host` was set.
                let host = unsafe { value.host };
                let align = if host.align == 0 { 4 } else { host.align as u64 };
                let len = usize::try_from(host.len).map_err(|_| {
                    Failure::argument(format!("args[{index}]: {} bytes is too many", host.len))
                })?;
                // SAFETY: the caller's contract: `data` is readable for `len` bytes.
                let data =
                    unsafe { bytes(host.data.cast(), len, &format!("args[{index}].value.host.data"))? };
                let buffer = device.reserve(host.len, align).map_err(|e| Failure::of(e, WAVE_ERROR_WRITE))?;
                temporaries.push((buffer, host));
                device.write_bytes(&buffer, 0, data).map_err(|e| Failure::of(e, WAVE_ERROR_WRITE))?;
                Arg::Buffer(buffer)
            }
            other => {
                return Err(Failure::argument(format!(
                "args[{index}].kind is {other}, not one of WAVE_ARG_BUFFER, _U32, _I32, _F32, _HOST (0..4)"
            )))
            }
        };
        converted.push(converted_arg);
    }
    device.launch_with(kernel, config, &converted).map_err(|e| Failure::of(e, WAVE_ERROR_RUN))?;
    for (buffer, host) in temporaries.iter() {
        if host.copy_back != 0 {
            // SAFETY: the caller's contract: with `copy_back` set, `data` is writable for `len`
            // bytes (checked to fit a usize above).
            let out = unsafe { bytes_mut(host.data.cast(), host.len as usize, "host data")? };
            device.read_bytes(buffer, 0, out).map_err(|e| Failure::of(e, WAVE_ERROR_READ))?;
        }
    }
    Ok(())
}

/// Assemble `.wave` source (`len` bytes of UTF-8 at `source`) into a `.wbin` binary. `name`
/// (NULL: `"<source>"`) names the source in errors (`name:line:column`). On success `*wbin`
/// points to `*wbin_len` bytes that the caller releases with `wave_free`.
///
/// # Safety
/// `source` is NULL or readable for `len` bytes; `name` is NULL or a NUL-terminated string;
/// `wbin` and `wbin_len` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wave_assemble(
    source: *const u8,
    len: usize,
    name: *const c_char,
    wbin: *mut *mut u8,
    wbin_len: *mut usize,
) -> i32 {
    guard("wave_assemble", || {
        // SAFETY: the caller's contract.
        unsafe { clear(wbin) };
        // SAFETY: the caller's contract.
        let source = unsafe { bytes(source, len, "source")? };
        let source = std::str::from_utf8(source).map_err(|e| {
            Failure::argument(format!("`source` is not UTF-8 (invalid byte at {})", e.valid_up_to()))
        })?;
        // SAFETY: the caller's contract.
        let name = if name.is_null() { "<source>" } else { unsafe { text(name, "name")? } };
        let assembled = crate::assemble(source, name).map_err(|e| Failure::of(e, WAVE_ERROR_ARGUMENT))?;
        if wbin.is_null() || wbin_len.is_null() {
            return Err(Failure::argument("`wbin` or `wbin_len` is NULL"));
        }
        let assembled = Box::into_raw(assembled.into_boxed_slice());
        // SAFETY: both checked not NULL above; writable by the caller's contract. The slice is
        // released by `wave_free` with this length.
        unsafe {
            wbin_len.write(assembled.len());
            wbin.write(assembled.cast());
        }
        Ok(())
    })
}

/// Release bytes made by wave-jit (`wave_assemble`'s binary); `len` is the length it gave.
/// NULL: nothing.
///
/// # Safety
/// `bytes` is NULL or was returned by `wave_assemble` with length `len`, and is freed once.
#[no_mangle]
pub unsafe extern "C" fn wave_free(bytes: *mut u8, len: usize) {
    guard_value("wave_free", (), || {
        if !bytes.is_null() {
            // SAFETY: made by `Box::into_raw` of a boxed slice of `len` bytes (contract).
            drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(bytes, len)) });
        }
    })
}
