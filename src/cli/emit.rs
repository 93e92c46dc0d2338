//! `emit`: write PTX, HIP, SYCL or Metal source for the kernels of a .wave or .wbin file.

use super::CliResult;
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;
use wave_gpu_backends::{write_module, Options, Target};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TargetArg {
    /// PTX assembly for NVIDIA (sm_75 and later), wave width 32
    Ptx,
    /// HIP C++ for AMD (hipcc / clang), wave width = warpSize
    Hip,
    /// SYCL 2020 C++ free-function kernel (oneAPI DPC++), sub-group size W
    Sycl,
    /// Metal Shading Language for Apple GPUs, SIMD-group width 32 (no f64)
    Metal,
}

impl From<TargetArg> for Target {
    fn from(t: TargetArg) -> Target {
        match t {
            TargetArg::Ptx => Target::Ptx,
            TargetArg::Hip => Target::Hip,
            TargetArg::Sycl => Target::Sycl,
            TargetArg::Metal => Target::Metal,
        }
    }
}

#[derive(Args, Debug)]
pub struct EmitArgs {
    /// The GPU language to write
    #[arg(long, value_enum)]
    pub target: TargetArg,
    /// The kernels to translate: a .wave source or a .wbin binary
    #[arg(value_name = "IN")]
    pub input: PathBuf,
    /// Where to write the source [default: standard output]
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Translate only this kernel (name, or index in the file) [default: every kernel]
    #[arg(long, value_name = "K")]
    pub kernel: Option<String>,
    /// Wave width the generated code must run at; the target must provide it (PTX and Metal: 32;
    /// HIP: 32 or 64, default warpSize; SYCL: 4, 8, 16, 32 or 64, default 32)
    #[arg(long, value_name = "W")]
    pub wave_width: Option<u32>,
    /// Local memory bytes for kernels whose metadata says 0 [default: 16384]
    #[arg(long, value_name = "BYTES")]
    pub local_memory: Option<u32>,
    /// Instruction encoding of a binary's code (see `dis --help`)
    #[arg(long, value_enum, default_value_t)]
    pub encoding: super::EncodingArg,
}

pub fn emit(args: EmitArgs) -> CliResult {
    let (module, _) = super::load(&args.input, args.encoding)?;
    let kernels = match &args.kernel {
        Some(selector) => vec![module.kernel(selector).map_err(|e| e.to_string())?],
        None => module.kernels.iter().collect(),
    };
    if kernels.is_empty() {
        return Err(format!("`{}` has no kernel", args.input.display()));
    }
    let opts = Options { wave_width: args.wave_width, local_memory: args.local_memory, entry_name: None };
    let pairs: Vec<_> = kernels.iter().map(|k| (*k, &opts)).collect();
    let text = write_module(&pairs, args.target.into()).map_err(|e| e.to_string())?;
    match &args.output {
        Some(path) => {
            std::fs::write(path, text).map_err(|e| format!("cannot write `{}`: {e}", path.display()))?
        }
        None => super::output::print(&text)?,
    }
    Ok(ExitCode::SUCCESS)
}
