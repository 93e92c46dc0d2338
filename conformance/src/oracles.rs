//! Independent expected-value oracles, named in headers as `@expect ADDR:rust=name(args)`.
//!
//! Each is plain Rust computing the expected result from the program's inputs (device memory
//! before the run) and the dispatch shape, with no help from any engine. Wave-level oracles
//! take the wave width, so one program checks every W.

use crate::compare::Expected;
use crate::header::OracleArg;

/// What an oracle may look at.
pub struct OracleCtx<'a> {
    /// Device memory after the `@input`s, before the run.
    pub memory: &'a [u8],
    pub width: u32,
    pub grid: [u32; 3],
    pub workgroup: [u32; 3],
}

impl OracleCtx<'_> {
    fn u32_at(&self, address: u64) -> Result<u32, String> {
        let a = address as usize;
        self.memory
            .get(a..a + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .ok_or_else(|| format!("address 0x{address:x} is outside device memory"))
    }
    fn u32s(&self, address: u64, count: u64) -> Result<Vec<u32>, String> {
        (0..count).map(|i| self.u32_at(address + 4 * i)).collect()
    }
    fn f32s(&self, address: u64, count: u64) -> Result<Vec<f32>, String> {
        Ok(self.u32s(address, count)?.into_iter().map(f32::from_bits).collect())
    }
    fn threads_per_group(&self) -> u64 {
        self.workgroup.iter().map(|&d| d as u64).product()
    }
    fn groups(&self) -> u64 {
        self.grid.iter().map(|&d| d as u64).product()
    }
}

/// Value written by wave-op programs for lanes that did not take part.
pub const SENTINEL: u32 = 0xDEAD_BEEF;

struct Args<'a> {
    name: &'a str,
    args: &'a [OracleArg],
}

impl Args<'_> {
    fn num(&self, i: usize) -> Result<u64, String> {
        match self.args.get(i) {
            Some(OracleArg::Num(n)) => Ok(*n),
            _ => Err(format!("argument {} of `{}` must be a number", i + 1, self.name)),
        }
    }
    fn ident(&self, i: usize) -> Result<&str, String> {
        match self.args.get(i) {
            Some(OracleArg::Ident(s)) => Ok(s),
            _ => Err(format!("argument {} of `{}` must be a name", i + 1, self.name)),
        }
    }
    fn count(&self, n: usize) -> Result<(), String> {
        if self.args.len() == n {
            Ok(())
        } else {
            Err(format!("`{}` takes {n} arguments, got {}", self.name, self.args.len()))
        }
    }
}

