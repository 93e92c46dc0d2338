//! Per kernel, the time to the first code at W = 64 over that at W = 32 (issue 16 asks for at
//! most 1.5×), for every bundled and conformance kernel, slowest ratios first.
//!
//! `cargo run --release -p wave-jit-benches --example compile_width_ratio`; `PROBE=text` keeps
//! the kernels whose label contains it (and then also times their optimized code), `REPS=n`
//! compiles each n times (default 3) and keeps the fastest.

use std::time::Duration;
use wave_benches::compile_times::{first_code, optimized_code, subjects, Subject};

fn fastest(reps: usize, mut compile: impl FnMut() -> Option<Duration>) -> Duration {
    (0..reps).filter_map(|_| compile()).min().unwrap_or_default()
}

fn main() {
    let filter = std::env::var("PROBE").unwrap_or_default();
    let reps: usize = std::env::var("REPS").ok().and_then(|s| s.parse().ok()).unwrap_or(3);
    let first = |s: &Subject, w| fastest(reps, || first_code(s, w).ok());
    let optimized = |s: &Subject, w| fastest(reps, || optimized_code(s, w).ok().flatten());
    let mut rows = Vec::new();
    for s in subjects().into_iter().filter(|s| s.label.contains(&filter)) {
        let (w32, w64) = (first(&s, 32), first(&s, 64));
        let both = if filter.is_empty() { None } else { Some((optimized(&s, 32), optimized(&s, 64))) };
        let ratio = w64.as_secs_f64() / w32.as_secs_f64().max(1e-9);
        rows.push((ratio, w32, w64, both, s.label));
    }
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));
    let over = rows.iter().filter(|r| r.0 > 1.5).count();
    println!(
        "{} kernels, {over} with first code at W = 64 over 1.5x that at W = 32 (fastest of {reps})",
        rows.len()
    );
    for (ratio, w32, w64, both, label) in rows.iter().take(25) {
        let optimized = both.map_or(String::new(), |(a, b)| format!("  optimized {a:9.2?} {b:9.2?}"));
        println!("{ratio:5.2}x  first {w32:9.2?} {w64:9.2?}{optimized}  {label}");
    }
}
