//! Device atomics stay atomic when the JIT runs workgroups on two threads, aligned or not
//! (semantics.md §5.6: unaligned atomics are allowed; here they are also indivisible).
//!
//! One kernel hammers a counter per (op kind, offset), one counter after the other: offsets
//! 1, 2, 3 (inside an 8-byte word), 5, 6, 7 (across one) and 62 (across a 64-byte cache line;
//! fewer atomics there, each a split lock). Each counter has a final value (or a checked
//! property) that does not depend on how the two workers interleave, computed here in plain
//! Rust; a lost update changes it.
//!
//! Two workgroups, one per worker, meet at a rendezvous (an aligned atomic counter) before
//! every round of atomics on a counter, so that both hammer it at the same time even on a
//! busy machine: without it, one worker often finished before the other was scheduled, and
//! the unfixed JIT passed.

use std::fmt::Write as _;
use wave_isa::ValidKernel;
use wave_jit_codegen::JitEngine;
use wave_runtime::{Device, Dispatch, Engine, Interpreter};

/// The rendezvous counter (aligned).
const FLAG: u32 = 0x40;
/// Counter (kind, slot) lives at `BASE + 64 × (8 × kind + slot) + offset`; slot 7 is left
/// free for the line-crossing counter of slot 6 to run into.
const BASE: u32 = 0x1000;
/// Per-thread results at `OUT + 0x100 × result + 4 × global id`: [`ERRORS`], then the
/// exchange sums of each exchange counter.
const OUT: u32 = 0x100;
/// Registers counting, per thread, updates found undone: max, min, and/or.
const ERRORS: [u32; 3] = [40, 41, 42];
/// Unaligned offsets: inside an 8-byte word (1, 2, 3), across one (5, 6, 7).
const OFFSETS: [u32; 6] = [1, 2, 3, 5, 6, 7];
/// Across the cache line at the end of slot 6 (the device window is page aligned, so device
/// lines are host cache lines). Each such atomic is a split lock (160 µs on a VM).
const LINE_CROSSING: u32 = 62;
/// Rounds on each counter; a round is `per_round` atomics per thread (the run's choice), but
/// one across a cache line.
const ROUNDS: u32 = 4;
const ROUNDS_CROSSING: u32 = 8;
/// Atomics per thread and round on the JIT: long rounds make the two workers overlap even
/// when a rendezvous finds the other one descheduled (the unfixed JIT failed 4 runs in 4
/// with 1024, 3 in 4 with 256). The interpreter, one thread, needs fewer.
const PER_ROUND_JIT: u32 = 1024;
const PER_ROUND_INTERP: u32 = 16;
/// Rendezvous polls before a workgroup gives up waiting for the other one.
const SPINS: u32 = 200_000;
/// Threads: two workgroups of 16 (two waves each at W = 8); `and`/`or` need one bit each.
const WORKGROUP: u32 = 16;
const THREADS: u32 = 2 * WORKGROUP;
/// Multiplier that spreads the xor and exchange values (odd: a bijection).
const SPREAD: u32 = 0x9E37_79B1;

/// The op kinds, each with its counter's initial value.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Add,
    Sub,
    Xor,
    Max,
    Min,
    AndOr,
    Exchange,
    Cas,
}

const KINDS: [Kind; 8] =
    [Kind::Add, Kind::Sub, Kind::Xor, Kind::Max, Kind::Min, Kind::AndOr, Kind::Exchange, Kind::Cas];

impl Kind {
    fn init(self) -> u32 {
        match self {
            Kind::Add => 7,
            Kind::Sub => 0xFFFF_0000,
            Kind::Xor => 0x1234_5678,
            Kind::Max | Kind::AndOr => 0,
            Kind::Min => u32::MAX,
            Kind::Exchange => 0x0BAD_F00D,
            Kind::Cas => 100,
        }
    }

    fn address(self, slot: usize, offset: u32) -> u32 {
        BASE + 64 * (8 * self as u32 + slot as u32) + offset
    }
}

/// Every counter: kind, slot, offset, (rounds, iterations per round), in kernel order.
fn counters(per_round: u32) -> Vec<(Kind, usize, u32, (u32, u32))> {
    let mut all = Vec::new();
    for k in KINDS {
        for (slot, &offset) in OFFSETS.iter().enumerate() {
            all.push((k, slot, offset, (ROUNDS, per_round)));
        }
        all.push((k, 6, LINE_CROSSING, (ROUNDS_CROSSING, 1)));
    }
    all
}

