//! Whole-wave consecutive accesses: where every lane of the wave runs a 32-bit load or store
//! whose address is `base + 4 × lane` across the wave, the JIT places every vector from lane
//! 0's address and bounds the whole wave with one compare (`AddressShape::WaveConsecutive` in
//! `jit/src/translate/mem.rs`). Driven at its edges against the interpreter, at every width:
//! the wave's last word exactly at the end of memory, one word past it (the fault must name the
//! last lane, after the stores of the lanes before it), the same with that lane inactive (the
//! partial mask must not take the unmasked path: it would fault where the interpreter does not),
//! the same with that lane outside the workgroup (a wave with a dead lane), and on addresses
//! that wrap past 2^32.

mod common;

use common::{assembled, run_both, WIDTHS};
use wave_runtime::Dispatch;

/// `out[i] = in[i] + 4` for `i < n` (`i` the global thread index): r1 = in, r2 = out, r4 = n.
const COPY: &str = "
.kernel copy
    mov_sr r5, sr_workgroup_id_x
    mov_sr r6, sr_workgroup_size_x
    mov_sr r7, sr_thread_id_x
    imad r8, r5, r6, r7
    ucmp_lt p0, r8, r4
    if p0
        mov_imm r9, 4
        imul r10, r8, r9
        iadd r11, r10, r1
        device_load_u32 r12, r11
        iadd r12, r12, r9
        iadd r13, r10, r2
        device_store_u32 r13, r12
    endif
.end
";

/// Through local memory: `l[t] = in[t]`, then `out[t] = l[t + r3/4] + 1` for `t < n` (r3 a
/// byte offset into the workgroup's local memory).
const LOCAL: &str = "
.kernel local
    mov_sr r7, sr_thread_id_x
    mov_imm r9, 4
    imul r10, r7, r9
    iadd r11, r10, r1
    device_load_u32 r12, r11
    local_store_u32 r10, r12
    barrier
    ucmp_lt p0, r7, r4
    if p0
        iadd r14, r10, r3
        local_load_u32 r15, r14
        mov_imm r16, 1
        iadd r15, r15, r16
        iadd r13, r10, r2
        device_store_u32 r13, r15
    endif
.end
";

/// `out[lane] = in[lane]` by `sr_lane_id`, which is `base + lane` in every wave, live lanes
/// or not: r1 = in, r2 = out.
const BY_LANE: &str = "
.kernel by_lane
    mov_sr r7, sr_lane_id
    mov_imm r9, 4
    imul r10, r7, r9
    iadd r11, r10, r1
    device_load_u32 r12, r11
    iadd r13, r10, r2
    device_store_u32 r13, r12
.end
";

const DEVICE: u64 = 0x4000;
const THREADS: u32 = 64;
const GROUPS: u32 = 2;

fn dispatch(width: u32, registers: &[(u8, u32)], local_memory: u32) -> Dispatch {
    Dispatch {
        wave_width: width,
        grid: [GROUPS, 1, 1],
        workgroup: [THREADS, 1, 1],
        initial_registers: registers.to_vec(),
        local_memory,
        threads: 1,
        ..Dispatch::default()
    }
}

/// Both engines from the same memory: the same result (`Ok` or the same fault) and the same
/// memory. Returns the interpreter's result as text.
fn same(source: &str, d: &Dispatch, what: &str) -> Result<(), String> {
    let k = assembled(source, "wave_consecutive.wave");
    let (ra, rb, ma, mb) = run_both(&k, d, DEVICE, 11);
    let what = format!("{what}, W={}", d.wave_width);
    assert_eq!(ra, rb, "{what}: results differ (interpreter, JIT)");
    if let Some(i) = (0..ma.len()).find(|&i| ma[i] != mb[i]) {
        panic!("{what}: memory differs first at byte 0x{i:x}");
    }
    ra.map_err(|e| e.to_string())
}

