//! Loads of a counted chunk-major loop are bounds-checked once, at the loop's entry, for
//! every trip (`translate::loop_bounds`); a possible fault sends the loop to its wave-major
//! copy, which faults where the interpreter does. Against the interpreter at every width: one
//! lane's load is out of bounds by 2 bytes at its furthest trip only (the entry check must
//! see it, or the load runs unchecked and no fault is reported), or it just fits (no fault),
//! for each way of counting trips, for loads before and after the address's step, with a
//! subtracted addend, in device and local memory, and with the lane inactive at entry; then
//! random counted loops, and counters that wrap. That the loads lose their own checks is
//! pinned by `lowering.rs` (`tiled_gemm`: 63 fewer branches at W = 32).

mod common;

use common::{run_both, WIDTHS};
use wave_runtime::Dispatch;

const DEVICE: u64 = 1 << 16;
const LOCAL: u32 = 1024;

fn dispatch(w: u32) -> Dispatch {
    Dispatch {
        wave_width: w,
        grid: [2, 1, 1],
        workgroup: [2 * w, 1, 1],
        registers: 64,
        initial_registers: vec![(61, 0x8000)],
        threads: 1,
        ..Dispatch::default()
    }
}

/// Five trips each: (test, break polarity, counter start, bound, step, update).
const COUNTERS: [(&str, &str, u32, u32, u32, &str); 4] = [
    // 5, 4, 3, 2, 1 while c > 0.
    ("icmp_le", "", 5, 0, 1, "isub"),
    // 0, 2, 4, 6, 8 while c < 9 (unsigned; a step that does not divide the distance).
    ("ucmp_lt", "!", 0, 9, 2, "iadd"),
    // 1 ..= 5 while c <= 5.
    ("icmp_le", "!", 1, 5, 1, "iadd"),
    // 4, 3, 2, 1, 0 while c >= 0.
    ("icmp_ge", "!", 4, 0, 1, "isub"),
];

/// A case with counter `c` of [`COUNTERS`], the address stepping by 12 a trip, whose lane
/// `lane` loads its furthest word at `end - 4 + over` (`end`: the memory's size).
fn counted(c: usize, w: u32, local: bool, after: bool, subtracted: bool, over: u32, lane: u32) -> Case {
    let (test, polarity, init, bound, step, update) = COUNTERS[c];
    let end = if local { LOCAL } else { DEVICE as u32 };
    Case {
        w,
        test,
        polarity,
        init,
        bound,
        update,
        step,
        spread: 0,
        bound_spread: 0,
        stride: 12,
        addend: if subtracted { 8 } else { 0 },
        combine: if subtracted { "isub" } else { "iadd" },
        local,
        after,
        lane,
        furthest: end - 4 + over,
        skip_from: u32::MAX,
    }
}

/// Run `case` and check the interpreter's outcome is a fault exactly when `faults`.
fn expect(case: &Case, faults: bool) {
    let outcome = case.check(11);
    assert_eq!(faulted(&outcome), faults, "{case:?}: the interpreter's outcome: {outcome:?}");
}

#[test]
fn the_furthest_trip_of_every_counter_is_checked() {
    for c in 0..COUNTERS.len() {
        for (after, subtracted) in [(false, false), (true, false), (false, true)] {
            for w in WIDTHS {
                for (over, faults) in [(2, true), (0, false)] {
                    expect(&counted(c, w, false, after, subtracted, over, w - 1), faults);
                }
            }
        }
    }
}

#[test]
fn local_loads_too() {
    for after in [false, true] {
        for w in WIDTHS {
            for (over, faults) in [(2, true), (0, false)] {
                expect(&counted(0, w, true, after, false, over, 0), faults);
            }
        }
    }
}

#[test]
fn a_subtracted_addend_that_wraps_below_zero_faults() {
    for w in WIDTHS {
        // The address r6 - 8 from r6 = 4 at entry: 0xfffffffc on the first trip (the furthest
        // word is 4 + 4·12 - 8).
        let case = Case { furthest: 44, ..counted(0, w, false, false, true, 0, w - 1) };
        assert_eq!(case.edge_base(), 4);
        expect(&case, true);
    }
}

#[test]
fn a_lane_that_skips_the_loop_does_not_fault() {
    for w in WIDTHS {
        // The faulting address belongs to a thread that skips the loop (the mask at entry is
        // partial): no fault.
        expect(&Case { skip_from: w - 1, ..counted(1, w, false, true, false, 2, w - 1) }, false);
    }
}

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[(self.next() % from.len() as u64) as usize]
    }
}

