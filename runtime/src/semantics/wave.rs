//! Whole-wave (cross-lane) operations (§5.8, B.15), as pure functions over one wave's lane
//! values and its active-lane mask.
//!
//! Lane `i`'s value is `src[i]`; bit `i` of `mask` is set when lane `i` executes. Lanes at or
//! above `width` do not exist: their mask bits are ignored and their values never read.
//! Results for whole rows are [`WaveRow`]s, meaningful on the active lanes only (the caller
//! writes those; the other entries are 0). Predicates are lane bitmasks (`u64`, bit `i` for
//! lane `i`).

use wave_isa::Op;

/// The widest wave (W = 64): one entry per lane of a [`WaveRow`].
pub const MAX_WAVE_WIDTH: usize = 64;

/// One register's value in every lane of a wave (entries at or above the width unused).
pub type WaveRow = [u32; MAX_WAVE_WIDTH];

/// The bits of `mask` that name lanes of a `width`-lane wave.
#[inline]
fn existing(width: usize, mask: u64) -> u64 {
    if width >= MAX_WAVE_WIDTH {
        mask
    } else {
        mask & ((1u64 << width) - 1)
    }
}

/// The lanes of `mask` below `width`, in lane order.
#[inline]
fn active_lanes(width: usize, mask: u64) -> impl Iterator<Item = usize> {
    let mut m = existing(width, mask);
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let lane = m.trailing_zeros() as usize;
            m &= m - 1;
            lane
        })
    })
}

/// Lane `lane`'s value of `src`, 0 for a lane outside the wave.
#[inline]
fn lane_value(width: usize, src: &[u32], lane: Option<usize>) -> u32 {
    lane.filter(|&l| l < width).and_then(|l| src.get(l)).copied().unwrap_or(0)
}

/// The lane a shuffle reads for `lane` with `selector` (its rs2 value): `wave_shuffle` lane
/// `selector`, `_up` lane − selector, `_down` lane + selector, `_xor` lane ^ selector (§5.8).
/// `None` when that lane does not exist (below 0, or at or above `width`) or `op` is not a
/// shuffle.
#[inline]
pub fn wave_shuffle_source(op: Op, width: usize, lane: usize, selector: u32) -> Option<usize> {
    let k = selector as usize;
    let from = match op {
        Op::WaveShuffle => Some(k),
        Op::WaveShuffleUp => lane.checked_sub(k),
        Op::WaveShuffleDown => lane.checked_add(k),
        Op::WaveShuffleXor => Some(lane ^ k),
        _ => None,
    };
    from.filter(|&f| f < width)
}

/// wave_shuffle / _up / _down / _xor: each active lane gets `src` of its source lane
/// ([`wave_shuffle_source`]), read **even when that lane is inactive**; a source out of range
/// gives 0 (§5.8, measured). `selector` is rs2 per lane. All zeros if `op` is not a shuffle.
pub fn wave_shuffle(op: Op, width: usize, mask: u64, src: &[u32], selector: &[u32]) -> WaveRow {
    let mut out = [0; MAX_WAVE_WIDTH];
    for lane in active_lanes(width, mask) {
        let from = selector.get(lane).and_then(|&k| wave_shuffle_source(op, width, lane, k));
        out[lane] = lane_value(width, src, from);
    }
    out
}

/// wave_broadcast: `src` of the lane named by the **first active lane's** rs2 (`selector`),
/// for every active lane; 0 when that lane is out of range or no lane is active (§5.8).
pub fn wave_broadcast(width: usize, mask: u64, src: &[u32], selector: &[u32]) -> u32 {
    let from = active_lanes(width, mask).next().and_then(|first| selector.get(first));
    lane_value(width, src, from.map(|&k| k as usize))
}

/// A ballot's register words: `low` for rd (lanes 0..31); `high` for rd+1 (lanes 32..63),
/// written only at W = 64 (B.15; the reference loses those lanes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ballot {
    pub low: u32,
    pub high: Option<u32>,
}

