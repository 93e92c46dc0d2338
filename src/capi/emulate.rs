//! `wave_emulate`: the reference runtime's emulator entry, on the JIT. A program written
//! against the reference's C ABI runs unchanged when linked to `libwave_jit.so` instead.

use super::WAVE_ERROR_READ;
use super::{bytes, bytes_mut, guard, Failure, WAVE_ERROR_LOAD, WAVE_ERROR_RUN, WAVE_ERROR_WRITE, WAVE_OK};
use crate::{Device, DeviceConfig, EngineKind, LaunchConfig, Module};
use std::cell::RefCell;
use std::sync::Mutex;

/// Device memory `wave_emulate` gives a kernel at least, as the reference: 1 MiB.
const MIN_MEMORY: usize = 1 << 20;

/// Devices of at most this size are kept for the thread's next call: mapping fresh device
/// memory and faulting its pages in costs more than the copies themselves, and a runtime calls
/// `wave_emulate` once per launch. Larger ones are released at once, not to hold their memory.
const KEPT_MEMORY: usize = 64 << 20;

/// Binaries whose modules are kept, most recent first: a runtime passes the same binary on
/// every launch of a kernel, and loading validates every kernel again.
const KEPT_MODULES: usize = 16;

/// The module of `wbin`, loaded once and kept while it is among the most recent binaries.
fn module_for(wbin: &[u8]) -> Result<Module, crate::Error> {
    static MODULES: Mutex<Vec<(Vec<u8>, Module)>> = Mutex::new(Vec::new());
    let recent = || MODULES.lock().unwrap_or_else(|e| e.into_inner());
    {
        let mut modules = recent();
        if let Some(at) = modules.iter().position(|(bytes, _)| bytes.as_slice() == wbin) {
            let entry = modules.remove(at);
            let module = entry.1.clone();
            modules.insert(0, entry);
            return Ok(module);
        }
    }
    let module = Module::from_bytes(wbin, "<wave_emulate>")?;
    let mut modules = recent();
    modules.insert(0, (wbin.to_vec(), module.clone()));
    modules.truncate(KEPT_MODULES);
    Ok(module)
}

thread_local! {
    /// The device of this thread's last call, if it was small enough to keep.
    static KEPT: RefCell<Option<Device>> = const { RefCell::new(None) };
}

/// A device of `max(mem.len(), 1 MiB)` bytes holding `mem` from address 0 and zeros after it
/// (the thread's kept device when its size fits, else a fresh one).
fn device_for(mem: &[u8]) -> Result<Device, crate::Error> {
    let size = mem.len().max(MIN_MEMORY) as u64;
    let kept = KEPT.with(|kept| kept.borrow_mut().take()).filter(|d| d.memory_size() == size);
    let mut device = match kept {
        Some(device) => device,
        None => Device::with_config(DeviceConfig {
            memory: size,
            threads: 0,
            engine: EngineKind::Jit,
            pin_threads: false,
        })?,
    };
    let memory = device.memory_mut();
    memory[..mem.len()].copy_from_slice(mem);
    // A kept device holds the last kernel's writes beyond the caller's bytes (a fresh one is
    // zero there already; telling them apart saves at most a memset of under 1 MiB).
    memory[mem.len()..].fill(0);
    Ok(device)
}

fn keep_for_next_call(device: Device) {
    if device.memory_size() <= KEPT_MEMORY as u64 {
        KEPT.with(|kept| *kept.borrow_mut() = Some(device));
    }
}

