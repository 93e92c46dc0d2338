//! A chunk-major loop's loads whose every address its entry checked take lane 0's address as
//! the exact 64-bit sum of the address's terms (`Translator::exact_lane0_offsets`), so that
//! constant terms fold into the access. That sum is the 32-bit address only where no add on
//! the way wrapped: every term added, the induction register stepping up. Against the
//! interpreter at every width, with and without an instruction budget: consecutive and
//! uniform addresses stepping up with constant offsets (the sum is taken), up to the last
//! word of memory (no fault) and one word past it (a fault); an address stepping down through
//! zero whose sum with its offset is back in bounds (32-bit `0xfffffffc + 16 = 12`, where a
//! 64-bit sum would read 4 GiB further on), and a subtracted offset (both must keep the 32-bit
//! address).

mod common;

use common::{run_both, WIDTHS};
use wave_runtime::Dispatch;

const DEVICE: u64 = 1 << 16;
/// Where each thread stores its sum.
const OUT: u32 = 0x8000;

/// A counted loop of `trips` trips; per trip each thread loads `iv + offset` (iv starts at
/// `start + 4 × thread`, consecutive) and `uniform + offset` (the same in every lane),
/// `offset` added or subtracted (`combine`), and both iv's step by `step` (`update`: `iadd`
/// or `isub`). Each thread stores the sum of its loads at `OUT + 4 × thread`.
fn source(
    start: u32,
    uniform: u32,
    offset: u32,
    combine: &str,
    update: &str,
    step: u32,
    trips: u32,
) -> String {
    format!(
        "
.kernel exact_addresses
.registers 32
.workgroup_size 64, 1, 1
    mov_sr r1, sr_thread_id_x
    mov_imm r2, 4
    imul r3, r1, r2
    mov_imm r4, {start}
    iadd r6, r4, r3
    mov_imm r16, {uniform}
    mov_imm r9, {offset}
    mov_imm r8, {step}
    mov_imm r5, {trips}
    mov_imm r10, 0
    mov_imm r11, 0
    mov_imm r12, 1
    loop
        icmp_le p0, r5, r11
        break p0
        {combine} r7, r6, r9
        device_load_u32 r13, r7
        iadd r10, r10, r13
        {combine} r17, r16, r9
        device_load_u32 r13, r17
        iadd r10, r10, r13
        {update} r6, r6, r8
        {update} r16, r16, r8
        isub r5, r5, r12
    endloop
    mov_imm r14, {OUT}
    iadd r14, r14, r3
    device_store_u32 r14, r10
    halt
.end
"
    )
}

/// Run the loop of `source` at every width, with and without a budget, on both engines; the
/// outcomes and memory must agree, and the interpreter's must be a fault exactly when `faults`.
fn check(source: &str, faults: bool) {
    let kernel = common::assembled(source, "exact_addresses.wave");
    for w in WIDTHS {
        for max_instructions in [0, 1 << 20] {
            let d = Dispatch {
                wave_width: w,
                grid: [2, 1, 1],
                workgroup: [64, 1, 1],
                max_instructions,
                threads: 1,
                ..Dispatch::default()
            };
            let (interp, jit, interp_memory, jit_memory) = run_both(&kernel, &d, DEVICE, 5);
            assert_eq!(interp.is_err(), faults, "W={w}: the interpreter's outcome {interp:?}\n{source}");
            assert_eq!(interp, jit, "W={w} budget {max_instructions}: outcomes differ\n{source}");
            assert!(interp_memory == jit_memory, "W={w} budget {max_instructions}: memory differs\n{source}");
        }
    }
}

#[test]
fn addresses_stepping_up_with_constant_offsets() {
    check(&source(0x100, 0x40, 0x400, "iadd", "iadd", 4, 12), false);
    check(&source(0, 0, 0x1000, "iadd", "iadd", 0x100, 7), false);
}

#[test]
fn the_last_word_of_memory_loads_and_the_next_faults() {
    // Thread 63's consecutive address on its 8th trip: 4·63 + 7·16 + offset.
    let last = DEVICE as u32 - 4;
    let offset = last - (4 * 63 + 7 * 16);
    check(&source(0, 0, offset, "iadd", "iadd", 16, 8), false);
    check(&source(4, 0, offset, "iadd", "iadd", 16, 8), true);
}

#[test]
fn an_induction_register_stepping_down_through_zero_keeps_the_32_bit_address() {
    // Lane 0 and the uniform register: 8, 4, 0, 0xfffffffc; + 16 loads 24, 20, 16, 12.
    check(&source(8, 8, 16, "iadd", "isub", 4, 4), false);
}

#[test]
fn a_subtracted_offset_keeps_the_32_bit_address() {
    check(&source(0x200, 0x300, 0x40, "isub", "iadd", 4, 9), false);
}
