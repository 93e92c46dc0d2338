//! Chunk-major loops too large to unroll once per chunk run as one copy in a run-time loop
//! over the chunks, their state in a stack home (`translate::chunk`). Against the interpreter
//! at every width (the body below is unrolled at W = 4 and 8, looped at W = 16, 32 and 64): lane
//! and thread ids read inside the body (the chunk's place is a run-time value there), a
//! predicate and registers written in the body and read after it, lanes leaving at different
//! trips, partial waves, chunks with no active lane, a fault in a later chunk, NaN operands
//! in a later chunk (the deferred NaN test's bail-out), and an instruction budget that runs
//! out inside the loop. The float accumulators are the entry function's resident registers
//! (`chunk::memory_resident_registers`) where the loop runs at run time: a bail-out after
//! earlier chunks changed them in place starts the wave-major loop from their backed-up
//! entry values.

mod common;

use common::{check, run_both, WIDTHS};
use wave_runtime::Dispatch;

/// Accumulators r20..r20+ACCUMULATORS: enough carried registers that a chunk holds one
/// vector, and ops enough (six per accumulator) that four chunks are too many to unroll.
const ACCUMULATORS: u32 = 30;

/// What a variant of the kernel adds.
#[derive(Clone, Copy, PartialEq)]
enum Variant {
    Plain,
    /// Only threads below 5 run the loop (the other chunks have no active lane).
    Guarded,
    /// Thread `n` loads from 0xfffffff0 in the loop (out of bounds: the wave faults there).
    FaultAt(u32),
    /// The same with the float accumulators of `FiniteFloat`.
    FloatFaultAt(u32),
    /// Float accumulators (`fma acc, x, x, acc`, NaN-sticky) fed the loaded bits.
    Float,
    /// The same fed finite values (the loaded bits with the exponent's top bit clear): no NaN
    /// sends the loop to its bail-out, so the accumulators, 30 of them and so kept in the
    /// loop's home (`HOMED_ACCUMULATORS`), reach the end through it.
    FiniteFloat,
    /// Three trips for every lane: control is uniform, so the counter and the address are
    /// scalar shadows of one vector's lane 0, checked at each chunk's start.
    Uniform,
    /// A loop nested in the body (as many trips as the outer one) adds its counter to r20.
    Nested,
}

impl Variant {
    fn is_float(self) -> bool {
        matches!(self, Variant::Float | Variant::FiniteFloat | Variant::FloatFaultAt(_))
    }
}

