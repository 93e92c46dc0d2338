//! `wave-jit conformance`: run the embedded conformance suite on an engine.

use super::{output, CliResult};
use clap::{Args, ValueEnum};
use std::process::ExitCode;
use wave_conformance::{run_suite, WidthPolicy};
use wave_runtime::{Engine, Interpreter};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EngineKind {
    /// The reference interpreter
    Interp,
    /// The Cranelift JIT
    Jit,
}

#[derive(Args, Debug)]
pub struct ConformanceArgs {
    /// Engine to run the programs on
    #[arg(long, value_enum, default_value = "interp")]
    engine: EngineKind,
    /// Run only at this wave width (programs that do not list it are skipped); default: every
    /// width each program lists
    #[arg(long = "wave-width", value_name = "W")]
    wave_width: Option<u32>,
    /// Run only programs whose path (section/name.wave) contains TEXT
    #[arg(long, value_name = "TEXT")]
    filter: Option<String>,
    /// Print only failures and the summary
    #[arg(long, short)]
    quiet: bool,
}

fn engine(kind: EngineKind) -> Result<Box<dyn Engine>, String> {
    match kind {
        EngineKind::Interp => Ok(Box::new(Interpreter::new())),
        EngineKind::Jit => Ok(Box::new(wave_jit_codegen::JitEngine::strict())),
    }
}

pub fn conformance(args: ConformanceArgs) -> CliResult {
    if let Some(w) = args.wave_width {
        if !wave_conformance::header::ALL_WIDTHS.contains(&w) {
            return Err(format!("wave width {w} is not one of 4, 8, 16, 32, 64"));
        }
    }
    let engine = engine(args.engine)?;
    let policy = args.wave_width.map_or(WidthPolicy::All, WidthPolicy::Only);
    let mut write_error = None;
    let summary = run_suite(engine.as_ref(), &policy, args.filter.as_deref(), |result| {
        if (!args.quiet || !result.passed()) && write_error.is_none() {
            write_error = output::print(&format!("{result}\n")).err();
        }
    });
    if let Some(e) = write_error {
        return Err(e);
    }
    output::print(&format!("{} passed, {} failed\n", summary.passed, summary.failed))?;
    Ok(if summary.failed == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
