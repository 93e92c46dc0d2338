//! Criterion: the JIT's compile time over every bundled and conformance kernel, at W = 32 and
//! W = 64, each kernel compiled afresh (the cache bypassed) and one at a time. One iteration
//! compiles them all; what is recorded is the median (`p50`) or the maximum (`max`) over the
//! kernels of the time until the first runnable code (no optimized tier is left compiling in
//! the background). A kernel whose first code takes over a second (`OUTLIER`) is named and
//! left out of the repetitions.

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode};
use std::time::{Duration, Instant};
use wave_benches::compile_times::{self, Subject, OUTLIER};

/// Time until the first runnable code of each subject that compiles at `width` (no
/// optimized tier is left compiling in the background).
fn first_code_times(subjects: &[Subject], width: u32) -> Vec<(String, Duration)> {
    subjects
        .iter()
        .filter_map(|s| {
            let start = Instant::now();
            compile_times::first_code(s, width).ok()?;
            Some((s.label.clone(), start.elapsed()))
        })
        .collect()
}

fn compile(c: &mut Criterion) {
    let subjects = compile_times::subjects();
    let mut group = c.benchmark_group("compile");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_secs(30));
    for width in [32, 64] {
        // One pass first: it names the spread and the outliers, which the repeated
        // measurement leaves out.
        let first = first_code_times(&subjects, width);
        let outliers: Vec<&str> =
            first.iter().filter(|(_, t)| *t > OUTLIER).map(|(l, _)| l.as_str()).collect();
        if let Some(s) = compile_times::spread(&first) {
            eprintln!(
                "compile W = {width}: {} of {} kernels compiled, first code p50 {:?}, max {:?} ({}); left out of the repetitions (first code over {:?}): {:?}",
                first.len(),
                subjects.len(),
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