/// wave_ballot: the active lanes whose predicate `pred` holds, as a bitmask split into
/// register words (§5.8, B.15).
pub fn wave_ballot(width: usize, mask: u64, pred: u64) -> Ballot {
    let bits = existing(width, mask & pred);
    Ballot { low: bits as u32, high: (width >= MAX_WAVE_WIDTH).then_some((bits >> 32) as u32) }
}

/// wave_any: whether the predicate `pred` holds in some active lane (false with no active
/// lane) (§5.8).
pub fn wave_any(width: usize, mask: u64, pred: u64) -> bool {
    existing(width, mask & pred) != 0
}

/// wave_all: whether the predicate `pred` holds in every active lane (true with no active
/// lane) (§5.8).
pub fn wave_all(width: usize, mask: u64, pred: u64) -> bool {
    existing(width, mask & !pred) == 0
}

/// wave_prefix_sum: **exclusive** sum, wrapping mod 2^32, over the active lanes in lane
/// order: each active lane gets the sum of the active lanes below it; inactive lanes are
/// skipped (§5.8, measured).
pub fn wave_prefix_sum(width: usize, mask: u64, src: &[u32]) -> WaveRow {
    let mut out = [0; MAX_WAVE_WIDTH];
    let mut sum = 0u32;
    for lane in active_lanes(width, mask) {
        out[lane] = sum;
        sum = sum.wrapping_add(lane_value(width, src, Some(lane)));
    }
    out
}

/// The active lanes' values of `src`, in lane order.
fn active_values<'a>(width: usize, mask: u64, src: &'a [u32]) -> impl Iterator<Item = u32> + 'a {
    active_lanes(width, mask).map(move |lane| lane_value(width, src, Some(lane)))
}

/// wave_reduce_add: the wrapping sum of the active lanes' values; 0 with no active lane (§5.8).
pub fn wave_reduce_add(width: usize, mask: u64, src: &[u32]) -> u32 {
    active_values(width, mask, src).fold(0, u32::wrapping_add)
}

/// wave_reduce_min: the **unsigned** minimum of the active lanes' values; 0 with no active
/// lane (§5.8).
pub fn wave_reduce_min(width: usize, mask: u64, src: &[u32]) -> u32 {
    active_values(width, mask, src).min().unwrap_or(0)
}

/// wave_reduce_max: the **unsigned** maximum of the active lanes' values; 0 with no active
/// lane (§5.8).
pub fn wave_reduce_max(width: usize, mask: u64, src: &[u32]) -> u32 {
    active_values(width, mask, src).max().unwrap_or(0)
}

/// The row a wave op with register operands writes to rd: `src` is rs1 per lane, `selector`
/// rs2 (read by shuffles and broadcast only). Broadcast and the reductions give every lane
/// the same value. `None` for any other op (ballot, any and all read a predicate:
/// [`wave_ballot`], [`wave_any`], [`wave_all`]).
pub fn wave_row(op: Op, width: usize, mask: u64, src: &[u32], selector: &[u32]) -> Option<WaveRow> {
    Some(match op {
        Op::WaveShuffle | Op::WaveShuffleUp | Op::WaveShuffleDown | Op::WaveShuffleXor => {
            wave_shuffle(op, width, mask, src, selector)
        }
        Op::WaveBroadcast => [wave_broadcast(width, mask, src, selector); MAX_WAVE_WIDTH],
        Op::WavePrefixSum => wave_prefix_sum(width, mask, src),
        Op::WaveReduceAdd => [wave_reduce_add(width, mask, src); MAX_WAVE_WIDTH],
        Op::WaveReduceMin => [wave_reduce_min(width, mask, src); MAX_WAVE_WIDTH],
        Op::WaveReduceMax => [wave_reduce_max(width, mask, src); MAX_WAVE_WIDTH],
        _ => return None,
    })
}