/// The trips a lane makes: `test` between counter and bound, breaking where it holds
/// (`polarity` "") or fails ("!"); `None` past 200.
fn trips(test: &str, polarity: &str, init: u32, bound: u32, update: &str, step: u32) -> Option<u32> {
    let mut c = init;
    for t in 0..=200 {
        let holds = match test {
            "icmp_lt" => (c as i32) < bound as i32,
            "icmp_le" => (c as i32) <= bound as i32,
            "icmp_gt" => (c as i32) > bound as i32,
            "icmp_ge" => (c as i32) >= bound as i32,
            "ucmp_lt" => c < bound,
            _ => c <= bound,
        };
        if holds == polarity.is_empty() {
            return Some(t);
        }
        c = if update == "iadd" { c.wrapping_add(step) } else { c.wrapping_sub(step) };
    }
    None
}

/// One counted loop of the generated family: lane `lane` of the first wave starts its address
/// so that its furthest load lands at `furthest`; every other lane's addresses stay inside.
#[derive(Clone, Copy, Debug)]
struct Case {
    w: u32,
    test: &'static str,
    polarity: &'static str,
    init: u32,
    bound: u32,
    update: &'static str,
    step: u32,
    /// Lane bits added to the counter's start and to the bound.
    spread: u32,
    bound_spread: u32,
    stride: u32,
    addend: u32,
    combine: &'static str,
    local: bool,
    after: bool,
    lane: u32,
    furthest: u32,
    /// Threads from this one on skip the loop.
    skip_from: u32,
}

impl Case {
    /// Where `lane` starts its address (by its own trip count; a counter past 200 trips is
    /// taken at 3).
    fn edge_base(&self) -> u32 {
        let lane = self.lane;
        let init = self.init.wrapping_add(lane & self.spread);
        let bound = self.bound.wrapping_add(lane & self.bound_spread);
        let lane_trips =
            trips(self.test, self.polarity, init, bound, self.update, self.step).unwrap_or(3).max(1);
        let moved = (lane_trips - 1 + self.after as u32).wrapping_mul(self.stride);
        let unshifted = if self.combine == "iadd" {
            self.furthest.wrapping_sub(self.addend)
        } else {
            self.furthest.wrapping_add(self.addend)
        };
        unshifted.wrapping_sub(moved)
    }

    fn source(&self) -> String {
        let Case {
            test,
            polarity,
            init,
            bound,
            update,
            step,
            spread,
            bound_spread,
            stride,
            addend,
            combine,
            lane,
            skip_from,
            ..
        } = *self;
        // Every other lane far inside the memory.
        let inside = if self.local { 0 } else { 0x200 };
        let space = if self.local { "local" } else { "device" };
        let load = format!(
            "        {combine} r15, r6, r13\n        {space}_load_u32 r14, r15\n        iadd r20, r20, r14\n"
        );
        let (before, after) = if self.after { (String::new(), load) } else { (load, String::new()) };
        let edge_base = self.edge_base();
        format!(
            "
.kernel random_counted
.registers 64
.local_memory {LOCAL}
    mov_sr r1, sr_thread_id_x
    mov_sr r2, sr_workgroup_id_x
    mov_sr r3, sr_workgroup_size_x
    imad r4, r2, r3, r1
    mov_imm r5, 4
    mov_imm r6, {inside}
    imad r6, r1, r5, r6
    mov_imm r7, {lane}
    icmp_eq p3, r4, r7
    mov_imm r8, {edge_base}
    @p3 mov r6, r8
    mov_imm r7, {spread}
    and r8, r1, r7
    mov_imm r9, {stride}
    mov_imm r10, {init}
    iadd r10, r10, r8
    mov_imm r7, {bound_spread}
    and r8, r1, r7
    mov_imm r11, {bound}
    iadd r11, r11, r8
    mov_imm r12, {step}
    mov_imm r13, {addend}
    mov_imm r20, 0
    mov_imm r21, {skip_from}
    ucmp_lt p2, r4, r21
    if p2
    loop
        {test} p1, r10, r11
        break {polarity}p1
{before}        iadd r6, r6, r9
{after}        {update} r10, r10, r12
    endloop
    endif
    imad r17, r4, r5, r61
    device_store_u32 r17, r20
.end
"
        )
    }

    /// Run on both engines (seeded by `seed`), assert the same outcome and memory; return the
    /// interpreter's outcome.
    fn check(&self, seed: u64) -> Result<(), wave_runtime::RunError> {
        let source = self.source();
        let k = common::assembled(&source, "random_counted.wave");
        let d = Dispatch { max_instructions: 20_000, ..dispatch(self.w) };
        let (interpreted, compiled, memory_i, memory_j) = run_both(&k, &d, DEVICE, seed);
        // Where the budget stops a wave, the JIT names the pc of the block it paid for (README).
        let place = |r: &Result<(), wave_runtime::RunError>| {
            r.clone().map_err(|e| match e.kind {
                wave_runtime::RunErrorKind::InstructionLimit { .. } => wave_runtime::RunError { pc: 0, ..e },
                _ => e,
            })
        };
        assert_eq!(place(&compiled), place(&interpreted), "{self:?}:\n{source}");
        assert!(memory_i == memory_j, "{self:?}: memory differs\n{source}");
        interpreted
    }
}

