//! The JIT's counts equal the interpreter's on the whole suite at every width, every entry
//! function compiled in the optimized tier (a process of its own: tiering is process-wide).

mod common;

#[test]
fn optimized_tier_counts_match_the_interpreter() {
    wave_jit_codegen::set_tiering(wave_jit_codegen::Tiering::OptimizedOnly);
    common::jit_counts_match_the_interpreter();
}
