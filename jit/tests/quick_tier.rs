//! The quick tier (single-pass register allocation, the first code of a large kernel) must
//! compute what the interpreter computes. This test binary compiles everything in that tier
//! only (`set_tiering` is process-wide, so it has a process of its own), and runs random
//! programs, every data op and the tiled GEMM kernel against the interpreter.

mod common;

use wave_difftest::gen::GenConfig;
use wave_difftest::{fuzz_diff_with, FuzzOptions};
use wave_jit_codegen::{set_tiering, Tiering};
use wave_runtime::Interpreter;

#[test]
fn quick_tier_matches_interpreter() {
    set_tiering(Tiering::QuickOnly);
    let programs = 500;
    let options = FuzzOptions {
        count: programs,
        seed: 0x01CE_2026,
        widths: vec![4, 8, 16, 32, 64],
        gen: common::for_jit(GenConfig { max_statements: 24, ..GenConfig::default() }),
        minimize_budget: 1500,
        every_counter: false,
        threads: 1,
        rerun_without_limit: true,
    };
    match fuzz_diff_with(&wave_jit_codegen::JitEngine::strict(), &Interpreter::new(), &options, &mut |_| {}) {
        Ok(report) => assert_eq!(report.programs, programs),
        Err(mismatch) => panic!("{mismatch}"),
    }
    // Every data op, on special-value-rich inputs under divergent guards.
    let alu = common::alu_kernel();
    for w in common::WIDTHS {
        let d = wave_runtime::Dispatch {
            grid: [2, 1, 1],
            workgroup: [70, 1, 1],
            wave_width: w,
            threads: 1,
            ..wave_runtime::Dispatch::default()
        };
        let (ra, rb, ma, mb) = common::run_both(&alu, &d, 1 << 20, 5);
        assert_eq!(ra, rb, "W={w}");
        if let Some(msg) = common::alu_difference(&ma, &mb, &common::data_ops()) {
            panic!("W={w}: {msg}");
        }
    }
    let gemm = common::gemm_tiled();
    for w in [8, 32, 64] {
        let code = wave_jit_codegen::compile(&gemm, common::gemm_flags(w)).unwrap();
        assert!(code.tiered(), "W={w}: QuickOnly compiles the quick tier");
        common::check_gemm(&gemm, w);
    }
}
