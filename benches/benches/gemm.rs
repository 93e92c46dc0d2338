//! Criterion: the bundled GEMM kernels on the JIT (N = 128) and the interpreter (N = 64; the
//! GPU-style kernel at its tile, 128), the f16 GEMM, and the native yardsticks (the 4×8
//! 128-bit GEMM and matrixmultiply), with small sample counts.

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use wave_benches::kernels::GemmKernel;
use wave_benches::native::{self, gemm4x8, NativeThreads};
use wave_benches::workloads::{run_gemm, run_gemm_f16, GemmF16Problem, GemmProblem, Repeat, RunOptions};
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
        let small = if which.tile() > 64 { &p128 } else { &p64 };
        group.bench_function(format!("interp/{}/{}", which.name(), small.n), |b| {
            b.iter(|| run_gemm(&interp, which, black_box(small), &run, Repeat::ONCE).map(|(c, _)| c))
        });
    }
    let f16_128 = GemmF16Problem::random(128, 3);
    group.bench_function("jit/gemm_f16/128", |b| {
        b.iter(|| run_gemm_f16(&jit, black_box(&f16_128), &run, Repeat::ONCE).map(|(c, _)| c))
    });
    let threads = NativeThreads::new(run.threads).expect("native thread pool");
    let n = 128usize;
    let mut out = vec![0f32; n * n];
    group.bench_function("native/4x8/128", |b| {
        b.iter(|| gemm4x8::gemm_4x8(n, black_box(&p128.a), &p128.b, &mut out, &threads))
    });
    group.bench_function("native/matrixmultiply/128", |b| {
        b.iter(|| native::sgemm_rows(n, black_box(&p128.a), &p128.b, &mut out, &threads))
    });
    group.bench_function("native/f16-via-f32/128", |b| {
        b.iter(|| native::gemm_f16_via_f32(n, black_box(&f16_128.a), &f16_128.b, &threads))
    });
    group.finish();
}

criterion_group!(benches, gemm);
criterion_main!(benches);