/// Evaluate the oracle `name(args)`.
pub fn call(name: &str, args: &[OracleArg], ctx: &OracleCtx) -> Result<Expected, String> {
    let a = Args { name, args };
    match name {
        "prefix_sum_u32" => {
            a.count(2)?;
            let src = ctx.u32s(a.num(0)?, a.num(1)?)?;
            let mut acc = 0u32;
            Ok(Expected::u32s(src.iter().map(|&v| {
                let before = acc;
                acc = acc.wrapping_add(v);
                before
            })))
        }
        "inclusive_sum_u32" => {
            a.count(2)?;
            let src = ctx.u32s(a.num(0)?, a.num(1)?)?;
            let mut acc = 0u32;
            Ok(Expected::u32s(src.iter().map(|&v| {
                acc = acc.wrapping_add(v);
                acc
            })))
        }
        "sum_u32" => {
            a.count(2)?;
            let src = ctx.u32s(a.num(0)?, a.num(1)?)?;
            Ok(Expected::u32s([src.iter().fold(0u32, |s, &v| s.wrapping_add(v))]))
        }
        "histogram_u32" => {
            a.count(3)?;
            let src = ctx.u32s(a.num(0)?, a.num(1)?)?;
            let bins = a.num(2)?.max(1);
            let mut h = vec![0u32; bins as usize];
            for v in src {
                h[(v as u64 % bins) as usize] += 1;
            }
            Ok(Expected::u32s(h))
        }
        "transpose_u32" => {
            a.count(3)?;
            let (rows, cols) = (a.num(1)?, a.num(2)?);
            let src = ctx.u32s(a.num(0)?, rows * cols)?;
            let mut out = vec![0u32; (rows * cols) as usize];
            for r in 0..rows {
                for c in 0..cols {
                    out[(c * rows + r) as usize] = src[(r * cols + c) as usize];
                }
            }
            Ok(Expected::u32s(out))
        }
        "gemm_f32_fma" | "gemm_f32_muladd" => {
            a.count(5)?;
            let (m, n, k) = (a.num(2)?, a.num(3)?, a.num(4)?);
            let lhs = ctx.f32s(a.num(0)?, m * k)?;
            let rhs = ctx.f32s(a.num(1)?, k * n)?;
            let fused = name == "gemm_f32_fma";
            let mut out = Vec::with_capacity((m * n) as usize);
            for i in 0..m {
                for j in 0..n {
                    let mut acc = 0.0f32;
                    for kk in 0..k {
                        let x = lhs[(i * k + kk) as usize];
                        let y = rhs[(kk * n + j) as usize];
                        acc = if fused { x.mul_add(y, acc) } else { acc + x * y };
                    }
                    out.push(acc);
                }
            }
            Ok(Expected::f32s(out))
        }
        "vadd_f32" => {
            a.count(3)?;
            let n = a.num(2)?;
            let (x, y) = (ctx.f32s(a.num(0)?, n)?, ctx.f32s(a.num(1)?, n)?);
            Ok(Expected::f32s(x.iter().zip(&y).map(|(p, q)| p + q)))
        }
        "saxpy_f32" => {
            // out = alpha * x + y, with alpha as f32 bits, one rounding per op (fmul then fadd).
            a.count(4)?;
            let alpha = f32::from_bits(a.num(0)? as u32);
            let n = a.num(3)?;
            let (x, y) = (ctx.f32s(a.num(1)?, n)?, ctx.f32s(a.num(2)?, n)?);
            Ok(Expected::f32s(x.iter().zip(&y).map(|(p, q)| alpha * p + q)))
        }
        "softmax_f32" => {
            a.count(2)?;
            let x = ctx.f32s(a.num(0)?, a.num(1)?)?;
            let max = x.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v as f64));
            let exps: Vec<f64> = x.iter().map(|&v| (v as f64 - max).exp()).collect();
            let sum: f64 = exps.iter().sum();
            Ok(Expected::f32s(exps.iter().map(|e| (e / sum) as f32)))
        }
        "unary_f32" => {
            a.count(3)?;
            let f: fn(f64) -> f64 = match a.ident(0)? {
                "sin" => f64::sin,
                "cos" => f64::cos,
                "exp2" => f64::exp2,
                "log2" => f64::log2,
                "sqrt" => f64::sqrt,
                "rsqrt" => |x| 1.0 / x.sqrt(),
                "rcp" => |x| 1.0 / x,
                other => return Err(format!("unknown function `{other}`")),
            };
            let x = ctx.f32s(a.num(1)?, a.num(2)?)?;
            Ok(Expected::f32s(x.iter().map(|&v| f(v as f64) as f32)))
        }
        "thread_index_ticket" => {
            // Atomic tickets in the decided order: workgroups, then waves, then lanes = thread order.
            a.count(0)?;
            Ok(Expected::u32s(0..(ctx.threads_per_group() * ctx.groups()) as u32))
        }
        "stress_loop_sum" => {
            // Thread t loops i = 0..3t, skipping i % 4 == 3, adding i + 1.
            a.count(1)?;
            Ok(Expected::u32s((0..a.num(0)?).map(|t| {
                (0..3 * t).filter(|i| i & 3 != 3).fold(0u32, |acc, i| acc.wrapping_add(i as u32 + 1))
            })))
        }
        "thread_special" => thread_special(&a, ctx),
        "wave_op" => wave_op(&a, ctx),
        "wave_shuffle" => wave_shuffle(&a, ctx),
        other => Err(format!("unknown oracle `{other}` (see conformance/src/oracles.rs)")),
    }
}

/// `thread_special(KIND)`: one u32 per thread of the whole grid (workgroup-major), the value a
/// special register or derived id has at the current wave width.
fn thread_special(a: &Args, ctx: &OracleCtx) -> Result<Expected, String> {
    a.count(1)?;
    let kind = a.ident(0)?;
    let per_group = ctx.threads_per_group();
    let w = ctx.width as u64;
    let mut out = Vec::new();
    for _group in 0..ctx.groups() {
        for t in 0..per_group {
            out.push(match kind {
                "lane_id" => t % w,
                "wave_id" => t / w,
                "num_waves" => per_group.div_ceil(w),
                "wave_width" => w,
                // Threads in the same wave as t that exist (the last wave may be partial).
                "live_lanes" => (per_group - (t / w) * w).min(w),
                other => return Err(format!("unknown special `{other}`")),
            } as u32);
        }
    }
    Ok(Expected::u32s(out))
}

