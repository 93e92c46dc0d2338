//! `run` (a drop-in for wave-emu: same flags, same dumps, same `--stats` text) and `info`.

use super::CliResult;
use clap::Args;
use std::fmt::Write as _;
use std::io::{IsTerminal, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;
use wave_jit::EngineKind;
use wave_runtime::{caps, Device, Dispatch, Engine, Interpreter};

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The kernel file: a .wbin binary or .wave assembly source
    #[arg(value_name = "FILE.wave|FILE.wbin")]
    pub file: PathBuf,
    /// Number of workgroups
    #[arg(long, value_name = "X,Y,Z", default_value = "1,1,1")]
    pub grid: String,
    /// Threads per workgroup (a kernel's .workgroup_size replaces it)
    #[arg(long, value_name = "X,Y,Z", default_value = "32,1,1")]
    pub workgroup: String,
    /// Registers per thread (a kernel's non-zero register count replaces it)
    #[arg(long, default_value_t = 32)]
    pub registers: u32,
    /// Local memory bytes per workgroup (a kernel's .local_memory replaces it)
    #[arg(long, value_name = "BYTES", default_value_t = caps::DEFAULT_LOCAL_MEMORY)]
    pub local_memory: u32,
    /// Device memory bytes (at most 4 GiB)
    #[arg(long, value_name = "BYTES", default_value_t = caps::DEFAULT_DEVICE_MEMORY)]
    pub device_memory: u64,
    /// Copy a file's bytes into device memory at OFFSET (decimal or 0x hex)
    #[arg(long, value_name = "OFFSET:FILE")]
    pub arg: Vec<String>,
    /// Not implemented (as wave-emu): prints a notice
    #[arg(long)]
    pub dump_regs: bool,
    /// Hex dump of device memory [START, END) after the run
    #[arg(long, value_name = "START:END")]
    pub dump_memory: Option<String>,
    /// Print execution statistics
    #[arg(long)]
    pub stats: bool,
    /// Print each executed wave-instruction to stderr
    #[arg(long)]
    pub trace: bool,
    /// Lanes per wave: 4, 8, 16, 32 or 64
    #[arg(long, default_value_t = caps::WAVE_WIDTH)]
    pub wave_width: u32,
    /// Wave-instructions per workgroup before the run stops (0 = unlimited)
    #[arg(long, default_value_t = 10_000_000)]
    pub max_instructions: u64,
    /// Initial value of register REG in every thread (kernel arguments), e.g. 0:4096
    #[arg(long, value_name = "REG:VALUE")]
    pub set_reg: Vec<String>,
    /// Fill memory with f32 values 0, SCALE, 2*SCALE, ... (TYPE is ignored)
    #[arg(long, value_name = "OFFSET:TYPE:COUNT[:SCALE]")]
    pub fill_iota: Vec<String>,
    /// Zero COUNT 4-byte words (TYPE is ignored)
    #[arg(long, value_name = "OFFSET:TYPE:COUNT")]
    pub fill_zero: Vec<String>,
    /// Print COUNT f32 values from device memory, one per line
    #[arg(long, value_name = "OFFSET:COUNT")]
    pub dump_f32: Option<String>,
    /// Print COUNT u32 values (decimal) from device memory, one per line
    #[arg(long, value_name = "OFFSET:COUNT")]
    pub dump_u32: Option<String>,
    /// Print COUNT f16 values from device memory, one per line
    #[arg(long, value_name = "OFFSET:COUNT")]
    pub dump_f16: Option<String>,
    /// Print COUNT bf16 values from device memory, one per line
    #[arg(long, value_name = "OFFSET:COUNT")]
    pub dump_bf16: Option<String>,
    /// The kernel to run, by name or index [default: the first]
    #[arg(long, value_name = "NAME|INDEX")]
    pub kernel: Option<String>,
    /// Execution engine [default: jit; with --stats or --trace: interp, whose counters and
    /// trace are complete (the JIT counts only workgroups and waves)]
    #[arg(long, value_name = "interp|jit")]
    pub engine: Option<String>,
    /// Write LEN bytes of device memory at OFFSET to FILE after the run
    #[arg(long, value_name = "OFFSET:LEN:FILE")]
    pub out: Vec<String>,
    /// JIT worker threads (0 = all cores); the interpreter is single-threaded
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// JIT only: drop memory bounds checks
    #[arg(long)]
    pub unchecked: bool,
}

