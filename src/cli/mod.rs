//! One module per group of subcommands (each parses its own flags and calls the crates), the
//! parts of `run` (`run_flags`, `run_output`, `memory_file`), and `output`: how every
//! subcommand writes to the terminal.

pub mod asm;
pub mod bench;
pub mod conformance;
pub mod emit;
pub mod memory_file;
pub mod output;
pub mod run;
pub mod run_flags;
pub mod run_output;

use clap::ValueEnum;
use std::path::Path;
use wave_isa::asm::Diagnostics;
use wave_isa::module::{load_file_with, LoadErrorKind};
use wave_isa::wbin::WbinFile;
use wave_isa::{EncodingChoice, Module};

/// A subcommand's outcome: an exit code, or a message for stderr (exit 1). Usage errors (exit 2)
/// are clap's: every flag value is parsed while the command line is read.
pub type CliResult = Result<std::process::ExitCode, String>;

/// `--encoding`: the instruction encoding of a binary's code.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum EncodingArg {
    /// The current encoding, unless the code only decodes and validates in the 0.1.2 one
    #[default]
    Auto,
    /// The documented encoding, which `wave-jit asm` writes
    Current,
    /// The older encoding of wave-asm / wave-compiler 0.1.2 from crates.io
    #[value(name = "legacy-0.1.2")]
    Legacy012,
}

impl From<EncodingArg> for EncodingChoice {
    fn from(arg: EncodingArg) -> EncodingChoice {
        match arg {
            EncodingArg::Auto => EncodingChoice::Auto,
            EncodingArg::Current => EncodingChoice::Force(wave_isa::Encoding::Current),
            EncodingArg::Legacy012 => EncodingChoice::Force(wave_isa::Encoding::Legacy012),
        }
    }
}

/// Print assembler diagnostics to stderr and say, in a message for `main` (which adds the
/// `error: ` prefix once), that the file did not assemble.
pub fn report_diagnostics(name: &str, diagnostics: &Diagnostics) -> String {
    eprintln!("{diagnostics}\n");
    let n = diagnostics.error_count();
    format!("could not assemble `{name}` ({n} error{})", if n == 1 { "" } else { "s" })
}

/// Load a `.wave` or `.wbin` file for a command that runs or translates it.
pub fn load(path: &Path, encoding: EncodingArg) -> Result<(Module, WbinFile), String> {
    load_file_with(path, encoding.into()).map_err(|e| match &e.kind {
        LoadErrorKind::Assemble(d) => report_diagnostics(&path.display().to_string(), d),
        _ => e.to_string(),
    })
}
