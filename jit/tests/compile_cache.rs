//! The compile cache is bounded: beyond `CACHE_ENTRIES` kernels the least recently used one
//! goes, and its code memory is given back once nothing runs it. A process of its own (this
//! file's only test), so that the count of live code modules is this test's alone.

use wave_jit_codegen::compiler::live_modules;
use wave_jit_codegen::engine::cache::{compile, is_cached, CACHE_ENTRIES};
use wave_jit_codegen::{Flags, JitEngine};
use wave_runtime::{Device, Dispatch, Engine};

/// A small loop-free kernel; `name` makes each one a kernel of its own for the cache.
fn kernel(name: &str) -> wave_isa::ValidKernel {
    let source = format!(
        ".kernel {name}\n    mov_sr r1, sr_thread_id_x\n    mov_imm r2, 2\n    shl r3, r1, r2\n    \
         device_store_u32 r3, r1\n.end\n"
    );
    let (module, _) =
        wave_isa::module::load_bytes(source.as_bytes(), "k.wave").unwrap_or_else(|e| panic!("{e}"));
    module.kernels.into_iter().next().unwrap()
}

/// Thread `t` counts to `r0` in a loop and stores the count at `4 t`.
const COUNTING: &str = "
.kernel counting
    mov_sr r1, sr_thread_id_x
    mov_imm r2, 0
    mov_imm r3, 1
    loop
        iadd r2, r2, r3
        ucmp_lt p1, r2, r0
        break !p1
    endloop
    mov_imm r4, 2
    shl r5, r1, r4
    device_store_u32 r5, r2
.end
";

/// Long enough for the cache to turn over while the counting kernel runs (a few tenths of a
/// second; the loop over the other kernels' compiles takes about as long).
const ITERATIONS: u32 = 300_000_000;

fn flags() -> Flags {
    Flags { width: 8, checked: true, fuel: false, stats: false, workgroup: [8, 1, 1], window_wraps: false }
}

#[test]
fn the_cache_keeps_the_most_recent_kernels_and_frees_the_others() {
    assert_eq!(live_modules(), 0);
    // A long dispatch on another thread while the cache turns over: its code stays alive.
    let counting = {
        let (module, _) = wave_isa::module::load_bytes(COUNTING.as_bytes(), "c.wave").unwrap();
        module.kernels.into_iter().next().unwrap()
    };
    let runner = std::thread::spawn(move || {
        let mut device = Device::new(1 << 16).unwrap();
        let d = Dispatch {
            workgroup: [8, 1, 1],
            wave_width: 8,
            initial_registers: vec![(0, ITERATIONS)],
            max_instructions: 0,
            threads: 1,
            ..Dispatch::default()
        };
        JitEngine::strict().run(&counting, &d, &mut device).unwrap_or_else(|e| panic!("{e}"));
        device.read(0, 32).unwrap().to_vec()
    });

    let first = kernel("k0");
    let held = compile(&first, flags()).unwrap_or_else(|e| panic!("{e}"));
    for i in 1..CACHE_ENTRIES + 40 {
        compile(&kernel(&format!("k{i}")), flags()).unwrap_or_else(|e| panic!("{e}"));
    }
    let latest = kernel(&format!("k{}", CACHE_ENTRIES + 39));
    assert!(is_cached(&latest, flags()), "the latest kernel is cached");
    assert!(!is_cached(&first, flags()), "the least recently used kernel left the cache");
    let memory = runner.join().expect("the dispatch ran to its end");
    let counts: Vec<u32> = memory.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(counts, [ITERATIONS; 8]);
    // The cache's entries (one module each: small kernels, one tier, no loop function) and
    // the code still held here; the counting kernel's, evicted, went when its run ended.
    assert_eq!(live_modules(), CACHE_ENTRIES + 1);
    drop(held);
    assert_eq!(live_modules(), CACHE_ENTRIES, "the evicted kernel's code is freed once no one holds it");
}