/// Lane `t` of a workgroup takes part iff `(key % m) < k`, key = the thread index (`tid`),
/// its lane (`lane`) or its input value (`val`).
fn active(sel: &str, t: u64, lane: u64, value: u32, m: u64, k: u64) -> Result<bool, String> {
    let key = match sel {
        "tid" => t,
        "lane" => lane,
        "val" => value as u64,
        other => return Err(format!("unknown selector `{other}` (tid, lane, val)")),
    };
    Ok(key % m.max(1) < k)
}

/// `wave_op(OP, SRC, SEL, M, K)`: per thread (whole grid, workgroup-major) the result of a wave
/// operation over the active lanes of its wave, [`SENTINEL`] for inactive lanes. SRC holds one
/// u32 per thread. OP: prefix_sum (exclusive), reduce_add, reduce_min, reduce_max (unsigned),
/// ballot (low 32 bits; pred = value odd), any, all (1/0; pred = value odd), count (active lanes).
fn wave_op(a: &Args, ctx: &OracleCtx) -> Result<Expected, String> {
    a.count(5)?;
    let op = a.ident(0)?;
    let sel = a.ident(2)?;
    let (m, k) = (a.num(3)?, a.num(4)?);
    let per_group = ctx.threads_per_group();
    let src = ctx.u32s(a.num(1)?, per_group * ctx.groups())?;
    let w = ctx.width as u64;
    let mut out = vec![SENTINEL; src.len()];
    for g in 0..ctx.groups() {
        let base = g * per_group;
        let mut start = 0;
        while start < per_group {
            let end = (start + w).min(per_group);
            let mut lanes = Vec::new();
            for t in start..end {
                let v = src[(base + t) as usize];
                if active(sel, t, t - start, v, m, k)? {
                    lanes.push(t);
                }
            }
            let vals: Vec<u32> = lanes.iter().map(|&t| src[(base + t) as usize]).collect();
            let odd = |v: &u32| v & 1 == 1;
            let mut running = 0u32;
            for (i, &t) in lanes.iter().enumerate() {
                let r = match op {
                    "prefix_sum" => {
                        let r = running;
                        running = running.wrapping_add(vals[i]);
                        r
                    }
                    "reduce_add" => vals.iter().fold(0u32, |s, &v| s.wrapping_add(v)),
                    "reduce_min" => *vals.iter().min().unwrap_or(&0),
                    "reduce_max" => *vals.iter().max().unwrap_or(&0),
                    "ballot" => lanes
                        .iter()
                        .zip(&vals)
                        .filter(|(_, v)| odd(v))
                        .map(|(&lt, _)| lt - start)
                        .filter(|&l| l < 32)
                        .fold(0u32, |b, l| b | 1 << l),
                    "any" => vals.iter().any(odd) as u32,
                    "all" => vals.iter().all(odd) as u32,
                    "count" => lanes.len() as u32,
                    other => return Err(format!("unknown wave op `{other}`")),
                };
                out[(base + t) as usize] = r;
            }
            start = end;
        }
    }
    Ok(Expected::u32s(out))
}