/// The code that applies kind `k` to the counter whose address is in r1, with this
/// iteration's values: r32 xor, r33 max, r34 min, r35 own bit, r36 its complement, r37
/// exchange; r44/r45 hold the thread's previous max/min value on this counter.
fn op(k: Kind) -> &'static str {
    match k {
        Kind::Add => "atomic_add r1, r7, .device",
        Kind::Sub => "atomic_sub r1, r7, .device",
        Kind::Xor => "atomic_xor r1, r32, .device",
        // An old value below the thread's own previous value: someone's update was undone.
        Kind::Max => "atomic_max r11, r1, r33, .device\nucmp_lt p2, r11, r44\n@p2 iadd r40, r40, r7",
        Kind::Min => "atomic_min r11, r1, r34, .device\nucmp_lt p2, r45, r11\n@p2 iadd r41, r41, r7",
        // The thread's own bit must be clear before its `or` and set before its `and`.
        Kind::AndOr => {
            "atomic_or r11, r1, r35, .device
and r12, r11, r35
icmp_ne p2, r12, r31
@p2 iadd r42, r42, r7
atomic_and r11, r1, r36, .device
and r12, r11, r35
icmp_eq p2, r12, r31
@p2 iadd r42, r42, r7"
        }
        Kind::Exchange => "atomic_exchange r12, r1, r37, .device\niadd r43, r43, r12",
        // Increment by compare-and-swap, retrying with the value found.
        Kind::Cas => {
            "mov_imm r10, 0
loop
    iadd r13, r10, r7
    atomic_cas r12, r1, r10, r13, .device
    icmp_eq p2, r12, r10
    break p2
    mov r10, r12
endloop"
        }
    }
}

/// The kernel: each counter in turn, its iterations in rounds; before each round, thread 0
/// of each workgroup counts itself in at FLAG (r50 counts the rounds so far) and every
/// thread waits, at most r28 polls, until all workgroups have.
fn kernel(per_round: u32) -> ValidKernel {
    let mut body = String::new();
    let mut exchanges = 0;
    for (k, slot, offset, (rounds, per_round)) in counters(per_round) {
        let _ = write!(
            body,
            "
mov_imm r1, {address}
mov_imm r9, {iterations}
mov_imm r29, {per_round}
mov_imm r44, {init}
mov_imm r45, {init}
mov_imm r43, 0
mov_imm r6, 0
loop
    icmp_ge p1, r6, r9
    break p1
    imad r32, r5, r9, r6
    imul r32, r32, r39
    iadd r37, r32, r39
    imad r33, r6, r8, r5
    iadd r33, r33, r7
    not r34, r33
    imod r27, r6, r29
    icmp_eq p3, r27, r31
    if p3
        iadd r50, r50, r7
        imul r26, r50, r24
        icmp_eq p2, r4, r31
        if p2
            atomic_add r30, r7, .device
        endif
        mov_imm r25, 0
        loop
            atomic_or r27, r30, r31, .device
            icmp_ge p2, r27, r26
            break p2
            iadd r25, r25, r7
            icmp_ge p2, r25, r28
            break p2
        endloop
    endif
{op}
    mov r44, r33
    mov r45, r34
    iadd r6, r6, r7
endloop
",
            address = k.address(slot, offset),
            iterations = rounds * per_round,
            init = k.init(),
            op = op(k),
        );
        if k == Kind::Exchange {
            let _ = write!(
                body,
                "mov_imm r23, {}\niadd r23, r23, r22\ndevice_store_u32 r23, r43\n",
                OUT + 0x100 * (ERRORS.len() as u32 + exchanges)
            );
            exchanges += 1;
        }
    }
    let mut stores = String::new();
    for (i, r) in ERRORS.iter().enumerate() {
        let _ = writeln!(
            stores,
            "mov_imm r23, {}\niadd r23, r23, r22\ndevice_store_u32 r23, r{r}",
            OUT + 0x100 * i as u32
        );
    }
    let source = format!(
        "
.kernel atomics
.registers 64
mov_sr r2, sr_workgroup_id_x
mov_sr r3, sr_workgroup_size_x
mov_sr r4, sr_thread_id_x
imad r5, r2, r3, r4
mov_sr r24, sr_grid_size_x
imul r8, r24, r3
mov_imm r7, 1
mov_imm r30, {FLAG}
mov_imm r31, 0
mov_imm r39, {SPREAD}
shl r35, r7, r5
not r36, r35
mov_imm r21, 2
shl r22, r5, r21
{body}
{stores}
.end
"
    );
    let assembled = wave_isa::asm::assemble(&source, "atomics.wave").expect("test kernel assembles");
    let module = wave_isa::Module::from_wbin(&assembled.file).expect("test kernel loads");
    module.kernels.into_iter().next().expect("one kernel")
}

/// Device memory after a run, with the counters initialised and 0x5A in every other byte of
/// their slots (and the slot before the first).
fn run(engine: &dyn Engine, per_round: u32, spins: u32) -> Vec<u8> {
    let k = kernel(per_round);
    let d = Dispatch {
        grid: [2, 1, 1],
        workgroup: [WORKGROUP, 1, 1],
        wave_width: 8,
        registers: 64,
        threads: 2,
        initial_registers: vec![(28, spins)],
        max_instructions: 1_000_000_000,
        ..Dispatch::default()
    };
    let mut dev = Device::new(1 << 16).unwrap();
    dev.write(BASE as u64 - 64, &vec![0x5A; 64 * 65]).unwrap();
    for (k, slot, offset, _) in counters(per_round) {
        dev.write(k.address(slot, offset) as u64, &k.init().to_le_bytes()).unwrap();
    }
    engine.run(&k, &d, &mut dev).unwrap_or_else(|e| panic!("{}: {e}", engine.name()));
    dev.bytes().to_vec()
}

