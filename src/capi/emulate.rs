//! `wave_emulate`: the reference runtime's emulator entry, on the JIT. A program written
//! against the reference's C ABI runs unchanged when linked to `libwave_jit.so` instead.

use super::WAVE_ERROR_READ;
use super::{bytes, bytes_mut, guard, Failure, WAVE_ERROR_LOAD, WAVE_ERROR_RUN, WAVE_ERROR_WRITE, WAVE_OK};
use crate::{Device, DeviceConfig, EngineKind, LaunchConfig, Module};

/// Device memory `wave_emulate` gives a kernel at least, as the reference: 1 MiB.
const MIN_MEMORY: usize = 1 << 20;

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
        let module = Module::from_bytes(wbin, "<wave_emulate>")
            .map_err(|e| Failure::new(WAVE_ERROR_LOAD, e.to_string()))?;
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
        let memory = mem_len.max(MIN_MEMORY) as u64;
        let config = DeviceConfig { memory, threads: 0, engine: EngineKind::Jit };
        let mut device =
            Device::with_config(config).map_err(|e| Failure::new(WAVE_ERROR_WRITE, e.to_string()))?;
        device.memory_mut()[..mem_len].copy_from_slice(mem);
        device
            .launch_with_registers(&kernel, &LaunchConfig::new(grid, workgroup), registers)
            .map_err(|e| run_error(e.to_string()))?;
        let out = device
            .memory()
            .get(..mem_len)
            .ok_or_else(|| Failure::new(WAVE_ERROR_READ, "device memory is too small"))?;
        mem.copy_from_slice(out);
        Ok(())
    });
    match status {
        WAVE_OK | WAVE_ERROR_LOAD | WAVE_ERROR_WRITE | WAVE_ERROR_RUN | WAVE_ERROR_READ => status,
        // The reference has no other codes: a caught panic (`WAVE_ERROR_INTERNAL`, its message
        // kept) counts as a failed run.
        _ => WAVE_ERROR_RUN,
    }
}
