//! Small dispatches of loop-free code run on the interpreter instead of waiting for a compile
//! (issue 16: a 1K-element dispatch end to end no slower than `--engine interp`), and only
//! those: not kernels with loops, not large dispatches, not unchecked ones (the interpreter
//! always checks), not with `JitEngine::strict()`, and not once the code is compiled.

use wave_jit_codegen::JitEngine;
use wave_runtime::{Device, Dispatch, Engine, Interpreter};

const ADD_ONE: &str = "
.kernel add_one
    mov_sr r1, sr_thread_id_x
    mov_imm r2, 2
    shl r3, r1, r2
    device_load_u32 r4, r3
    mov_imm r5, 1
    iadd r4, r4, r5
    device_store_u32 r3, r4
.end
";

const LOOPING: &str = "
.kernel looping
    mov_sr r1, sr_thread_id_x
    mov_imm r2, 2
    shl r3, r1, r2
    mov_imm r6, 0
    mov_imm r7, 1
    loop
        icmp_ge p1, r6, r7
        break p1
        device_load_u32 r4, r3
        iadd r4, r4, r7
        device_store_u32 r3, r4
        iadd r6, r6, r7
    endloop
.end
";

fn kernel(source: &str, name: &str) -> wave_isa::ValidKernel {
    let (module, _) = wave_isa::module::load_bytes(source.as_bytes(), name).unwrap_or_else(|e| panic!("{e}"));
    module.kernels[0].clone()
}

/// Run on `engine`; the fallback note and the first words of memory.
fn run(
    engine: &dyn Engine,
    k: &wave_isa::ValidKernel,
    grid: u32,
    unchecked: bool,
) -> (Option<String>, Vec<u8>) {
    let d = Dispatch {
        grid: [grid, 1, 1],
        workgroup: [64, 1, 1],
        wave_width: 32,
        unchecked,
        ..Dispatch::default()
    };
    let mut device = Device::new(1 << 20).unwrap();
    device.write(0, &(0..256u32).flat_map(|i| i.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
    let stats = engine.run(k, &d, &mut device).unwrap_or_else(|e| panic!("{e}"));
    (stats.fallback, device.read(0, 1024).unwrap().to_vec())
}

#[test]
fn small_loop_free_dispatches_are_interpreted_with_the_same_result() {
    // A kernel of its own, so no other test compiled it first.
    let k = kernel(&ADD_ONE.replace("add_one", "add_one_small"), "small.wave");
    let (_, want) = run(&Interpreter::new(), &k, 2, false);
    let (note, got) = run(&JitEngine::new(), &k, 2, false);
    assert!(note.as_deref().is_some_and(|n| n.contains("small dispatch")), "{note:?}");
    assert_eq!(got, want);
}

#[test]
fn loops_strict_unchecked_and_compiled_kernels_run_on_the_jit() {
    let looping = kernel(LOOPING, "looping.wave");
    assert_eq!(run(&JitEngine::new(), &looping, 2, false).0, None, "a kernel with a loop is compiled");
    let k = kernel(&ADD_ONE.replace("add_one", "add_one_strict"), "strict.wave");
    assert_eq!(run(&JitEngine::strict(), &k, 2, false).0, None, "strict never interprets");
    // Compiled by the strict run above: now in the cache, so the default engine uses it.
    assert_eq!(run(&JitEngine::new(), &k, 2, false).0, None, "cached code is used");
    let k = kernel(&ADD_ONE.replace("add_one", "add_one_unchecked"), "unchecked.wave");
    assert_eq!(run(&JitEngine::new(), &k, 2, true).0, None, "unchecked code is compiled");
}

#[test]
fn large_dispatches_are_compiled() {
    let k = kernel(&ADD_ONE.replace("add_one", "add_one_large"), "large.wave");
    // 262,144 threads × 8 instructions: above the threshold. Each thread of a workgroup loads
    // from the same 64 words, so memory stays small.
    let d = Dispatch { grid: [4096, 1, 1], workgroup: [64, 1, 1], wave_width: 32, ..Dispatch::default() };
    let mut device = Device::new(1 << 20).unwrap();
    let stats = JitEngine::new().run(&k, &d, &mut device).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(stats.fallback, None);
}