fn word(mem: &[u8], at: u32) -> u32 {
    u32::from_le_bytes(mem[at as usize..at as usize + 4].try_into().unwrap())
}

/// Check every counter; `what` names the engine. Every wrong counter is listed.
fn check(mem: &[u8], per_round: u32, what: &str) {
    let mut wrong: Vec<String> = Vec::new();
    let result = |r: u32, g: u32| word(mem, OUT + 0x100 * r + 4 * g);
    let mut exchanges = 0;
    for (k, slot, offset, (rounds, per_round)) in counters(per_round) {
        let iterations = rounds * per_round;
        let ops = || (0..THREADS).flat_map(move |g| (0..iterations).map(move |i| (g, i)));
        let max_value = |(g, i): (u32, u32)| i * THREADS + g + 1;
        let at = k.address(slot, offset);
        let (got, init, n) = (word(mem, at), k.init(), THREADS * iterations);
        let want = match k {
            Kind::Add | Kind::Cas => init.wrapping_add(n),
            Kind::Sub => init.wrapping_sub(n),
            Kind::Xor => ops().fold(init, |acc, (g, i)| acc ^ (g * iterations + i).wrapping_mul(SPREAD)),
            Kind::Max => ops().map(max_value).max().unwrap(),
            Kind::Min => ops().map(|p| !max_value(p)).min().unwrap(),
            Kind::AndOr => 0,
            Kind::Exchange => {
                // Each written value is read once: by the next exchange, or as the final one.
                let written = ops().fold(init, |acc, (g, i)| {
                    acc.wrapping_add((g * iterations + i + 1).wrapping_mul(SPREAD))
                });
                let read = (0..THREADS)
                    .fold(got, |acc, g| acc.wrapping_add(result(ERRORS.len() as u32 + exchanges, g)));
                exchanges += 1;
                if read != written {
                    wrong.push(format!("Exchange at +{offset}: a value was lost or read twice"));
                }
                got
            }
        };
        if got != want {
            wrong.push(format!("{k:?} at +{offset}: 0x{got:08x}, want 0x{want:08x}"));
        }
        let (lo, hi) = (at as usize - 8, at as usize + 4);
        if !mem[lo..at as usize].iter().chain(&mem[hi..hi + 8]).all(|&b| b == 0x5A) {
            wrong.push(format!("{k:?} at +{offset}: neighbouring bytes changed"));
        }
    }
    for (r, name) in ["Max", "Min", "AndOr"].iter().enumerate() {
        let undone: u32 = (0..THREADS).map(|g| result(r as u32, g)).sum();
        if undone != 0 {
            wrong.push(format!("{name}: {undone} updates found undone"));
        }
    }
    assert!(wrong.is_empty(), "{what}: {} wrong:\n{}", wrong.len(), wrong.join("\n"));
}

/// Every op kind at every unaligned offset, on the JIT with two threads.
#[test]
fn unaligned_atomics_lose_nothing_on_two_threads() {
    check(&run(&JitEngine::strict(), PER_ROUND_JIT, SPINS), PER_ROUND_JIT, "JIT");
}

/// The same kernel on the interpreter (one thread: the rendezvous is skipped), checked the
/// same way.
#[test]
fn interpreter_agrees_on_the_atomics_kernel() {
    check(&run(&Interpreter::new(), PER_ROUND_INTERP, 0), PER_ROUND_INTERP, "interpreter");
}

/// The reliability repro (../shared/repro/2026-11-24/atomloop_2.wave): 64 workgroups of 256
/// threads add 1 to the word at address 2, 200 times each, on two threads.
#[test]
fn repro_unaligned_counter_on_two_threads() {
    let source = "
.kernel atoml
    mov_imm r1, 2
    mov_imm r2, 1
    mov_imm r4, 0
    mov_imm r5, 200
    loop
        atomic_add r1, r2, .device
        iadd r4, r4, r2
        icmp_ge p1, r4, r5
        break p1
    endloop
.end";
    let assembled = wave_isa::asm::assemble(source, "atomloop_2.wave").unwrap();
    let k = wave_isa::Module::from_wbin(&assembled.file).unwrap().kernels.remove(0);
    let d = Dispatch { grid: [64, 1, 1], workgroup: [256, 1, 1], threads: 2, ..Dispatch::default() };
    let mut dev = Device::new(1 << 20).unwrap();
    JitEngine::strict().run(&k, &d, &mut dev).unwrap();
    assert_eq!(dev.read(0, 8).unwrap(), &[0, 0, 0x00, 0x00, 0x32, 0x00, 0, 0], "0x320000 expected at 2");
}
