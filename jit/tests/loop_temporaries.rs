//! Loop temporaries (`jit/src/translate/temporaries.rs`): a register used only inside one loop
//! body and written there, unguarded at the top level, before any read takes that write
//! without a blend. Driven where lanes leave at different trips (`break`), skip the rest of a
//! trip (`continue`), and where a nested `if` writes the same register for some lanes (that
//! write must keep the others' values), with the results stored from inside the loop, so the
//! lanes' values show. Compared with the interpreter at every width, on one and two threads.

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
