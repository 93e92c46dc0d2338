//! Criterion: vecadd, reduction, histogram, prefix sum (JIT: 2^18 elements, interpreter:
//! 2^12) and the launch cost of an empty kernel, with small sample counts.

use criterion::{criterion_group, criterion_main, Criterion};
use wave_benches::workloads::{run_stream, time_launch, Repeat, RunOptions, Stream};
use wave_runtime::Interpreter;

fn streams(c: &mut Criterion) {
    let mut group = c.benchmark_group("streams");
    group.sample_size(10);
    let jit = wave_jit_codegen::JitEngine::strict();
    let interp = Interpreter::new();
    let run = RunOptions::default();
    for which in Stream::ALL {
        group.bench_function(format!("jit/{}/262144", which.name()), |b| {
            b.iter(|| run_stream(&jit, which, 1 << 18, &run, Repeat::ONCE))
        });
        group.bench_function(format!("interp/{}/4096", which.name()), |b| {
            b.iter(|| run_stream(&interp, which, 1 << 12, &run, Repeat::ONCE))
        });
    }
    for groups in [1, 1024] {
        group.bench_function(format!("jit/launch/{groups}"), |b| {
            b.iter(|| time_launch(&jit, groups, &run, Repeat::ONCE))
        });
        group.bench_function(format!("interp/launch/{groups}"), |b| {
            b.iter(|| time_launch(&interp, groups, &run, Repeat::ONCE))
        });
    }
    group.finish();
}

criterion_group!(benches, streams);
criterion_main!(benches);
