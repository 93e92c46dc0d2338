//! Criterion: the bundled GEMM kernels on the JIT (N = 128) and the interpreter (N = 64), and
//! the native Rust loops, with small sample counts.

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use wave_benches::kernels::GemmKernel;
use wave_benches::native;
use wave_benches::workloads::{run_gemm, GemmProblem, Repeat, RunOptions};
use wave_runtime::Interpreter;

fn gemm(c: &mut Criterion) {
    let mut group = c.benchmark_group("gemm");
    group.sample_size(10);
    let jit = wave_jit_codegen::JitEngine::strict();
    let interp = Interpreter::new();
    let run = RunOptions::default();
    let p128 = GemmProblem::random(128, 1);
    let p64 = GemmProblem::random(64, 2);
    for which in GemmKernel::ALL {
        group.bench_function(format!("jit/{}/128", which.name()), |b| {
            b.iter(|| run_gemm(&jit, which, black_box(&p128), &run, Repeat::ONCE).map(|(c, _)| c))
        });
        group.bench_function(format!("interp/{}/64", which.name()), |b| {
            b.iter(|| run_gemm(&interp, which, black_box(&p64), &run, Repeat::ONCE).map(|(c, _)| c))
        });
    }
    let n = 128usize;
    let mut out = vec![0f32; n * n];
    group
        .bench_function("native/naive/128", |b| b.iter(|| native::gemm_naive(n, &p128.a, &p128.b, &mut out)));
    group.bench_function("native/blocked/128", |b| {
        b.iter(|| native::gemm_blocked(n, &p128.a, &p128.b, &mut out))
    });
    group.finish();
}

criterion_group!(benches, gemm);
criterion_main!(benches);
