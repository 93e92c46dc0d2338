//! Divergent `if`s whose bodies hold only vector ops that cannot fault run one vector at a
//! time (`chunk::Translator::chunk_major_if`): the whole nest for the wave's first vector,
//! then for the next. Driven against the interpreter at every width, with masks the data
//! decides (every pattern of running lanes, partial waves with dead lanes), NaN operands of
//! `fadd`, `fmul` and `fma` (their exact path, there being no bail-out), guarded ops, lane
//! ids and `else` sides.

mod common;

use common::{check, WIDTHS};
use wave_runtime::Dispatch;

/// Per thread `t`: loads `a[t]`, `b[t]`, `c[t]`, then an `if` holding `rounds` copies of a
/// block of integer and float ops (more statements than a coherent copy takes) with a nested
/// `if`/`else` on a bit of `b[t]`, then stores r10..r21 to `out[16 t ..]`. The `if` tests a
/// bit of `a[t]`, or with `bound`, `t < r30` (a compare the translator keeps as a scalar
/// form for the whole wave).
fn kernel(rounds: usize, bound: bool) -> wave_isa::ValidKernel {
    let mut s = String::from(
        ".kernel chunked
    mov_sr r1, sr_thread_id_x
    mov_sr r2, sr_workgroup_id_x
    mov_sr r3, sr_workgroup_size_x
    imad r1, r2, r3, r1
    mov_imm r4, 2
    shl r5, r1, r4
    mov_imm r6, 0x1000
    iadd r7, r5, r6
    device_load_u32 r10, r5
    device_load_u32 r11, r7
    iadd r7, r7, r6
    device_load_u32 r12, r7
    mov_imm r8, 1
    and r9, r10, r8
    mov_imm r22, 0
    icmp_eq p1, r9, r22
    mov_imm r23, 2
    and r24, r11, r23
    icmp_ne p2, r24, r22
    mov_sr r25, sr_lane_id
",
    );
    if bound {
        s += "    ucmp_lt p1, r1, r30\n";
    }
    s += "    if p1\n";
    for _ in 0..rounds {
        s += "        fadd r13, r10, r11
        fmul r14, r13, r12
        fma r15, r10, r11, r14
        fmax r16, r15, r12
        iadd r17, r17, r25
        xor r18, r18, r10
        imul r19, r19, r11
        icmp_lt p3, r17, r18
        @p3 iadd r20, r20, r8
        select r21, p3, r13, r21
        if p2
            fsub r10, r10, r14
            imax r17, r17, r19
        else
            fmin r11, r11, r15
            iadd r18, r18, r25
        endif
";
    }
    s += "    else
        iadd r20, r20, r1
    endif
    mov_imm r26, 64
    imul r27, r1, r26
    mov_imm r28, 0x10000
    iadd r27, r27, r28
";
    for r in 10..=21 {
        s += &format!("    device_store_u32 r27, r{r}\n    iadd r27, r27, r4\n    iadd r27, r27, r4\n");
    }
    s += ".end\n";
    common::assembled(&s, "chunk_major_if.wave")
}

fn run(k: &wave_isa::ValidKernel, width: u32, threads: u32, bound: u32) {
    let d = Dispatch {
        wave_width: width,
        grid: [3, 1, 1],
        workgroup: [threads, 1, 1],
        initial_registers: vec![(30, bound)],
        threads: 1,
        ..Dispatch::default()
    };
    check(k, &d, 1 << 18);
}

/// Full waves, and partial last waves whose dead lanes sit in a vector with running ones.
#[test]
fn matches_the_interpreter_at_every_width() {
    let k = kernel(5, false);
    for w in WIDTHS {
        for threads in [2 * w, 2 * w - 3, w + 1] {
            run(&k, w, threads, 0);
        }
    }
}

/// The `if` on `t < bound`: every lane, none, and a boundary inside the first, a middle and
/// the last vector of a wave.
#[test]
fn compare_form_predicates() {
    let k = kernel(5, true);
    for w in WIDTHS {
        for bound in [0, 2, w / 2 + 1, w - 1, w + 3, 3 * w] {
            run(&k, w, 2 * w, bound);
        }
    }
}

/// A body small enough for a coherent copy: the outer `if` keeps its copy (unmasked where
/// every lane takes `then`), the nested one runs chunk-major on the masked path.
#[test]
fn small_bodies_keep_their_coherent_copy() {
    let k = kernel(1, false);
    for w in WIDTHS {
        run(&k, w, 2 * w - 1, 0);
    }
}

/// An instruction limit that runs out before, inside and after the `if` (its statements are
/// counted once for the wave, not once per vector).
#[test]
fn instruction_limits() {
    let k = kernel(5, false);
    for w in [8, 32] {
        let d = Dispatch {
            wave_width: w,
            grid: [3, 1, 1],
            workgroup: [2 * w, 1, 1],
            threads: 1,
            ..Dispatch::default()
        };
        common::check_limits(&k, &d, 1 << 18);
    }
}

/// `if`s inside a loop's coherent copy, where the loop's affine and uniform registers live
/// as scalars (lane 0 of the wave) and the `if`s read them: a nest deeper than the coherent
/// copies go, so its inner levels run chunk-major. `out[t]` and `out[t + 0x400]` get what
/// lane t summed. The stores in the body keep the loop wave-major.
#[test]
fn inside_a_loop_with_scalar_shadows() {
    let mut s = String::from(
        ".kernel shadowed
    mov_sr r7, sr_thread_id_x
    iadd r8, r7, r5
    mov_imm r13, 0
    mov_imm r17, 1
    mov_imm r10, 4
    imul r18, r7, r10
    mov_imm r11, 0x400
    iadd r19, r18, r11
    mov_imm r20, 0
    mov_imm r21, 0
    loop
        ucmp_lt p0, r8, r4
        break !p0
",
    );
    for level in 0..6 {
        s += &format!(
            "        mov_imm r9, {}
        and r9, r8, r9
        icmp_eq p3, r9, r22
        if p3
        iadd r20, r20, r8
        imul r23, r8, r13
        xor r21, r21, r23
",
            1 << level
        );
    }
    s += &"        endif\n".repeat(6);
    s += "        iadd r13, r13, r17
        isub r4, r4, r6
        device_store_u32 r18, r20
        device_store_u32 r19, r21
    endloop
.end
";
    let k = common::assembled(&s, "shadowed.wave");
    for w in WIDTHS {
        for (start, limit, drop) in [(0, 98, 7), (3, 200, 1), (0xffff_ff00, 0xffff_ff60, 3)] {
            let d = Dispatch {
                wave_width: w,
                grid: [2, 1, 1],
                workgroup: [2 * w, 1, 1],
                initial_registers: vec![(5, start), (4, limit), (6, drop)],
                threads: 1,
                ..Dispatch::default()
            };
            common::check_completes(&k, &d, 1 << 16);
        }
    }
}
