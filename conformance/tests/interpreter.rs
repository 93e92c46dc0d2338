//! The whole conformance suite on the interpreter, at W = 8 and W = 32 (and at each program's
//! own widths where it lists neither). Fails listing every failing (program, width).

use wave_conformance::{programs, run_suite, WidthPolicy};
use wave_runtime::Interpreter;

#[test]
fn suite_passes_on_the_interpreter() {
    assert!(programs().len() >= 200, "only {} programs embedded", programs().len());
    let engine = Interpreter::new();
    let summary = run_suite(&engine, &WidthPolicy::Prefer(vec![8, 32]), None, |_| {});
    eprintln!("W = 8 and 32: {} passed, {} failed", summary.passed, summary.failed);
    let list: Vec<String> = summary.failures.iter().map(|r| r.to_string()).collect();
    assert!(
        summary.failed == 0,
        "{} passed, {} failed:\n{}",
        summary.passed,
        summary.failed,
        list.join("\n")
    );
}

#[test]
fn every_header_parses() {
    let mut errors = Vec::new();
    for p in programs() {
        if let Err(e) = wave_conformance::header::parse_header(p.path, p.source) {
            errors.push(e.to_string());
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn suite_passes_at_every_width() {
    let engine = Interpreter::new();
    let summary = run_suite(&engine, &WidthPolicy::All, None, |_| {});
    eprintln!("every width: {} passed, {} failed", summary.passed, summary.failed);
    let list: Vec<String> = summary.failures.iter().map(|r| r.to_string()).collect();
    assert!(
        summary.failed == 0,
        "{} passed, {} failed:\n{}",
        summary.passed,
        summary.failed,
        list.join("\n")
    );
}
