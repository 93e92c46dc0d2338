//! What a launch costs beyond the kernel's own work, on the paths a runtime uses:
//! `cargo run --release --example launch_overhead`.
//!
//! examples/axpy.wave on 1024 f32 elements (4 workgroups of 256), after a first launch that
//! compiles it, timed as the median of many launches each:
//! - the Rust API with buffers that stay in device memory;
//! - the C ABI's `wave_launch` with the three arrays passed as host memory (copied in, and the
//!   output back, on every launch: what the Python package does);
//! - `wave_emulate`, the reference runtime's entry, with 1 MiB of caller memory (copied in and
//!   out once each per call, as its contract says);
//! - for scale, a kernel that does nothing, one workgroup, through the Rust API.
//!
//! python/bench/launch_overhead.py measures the same kernel called from Python.

use std::ffi::c_void;
use std::time::{Duration, Instant};
use wave_jit::capi::{self, WaveArg, WaveArgValue, WaveHostArray, WAVE_ARG_F32, WAVE_ARG_HOST, WAVE_ARG_U32};
use wave_jit::{Device, Module};

const N: u32 = 1024;

/// The median time of `f` over `runs` calls, after `warmup` calls.
fn median(warmup: usize, runs: usize, mut f: impl FnMut()) -> Duration {
    for _ in 0..warmup {
        f();
    }
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

fn host(data: *mut c_void, len: usize, copy_back: bool) -> WaveArg {
    WaveArg {
        kind: WAVE_ARG_HOST,
        value: WaveArgValue {
            host: WaveHostArray { data, len: len as u64, align: 4, copy_back: copy_back as u32 },
        },
    }
}

fn main() -> Result<(), wave_jit::Error> {
    let source = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/axpy.wave")).unwrap();
    let module = Module::from_source(&source, "axpy.wave")?;
    let axpy = module.kernel("axpy")?;
    let empty = Module::from_source(".kernel empty\n    halt\n.end\n", "empty.wave")?.kernel_at(0)?;
    let mut x: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let mut y: Vec<f32> = vec![1.0; N as usize];
    let mut out = vec![0f32; N as usize];
    let (grid, workgroup) = ([N / 256, 1, 1], [256, 1, 1]);

    let mut device = Device::new()?;
    let (dx, dy, dout) = (device.alloc_from(&x)?, device.alloc_from(&y)?, device.alloc(4 * N as u64)?);
    let args = [dx.into(), dy.into(), dout.into(), N.into(), 2.0f32.into()];
    let rust_api = median(100, 2000, || {
        device.launch(&axpy, grid, workgroup, &args).unwrap();
    });
    let mut one_thread = Device::with_config(wave_jit::DeviceConfig { threads: 1, ..Default::default() })?;
    let (ox, oy, oout) =
        (one_thread.alloc_from(&x)?, one_thread.alloc_from(&y)?, one_thread.alloc(4 * N as u64)?);
    let one_args = [ox.into(), oy.into(), oout.into(), N.into(), 2.0f32.into()];
    let rust_api_one_thread = median(100, 2000, || {
        one_thread.launch(&axpy, grid, workgroup, &one_args).unwrap();
    });
    let empty_launch = median(100, 2000, || {
        device.launch(&empty, [1, 1, 1], [32, 1, 1], &[]).unwrap();
    });

    let mut c_device = std::ptr::null_mut();
    let mut c_module = std::ptr::null_mut();
    let mut c_kernel = std::ptr::null_mut();
    // SAFETY: valid pointers to locals and to the source, which outlive the calls.
    unsafe {
        assert_eq!(capi::wave_device_new(0, 0, capi::WAVE_ENGINE_JIT, &mut c_device), 0);
        assert_eq!(capi::wave_module_load(source.as_ptr(), source.len(), std::ptr::null(), &mut c_module), 0);
        assert_eq!(capi::wave_module_kernel(c_module, c"axpy".as_ptr(), &mut c_kernel), 0);
    }
    let bytes = 4 * N as usize;
    let c_args = [
        host(x.as_mut_ptr().cast(), bytes, false),
        host(y.as_mut_ptr().cast(), bytes, false),
        host(out.as_mut_ptr().cast(), bytes, true),
        WaveArg { kind: WAVE_ARG_U32, value: WaveArgValue { uint32: N } },
        WaveArg { kind: WAVE_ARG_F32, value: WaveArgValue { float32: 2.0 } },
    ];
    let c_launch = median(100, 2000, || {
        // SAFETY: live handles; the host arrays are valid for their lengths, `out` writable.
        let status = unsafe {
            capi::wave_launch(
                c_device,
                c_kernel,
                &grid,
                &workgroup,
                c_args.as_ptr(),
                c_args.len(),
                std::ptr::null(),
            )
        };
        assert_eq!(status, 0);
    });
    assert_eq!(out[1023], 2.0 * 1023.0 + 1.0);

    let wbin = wave_jit::assemble(&source, "axpy.wave")?;
    let mut memory = vec![0u8; 1 << 20];
    for (i, v) in x.iter().chain(&y).enumerate() {
        memory[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
    }
    let regs = [[0, 0], [1, 4 * N], [2, 8 * N], [3, N], [4, 2.0f32.to_bits()]];
    let emulate = median(20, 500, || {
        // SAFETY: valid pointers to locals for their lengths.
        let status = unsafe {
            capi::wave_emulate(
                wbin.as_ptr(),
                wbin.len(),
                memory.as_mut_ptr(),
                memory.len(),
                regs.as_ptr(),
                regs.len(),
                &grid,
                &workgroup,
            )
        };
        assert_eq!(status, 0);
    });
    // SAFETY: handles made above, freed once.
    unsafe {
        capi::wave_kernel_free(c_kernel);
        capi::wave_module_free(c_module);
        capi::wave_device_free(c_device);
    }

    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!("axpy, {N} elements, 4 workgroups of 256, median per launch:");
    println!("  Rust API, buffers in device memory:        {:8.1} us", us(rust_api));
    println!("  Rust API, the same on 1 thread:            {:8.1} us", us(rust_api_one_thread));
    println!("  C ABI wave_launch, 3 host arrays:          {:8.1} us", us(c_launch));
    println!("  wave_emulate, 1 MiB copied in and out:     {:8.1} us", us(emulate));
    println!("  (an empty kernel, 1 workgroup, Rust API:   {:8.1} us)", us(empty_launch));
    Ok(())
}
