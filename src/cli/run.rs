//! `run` (a drop-in for wave-emu: same flags, same dumps, same `--stats` text, plus the
//! `--memory-file` and `--reg` the Python SDK passes) and `info`. Flag values are parsed in
//! `run_flags`, the output is written by `run_output`.

use super::memory_file::MemoryFile;
use super::{output, run_flags, run_output, CliResult};
use clap::Args;
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;
use wave_isa::module::{read_at_most, ReadError};
use wave_jit::EngineKind;
use wave_runtime::{
    caps, CompileReport, Device, Dispatch, DispatchError, Engine, Interpreter, RunError, RunErrorKind,
    RunReport, Stats, Tiers,
};

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The kernel file: a .wbin binary or .wave assembly source
    #[arg(value_name = "FILE.wave|FILE.wbin")]
    pub file: PathBuf,
    /// Number of workgroups (a zero runs nothing, with a warning)
    #[arg(long, value_name = "X,Y,Z", default_value = "1,1,1", value_parser = run_flags::dimensions)]
    pub grid: [u32; 3],
    /// Threads per workgroup (a kernel's .workgroup_size replaces it)
    #[arg(long, value_name = "X,Y,Z", default_value = "32,1,1", value_parser = run_flags::dimensions)]
    pub workgroup: [u32; 3],
    /// Registers per thread (a kernel's non-zero register count replaces it)
    #[arg(long, default_value_t = 32)]
    pub registers: u32,
    /// Local memory bytes per workgroup (a kernel's .local_memory replaces it)
    #[arg(long, value_name = "BYTES", default_value_t = caps::DEFAULT_LOCAL_MEMORY)]
    pub local_memory: u32,
    /// Device memory bytes (at most 4 GiB; at least the --memory-file's size)
    #[arg(long, value_name = "BYTES", default_value_t = caps::DEFAULT_DEVICE_MEMORY)]
    pub device_memory: u64,
    /// Device memory from offset 0 is read from PATH before the run and written back to it
    /// after a successful run (on error PATH is left unchanged)
    #[arg(long, value_name = "PATH")]
    pub memory_file: Option<PathBuf>,
    /// Copy a file's bytes into device memory at OFFSET (decimal or 0x hex)
    #[arg(long, value_name = "OFFSET:FILE", value_parser = run_flags::arg_file)]
    pub arg: Vec<run_flags::ArgFile>,
    /// Not implemented (as wave-emu): prints a notice
    #[arg(long)]
    pub dump_regs: bool,
    /// Hex dump of device memory [START, END) after the run
    #[arg(long, value_name = "START:END", value_parser = run_flags::memory_range)]
    pub dump_memory: Option<run_flags::MemoryRange>,
    /// Print execution statistics (after the dumps)
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
    /// Initial value of register REG in every thread (kernel arguments), e.g. 0:4096; --reg
    /// 0=4096 is the same. A register beyond the kernel's count is ignored, with a warning
    #[arg(long, visible_alias = "reg", value_name = "REG:VALUE", value_parser = run_flags::register_init)]
    pub set_reg: Vec<run_flags::RegisterInit>,
    /// Fill memory with f32 values 0, SCALE, 2*SCALE, ... (TYPE is ignored)
    #[arg(long, value_name = "OFFSET:TYPE:COUNT[:SCALE]", value_parser = run_flags::fill_iota)]
    pub fill_iota: Vec<run_flags::FillIota>,
    /// Zero COUNT 4-byte words (TYPE is ignored)
    #[arg(long, value_name = "OFFSET:TYPE:COUNT", value_parser = run_flags::fill_zero)]
    pub fill_zero: Vec<run_flags::FillZero>,
    /// Print COUNT f32 values from device memory, one per line
    #[arg(long, value_name = "OFFSET:COUNT", value_parser = run_flags::dump_values)]
    pub dump_f32: Option<run_flags::DumpValues>,
    /// Print COUNT u32 values (decimal) from device memory, one per line
    #[arg(long, value_name = "OFFSET:COUNT", value_parser = run_flags::dump_values)]
    pub dump_u32: Option<run_flags::DumpValues>,
    /// Print COUNT f16 values from device memory, one per line
    #[arg(long, value_name = "OFFSET:COUNT", value_parser = run_flags::dump_values)]
    pub dump_f16: Option<run_flags::DumpValues>,
    /// Print COUNT bf16 values from device memory, one per line
    #[arg(long, value_name = "OFFSET:COUNT", value_parser = run_flags::dump_values)]
    pub dump_bf16: Option<run_flags::DumpValues>,
    /// The kernel to run, by name or index [default: the first]
    #[arg(long, value_name = "NAME|INDEX")]
    pub kernel: Option<String>,
    /// Execution engine [default: jit; with --trace: interp (the JIT does not trace)]
    #[arg(long, value_name = "interp|jit", value_parser = ["interp", "jit"])]
    pub engine: Option<String>,
    /// Write LEN bytes of device memory at OFFSET to FILE after the run
    #[arg(long, value_name = "OFFSET:LEN:FILE", value_parser = run_flags::out_file)]
    pub out: Vec<run_flags::OutFile>,
    /// JIT worker threads (0 = all cores); the interpreter is single-threaded
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// JIT only: pin each worker thread to a core of its own (with more than one thread)
    #[arg(long)]
    pub pin_threads: bool,
    /// JIT only: drop memory bounds checks
    #[arg(long)]
    pub unchecked: bool,
    /// JIT only: always run the JIT's code. Without it, a dispatch too small to be worth a
    /// compile runs on the interpreter (its exact twin), and so does a kernel the JIT declines
    /// (with a note); with it, the small dispatch is compiled and the declined kernel fails
    /// with the JIT's reason. For checking the JIT itself (`fuzz-diff` prints it)
    #[arg(long)]
    pub no_fallback: bool,
    /// Instruction encoding of a binary's code (`auto` also runs binaries of the crates.io
    /// 0.1.2 wave-asm / wave-compiler, as wave-emu 0.1.2 runs them)
    #[arg(long, value_enum, default_value_t)]
    pub encoding: super::EncodingArg,
}

