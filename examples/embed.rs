//! Run a WAVE kernel from Rust: examples/axpy.wave, out[i] = a * x[i] + y[i] on 1000 floats.
//!
//! `cargo run --example embed` (tests/examples.rs runs it too). Add `wave-jit` as a dependency
//! to do the same in your program.

use wave_jit::{Device, Module};

pub fn main() -> Result<(), wave_jit::Error> {
    let module = Module::load(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/axpy.wave"))?;
    let axpy = module.kernel("axpy")?;

    let n: u32 = 1000;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let y: Vec<f32> = (0..n).map(|i| 0.5 * i as f32).collect();

    let mut device = Device::new()?;
    let (dx, dy) = (device.alloc_from(&x)?, device.alloc_from(&y)?);
    let out = device.alloc(4 * n as u64)?;
    // Arguments go to registers 0, 1, ...: three buffer addresses, n (u32) and a (f32).
    let args = [dx.into(), dy.into(), out.into(), n.into(), 2.0f32.into()];
    device.launch(&axpy, [n.div_ceil(256), 1, 1], [256, 1, 1], &args)?;

    let result: Vec<f32> = device.read(&out)?;
    println!("out[0..4] = {:?}, out[999] = {}", &result[..4], result[999]);
    assert_eq!(result[999], 2.0 * 999.0 + 0.5 * 999.0);
    Ok(())
}
