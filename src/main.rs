//! `wave-jit`: the command-line tool. Thin: it parses arguments and calls the crates.

mod cli;

use clap::{Parser, Subcommand};
use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "wave-jit",
    version,
    about = "Run WAVE GPU kernels on the CPU, and translate them for real GPUs",
    long_about = "wave-jit assembles, disassembles, checks and runs WAVE kernels (.wave assembly or \
                  .wbin binaries, byte-compatible with the reference wave-asm). `run` is a drop-in \
                  for wave-emu; `emit` writes PTX, HIP, SYCL or Metal source."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Assemble a .wave file into a .wbin binary
    Asm(cli::asm::AsmArgs),
    /// Disassemble every kernel of a .wbin binary
    Dis(cli::asm::DisArgs),
    /// Validate a .wave or .wbin file and print per-kernel facts
    Check(cli::asm::CheckArgs),
    /// Run a kernel (drop-in for wave-emu: same flags, same dumps)
    Run(Box<cli::run::RunArgs>),
    /// Print the device capabilities
    Info(cli::run::InfoArgs),
    /// Run the conformance suite
    Conformance(cli::conformance::ConformanceArgs),
    /// Benchmarks against native Rust: GEMMs (f32, f16, GPU-style), streams (vector add, reduction, histogram, prefix sum, ReLU, bias add, softmax, transpose), launch, compile times
    Bench(cli::bench::BenchArgs),
    /// Differential testing: random programs, JIT against the interpreter (under the instruction limit, then without one)
    FuzzDiff(cli::bench::FuzzDiffArgs),
    /// Write GPU source (PTX, HIP, SYCL, Metal) for a kernel
    Emit(cli::emit::EmitArgs),
}

/// The binary started under the name `wave-emu` (a symlink or a copy): `wave-jit run` with
/// wave-emu's command line, so that SDKs and scripts that call `wave-emu` use the JIT.
#[derive(Parser, Debug)]
#[command(
    name = "wave-emu",
    version = concat!("(wave-jit ", env!("CARGO_PKG_VERSION"), ")"),
    about = "wave-jit started as wave-emu: runs a WAVE kernel as `wave-jit run` does"
)]
struct AsWaveEmu {
    #[command(flatten)]
    run: cli::run::RunArgs,
}

fn started_as_wave_emu() -> bool {
    let argv0 = std::env::args_os().next().unwrap_or_default();
    let wave_emu = format!("wave-emu{}", std::env::consts::EXE_SUFFIX);
    Path::new(&argv0).file_name().is_some_and(|name| name == wave_emu.as_str())
}

fn main() -> ExitCode {
    let command = if started_as_wave_emu() {
        Command::Run(Box::new(AsWaveEmu::parse().run))
    } else {
        Cli::parse().command
    };
    let result = match command {
        Command::Asm(a) => cli::asm::asm(a),
        Command::Dis(a) => cli::asm::dis(a),
        Command::Check(a) => cli::asm::check(a),
        Command::Run(a) => cli::run::run(*a),
        Command::Info(a) => cli::run::info(a),
        Command::Conformance(a) => cli::conformance::conformance(a),
        Command::Bench(a) => cli::bench::bench(a),
        Command::FuzzDiff(a) => cli::bench::fuzz_diff(a),
        Command::Emit(a) => cli::emit::emit(a),
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            // Not `eprintln!`, which panics when stderr is a closed pipe.
            let _ = writeln!(std::io::stderr(), "error: {message}");
            ExitCode::from(1)
        }
    }
}
