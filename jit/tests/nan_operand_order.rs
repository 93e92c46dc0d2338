//! `fadd` and `fmul` run without a NaN test on x86-64 (`jit/src/translate/fp.rs`): the machine
//! instruction keeps the WAVE operand order, so it returns the first NaN operand (quieted), as
//! `semantics` does. This pins that with every pair of eight values, six of them NaNs with
//! distinct payloads (quiet and signalling, both signs), in both operand orders: operands
//! loaded from memory, a constant operand, results of other float ops, a guarded op under a
//! partial mask, and accumulations in a loop (chunk-major) with the accumulator on either
//! side. A code generator that swapped the operands would return the second NaN here. Each is
//! compared with the interpreter, bit for bit, at every width.

mod common;

use common::WIDTHS;
use wave_jit_codegen::JitEngine;
use wave_runtime::{Device, Dispatch, Engine, Interpreter};

const VALUES: [u32; 8] = [
    0x7fc0_0001, // quiet NaN
    0x7f80_0002, // signalling NaN
    0xffc0_0003, // negative quiet NaN
    0xff80_0004, // negative signalling NaN
    0x7fff_ffff, // quiet NaN, full payload
    0x7fa0_0005, // signalling NaN
    0x3f80_0000, // 1.0
    0x7f80_0000, // +inf
];

/// Thread g (of 64) takes a = VALUES[g % 8] from 0x0 + 4g and b = VALUES[g / 8] from
/// 0x1000 + 4g, and stores its results at 0x2000 + 4g + 0x400·k.
const KERNEL: &str = "
.kernel nan_order
.workgroup_size 64, 1, 1
    mov_sr r1, sr_thread_id_x
    mov_imm r2, 4
    imul r2, r1, r2
    device_load_u32 r3, r2
    mov_imm r4, 0x1000
    iadd r5, r2, r4
    device_load_u32 r6, r5
    fadd r7, r3, r6
    fadd r8, r6, r3
    fmul r9, r3, r6
    fmul r10, r6, r3
    mov_imm r11, 0x7f800006
    fadd r12, r11, r3
    fmul r13, r6, r11
    fadd r14, r9, r10
    fmul r15, r8, r7
    mov_imm r16, 3
    and r16, r1, r16
    mov_imm r17, 1
    icmp_eq p0, r16, r17
    mov r18, r3
    @p0 fadd r18, r6, r3
    mov r19, r6
    @!p0 fmul r19, r3, r6
    mov_imm r20, 0
    mov_imm r21, 0x3f800000
    mov_imm r22, 2
    mov_imm r23, 0
    mov r24, r2
    loop
        icmp_le p1, r22, r23
        break p1
        device_load_u32 r25, r24
        fadd r20, r25, r20
        fmul r21, r21, r25
        iadd r24, r24, r4
        isub r22, r22, r17
    endloop
    mov_imm r26, 0x2000
    iadd r27, r2, r26
    mov_imm r28, 0x400
    device_store_u32 r27, r7
    iadd r27, r27, r28
    device_store_u32 r27, r8
    iadd r27, r27, r28
    device_store_u32 r27, r9
    iadd r27, r27, r28
    device_store_u32 r27, r10
    iadd r27, r27, r28
    device_store_u32 r27, r12
    iadd r27, r27, r28
    device_store_u32 r27, r13
    iadd r27, r27, r28
    device_store_u32 r27, r14
    iadd r27, r27, r28
    device_store_u32 r27, r15
    iadd r27, r27, r28
    device_store_u32 r27, r18
    iadd r27, r27, r28
    device_store_u32 r27, r19
    iadd r27, r27, r28
    device_store_u32 r27, r20
    iadd r27, r27, r28
    device_store_u32 r27, r21
.end
";

#[test]
fn fadd_and_fmul_return_the_first_nan_operand_like_the_interpreter() {
    let k = common::assembled(KERNEL, "nan_order.wave");
    let mut memory = vec![0u8; 0x8000];
    for g in 0..64 {
        let a = VALUES[g % 8];
        let b = VALUES[g / 8];
        memory[4 * g..4 * g + 4].copy_from_slice(&a.to_le_bytes());
        memory[0x1000 + 4 * g..0x1000 + 4 * g + 4].copy_from_slice(&b.to_le_bytes());
    }
    for w in WIDTHS {
        let d = Dispatch { wave_width: w, grid: [1, 1, 1], workgroup: [64, 1, 1], ..Dispatch::default() };
        let mut a = Device::new(memory.len() as u64).unwrap();
        a.bytes_mut().copy_from_slice(&memory);
        let mut b = Device::new(memory.len() as u64).unwrap();
        b.bytes_mut().copy_from_slice(&memory);
        Interpreter::new().run(&k, &d, &mut a).expect("the interpreter runs it");
        JitEngine::strict().run(&k, &d, &mut b).expect("the JIT runs it");
        for (i, (x, y)) in a.bytes().chunks(4).zip(b.bytes().chunks(4)).enumerate() {
            assert_eq!(x, y, "W={w}: word at 0x{:x}", 4 * i);
        }
        // The pairs of two different NaNs give the first one: the test would see a swap.
        let word = |at: usize| u32::from_le_bytes(b.bytes()[at..at + 4].try_into().unwrap());
        assert_eq!(word(0x2000 + 4 * 8), VALUES[0], "W={w}: fadd of two NaNs (quiet first)");
        assert_eq!(word(0x2400 + 4 * 8), VALUES[1] | 0x0040_0000, "W={w}: fadd with the operands swapped");
    }
}