/// A number in decimal or `0x` hex, as wave-emu accepts offsets and register values.
fn parse_number(s: &str) -> Result<u64, String> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).map_err(|e| format!("invalid hex offset: {e}")),
        None => s.parse::<u64>().map_err(|e| format!("invalid offset: {e}")),
    }
}

fn parse_dimensions(flag: &str, s: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.len() != 3 {
        return Err(format!("invalid --{flag}: expected 3 comma-separated values, got {}", parts.len()));
    }
    let mut dims = [0u32; 3];
    for (d, (part, axis)) in dims.iter_mut().zip(parts.iter().zip(["x", "y", "z"])) {
        *d = part.parse().map_err(|e| format!("invalid --{flag}: invalid {axis}: {e}"))?;
    }
    Ok(dims)
}

/// `A:B` split once (the second part may contain colons, e.g. a path).
fn split2<'a>(flag: &str, spec: &'a str, form: &str) -> Result<(&'a str, &'a str), String> {
    spec.split_once(':').ok_or_else(|| format!("--{flag} expects {form}, got '{spec}'"))
}

fn parse_set_reg(spec: &str) -> Result<(u8, u32), String> {
    let (reg, value) = split2("set-reg", spec, "REG:VALUE")?;
    let reg = reg.parse::<u8>().map_err(|e| format!("invalid --set-reg: invalid register: {e}"))?;
    let value = parse_number(value).map_err(|e| format!("invalid --set-reg: {e}"))?;
    Ok((reg, value as u32))
}

