//! The coherent fast path of a divergent `if` (a copy of the `then` body that runs unmasked
//! when a run-time test finds every lane of the wave taking it): driven with every lane
//! active, with one lane off at each position of the wave, with dead lanes (a partial last
//! wave) and with no lane taking the body. Taking the unmasked copy with any lane off writes
//! that lane, and the memory then differs from the interpreter's.

mod common;

use common::{check, WIDTHS};
use wave_runtime::Dispatch;

/// `if (t * r21 != r20)`: each taking lane adds to its word `a[t]` and, in a nested
/// divergent `if`, to `b[t]`; the others take the `else` side and write `c[t]`. Guarded ops
/// and a float op run inside the unmasked copy too.
const KERNEL: &str = "
.kernel coherent
    mov_sr r1, sr_thread_id_x
    mov_sr r2, sr_workgroup_id_x
    mov_sr r3, sr_workgroup_size_x
    imad r1, r2, r3, r1
    imul r22, r1, r21
    icmp_ne p1, r22, r20
    mov_imm r4, 2
    shl r5, r1, r4
    if p1
        device_load_u32 r6, r5
        iadd r6, r6, r1
        device_store_u32 r5, r6
        mov_imm r7, 3
        and r8, r1, r7
        mov_imm r9, 0
        icmp_eq p3, r8, r9
        @p3 iadd r6, r6, r7
        mov_imm r10, 0x4000
        iadd r11, r5, r10
        if p3
            device_load_u32 r12, r11
            fadd r12, r12, r6
            device_store_u32 r11, r12
        endif
    else
        mov_imm r10, 0x8000
        iadd r11, r5, r10
        device_store_u32 r11, r1
    endif
.end
";

fn kernel() -> wave_isa::ValidKernel {
    common::assembled(KERNEL, "coherent.wave")
}

/// `off` is the thread whose lane is off (`u32::MAX`: none); `scale` 0 turns every lane off.
fn run(width: u32, threads: u32, off: u32, scale: u32) {
    let d = Dispatch {
        wave_width: width,
        grid: [2, 1, 1],
        workgroup: [threads, 1, 1],
        initial_registers: vec![(20, off), (21, scale)],
        threads: 1,
        ..Dispatch::default()
    };
    check(&kernel(), &d, 1 << 16);
}

#[test]
fn every_lane_active_takes_the_unmasked_copy() {
    for w in WIDTHS {
        run(w, 2 * w, u32::MAX, 1);
    }
}

#[test]
fn one_lane_off_anywhere_takes_the_masked_path() {
    for w in WIDTHS {
        for off in [0, 1, 3, 4, w / 2, w - 1, w + 2] {
            run(w, 2 * w, off, 1);
        }
    }
}

#[test]
fn dead_lanes_and_empty_bodies() {
    for w in WIDTHS {
        // A partial last wave (its dead lanes are never active): with a row of a multiple
        // of 4 threads the stores are whole vectors, which must not reach the dead lanes.
        run(w, 2 * w - 3, u32::MAX, 1);
        run(w, 2 * w - 4, u32::MAX, 1);
        // No lane takes the body.
        run(w, 2 * w, 0, 0);
    }
}

/// `depth` nested divergent `if`s, each adding to r2 before its test.
fn nested_ifs(depth: usize) -> wave_isa::ValidKernel {
    let mut s = String::from(".kernel nest\n    mov_sr r1, sr_thread_id_x\n    mov_imm r3, 0\n");
    for _ in 0..depth {
        s += "    iadd r2, r2, r1\n    icmp_gt p1, r2, r3\n    if p1\n";
    }
    s += "    iadd r4, r4, r1\n";
    for _ in 0..depth {
        s += "    endif\n";
    }
    let (module, _) = wave_isa::module::load_bytes((s + ".end\n").as_bytes(), "nest.wave")
        .unwrap_or_else(|e| panic!("{e}"));
    module.kernels[0].clone()
}

/// CLIF instructions of a kernel's entry function at W = 32 (hot and cold blocks).
fn clif_instructions(k: &wave_isa::ValidKernel) -> usize {
    let flags = common::checked_flags(32, [64, 1, 1]);
    let summary = wave_jit_codegen::snapshot::lowering_summary(k, flags).unwrap_or_else(|e| panic!("{e}"));
    summary
        .lines()
        .filter_map(|l| l.split_once(" instructions: "))
        .map(|(_, n)| n.trim().parse::<usize>().unwrap())
        .sum()
}

/// One coherent copy per nest of `if`s: a copy at every level doubled the code per level
/// (a conformance kernel of 32 nested ifs took 39 s to compile instead of 0.05 s).
#[test]
fn nested_ifs_grow_the_code_linearly() {
    let (small, large) = (clif_instructions(&nested_ifs(6)), clif_instructions(&nested_ifs(12)));
    assert!(large < 3 * small, "6 nested ifs: {small} CLIF instructions, 12: {large}");
}

/// `if (col < cols) { if (i < n) { .. } }` (the bundled bias-add kernel): both levels get a
/// coherent copy. In the last row, the outer test holds in a whole wave whose inner test
/// holds only for its first lane, so taking the inner copy there writes past `n`.
#[test]
fn nested_bounds_guards_take_each_copy_only_when_every_lane_does() {
    let k = &common::assembled(include_str!("../../benches/kernels/bias_add.wave"), "bias_add.wave");
    for w in WIDTHS {
        let cols = 2 * w + 3;
        for n in [3 * cols, 2 * cols + w + 1, 2 * cols + 1, 2 * cols - 2] {
            let d = Dispatch {
                wave_width: w,
                grid: [1, 3, 1],
                workgroup: [256, 1, 1],
                initial_registers: vec![(1, 0), (2, 0x4000), (3, 0x8000), (4, n), (5, cols)],
                threads: 1,
                ..Dispatch::default()
            };
            check(k, &d, 1 << 16);
        }
    }
}
