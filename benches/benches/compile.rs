//! Criterion: the JIT's compile time over every bundled and conformance kernel, at W = 32 and
//! W = 64, each kernel compiled afresh (the cache bypassed) and one at a time. One iteration
//! compiles them all; what is recorded is the median (`p50`) or the maximum (`max`) over the
//! kernels of the time until the first runnable code. Waiting for a kernel's optimized tier
//! (so that compiles do not overlap) is outside the measurement. A kernel whose first code
//! takes over a second is named and left out of the repetitions.

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode};
use std::time::{Duration, Instant};
use wave_benches::compile_times::{self, Subject};
use wave_jit_codegen::Tiers;

/// First code of a kernel beyond which it is left out of the repeated measurement (and named):
/// a pathological compile would make every iteration take that long, and its optimized tier
/// (compiled in the background) would pile up across iterations.
const OUTLIER: Duration = Duration::from_secs(1);

/// Time until the first runnable code of each subject that compiles at `width` (each waits
/// for its optimized tier, outside the measurement, as `compile_once` does).
fn first_code_times(subjects: &[Subject], width: u32) -> Vec<(String, Duration)> {
    subjects
        .iter()
        .filter_map(|s| {
            let flags = compile_times::flags(s, width);
            let start = Instant::now();
            let code = wave_jit_codegen::compile_fresh(&s.kernel, flags).ok()?;
            let took = start.elapsed();
            let waiting = Instant::now();
            while code.tiers() == Tiers::Pending && waiting.elapsed() < compile_times::OPTIMIZED_WAIT_LIMIT {
                std::thread::sleep(Duration::from_micros(200));
            }
            Some((s.label.clone(), took))
        })
        .collect()
}

fn compile(c: &mut Criterion) {
    let subjects = compile_times::subjects();
    let mut group = c.benchmark_group("compile");
    group.sample_size(10).sampling_mode(SamplingMode::Flat).warm_up_time(Duration::from_millis(1));
    for width in [32, 64] {
        // One survey first: it names the spread and the outliers, which the repeated
        // measurement leaves out.
        let survey = compile_times::survey(&subjects, width, &mut |_| {});
        let outliers: Vec<&str> =
            survey.times.iter().filter(|(_, t)| t.first > OUTLIER).map(|(l, _)| l.as_str()).collect();
        let first: Vec<(String, Duration)> = survey.times.iter().map(|(l, t)| (l.clone(), t.first)).collect();
        if let Some(s) = compile_times::spread(&first) {
            eprintln!(
                "compile W = {width}: {} kernels compiled ({} not), first code p50 {:?}, max {:?} ({}); left out of the repetitions (first code over {:?}): {:?}",
                first.len(),
                survey.failed.len(),
                s.p50,
                s.max,
                s.slowest,
                OUTLIER,
                outliers
            );
        }
        let measured: Vec<Subject> =
            subjects.iter().filter(|s| !outliers.contains(&s.label.as_str())).cloned().collect();
        for (statistic, pick) in [("p50", 0usize), ("max", 1)] {
            group.bench_function(format!("w{width}/{statistic}-over-kernels"), |b| {
                b.iter_custom(|iterations| {
                    (0..iterations)
                        .map(|_| {
                            let spread = compile_times::spread(&first_code_times(&measured, width))
                                .expect("some kernel compiles");
                            [spread.p50, spread.max][pick]
                        })
                        .sum()
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, compile);
criterion_main!(benches);
