//! `asm`, `dis` and `check`: the assembler front half on the command line.

use super::output::print;
use super::{report_diagnostics, CliResult, EncodingArg};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use wave_isa::analysis::KernelInfo;
use wave_isa::asm::assemble;
use wave_isa::disasm::{disassemble, DisasmOptions};
use wave_isa::module::{listing_encoding, load_bytes_with, read_kernel_file, LoadErrorKind};
use wave_isa::wbin::{self, WbinFile};
use wave_isa::{Encoding, EncodingChoice};

#[derive(Args, Debug)]
pub struct AsmArgs {
    /// The assembly source to assemble (.wave)
    #[arg(value_name = "IN.wave")]
    pub input: PathBuf,
    /// Where to write the binary [default: IN with the extension .wbin]
    #[arg(short, long, value_name = "OUT.wbin")]
    pub output: Option<PathBuf>,
    /// Leave out the symbol table: kernels are then nameless (loaders call them kernel_0, kernel_1, ...)
    #[arg(long)]
    pub strip: bool,
}

#[derive(Args, Debug)]
pub struct DisArgs {
    /// The binary to disassemble (.wbin); a .wave source is assembled first
    #[arg(value_name = "IN.wbin")]
    pub input: PathBuf,
    /// Put each instruction's byte offset (relative to its kernel) in a comment after it
    #[arg(long)]
    pub offsets: bool,
    /// Instruction encoding of the binary's code; `auto` recognises binaries of the
    /// crates.io 0.1.2 wave-asm / wave-compiler by decoding (the listing is always in today's
    /// dialect)
    #[arg(long, value_enum, default_value_t)]
    pub encoding: EncodingArg,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The file to check: a .wbin binary or a .wave source (told apart by the `WAVE` magic)
    #[arg(value_name = "IN.wave|IN.wbin")]
    pub input: PathBuf,
    /// Instruction encoding of the binary's code (see `dis --help`)
    #[arg(long, value_enum, default_value_t)]
    pub encoding: EncodingArg,
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    read_kernel_file(path).map_err(|e| match e.kind {
        LoadErrorKind::Io(e) => format!("cannot read `{}`: {e}", path.display()),
        _ => e.to_string(),
    })
}

/// Assemble a source file, printing warnings (and errors) to stderr.
fn assemble_file(path: &Path, bytes: &[u8]) -> Result<WbinFile, String> {
    let name = path.display().to_string();
    let source = std::str::from_utf8(bytes)
        .map_err(|e| format!("`{name}` is not UTF-8 text (invalid byte at offset {})", e.valid_up_to()))?;
    match assemble(source, &name) {
        Ok(a) => {
            for w in &a.warnings {
                eprintln!("{w}\n");
            }
            Ok(a.file)
        }
        Err(d) => Err(report_diagnostics(&name, &d)),
    }
}

pub fn asm(args: AsmArgs) -> CliResult {
    let bytes = read(&args.input)?;
    if bytes.starts_with(&wbin::MAGIC) {
        return Err(format!("`{}` is already a .wbin binary (it starts with `WAVE`)", args.input.display()));
    }
    let file = assemble_file(&args.input, &bytes)?;
    let output = args.output.unwrap_or_else(|| args.input.with_extension("wbin"));
    if output == args.input {
        return Err(format!("refusing to overwrite the source `{}`: pass -o OUT.wbin", args.input.display()));
    }
    std::fs::write(&output, wbin::write(&file, args.strip))
        .map_err(|e| format!("cannot write `{}`: {e}", output.display()))?;
    Ok(ExitCode::SUCCESS)
}

pub fn dis(args: DisArgs) -> CliResult {
    let bytes = read(&args.input)?;
    let name = args.input.display();
    let choice = EncodingChoice::from(args.encoding);
    let file = if bytes.starts_with(&wbin::MAGIC) {
        let mut file = wbin::parse(&bytes).map_err(|e| format!("`{name}`: {e}"))?;
        file.encoding = listing_encoding(&file, choice);
        file
    } else if std::str::from_utf8(&bytes).is_ok() {
        if let EncodingChoice::Force(encoding @ Encoding::Legacy012) = choice {
            return Err(format!("`{name}`: {}", LoadErrorKind::EncodingOfSource(encoding)));
        }
        assemble_file(&args.input, &bytes)?
    } else {
        // Binary data without the magic: say what it is not, not that it is bad text.
        return Err(format!("`{name}`: {}", not_wave_file(&bytes)));
    };
    let text =
        disassemble(&file, DisasmOptions { offsets: args.offsets }).map_err(|e| format!("`{name}`: {e}"))?;
    print(&text)?;
    Ok(ExitCode::SUCCESS)
}

fn not_wave_file(bytes: &[u8]) -> String {
    let invalid_at = std::str::from_utf8(bytes).err().map_or(bytes.len(), |e| e.valid_up_to());
    LoadErrorKind::NotWaveFile { start: bytes.iter().take(4).copied().collect(), invalid_at }.to_string()
}

pub fn check(args: CheckArgs) -> CliResult {
    let bytes = read(&args.input)?;
    let name = args.input.display().to_string();
    let (module, file) = load_bytes_with(&bytes, &name, args.encoding.into()).map_err(|e| match &e.kind {
        LoadErrorKind::Assemble(d) => report_diagnostics(&name, d),
        _ => format!("`{name}` is not valid: {e}"),
    })?;
    let infos: Vec<&KernelInfo> = module.kernels.iter().map(|k| k.info()).collect();
    print(&info_table(&infos))?;
    let n = infos.len();
    let encoding = match file.encoding {
        Encoding::Current => String::new(),
        other => format!(" (code in {})", other.describe()),
    };
    print(&format!("{name}: ok, {n} kernel{}{encoding}\n", if n == 1 { "" } else { "s" }))?;
    Ok(ExitCode::SUCCESS)
}

/// One aligned row per kernel.
fn info_table(infos: &[&KernelInfo]) -> String {
    let yes = |b: bool| if b { "yes" } else { "-" }.to_string();
    let header = [
        "kernel",
        "registers",
        "local mem",
        "workgroup",
        "instrs",
        "depth",
        "barriers",
        "atomics",
        "wave ops",
        "f16/bf16",
        "f64",
        "mma",
        "calls",
        "inlined",
    ];
    let rows: Vec<Vec<String>> = infos
        .iter()
        .map(|k| {
            let [x, y, z] = k.workgroup_size;
            vec![
                k.name.clone(),
                k.registers.to_string(),
                k.local_memory.to_string(),
                if k.workgroup_size == [0; 3] { "runtime".to_string() } else { format!("{x}x{y}x{z}") },
                k.instruction_count.to_string(),
                k.max_nesting_depth.to_string(),
                yes(k.uses_barriers),
                yes(k.uses_atomics),
                yes(k.uses_wave_ops),
                yes(k.uses_f16_bf16),
                yes(k.uses_f64),
                yes(k.uses_mma),
                yes(k.uses_calls),
                k.inlined_instructions.to_string(),
            ]
        })
        .collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|c| rows.iter().map(|r| r[c].chars().count()).chain([header[c].len()]).max().unwrap_or(0))
        .collect();
    let line = |cells: &[String]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .enumerate()
            // Names left-aligned, everything else right-aligned.
            .map(|(i, (c, &w))| if i == 0 { format!("{c:<w$}") } else { format!("{c:>w$}") })
            .collect();
        format!("{}\n", padded.join("  ").trim_end())
    };
    let mut out = line(&header.map(str::to_string));
    for r in &rows {
        out.push_str(&line(r));
    }
    out
}