/// Run kernel 0 of the `.wbin` binary `wbin` (`wbin_len` bytes) over `*grid` workgroups of
/// `*workgroup` threads, with the caller's `mem_len` bytes at `mem` as device memory from
/// address 0 (device memory is `max(mem_len, 1 MiB)` bytes; the rest starts zero-filled) and the
/// `reg_count` (register, value) pairs at `regs` set in every thread. Default wave width (32) and
/// limits, on the JIT. `mem` is copied in before the run and out after it, once each.
///
/// Returns 0 on success; 3 when the binary does not load; 4 when device memory cannot be
/// written (NULL `mem`, or more than 4 GiB); 5 when the run fails (rejected or stopped by an
/// error, or bad `regs`, `grid` or `workgroup`), in which case `mem` is left as it was; 6 when
/// device memory cannot be read. The message is `wave_last_error`'s.
///
/// # Safety
/// `wbin` is NULL or readable for `wbin_len` bytes; `mem` is NULL or readable and writable for
/// `mem_len` bytes; `regs` is NULL or points to `reg_count` pairs; `grid` and `workgroup` are
/// NULL or point to 3 `uint32_t` each.
#[no_mangle]
pub unsafe extern "C" fn wave_emulate(
    wbin: *const u8,
    wbin_len: usize,
    mem: *mut u8,
    mem_len: usize,
    regs: *const [u32; 2],
    reg_count: usize,
    grid: *const [u32; 3],
    workgroup: *const [u32; 3],
) -> i32 {
    let status = guard("wave_emulate", || {
        // SAFETY: the caller's contract for `wbin`.
        let wbin =
            unsafe { bytes(wbin, wbin_len, "wbin") }.map_err(|f| Failure::new(WAVE_ERROR_LOAD, f.message))?;
        let module = module_for(wbin).map_err(|e| Failure::new(WAVE_ERROR_LOAD, e.to_string()))?;
        let kernel = module.kernel_at(0).map_err(|_| {
            Failure::new(WAVE_ERROR_LOAD, "the binary has no kernels (wave_emulate runs kernel 0)")
        })?;

        let run_error = |message: String| Failure::new(WAVE_ERROR_RUN, message);
        // SAFETY: the caller's contract for `grid` and `workgroup`.
        let (grid, workgroup) = unsafe { (grid.as_ref(), workgroup.as_ref()) };
        let grid = *grid.ok_or_else(|| run_error("`grid` is NULL".into()))?;
        let workgroup = *workgroup.ok_or_else(|| run_error("`workgroup` is NULL".into()))?;
        let pairs: &[[u32; 2]] = if reg_count == 0 {
            &[]
        } else if regs.is_null() {
            return Err(run_error(format!("`regs` is NULL but `reg_count` is {reg_count}")));
        } else {
            // SAFETY: not NULL; the caller's contract makes `reg_count` pairs readable.
            unsafe { std::slice::from_raw_parts(regs, reg_count) }
        };
        let registers = pairs
            .iter()
            .enumerate()
            .map(|(i, &[register, value])| match u8::try_from(register) {
                Ok(register) => Ok((register, value)),
                Err(_) => Err(run_error(format!("regs[{i}] sets register {register}, which is not 0..255"))),
            })
            .collect::<Result<Vec<_>, _>>()?;

        // SAFETY: the caller's contract for `mem`; nothing else is borrowed from the caller now
        // (the binary was loaded into a module of our own).
        let mem = unsafe { bytes_mut(mem, mem_len, "mem") }
            .map_err(|f| Failure::new(WAVE_ERROR_WRITE, f.message))?;
        let mut device = device_for(mem).map_err(|e| Failure::new(WAVE_ERROR_WRITE, e.to_string()))?;
        let launched = device.launch_with_registers(&kernel, &LaunchConfig::new(grid, workgroup), registers);
        if launched.is_ok() {
            let out = device.memory().get(..mem_len);
            mem.copy_from_slice(
                out.ok_or_else(|| Failure::new(WAVE_ERROR_READ, "device memory is too small"))?,
            );
        }
        keep_for_next_call(device);
        launched.map(|_| ()).map_err(|e| run_error(e.to_string()))
    });
    match status {
        WAVE_OK | WAVE_ERROR_LOAD | WAVE_ERROR_WRITE | WAVE_ERROR_RUN | WAVE_ERROR_READ => status,
        // The reference has no other codes: a caught panic (`WAVE_ERROR_INTERNAL`, its message
        // kept) counts as a failed run.
        _ => WAVE_ERROR_RUN,
    }
}
