//! Speed of the interpreter against the reference wave-emu on the same kernels.
//!
//! `cargo run --release -p wave-jit-runtime --example vs_wave_emu`
//!
//! Each kernel is assembled by the reference wave-asm for wave-emu and by our assembler for
//! the interpreter; both run the same dispatch, their device memory is compared, and the
//! best of a few runs is reported.

use std::time::{Duration, Instant};
use wave_emu::{Emulator, EmulatorConfig};
use wave_isa::module::load_bytes;
use wave_runtime::{Device, Dispatch, Engine, Interpreter};

const VECTOR_ADD: &str = "
.kernel vadd
    mov r0, sr_thread_id_x
    mov r5, sr_workgroup_id_x
    mov r6, sr_workgroup_size_x
    imad r0, r5, r6, r0
    mov_imm r2, 2
    shl r1, r0, r2
    mov_imm r3, 0x40000
    iadd r3, r3, r1
    device_load_u32 r4, r1
    device_load_u32 r7, r3
    fadd r4, r4, r7
    mov_imm r3, 0x80000
    iadd r3, r3, r1
    device_store_u32 r3, r4
    halt
.end
";

const LOOP_HEAVY: &str = "
.kernel loopy
    mov r0, sr_thread_id_x
    mov r5, sr_workgroup_id_x
    mov r6, sr_workgroup_size_x
    imad r0, r5, r6, r0
    mov_imm r2, 2
    shl r1, r0, r2
    mov_imm r3, 0
    cvt_f32_u32 r4, r0
    mov_imm r7, 0x3f000000
    mov_imm r8, 1
    mov_imm r9, 200
    loop
        fma r4, r4, r7, r7
        iadd r3, r3, r8
        icmp_ge p1, r3, r9
        break p1
    endloop
    device_store_u32 r1, r4
    halt
.end
";

const DEVICE_BYTES: usize = 1 << 20;
const WORKGROUPS: u32 = 256;
const THREADS: u32 = 256;

fn best_of(runs: usize, mut f: impl FnMut() -> Duration) -> Duration {
    (0..runs).map(|_| f()).min().unwrap_or_default()
}

fn input() -> Vec<u8> {
    (0..DEVICE_BYTES / 4).flat_map(|i| ((i % 1000) as f32 * 0.25).to_le_bytes()).collect()
}

fn compare(name: &str, source: &str) -> Result<f64, String> {
    let binary = wave_asm::assemble(source, "bench.wave").map_err(|e| format!("{e:?}"))?.binary;
    let (module, _) = load_bytes(source.as_bytes(), "bench.wave").map_err(|e| e.to_string())?;
    let kernel = &module.kernels[0];
    let data = input();

    let config = EmulatorConfig {
        grid_dim: [WORKGROUPS, 1, 1],
        workgroup_dim: [THREADS, 1, 1],
        device_memory_size: DEVICE_BYTES,
        ..EmulatorConfig::default()
    };
    let mut reference_memory = Vec::new();
    let reference = best_of(3, || {
        let mut emu = Emulator::new(config.clone());
        emu.load_binary(&binary).expect("wave-emu loads the binary");
        emu.load_device_memory(0, &data).expect("input fits");
        let t = Instant::now();
        emu.run().expect("wave-emu runs the kernel");
        let elapsed = t.elapsed();
        reference_memory = emu.read_device_memory(0, DEVICE_BYTES).expect("readable");
        elapsed
    });

    let dispatch = Dispatch { grid: [WORKGROUPS, 1, 1], workgroup: [THREADS, 1, 1], ..Dispatch::default() };
    let mut device = Device::new(DEVICE_BYTES as u64).map_err(|e| e.to_string())?;
    let ours = best_of(5, || {
        device.write(0, &data).expect("input fits");
        let t = Instant::now();
        Interpreter::new().run(kernel, &dispatch, &mut device).expect("the interpreter runs the kernel");
        t.elapsed()
    });
    if device.bytes() != reference_memory.as_slice() {
        return Err(format!("{name}: device memory differs from wave-emu's"));
    }
    let ratio = reference.as_secs_f64() / ours.as_secs_f64();
    println!(
        "{name:<12} wave-emu {:>9.3} ms   interp {:>9.3} ms   interp is {ratio:.1}x faster",
        reference.as_secs_f64() * 1e3,
        ours.as_secs_f64() * 1e3
    );
    Ok(ratio)
}

fn main() {
    println!("{WORKGROUPS} workgroups x {THREADS} threads, W = 32, best of several runs");
    for (name, source) in [("vector_add", VECTOR_ADD), ("loop_heavy", LOOP_HEAVY)] {
        if let Err(e) = compare(name, source) {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