fn faulted(outcome: &Result<(), wave_runtime::RunError>) -> bool {
    matches!(outcome, Err(e) if matches!(e.kind, wave_runtime::RunErrorKind::OutOfBounds { .. }))
}

/// Random counted loops: any test and polarity, counters that start on either side of their
/// bound (no trip, or a counter that wraps and runs until the budget stops it), per-lane
/// starts and bounds, steps of either sign on the address, an added or subtracted addend,
/// loads before and after the step. One lane's furthest load lands a few bytes either side of
/// the memory's end or of address 0 (by the lane's own trip count, worked out here). Each
/// against the interpreter.
#[test]
fn random_counted_loops_match_the_interpreter() {
    let mut rng = Rng(0x5eed_2026_1127);
    let tests = ["icmp_lt", "icmp_le", "icmp_gt", "icmp_ge", "ucmp_lt", "ucmp_le"];
    let (mut faults, mut completed) = (0u64, 0u64);
    let cases = 600;
    for seed in 0..cases {
        let w = rng.pick(&WIDTHS);
        let bound = rng.pick(&[0u32, 2, 5, 8, 0x7fff_ffff, 0xffff_ffff, 0x8000_0000, 0x8000_0003]);
        // Half the time a few steps from the bound, where counters near the top or bottom of
        // their range wrap past it.
        let init = if rng.next().is_multiple_of(2) {
            bound.wrapping_add(rng.pick(&[1u32, 2, 5, 0xffff_fffe, 0xffff_fffb, 0xffff_fff0]))
        } else {
            rng.pick(&[0u32, 1, 3, 5, 9, 0x7fff_fffe, 0xffff_fffd, 0x8000_0001])
        };
        let local = rng.next().is_multiple_of(3);
        let end = if local { LOCAL } else { DEVICE as u32 };
        let edge = rng.pick(&[0u32, 1, 2, 4, 0xffff_fffc, 0xffff_fff8]);
        // The furthest load near the memory's end, or near address 0 (where it wraps).
        let furthest =
            if rng.next().is_multiple_of(2) { end.wrapping_sub(4) } else { 0xffff_fffc }.wrapping_add(edge);
        let case = Case {
            w,
            test: rng.pick(&tests),
            polarity: rng.pick(&["", "!"]),
            init,
            bound,
            update: rng.pick(&["iadd", "isub"]),
            step: rng.pick(&[1u32, 2, 3, 7]),
            spread: rng.pick(&[0u32, 1, 3]),
            bound_spread: rng.pick(&[0u32, 3]),
            stride: rng.pick(&[0u32, 4, 12, 0xffff_fff4]),
            addend: rng.pick(&[0u32, 8, 0xffff_fff8]),
            combine: rng.pick(&["iadd", "isub"]),
            local,
            after: rng.next().is_multiple_of(2),
            lane: (rng.next() % w as u64) as u32,
            furthest,
            skip_from: u32::MAX,
        };
        let outcome = case.check(seed);
        faults += faulted(&outcome) as u64;
        completed += outcome.is_ok() as u64;
    }
    // Both outcomes occur often.
    assert!(faults > cases / 5 && completed > cases / 5, "{faults} faults, {completed} completed of {cases}");
}

/// Counters whose step carries them past the end of their range before they reach the
/// bound, and around again until they land beyond it: a dozen trips where the distance over
/// the step says one. The entry check must not trust that count, or the lane's load past the
/// end on its last trip runs unchecked (and no fault is reported).
#[test]
fn a_counter_that_wraps_is_not_trusted() {
    let step = 0x5000_0000;
    let wrapping = [
        ("ucmp_lt", "!", 0xf000_0000, 0xe000_0000, "iadd"),
        ("icmp_lt", "!", 0x7000_0000, 0x6000_0000, "iadd"),
        ("ucmp_le", "", 0x1000_0000, 0x2000_0000, "isub"),
        ("icmp_gt", "!", 0x9000_0000, 0xa000_0000, "isub"),
    ];
    for (test, polarity, bound, init, update) in wrapping {
        let lane_trips = trips(test, polarity, init, bound, update, step);
        assert!(lane_trips.is_some_and(|t| t >= 5), "{test} {polarity} from {init:#x}: {lane_trips:?} trips");
        for w in WIDTHS {
            let case = Case {
                test,
                polarity,
                init,
                bound,
                update,
                step,
                stride: 4,
                ..counted(0, w, false, false, false, 2, w - 1)
            };
            assert!(faulted(&case.check(w as u64)), "{case:?}: the interpreter should fault");
        }
    }
}