#[test]
fn the_last_word_of_memory_is_in_bounds() {
    let lanes = THREADS * GROUPS;
    let input = DEVICE as u32 - 4 * lanes;
    for w in WIDTHS {
        let d = dispatch(w, &[(1, input), (2, 0x100), (4, lanes)], 0);
        assert_eq!(same(COPY, &d, "load ending at the end of memory"), Ok(()));
        let d = dispatch(w, &[(1, 0x100), (2, input), (4, lanes)], 0);
        assert_eq!(same(COPY, &d, "store ending at the end of memory"), Ok(()));
    }
}

#[test]
fn one_word_past_the_end_faults_at_the_last_lane() {
    let lanes = THREADS * GROUPS;
    let past = DEVICE as u32 - 4 * lanes + 4;
    for w in WIDTHS {
        let d = dispatch(w, &[(1, past), (2, 0x100), (4, lanes)], 0);
        let load = same(COPY, &d, "load one word past the end").unwrap_err();
        assert!(load.contains("lane"), "W={w}: {load}");
        let d = dispatch(w, &[(1, 0x100), (2, past), (4, lanes)], 0);
        let store = same(COPY, &d, "store one word past the end").unwrap_err();
        assert!(store.contains("lane"), "W={w}: {store}");
    }
}

#[test]
fn an_inactive_last_lane_does_not_fault() {
    let lanes = THREADS * GROUPS;
    let past = DEVICE as u32 - 4 * lanes + 4;
    for w in WIDTHS {
        // Lane `lanes - 1` is the only one out of bounds, and `i < n` turns it off.
        let d = dispatch(w, &[(1, past), (2, 0x100), (4, lanes - 1)], 0);
        assert_eq!(same(COPY, &d, "load, last lane inactive"), Ok(()));
        let d = dispatch(w, &[(1, 0x100), (2, past), (4, lanes - 1)], 0);
        assert_eq!(same(COPY, &d, "store, last lane inactive"), Ok(()));
    }
}

#[test]
fn a_dead_last_lane_does_not_fault() {
    for w in WIDTHS {
        // One wave of W - 1 threads: lane W - 1 is not part of the workgroup, and only its
        // address is out of bounds.
        let past = DEVICE as u32 - 4 * w + 4;
        let d = Dispatch {
            grid: [1, 1, 1],
            workgroup: [w - 1, 1, 1],
            ..dispatch(w, &[(1, past), (2, 0x100)], 0)
        };
        assert_eq!(same(BY_LANE, &d, "load, dead last lane"), Ok(()));
        let d = Dispatch {
            grid: [1, 1, 1],
            workgroup: [w - 1, 1, 1],
            ..dispatch(w, &[(1, 0x100), (2, past)], 0)
        };
        assert_eq!(same(BY_LANE, &d, "store, dead last lane"), Ok(()));
    }
}

#[test]
fn wrapping_addresses_fault_as_the_interpreter() {
    let lanes = THREADS * GROUPS;
    for w in WIDTHS {
        // Lane 0 near 2^32: the later lanes wrap to low, in-bounds addresses.
        let d = dispatch(w, &[(1, u32::MAX - 7), (2, 0x100), (4, lanes)], 0);
        assert!(same(COPY, &d, "wrapping load").is_err(), "W={w}");
        let d = dispatch(w, &[(1, 0x100), (2, u32::MAX - 7), (4, lanes)], 0);
        assert!(same(COPY, &d, "wrapping store").is_err(), "W={w}");
    }
}

#[test]
fn local_memory_to_its_last_word() {
    let local = 4 * THREADS;
    for w in WIDTHS {
        let d = dispatch(w, &[(1, 0x100), (2, 0x800), (3, 0), (4, THREADS)], local);
        assert_eq!(same(LOCAL, &d, "local load to the last word"), Ok(()));
        // One word further: the last lane reads past the local memory.
        let d = dispatch(w, &[(1, 0x100), (2, 0x800), (3, 4), (4, THREADS)], local);
        assert!(same(LOCAL, &d, "local load one word past").is_err(), "W={w}");
        let d = dispatch(w, &[(1, 0x100), (2, 0x800), (3, 4), (4, THREADS - 1)], local);
        assert_eq!(same(LOCAL, &d, "local load, last lane inactive"), Ok(()));
    }
}
