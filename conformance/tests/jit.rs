//! The whole conformance suite on the JIT at every wave width (4, 8, 16, 32, 64 where each
//! program allows it). Fails listing every failing (program, width).

use wave_conformance::{run_suite, WidthPolicy};

#[test]
fn suite_passes_on_the_jit_at_every_width() {
    let engine = wave_jit_codegen::JitEngine::strict();
    let summary = run_suite(&engine, &WidthPolicy::All, None, |_| {});
    eprintln!("JIT, every width: {} passed, {} failed", summary.passed, summary.failed);
    let list: Vec<String> = summary.failures.iter().map(|r| r.to_string()).collect();
    assert!(
        summary.failed == 0,
        "{} passed, {} failed:\n{}",
        summary.passed,
        summary.failed,
        list.join("\n")
    );
}
