//! The JIT's counts equal the interpreter's on the whole suite at every width, every entry
//! function compiled in the quick tier (a process of its own: tiering is process-wide).

mod common;

#[test]
fn quick_tier_counts_match_the_interpreter() {
    wave_jit_codegen::set_tiering(wave_jit_codegen::Tiering::QuickOnly);
    common::jit_counts_match_the_interpreter();
}
