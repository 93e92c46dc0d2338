//! `fexp2` and `flog2` in vector code (`translate::transcendental`) against the runtime's
//! definitions (`semantics::fexp2`/`flog2`: `libm::exp2f`/`log2f`) bit for bit: inputs spread
//! over every exponent of both signs, the edges of the vector code's ranges, and waves whose
//! running lanes are all inside them (vector code) or not (the lane helper). Masks: a guard
//! that turns off the lanes holding inputs the vector code does not cover (they keep their old
//! values), a partial last wave, and a wave with no running lane.

mod common;

use common::WIDTHS;
use wave_isa::ValidKernel;
use wave_jit_codegen::JitEngine;
use wave_runtime::semantics::{fexp2, flog2};
use wave_runtime::{Device, Dispatch, Engine, Interpreter};

/// An op's definition on f32 bits.
type Definition = fn(u32) -> u32;

/// The ops, with their definitions.
const OPS: [(&str, Definition); 2] = [("fexp2", fexp2), ("flog2", flog2)];

/// Thread g: `y[g] = op(x[g])` where `g < n` (and, with `guard`, where `g % 3 != 0`); lanes
/// that skip it store `g`. Registers: r1 = x, r2 = y (byte offsets), r4 = n.
fn kernel(op: &str, guard: bool) -> ValidKernel {
    let (set_guard, op) = if guard {
        (
            "mov_imm r17, 3\n    imod r18, r8, r17\n    mov_imm r17, 0\n    icmp_ne p1, r18, r17",
            format!("@p1 {op} r16, r9"),
        )
    } else {
        ("", format!("{op} r16, r9"))
    };
    common::assembled(
        &format!(
            "
.kernel transcendental
    mov_sr r5, sr_workgroup_id_x
    mov_sr r6, sr_workgroup_size_x
    mov_sr r7, sr_thread_id_x
    imad r8, r5, r6, r7
    ucmp_lt p0, r8, r4
    mov_imm r12, 4
    imul r13, r8, r12
    iadd r14, r13, r1
    iadd r15, r13, r2
    mov r16, r8
    {set_guard}
    if p0
        device_load_u32 r9, r14
        {op}
    endif
    device_store_u32 r15, r16
.end
"
        ),
        "transcendental.wave",
    )
}

/// Run `kernel` on `engine` over `inputs` (workgroups of 2W threads, one more workgroup than
/// the inputs fill when `spare`); returns y.
fn run(
    engine: &dyn Engine,
    kernel: &ValidKernel,
    inputs: &[u32],
    w: u32,
    threads: usize,
    spare: bool,
) -> Vec<u32> {
    let n = inputs.len() as u32;
    let group = 2 * w;
    let groups = n.div_ceil(group) + u32::from(spare);
    let bytes = 4 * (groups * group) as u64;
    let mut device = Device::new(2 * bytes).unwrap();
    let words: Vec<u8> = inputs.iter().flat_map(|v| v.to_le_bytes()).collect();
    device.write(0, &words).unwrap();
    let d = Dispatch {
        wave_width: w,
        grid: [groups, 1, 1],
        workgroup: [group, 1, 1],
        initial_registers: vec![(1, 0), (2, bytes as u32), (4, n)],
        threads,
        ..Dispatch::default()
    };
    engine.run(kernel, &d, &mut device).unwrap_or_else(|e| panic!("W={w}: {e}"));
    let out = device.read(bytes, bytes).unwrap();
    out.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

/// Inputs over every exponent of both signs (`per_exponent` mantissas each, spread out), in
/// order, so that most waves hold only inputs of one magnitude; and the edges of each range
/// the vector code distinguishes.
fn sweep(per_exponent: u32) -> Vec<u32> {
    let mut v = Vec::new();
    for sign in [0u32, 0x8000_0000] {
        for exponent in 0..256u32 {
            for m in 0..per_exponent {
                let mantissa = (m as u64 * 0x7f_ffff / (per_exponent as u64 - 1).max(1)) as u32;
                v.push(sign | exponent << 23 | mantissa);
            }
        }
    }
    // exp2f: |x| = 126 and 2^-25 and their neighbours, ±128, ±150 and beyond, 0, ±1/32 steps;
    // log2f: the smallest normal, the largest finite, 1, sqrt(2)/2 and sqrt(2).
    for edge in [
        0x42fc_0000u32,
        0x3300_0000,
        0x4300_0000,
        0x4316_0000,
        0,
        0x3d00_0000,
        0x0080_0000,
        0x7f7f_ffff,
        0x3f80_0000,
        0x3f35_04f3,
        0x3fb5_04f3,
    ] {
        for d in [-2i32, -1, 0, 1, 2] {
            let e = edge.wrapping_add(d as u32);
            v.extend([e, e | 0x8000_0000]);
        }
    }
    for i in -2048i32..=2048 {
        v.push((i as f32 / 16.0).to_bits());
        v.push((i as f32 / 16.0 + 1.0 / 64.0).to_bits());
    }
    v
}

#[test]
fn vector_code_is_libm_bit_for_bit() {
    let engine = JitEngine::strict();
    let inputs = sweep(4096);
    for (op, definition) in OPS {
        let k = kernel(op, false);
        let want: Vec<u32> = inputs.iter().map(|&x| definition(x)).collect();
        for w in [4, 32, 64] {
            let got = run(&engine, &k, &inputs, w, 2, false);
            if let Some(i) = (0..inputs.len()).find(|&i| got[i] != want[i]) {
                panic!("W={w}: {op}({:#010x}) = {:#010x}, libm {:#010x}", inputs[i], got[i], want[i]);
            }
        }
    }
}

#[test]
fn masked_and_partial_waves_match_the_interpreter() {
    // NaNs, infinities, ±200 (beyond exp2f's range), 0, -1 and a subnormal (not log2f's).
    let uncovered = [
        0x7fc0_0000u32,
        0x7f80_0000,
        0xff80_0000,
        0x4348_0000,
        0xc348_0000,
        0x7fa0_0001,
        0,
        0xbf80_0000,
        0x0000_0100,
    ];
    // Every third lane holds an input the vector code does not cover; the rest are in range.
    let inputs: Vec<u32> = (0..1000u32)
        .map(|g| {
            if g % 3 == 0 {
                uncovered[(g / 3) as usize % uncovered.len()]
            } else {
                (g as f32 / 7.0 - 60.0).to_bits()
            }
        })
        .collect();
    for (op, guard) in OPS.iter().flat_map(|&(op, _)| [(op, true), (op, false)]) {
        let k = kernel(op, guard);
        for w in WIDTHS {
            for threads in [1, 2] {
                // A partial last wave (1000 is no multiple of 2W) and a workgroup past the end.
                let want = run(&Interpreter::new(), &k, &inputs, w, threads, true);
                let got = run(&JitEngine::strict(), &k, &inputs, w, threads, true);
                if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
                    panic!(
                        "{op} guard {guard} W={w} threads {threads}: y[{i}] = {:#010x}, interpreter {:#010x}",
                        got[i], want[i]
                    );
                }
            }
        }
    }
}