/// Memory initialisation in wave-emu's fixed order: fill-zero, fill-iota, then arg files.
fn init_memory(args: &RunArgs, device: &mut Device) -> Result<(), String> {
    for spec in &args.fill_zero {
        let parts: Vec<&str> = spec.split(':').collect();
        if parts.len() != 3 {
            return Err(format!("--fill-zero expects OFFSET:TYPE:COUNT, got '{spec}'"));
        }
        let offset = parse_number(parts[0]).map_err(|e| format!("--fill-zero offset: {e}"))?;
        let count = parts[2].parse::<u64>().map_err(|e| format!("--fill-zero count: {e}"))?;
        let len = count.checked_mul(4).ok_or("--fill-zero count too large")?;
        let bytes = vec![0u8; usize::try_from(len).map_err(|_| "--fill-zero count too large")?];
        device.write(offset, &bytes).map_err(|e| e.to_string())?;
    }
    for spec in &args.fill_iota {
        let parts: Vec<&str> = spec.split(':').collect();
        if !(3..=4).contains(&parts.len()) {
            return Err(format!("--fill-iota expects OFFSET:TYPE:COUNT[:SCALE], got '{spec}'"));
        }
        let offset = parse_number(parts[0]).map_err(|e| format!("--fill-iota offset: {e}"))?;
        let count = parts[2].parse::<usize>().map_err(|e| format!("--fill-iota count: {e}"))?;
        let scale = match parts.get(3) {
            Some(s) => s.parse::<f32>().map_err(|e| format!("--fill-iota scale: {e}"))?,
            None => 1.0,
        };
        let bytes: Vec<u8> = (0..count).flat_map(|i| (i as f32 * scale).to_le_bytes()).collect();
        device.write(offset, &bytes).map_err(|e| e.to_string())?;
    }
    for spec in &args.arg {
        let (offset, path) =
            split2("arg", spec, "OFFSET:FILE").map_err(|_| "invalid --arg: expected format OFFSET:FILE")?;
        let offset = parse_number(offset).map_err(|e| format!("invalid --arg: {e}"))?;
        let bytes = std::fs::read(path).map_err(|e| format!("failed to open {path}: {e}"))?;
        device.write(offset, &bytes).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// wave-emu's hex dump: address, 16 bytes in two groups of 8, then the printable characters.
fn hex_dump(out: &mut String, data: &[u8], base: u64) {
    for (i, chunk) in data.chunks(16).enumerate() {
        let _ = write!(out, "{:08x}: ", base + i as u64 * 16);
        for (j, byte) in chunk.iter().enumerate() {
            if j == 8 {
                out.push(' ');
            }
            let _ = write!(out, "{byte:02x} ");
        }
        for _ in chunk.len()..16 {
            out.push_str("   ");
        }
        if chunk.len() <= 8 {
            out.push(' ');
        }
        out.push_str(" |");
        for &byte in chunk {
            out.push(if byte.is_ascii_graphic() || byte == b' ' { byte as char } else { '.' });
        }
        out.push_str("|\n");
    }
}

/// One `--dump-*` flag: `OFFSET:COUNT` values of `size` bytes, one per line.
fn dump_values(
    out: &mut String,
    device: &Device,
    flag: &str,
    spec: &str,
    size: u64,
    show: impl Fn(&[u8]) -> String,
) -> Result<(), String> {
    let (offset, count) = split2(flag, spec, "OFFSET:COUNT")?;
    let offset = parse_number(offset).map_err(|e| format!("--{flag} offset: {e}"))?;
    let count = count.parse::<u64>().map_err(|e| format!("--{flag} count: {e}"))?;
    let len = count.checked_mul(size).ok_or_else(|| format!("--{flag} count too large"))?;
    let data = device.read(offset, len).map_err(|e| e.to_string())?;
    for value in data.chunks(size as usize) {
        out.push_str(&show(value));
        out.push('\n');
    }
    Ok(())
}

/// Everything printed to stdout after a successful run, built first so that a failing dump
/// prints nothing (as wave-emu, which fails before printing).
fn dumps(args: &RunArgs, device: &Device) -> Result<String, String> {
    let mut out = String::new();
    if let Some(range) = &args.dump_memory {
        let (start, end) = split2("dump-memory", range, "START:END")
            .map_err(|_| "invalid --dump-memory: expected format START:END".to_string())?;
        let start = parse_number(start).map_err(|e| format!("invalid --dump-memory: {e}"))?;
        let end = parse_number(end).map_err(|e| format!("invalid --dump-memory: {e}"))?;
        if end <= start {
            return Err("invalid --dump-memory: END must be greater than START".into());
        }
        let data = device.read(start, end - start).map_err(|e| e.to_string())?;
        let _ = writeln!(out, "Device memory 0x{start:08x}-0x{end:08x}:");
        hex_dump(&mut out, data, start);
    }
    let f32_of = |b: &[u8]| format!("{:?}", f32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    let u32_of = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]).to_string();
    let f16_of = |b: &[u8]| {
        format!("{:?}", wave_runtime::semantics::f16_to_f32(u16::from_le_bytes([b[0], b[1]]) as u32))
    };
    let bf16_of = |b: &[u8]| {
        format!("{:?}", wave_runtime::semantics::bf16_to_f32(u16::from_le_bytes([b[0], b[1]]) as u32))
    };
    if let Some(spec) = &args.dump_f32 {
        dump_values(&mut out, device, "dump-f32", spec, 4, f32_of)?;
    }
    if let Some(spec) = &args.dump_u32 {
        dump_values(&mut out, device, "dump-u32", spec, 4, u32_of)?;
    }
    if let Some(spec) = &args.dump_f16 {
        dump_values(&mut out, device, "dump-f16", spec, 2, f16_of)?;
    }
    if let Some(spec) = &args.dump_bf16 {
        dump_values(&mut out, device, "dump-bf16", spec, 2, bf16_of)?;
    }
    Ok(out)
}

/// `--out OFFSET:LEN:FILE`: write device bytes to files.
fn write_outputs(args: &RunArgs, device: &Device) -> Result<(), String> {
    for spec in &args.out {
        let mut parts = spec.splitn(3, ':');
        let (Some(offset), Some(len), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(format!("--out expects OFFSET:LEN:FILE, got '{spec}'"));
        };
        let offset = parse_number(offset).map_err(|e| format!("--out offset: {e}"))?;
        let len = parse_number(len).map_err(|e| format!("--out length: {e}"))?;
        let data = device.read(offset, len).map_err(|e| e.to_string())?;
        std::fs::write(path, data).map_err(|e| format!("cannot write {path}: {e}"))?;
    }
    Ok(())
}

pub fn run(args: RunArgs) -> CliResult {
    let dispatch = Dispatch {
        grid: parse_dimensions("grid", &args.grid)?,
        workgroup: parse_dimensions("workgroup", &args.workgroup)?,
        wave_width: args.wave_width,
        registers: args.registers,
        local_memory: args.local_memory,
        initial_registers: args.set_reg.iter().map(|s| parse_set_reg(s)).collect::<Result<_, _>>()?,
        max_instructions: args.max_instructions,
        threads: args.threads,
        unchecked: args.unchecked,
    };
    let default_engine = if args.stats || args.trace { "interp" } else { "jit" };
    let engine: Box<dyn Engine> = match args.engine.as_deref().unwrap_or(default_engine).parse()? {
        EngineKind::Interpreter if args.trace => {
            Box::new(Interpreter::with_trace(Box::new(std::io::BufWriter::new(std::io::stderr()))))
        }
        EngineKind::Interpreter => Box::new(Interpreter::new()),
        EngineKind::Jit if args.trace => {
            return Err("unsupported: --trace with --engine jit (use --engine interp)".into())
        }
        EngineKind::Jit => Box::new(wave_jit_codegen::jit_engine()),
    };
    let (module, _) = wave_isa::module::load_file(&args.file).map_err(|e| e.to_string())?;
    let kernel = match &args.kernel {
        Some(selector) => module.kernel(selector).map_err(|e| e.to_string())?,
        None => module
            .kernels
            .first()
            .ok_or_else(|| format!("{}: the file has no kernels", args.file.display()))?,
    };
    let mut device = Device::new(args.device_memory).map_err(|e| e.to_string())?;
    init_memory(&args, &mut device)?;

    let started = Instant::now();
    let stats = engine.run(kernel, &dispatch, &mut device).map_err(|e| e.to_string())?;
    let elapsed = started.elapsed();

    if args.dump_regs {
        eprintln!("Register dumps not implemented for multi-wave execution");
    }
    let mut out = dumps(&args, &device)?;
    write_outputs(&args, &device)?;
    if args.stats {
        let _ = write!(out, "{stats}");
    }
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| format!("cannot write output: {e}"))?;
    if std::io::stderr().is_terminal() {
        let compiled =
            if engine.name() == "jit" { jit_compile_text(kernel, &dispatch, &device) } else { String::new() };
        eprintln!(
            "wave-jit: kernel `{}` on {}: {} workgroups, {} wave-instructions in {:.3} ms{compiled}",
            kernel.meta.name,
            engine.name(),
            stats.workgroups,
            stats.instructions,
            elapsed.as_secs_f64() * 1e3
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The JIT's compile times for the summary line: until the first code, and until the
/// optimized code of a kernel compiled in two tiers took over (if it has by now).
fn jit_compile_text(kernel: &wave_isa::Kernel, dispatch: &Dispatch, device: &Device) -> String {
    let Ok(code) = wave_jit_codegen::jit_engine().code_for(kernel, dispatch, device) else {
        return String::new();
    };
    use wave_jit_codegen::Tiers;
    let first = code.compile_time.as_secs_f64() * 1e3;
    match code.tiers() {
        Tiers::One => format!(" (compiled in {first:.2} ms)"),
        Tiers::OptimizedAfter(t) => format!(
            " (first code compiled in {first:.2} ms, quick tier; the optimized code took over after {:.2} ms)",
            t.as_secs_f64() * 1e3
        ),
        Tiers::Pending => format!(" (compiled in {first:.2} ms, quick tier; the optimized code was not ready)"),
        Tiers::QuickOnly(why) => format!(" (compiled in {first:.2} ms, quick tier only: {why})"),
    }
}

#[derive(Args, Debug)]
pub struct InfoArgs {}

pub fn info(_args: InfoArgs) -> CliResult {
    let mut out = String::from("wave-jit device capabilities (interpreter and JIT answer the same)\n");
    for (name, value) in caps::all() {
        let _ = writeln!(out, "  {name:<22} {value}");
    }
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}
