//! Loop temporaries (`jit/src/translate/temporaries.rs`): a register used only inside one loop
//! body and written there, unguarded at the top level, before any read takes that write
//! without a blend. Driven where lanes leave at different trips (`break`), skip the rest of a
//! trip (`continue`), and where a nested `if` writes the same register for some lanes (that
//! write must keep the others' values), with the results stored from inside the loop, so the
//! lanes' values show. Also in nested loops, where each level writes the register first each
//! trip (the inner writes need no blend either), and where they must blend: the outer body
//! reads the register after the inner loop, or an `else` side reads it while the inner loop
//! runs in the `then` side. Compared with the interpreter at every width, on one and two
//! threads.

mod common;

use common::{check_completes, WIDTHS};
use wave_runtime::Dispatch;

/// Lane t runs trips i = t, t + 5, ... < n; each trip it stores at `0x1000 + 4 (t + 64 i)`:
/// `r3 = 3i` (a temporary), or 3i + 7 where i is odd (a nested write to it), skipping the
/// store where i % 4 == 2 (`continue`).
const TEMPORARIES: &str = "
.kernel temps
    mov_sr r1, sr_thread_id_x
    mov r8, r1
    mov_imm r17, 1
    mov_imm r18, 3
    mov_imm r19, 7
    mov_imm r20, 4
    mov_imm r21, 64
    mov_imm r22, 0x1000
    mov_imm r23, 2
    mov_imm r24, 5
    loop
        ucmp_lt p0, r8, r4
        break !p0
        imul r3, r8, r18
        and r5, r8, r17
        icmp_eq p1, r5, r17
        if p1
            iadd r3, r3, r19
        endif
        imul r6, r8, r21
        iadd r6, r6, r1
        imul r6, r6, r20
        iadd r6, r6, r22
        and r7, r8, r18
        iadd r8, r8, r24
        icmp_eq p2, r7, r23
        continue p2
        device_store_u32 r6, r3
    endloop
.end
";

#[test]
fn temporaries_under_partial_masks_match_the_interpreter() {
    let k = common::assembled(TEMPORARIES, "temps.wave");
    for w in WIDTHS {
        for n in [0, 1, 9, 3 * w + 2] {
            for threads in [1, 2] {
                let d = Dispatch {
                    wave_width: w,
                    grid: [2, 1, 1],
                    workgroup: [w, 1, 1],
                    initial_registers: vec![(4, n)],
                    threads,
                    ..Dispatch::default()
                };
                check_completes(&k, &d, 1 << 20);
            }
        }
    }
}

/// Lane t sums, over outer trips i < n, what its inner trips j <= t + i % 4 load into r10 from
/// its wave's word at `0x2000` (the running lanes store j there each trip, so the word changes
/// under the lanes that left: a write that did not blend would hand them a later trip's word),
/// and stores the sum at `0x1000 + 4g` (g its global index). `NESTED_READ` marks where a variant reads r10 after the
/// inner loop, `NESTED_IF` where one puts the inner loop in the `then` side of an `if` on the
/// lane's parity.
const NESTED: &str = "
.kernel nested
    mov_sr r1, sr_thread_id_x
    mov_imm r17, 1
    mov_imm r20, 4
    mov_imm r22, 0x1000
    mov_imm r23, 3
    mov_imm r6, 0
    mov_imm r8, 0
    mov_sr r24, sr_workgroup_id_x
    mov_sr r25, sr_wave_id
    mov_imm r26, 8
    imad r30, r24, r26, r25
    imul r30, r30, r20
    mov_imm r27, 0x2000
    iadd r30, r30, r27
    loop
        mov r10, r8
        ucmp_lt p0, r8, r4
        break !p0
        iadd r10, r10, r17
        and r12, r8, r23
        iadd r12, r12, r1
        mov_imm r9, 0
        NESTED_IF
        loop
            device_load_u32 r10, r30
            ucmp_lt p1, r9, r12
            break !p1
            iadd r6, r6, r10
            iadd r9, r9, r17
            device_store_u32 r30, r9
        endloop
        NESTED_ELSE
        NESTED_READ
        iadd r8, r8, r17
    endloop
    mov_sr r28, sr_workgroup_size_x
    imad r11, r24, r28, r1
    imul r11, r11, r20
    iadd r11, r11, r22
    device_store_u32 r11, r6
.end
";

#[test]
fn nested_temporaries_match_the_interpreter() {
    let parity = "and r13, r1, r17
        icmp_eq p2, r13, r17
        if p2";
    let variants = [
        NESTED.replace("NESTED_IF", "").replace("NESTED_ELSE", "").replace("NESTED_READ", ""),
        NESTED.replace("NESTED_IF", "").replace("NESTED_ELSE", "").replace("NESTED_READ", "iadd r6, r6, r10"),
        NESTED
            .replace("NESTED_IF", parity)
            .replace("NESTED_ELSE", "else\n iadd r6, r6, r10\n endif")
            .replace("NESTED_READ", ""),
    ];
    for source in &variants {
        let k = common::assembled(source, "nested.wave");
        for w in WIDTHS {
            for n in [0, 1, 5] {
                for threads in [1, 2] {
                    let d = Dispatch {
                        wave_width: w,
                        grid: [2, 1, 1],
                        workgroup: [w + w / 2 + 1, 1, 1],
                        initial_registers: vec![(4, n)],
                        threads,
                        ..Dispatch::default()
                    };
                    check_completes(&k, &d, 1 << 20);
                }
            }
        }
    }
}