/// Thread g loops `(tid & 7) + 3` trips (`Uniform`: 3), loading in[g + trip] (r60 = in) and
/// in[g] (from a register the loop only reads, whose vectors are not one value: its home
/// holds it, and addresses take its lane 0), and
/// folds each word into every accumulator with its lane and thread id; then stores the accumulators to
/// out[g * ACCUMULATORS + a] (r61 = out) and, where the body's last compare held, its trip
/// count after them.
fn kernel(variant: Variant) -> wave_isa::ValidKernel {
    let mut body = String::new();
    if variant == Variant::Nested {
        body += "        mov_imm r19, 0
        loop
            ucmp_lt p0, r19, r8
            break !p0
            iadd r20, r20, r19
            iadd r19, r19, r10
        endloop
";
    }
    for a in 0..ACCUMULATORS {
        let r = 20 + a;
        if variant.is_float() {
            body += &format!(
                "        fma r{r}, r13, r13, r{r}\n        iadd r14, r13, r11\n        xor r14, r14, r12\n"
            );
            body += "        and r15, r14, r16\n        iadd r15, r15, r14\n        xor r14, r15, r13\n";
        } else {
            body += &format!(
                "        iadd r{r}, r{r}, r13\n        xor r{r}, r{r}, r11\n        imul r14, r{r}, r12\n"
            );
            body += &format!(
                "        iadd r{r}, r{r}, r14\n        and r15, r{r}, r16\n        xor r{r}, r{r}, r15\n"
            );
        }
    }
    let mut stores = String::new();
    for a in 0..ACCUMULATORS {
        stores += &format!("    device_store_u32 r17, r{}\n    iadd r17, r17, r5\n", 20 + a);
    }
    let fault = match variant {
        Variant::FaultAt(t) | Variant::FloatFaultAt(t) => format!(
            "    mov_imm r18, {t}
    icmp_eq p3, r1, r18
    mov_imm r18, 0xfffffff0
    @p3 mov r6, r18\n"
        ),
        _ => String::new(),
    };
    let (open, close) = match variant {
        Variant::Guarded => ("    mov_imm r18, 5\n    ucmp_lt p3, r1, r18\n    if p3\n", "    endif\n"),
        _ => ("", ""),
    };
    let finite = if matches!(variant, Variant::FiniteFloat | Variant::FloatFaultAt(_)) {
        "        and r13, r13, r62\n"
    } else {
        ""
    };
    let trips = if variant == Variant::Uniform { "mov_imm r8, 0" } else { "and r8, r1, r7" };
    let init: String = (0..ACCUMULATORS).map(|a| format!("    mov_imm r{}, {}\n", 20 + a, a * 3)).collect();
    common::assembled(
        &format!(
            "
.kernel wide
.registers 64
    mov_sr r1, sr_thread_id_x
    mov_sr r2, sr_workgroup_id_x
    mov_sr r3, sr_workgroup_size_x
    imad r4, r2, r3, r1
    mov_imm r5, 4
    imad r6, r4, r5, r60
    mov r63, r6
    mov_imm r7, 7
    {trips}
    mov_imm r7, 3
    iadd r8, r8, r7
    mov_imm r9, 0
    mov_imm r10, 1
    mov_imm r16, 0xff0f
    mov_imm r62, 0xbfffffff
    icmp_eq p2, r10, r9
{init}{fault}{open}    loop
        ucmp_lt p1, r9, r8
        break !p1
        mov_sr r11, sr_lane_id
        mov_sr r12, sr_thread_id_x
        device_load_u32 r13, r6
        device_load_u32 r59, r63
        xor r13, r13, r59
{finite}        iadd r6, r6, r5
{body}        icmp_eq p2, r11, r9
        iadd r9, r9, r10
    endloop
{close}    mov_imm r18, {ACCUMULATORS}
    imul r17, r4, r18
    imad r17, r17, r5, r61
{stores}    @p2 device_store_u32 r17, r9
.end
"
        ),
        "wide.wave",
    )
}

const DEVICE: u64 = 1 << 16;

fn dispatch(w: u32, threads_per_group: u32, limit: u64) -> Dispatch {
    Dispatch {
        wave_width: w,
        grid: [2, 1, 1],
        workgroup: [threads_per_group, 1, 1],
        registers: 64,
        initial_registers: vec![(60, 0x100), (61, 0x1000)],
        threads: 1,
        max_instructions: limit,
        ..Dispatch::default()
    }
}

#[test]
fn every_chunk_runs_from_its_own_state() {
    for variant in [
        Variant::Plain,
        Variant::Guarded,
        Variant::Float,
        Variant::FiniteFloat,
        Variant::Uniform,
        Variant::Nested,
    ] {
        let k = kernel(variant);
        for w in WIDTHS {
            for threads in common::full_and_partial_waves(w) {
                check(&k, &dispatch(w, threads, 0), DEVICE);
            }
        }
    }
}

#[test]
fn a_fault_in_a_later_chunk_is_the_interpreters() {
    for w in WIDTHS {
        // The last lane of the first wave: its last chunk.
        for k in [kernel(Variant::FaultAt(w - 1)), kernel(Variant::FloatFaultAt(w - 1))] {
            let (interpreted, compiled, _, _) = run_both(&k, &dispatch(w, 2 * w, 0), DEVICE, 3);
            assert!(interpreted.is_err(), "W={w}: the interpreter's run should fault");
            assert_eq!(compiled, interpreted, "W={w}");
        }
    }
}

#[test]
fn a_budget_that_runs_out_in_the_loop_stops_where_the_interpreter_does() {
    let mut stopped = false;
    for k in [kernel(Variant::Plain), kernel(Variant::FiniteFloat)] {
        for w in WIDTHS {
            for limit in [400, 1500, 4000] {
                let (interpreted, compiled, _, _) = run_both(&k, &dispatch(w, 2 * w, limit), DEVICE, 5);
                let place = |r: &Result<(), wave_runtime::RunError>| {
                    r.as_ref().err().map(|e| (e.workgroup, e.wave, e.kind.clone()))
                };
                assert_eq!(place(&compiled), place(&interpreted), "W={w}, budget {limit}");
                stopped |= interpreted.is_err();
            }
        }
    }
    assert!(stopped, "no budget ran out");
}