/// Memory initialisation: the --memory-file, then wave-emu's fixed order: fill-zero,
/// fill-iota, then arg files.
fn init_memory(args: &RunArgs, memory_file: Option<&MemoryFile>, device: &mut Device) -> Result<(), String> {
    if let Some(file) = memory_file {
        file.load_into(device)?;
    }
    for fill in &args.fill_zero {
        let len = fill.words.checked_mul(4).ok_or("--fill-zero count too large")?;
        let bytes = vec![0u8; usize::try_from(len).map_err(|_| "--fill-zero count too large")?];
        device.write(fill.offset, &bytes).map_err(|e| e.to_string())?;
    }
    for fill in &args.fill_iota {
        let count = usize::try_from(fill.count).map_err(|_| "--fill-iota count too large")?;
        let bytes: Vec<u8> = (0..count).flat_map(|i| (i as f32 * fill.scale).to_le_bytes()).collect();
        device.write(fill.offset, &bytes).map_err(|e| e.to_string())?;
    }
    for arg in &args.arg {
        let (offset, path) = (arg.offset, &arg.path);
        // What fits from the offset to the end of device memory: a larger file is refused by
        // its size (a stream once that much came), before it is all in memory.
        let room = device.size().saturating_sub(offset);
        let bytes = read_at_most(path, room).map_err(|e| match e {
            ReadError::Io(e) => format!("failed to open {}: {e}", path.display()),
            ReadError::TooLarge { size: Some(size) } => format!(
                "--arg {}: {size} bytes do not fit at offset 0x{offset:x} of device memory \
                 ({room} bytes from there to its end; --device-memory sets its size)",
                path.display()
            ),
            ReadError::TooLarge { size: None } => format!(
                "--arg {}: not a regular file, and more than the {room} bytes from offset \
                 0x{offset:x} to the end of device memory",
                path.display()
            ),
        })?;
        device.write(offset, &bytes).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The initial registers that exist in `kernel`'s threads. wave-emu ignores the others, and so
/// do we, with a warning (as for values that do not fit 32 bits).
fn initial_registers(args: &RunArgs, kernel: &wave_isa::Kernel, dispatch: &Dispatch) -> Vec<(u8, u32)> {
    let registers = dispatch.registers_for(kernel);
    let mut kept = Vec::new();
    for init in &args.set_reg {
        if init.truncated {
            output::warn(&format!(
                "--set-reg r{}: the value does not fit 32 bits; r{0} gets its low 32 bits (0x{:08x}), as in wave-emu",
                init.register, init.value
            ));
        }
        if u32::from(init.register) < registers {
            kept.push((init.register, init.value));
        } else {
            output::warn(&format!(
                "--set-reg r{} ignored: kernel `{}` has {registers} registers (r0..r{})",
                init.register,
                kernel.meta.name,
                registers.saturating_sub(1)
            ));
        }
    }
    kept
}

/// A grid or workgroup with a zero dimension runs nothing; wave-emu then succeeds, and so do
/// we, with a warning, after checking the rest of the dispatch. Returns the counters wave-emu
/// prints for it (every workgroup of an empty workgroup "executes", with no waves).
fn empty_dispatch(
    kernel: &wave_isa::ValidKernel,
    dispatch: &Dispatch,
    device: &Device,
) -> Result<Option<Stats>, String> {
    let workgroup = dispatch.workgroup_for(kernel);
    let (grid, empty_grid, empty_workgroup) =
        (dispatch.grid, dispatch.grid.contains(&0), workgroup.contains(&0));
    if !empty_grid && !empty_workgroup {
        return Ok(None);
    }
    let checked = Dispatch { grid: [1; 3], workgroup: [1; 3], ..dispatch.clone() };
    match wave_runtime::resolve(kernel, &checked, device) {
        // Only a metadata workgroup size with a zero gets here: it is the empty one.
        Ok(_) | Err(DispatchError::EmptyWorkgroup { .. }) => {}
        Err(e) => return Err(RunError::before_run(&kernel.meta.name, RunErrorKind::Dispatch(e)).to_string()),
    }
    let what = if empty_grid {
        format!("grid {},{},{} has no workgroups", grid[0], grid[1], grid[2])
    } else {
        format!("workgroup {},{},{} has no threads", workgroup[0], workgroup[1], workgroup[2])
    };
    output::warn(&format!("{what}: kernel `{}` runs nothing", kernel.meta.name));
    let workgroups = if empty_grid { 0 } else { grid.iter().map(|&v| u64::from(v)).product() };
    Ok(Some(Stats { workgroups, ..Stats::default() }))
}

pub fn run(args: RunArgs) -> CliResult {
    let mut dispatch = Dispatch {
        grid: args.grid,
        workgroup: args.workgroup,
        wave_width: args.wave_width,
        registers: args.registers,
        local_memory: args.local_memory,
        initial_registers: Vec::new(),
        max_instructions: args.max_instructions,
        threads: args.threads,
        pin_workers: args.pin_threads,
        unchecked: args.unchecked,
    };
    let default_engine = if args.trace { "interp" } else { "jit" };
    let engine: Box<dyn Engine> = match args.engine.as_deref().unwrap_or(default_engine).parse()? {
        EngineKind::Interpreter if args.no_fallback => {
            return Err("unsupported: --no-fallback with the interpreter (--engine interp, or --trace)".into())
        }
        EngineKind::Interpreter if args.trace => {
            Box::new(Interpreter::with_trace(Box::new(std::io::BufWriter::new(std::io::stderr()))))
        }
        EngineKind::Interpreter => Box::new(Interpreter::new()),
        EngineKind::Jit if args.trace => {
            return Err("unsupported: --trace with --engine jit (use --engine interp)".into())
        }
        EngineKind::Jit => {
            // Strict: declined kernels fail, small dispatches compile (no interpreter twin).
            let jit = if args.no_fallback {
                wave_jit_codegen::JitEngine::strict()
            } else {
                wave_jit_codegen::jit_engine()
            };
            Box::new(jit.with_stats(args.stats))
        }
    };
    let (module, _) = super::load(&args.file, args.encoding)?;
    let kernel = match &args.kernel {
        Some(selector) => module.kernel(selector).map_err(|e| e.to_string())?,
        None => module
            .kernels
            .first()
            .ok_or_else(|| format!("{}: the file has no kernels", args.file.display()))?,
    };
    dispatch.initial_registers = initial_registers(&args, kernel, &dispatch);
    let memory_file = args.memory_file.as_deref().map(MemoryFile::read).transpose()?;
    let device_size = args.device_memory.max(memory_file.as_ref().map_or(0, MemoryFile::size));
    let mut device = Device::new(device_size).map_err(|e| e.to_string())?;
    init_memory(&args, memory_file.as_ref(), &mut device)?;

    let started = Instant::now();
    let (report, ran) = match empty_dispatch(kernel, &dispatch, &device)? {
        Some(stats) => (RunReport { stats, ..RunReport::default() }, false),
        None => (engine.run(kernel, &dispatch, &mut device).map_err(|e| e.to_string())?, true),
    };
    let stats = &report.stats;
    let elapsed = started.elapsed();

    if args.dump_regs {
        eprintln!("Register dumps not implemented for multi-wave execution");
    }
    let out = run_output::stdout_text(&args, &device, stats)?;
    run_output::write_out_files(&args, &device)?;
    if let Some(file) = &memory_file {
        file.write_back(&device)?;
    }
    output::print(&out)?;
    if ran && std::io::stderr().is_terminal() {
        // A kernel the JIT declined ran on the interpreter (the engine printed why).
        let (ran_on, compiled) = match (engine.name(), &report.fallback) {
            ("jit", None) => {
                ("jit".to_string(), report.compile.as_ref().map_or_else(String::new, compile_text))
            }
            // The JIT declined the kernel, or the dispatch was too small to be worth a compile.
            ("jit", Some(why)) => (format!("interp ({why})"), String::new()),
            (name, _) => (name.to_string(), String::new()),
        };
        // The JIT counts instructions only under a limit or with --stats.
        let counted = ran_on != "jit" || args.stats || args.max_instructions > 0;
        let instructions =
            if counted { format!(", {} wave-instructions", stats.instructions) } else { String::new() };
        eprintln!(
            "wave-jit: kernel `{}` on {ran_on}: {} workgroups{instructions} in {:.3} ms{compiled}",
            kernel.meta.name,
            stats.workgroups,
            elapsed.as_secs_f64() * 1e3
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The JIT's compile times for the summary line: until the first code, and until the
/// optimized code of a kernel compiled in two tiers took over (if it had by the run's end).
fn compile_text(compile: &CompileReport) -> String {
    let first = compile.first_code.as_secs_f64() * 1e3;
    match &compile.tiers {
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
    output::print(&out)?;
    Ok(ExitCode::SUCCESS)
}
