//! Consecutive lanes whose 32-bit addresses wrap (issue 15, items 2 and 3): the JIT loads and
//! stores four consecutive words as one 16-byte access from each vector's lane-0 address, which
//! is only right where those 16 bytes hold the four addresses. These kernels break that: an
//! inactive lane 0 whose implied address is below zero (`a[t - 1]` with `a` at address 0, in
//! device and in local memory), and lanes that run past 2^32 on a 4 GiB device (every access in
//! bounds). Each runs on both engines, checked and unchecked, at every wave width; the
//! interpreter's memory is the answer.

mod common;

use common::WIDTHS;
use wave_jit_codegen::JitEngine;
use wave_runtime::{Device, Dispatch, Engine, Interpreter};

/// `out[t] = a[t - 1]` for t >= 1, `a` at device address 0, `out` at 0x1000: lane 0 is off.
const STENCIL_LEFT: &str = include_str!("kernels/stencil_left.wave");

/// The same through local memory: `l[t] = 100 + t`, then `out[t] = l[t - 1]` for t >= 1.
const STENCIL_LEFT_LOCAL: &str = "
.kernel leftl
    mov_sr r1, sr_thread_id_x
    mov_imm r2, 2
    shl r3, r1, r2
    mov_imm r10, 100
    iadd r11, r10, r1
    local_store_u32 r3, r11
    barrier
    mov_imm r4, 4
    isub r5, r3, r4
    mov_imm r6, 0
    icmp_gt p1, r1, r6
    if p1
        local_load_u32 r7, r5
        mov_imm r8, 0x1000
        iadd r9, r8, r3
        device_store_u32 r9, r7
    endif
.end
";

/// Lane t loads from r1 + 4t and stores the word to 0x100 + 4t, then stores 0x1000 + t to
/// r1 + 4t + 0x400 (r1 near the top: the lanes wrap to address 0).
const TOP: &str = "
.kernel top
    mov_sr r2, sr_thread_id_x
    mov_imm r3, 2
    shl r4, r2, r3
    iadd r5, r1, r4
    device_load_u32 r6, r5
    mov_imm r7, 0x100
    iadd r8, r7, r4
    device_store_u32 r8, r6
    mov_imm r9, 0x400
    iadd r10, r5, r9
    mov_imm r11, 0x1000
    iadd r12, r11, r2
    device_store_u32 r10, r12
.end
";

/// The load of [`TOP`] in a loop whose body only loads and adds (the JIT runs such loops one
/// vector at a time, chunk-major): `sum[t] = 3 * a[r1 + 4t]`, stored at 0x100 + 4t.
const TOP_LOOP: &str = "
.kernel toploop
    mov_sr r2, sr_thread_id_x
    mov_imm r3, 2
    shl r4, r2, r3
    iadd r5, r1, r4
    mov_imm r6, 0
    mov_imm r7, 0
    mov_imm r8, 3
    mov_imm r9, 1
    loop
        icmp_ge p1, r7, r8
        break p1
        device_load_u32 r10, r5
        iadd r6, r6, r10
        iadd r7, r7, r9
    endloop
    mov_imm r11, 0x100
    iadd r12, r11, r4
    device_store_u32 r12, r6
.end
";

fn kernel(source: &str) -> wave_isa::ValidKernel {
    let (module, _) =
        wave_isa::module::load_bytes(source.as_bytes(), "wrap.wave").unwrap_or_else(|e| panic!("{e}"));
    module.kernels[0].clone()
}

/// The words 0x11111111, 0x22222222, ... (as `../shared/repro/2026-11-24/words.bin`).
fn words(count: u32) -> Vec<u8> {
    (1..=count).flat_map(|i| (i.wrapping_mul(0x1111_1111)).to_le_bytes()).collect()
}

/// Run `kernel` on a fresh device of `device_size` bytes prepared by `init` on both engines;
/// compare the byte ranges `watch` (and the results).
fn compare(
    kernel: &wave_isa::ValidKernel,
    dispatch: &Dispatch,
    device_size: u64,
    init: &[(u64, Vec<u8>)],
    watch: &[(u64, u64)],
) {
    let run = |engine: &dyn Engine, unchecked: bool| {
        let mut device = Device::new(device_size).unwrap();
        for (at, bytes) in init {
            device.write(*at, bytes).unwrap();
        }
        let d = Dispatch { unchecked, ..dispatch.clone() };
        let result = engine.run(kernel, &d, &mut device).map(|_| ()).map_err(|e| e.to_string());
        let seen: Vec<Vec<u8>> =
            watch.iter().map(|&(at, len)| device.read(at, len).unwrap().to_vec()).collect();
        (result, seen)
    };
    let (want, want_mem) = run(&Interpreter::new(), false);
    assert_eq!(want, Ok(()), "kernel {}: the interpreter fails", kernel.meta.name);
    for unchecked in [false, true] {
        let (got, got_mem) = run(&JitEngine::strict(), unchecked);
        let what = format!("kernel {} W={} unchecked={unchecked}", kernel.meta.name, dispatch.wave_width);
        assert_eq!(got, want, "{what}: results differ");
        for ((&(at, _), want), got) in watch.iter().zip(&want_mem).zip(&got_mem) {
            let words =
                |b: &[u8]| b.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect::<Vec<_>>();
            assert_eq!(words(got), words(want), "{what}: memory from 0x{at:x} differs (JIT, interpreter)");
        }
    }
}

fn dispatch(width: u32, threads: u32, registers: &[(u8, u32)]) -> Dispatch {
    Dispatch {
        wave_width: width,
        workgroup: [threads, 1, 1],
        initial_registers: registers.to_vec(),
        threads: 1,
        ..Dispatch::default()
    }
}

#[test]
fn inactive_lane0_below_address_zero_device() {
    let k = kernel(STENCIL_LEFT);
    for w in WIDTHS {
        for threads in [8, 2 * w] {
            compare(&k, &dispatch(w, threads, &[]), 1 << 16, &[(0, words(128))], &[(0x1000, 4 * 128)]);
        }
    }
}

#[test]
fn inactive_lane0_below_address_zero_local() {
    let k = kernel(STENCIL_LEFT_LOCAL);
    for w in WIDTHS {
        for threads in [8, 2 * w] {
            compare(&k, &dispatch(w, threads, &[]), 1 << 16, &[], &[(0x1000, 4 * 128)]);
        }
    }
}

/// r1 = 2^32 - 0x38: lanes 14.. of a 32-lane workgroup wrap to addresses 0, 4, ...; at every
/// width some vector has lane 0 below the top and lane 3 past it.
#[test]
fn consecutive_lanes_wrap_past_the_top_of_a_4_gib_device() {
    let top = (1u64 << 32) - 0x38;
    for source in [TOP, TOP_LOOP] {
        let k = kernel(source);
        for w in WIDTHS {
            for start in [top as u32, top as u32 - 8, u32::MAX - 3] {
                compare(
                    &k,
                    &dispatch(w, 32, &[(1, start)]),
                    1 << 32,
                    &[(0, words(64)), ((1u64 << 32) - 0x80, words(32))],
                    &[(0, 0x600), (top - 0x40, 0x40), ((1u64 << 32) - 0x400, 0x400)],
                );
            }
        }
    }
}
