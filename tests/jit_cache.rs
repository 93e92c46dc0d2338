//! Launches do not compile a kernel again: the JIT caches code by kernel, wave width,
//! workgroup size and flags, across devices and modules, and the C ABI's launches (which the
//! Python package makes) fill and hit the same entries as the Rust API's.

use std::time::Duration;
use wave_jit::{capi, Device, LaunchConfig, Module};

/// A kernel no other test compiles (the cache is per process and keyed by the code).
fn source(name: &str) -> String {
    format!(
        ".kernel {name}\n    mov r1, sr_thread_id_x\n    mov_imm r2, 2\n    shl r2, r1, r2\n    iadd r2, r2, r0\n    \
         device_store_u32 r2, r1\n    halt\n.end\n"
    )
}

#[test]
fn rust_api_launches_compile_once_per_shape() {
    let module = Module::from_source(&source("cache_probe_rust"), "probe.wave").unwrap();
    let kernel = module.kernel_at(0).unwrap();
    let mut device = Device::new().unwrap();
    let buffer = device.alloc(256).unwrap();
    let launch = |device: &mut Device, config: &LaunchConfig| {
        device.launch_with(&kernel, config, &[buffer.into()]).unwrap().compile_time
    };
    let config = LaunchConfig::new([1, 1, 1], [32, 1, 1]);
    assert!(launch(&mut device, &config) > Duration::ZERO, "the first launch compiles");
    assert_eq!(launch(&mut device, &config), Duration::ZERO, "the second hits the cache");
    // Other arguments, another device, the module loaded again: still the cached code.
    let again = Module::from_source(&source("cache_probe_rust"), "again.wave").unwrap().kernel_at(0).unwrap();
    let mut other = Device::new().unwrap();
    let other_buffer = other.alloc(256).unwrap();
    let report = other.launch_with(&again, &config, &[other_buffer.into()]).unwrap();
    assert_eq!(report.compile_time, Duration::ZERO);
    // Another wave width is other code.
    let wide = LaunchConfig { wave_width: 16, ..config };
    assert!(launch(&mut device, &wide) > Duration::ZERO);
    assert_eq!(launch(&mut device, &wide), Duration::ZERO);
}

#[test]
fn c_abi_launches_use_the_same_cache() {
    let text = source("cache_probe_c");
    let mut c_device = std::ptr::null_mut();
    let mut c_module = std::ptr::null_mut();
    let mut c_kernel = std::ptr::null_mut();
    let mut host = [0u32; 64];
    let arg = capi::WaveArg {
        kind: capi::WAVE_ARG_HOST,
        value: capi::WaveArgValue {
            host: capi::WaveHostArray { data: host.as_mut_ptr().cast(), len: 256, align: 4, copy_back: 1 },
        },
    };
    // SAFETY: pointers to live locals, valid for the lengths given; handles freed once.
    unsafe {
        assert_eq!(capi::wave_device_new(1 << 20, 0, capi::WAVE_ENGINE_JIT, &mut c_device), 0);
        assert_eq!(capi::wave_module_load(text.as_ptr(), text.len(), std::ptr::null(), &mut c_module), 0);
        assert_eq!(capi::wave_module_kernel_at(c_module, 0, &mut c_kernel), 0);
        let status =
            capi::wave_launch(c_device, c_kernel, &[1, 1, 1], &[32, 1, 1], &arg, 1, std::ptr::null());
        assert_eq!(status, 0);
        capi::wave_kernel_free(c_kernel);
        capi::wave_module_free(c_module);
        capi::wave_device_free(c_device);
    }
    assert_eq!(host[5], 5);
    // The Rust API's default launch now finds the code the C launch compiled.
    let kernel = Module::from_source(&text, "probe.wave").unwrap().kernel_at(0).unwrap();
    let mut device = Device::new().unwrap();
    let buffer = device.alloc(256).unwrap();
    let report = device.launch(&kernel, [1, 1, 1], [32, 1, 1], &[buffer.into()]).unwrap();
    assert_eq!(report.compile_time, Duration::ZERO, "the C ABI's launch compiled other code");
}
