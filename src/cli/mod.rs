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

/// A subcommand's outcome: an exit code, or a message for stderr (exit 1). Usage errors (exit 2)
/// are clap's: every flag value is parsed while the command line is read.
pub type CliResult = Result<std::process::ExitCode, String>;