/// `wave_shuffle(KIND, SRC, SEL, M, K, PARAM)`: per thread the shuffled value, [`SENTINEL`]
/// for inactive lanes. Every lane's source register holds SRC[thread] (inactive lanes too:
/// shuffles read them, semantics.md Part A 5.8); out-of-range sources give 0.
/// KIND: idx (source lane = (lane*5 + PARAM) & 63), up, down (delta PARAM), xor (mask PARAM),
/// broadcast (source lane = first active lane's (lane + PARAM)).
fn wave_shuffle(a: &Args, ctx: &OracleCtx) -> Result<Expected, String> {
    a.count(6)?;
    let kind = a.ident(0)?;
    let sel = a.ident(2)?;
    let (m, k, param) = (a.num(3)?, a.num(4)?, a.num(5)?);
    let per_group = ctx.threads_per_group();
    if !per_group.is_multiple_of(ctx.width as u64) {
        return Err("wave_shuffle needs whole waves (source lanes beyond the thread count)".into());
    }
    let src = ctx.u32s(a.num(1)?, per_group * ctx.groups())?;
    let w = ctx.width as u64;
    let mut out = vec![SENTINEL; src.len()];
    for g in 0..ctx.groups() {
        let base = g * per_group;
        for start in (0..per_group).step_by(w as usize) {
            let is_active = |t: u64| active(sel, t, t - start, src[(base + t) as usize], m, k);
            let mut first = None;
            for t in start..start + w {
                if is_active(t)? {
                    first.get_or_insert(t - start);
                }
            }
            for t in start..start + w {
                if !is_active(t)? {
                    continue;
                }
                let lane = t - start;
                let source: Option<u64> = match kind {
                    "idx" => Some((lane * 5 + param) & 63),
                    "up" => lane.checked_sub(param),
                    "down" => Some(lane + param),
                    "xor" => Some(lane ^ param),
                    "broadcast" => first.map(|f| f + param),
                    other => return Err(format!("unknown shuffle `{other}`")),
                };
                out[(base + t) as usize] = match source {
                    Some(s) if s < w => src[(base + start + s) as usize],
                    _ => 0,
                };
            }
        }
    }
    Ok(Expected::u32s(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(memory: &[u8], width: u32, threads: u32) -> OracleCtx<'_> {
        OracleCtx { memory, width, grid: [1, 1, 1], workgroup: [threads, 1, 1] }
    }

    fn mem(words: &[u32]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    fn nums(ns: &[u64]) -> Vec<OracleArg> {
        ns.iter().map(|&n| OracleArg::Num(n)).collect()
    }

    #[test]
    fn scans_and_sums() {
        let m = mem(&[1, 2, 3, 4]);
        let c = ctx(&m, 8, 4);
        assert_eq!(call("prefix_sum_u32", &nums(&[0, 4]), &c).unwrap(), Expected::u32s([0, 1, 3, 6]));
        assert_eq!(call("inclusive_sum_u32", &nums(&[0, 4]), &c).unwrap(), Expected::u32s([1, 3, 6, 10]));
        assert_eq!(call("sum_u32", &nums(&[0, 4]), &c).unwrap(), Expected::u32s([10]));
        assert_eq!(call("histogram_u32", &nums(&[0, 4, 2]), &c).unwrap(), Expected::u32s([2, 2]));
        assert_eq!(call("transpose_u32", &nums(&[0, 2, 2]), &c).unwrap(), Expected::u32s([1, 3, 2, 4]));
        assert!(call("nope", &[], &c).is_err());
        assert!(call("sum_u32", &nums(&[0]), &c).is_err());
    }

    #[test]
    fn wave_ops_depend_on_width() {
        let m = mem(&[1, 2, 3, 4, 5, 6, 7, 8]);
        let id = |s: &str| OracleArg::Ident(s.into());
        let args = vec![id("prefix_sum"), OracleArg::Num(0), id("tid"), OracleArg::Num(1), OracleArg::Num(1)];
        assert_eq!(
            call("wave_op", &args, &ctx(&m, 4, 8)).unwrap(),
            Expected::u32s([0, 1, 3, 6, 0, 5, 11, 18])
        );
        assert_eq!(
            call("wave_op", &args, &ctx(&m, 8, 8)).unwrap(),
            Expected::u32s([0, 1, 3, 6, 10, 15, 21, 28])
        );
        // Only even thread ids take part.
        let even = vec![id("reduce_add"), OracleArg::Num(0), id("tid"), OracleArg::Num(2), OracleArg::Num(1)];
        let got = call("wave_op", &even, &ctx(&m, 4, 8)).unwrap();
        assert_eq!(got, Expected::u32s([4, SENTINEL, 4, SENTINEL, 12, SENTINEL, 12, SENTINEL]));
    }

    #[test]
    fn shuffles_read_inactive_lanes_and_zero_out_of_range() {
        let m = mem(&[10, 11, 12, 13]);
        let id = |s: &str| OracleArg::Ident(s.into());
        let n = OracleArg::Num;
        let down = vec![id("down"), n(0), id("tid"), n(1), n(1), n(1)];
        assert_eq!(call("wave_shuffle", &down, &ctx(&m, 4, 4)).unwrap(), Expected::u32s([11, 12, 13, 0]));
        let xor_even = vec![id("xor"), n(0), id("tid"), n(2), n(1), n(1)];
        let got = call("wave_shuffle", &xor_even, &ctx(&m, 4, 4)).unwrap();
        assert_eq!(got, Expected::u32s([11, SENTINEL, 13, SENTINEL]));
    }
}
