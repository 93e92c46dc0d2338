//! Criterion: the memory-bound workloads (vecadd, reduction, histogram, prefix sum, ReLU, bias
//! add, softmax, transpose) on the JIT (2^18 elements), the interpreter (2^12) and as native
//! Rust (2^18), and the launch cost of an empty kernel, with small sample counts.

use criterion::{criterion_group, criterion_main, Criterion};
use wave_benches::native::NativeThreads;
use wave_benches::streams::{run_stream, run_stream_native, Stream};
use wave_benches::workloads::{time_launch, Repeat, RunOptions};
use wave_runtime::Interpreter;

fn streams(c: &mut Criterion) {
    let mut group = c.benchmark_group("streams");
    group.sample_size(10);
    let jit = wave_jit_codegen::JitEngine::strict();
    let interp = Interpreter::new();
    let run = RunOptions::default();
    let threads = NativeThreads::new(run.threads).expect("native thread pool");
    for which in Stream::ALL {
        group.bench_function(format!("jit/{}/262144", which.name()), |b| {
            b.iter(|| run_stream(&jit, which, 1 << 18, &run, Repeat::ONCE))
        });
        group.bench_function(format!("interp/{}/4096", which.name()), |b| {
            b.iter(|| run_stream(&interp, which, 1 << 12, &run, Repeat::ONCE))
        });
        group.bench_function(format!("native/{}/262144", which.name()), |b| {
            b.iter(|| run_stream_native(which, 1 << 18, &threads, Repeat::ONCE))
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
