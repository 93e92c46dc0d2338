//! One module per group of subcommands. Each parses its own flags and calls the crates.

pub mod asm;
pub mod bench;
pub mod conformance;
pub mod emit;
pub mod output;
pub mod run;

/// A subcommand's outcome: an exit code, or a message for stderr (exit 1).
pub type CliResult = Result<std::process::ExitCode, String>;
