//! Run one program on one engine and compare two outcomes bit for bit.

use crate::program::{
    Program, Shape, COUNTER_BYTES, COUNTER_CLASS_BYTES, DATA_BYTES, DUMP_WORDS_PER_THREAD, REGISTERS,
    TOP_WINDOW_BASE,
};
use std::panic::{catch_unwind, AssertUnwindSafe};
use wave_isa::{KernelMeta, ValidKernel};
use wave_runtime::{Device, Dispatch, Engine, Stats};

/// Safety net against a runaway loop in an engine: generated programs execute far fewer
/// wave-instructions per workgroup than this.
pub const MAX_INSTRUCTIONS: u64 = 1_000_000;

/// What a run left behind.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// `Err` with the engine's error (or panic) message.
    pub result: Result<(), String>,
    /// The device memory after the run in [`Shape::compared_ranges`], one after the other.
    pub memory: Vec<u8>,
    /// What the engine counted (after a successful run).
    pub stats: Option<Stats>,
}

impl Outcome {
    /// Keep of the counters only those every engine counts without `--stats` code: the
    /// instructions (under the limit every program runs with), workgroups and waves.
    pub fn keep_instruction_count(&mut self) {
        if let Some(s) = &mut self.stats {
            *s = Stats {
                instructions: s.instructions,
                workgroups: s.workgroups,
                waves: s.waves,
                ..Stats::default()
            };
        }
    }
}

/// The dispatch a program runs with on every engine.
pub fn dispatch_for(shape: &Shape) -> Dispatch {
    Dispatch {
        grid: [shape.grid[0], shape.grid[1], 1],
        workgroup: [shape.workgroup[0], shape.workgroup[1], 1],
        wave_width: shape.wave_width,
        registers: REGISTERS,
        initial_registers: shape.initial_registers.clone(),
        max_instructions: MAX_INSTRUCTIONS,
        // Workgroup order must not vary: programs may update the same words from every workgroup
        // (unless generated order independent, see `run_program`).
        threads: 1,
        unchecked: false,
        ..Dispatch::default()
    }
}

/// Build and validate the kernel tree of a program.
pub fn kernel_of(program: &Program) -> Result<ValidKernel, String> {
    let meta = KernelMeta { name: "fuzz".into(), registers: REGISTERS, ..Default::default() };
    let kernel = wave_isa::ir::build_kernel(meta, &program.code()).map_err(|e| e.to_string())?;
    ValidKernel::new(kernel).map_err(|errors| match errors.first() {
        Some(first) => format!("invalid: {first}"),
        None => "invalid".to_string(),
    })
}

/// Run `program` on `engine` (with `threads` JIT worker threads, 0 = all cores) in a fresh
/// device whose data area holds `program.data`. A panic inside the engine becomes an error
/// outcome rather than ending the fuzzer.
pub fn run_program(engine: &dyn Engine, program: &Program, threads: usize) -> Outcome {
    run_program_with_limit(engine, program, threads, MAX_INSTRUCTIONS)
}

/// [`run_program`] with this instruction limit per workgroup (0: none). Without a limit the
/// JIT compiles other code (no counting; loop nests run a vector at a time), so a program
/// that ends under the limit is run again without it; the counters are then not compared.
pub fn run_program_with_limit(
    engine: &dyn Engine,
    program: &Program,
    threads: usize,
    max_instructions: u64,
) -> Outcome {
    let kernel = match kernel_of(program) {
        Ok(k) => k,
        Err(e) => return Outcome { result: Err(format!("build: {e}")), memory: Vec::new(), stats: None },
    };
    let mut device = match Device::new(program.shape.device_bytes()) {
        Ok(d) => d,
        Err(e) => return Outcome { result: Err(format!("device: {e}")), memory: Vec::new(), stats: None },
    };
    if let Err(e) = device.write(0, &program.data) {
        return Outcome { result: Err(format!("device: {e}")), memory: Vec::new(), stats: None };
    }
    let dispatch = Dispatch { threads, max_instructions, ..dispatch_for(&program.shape) };
    let ran = catch_unwind(AssertUnwindSafe(|| engine.run(&kernel, &dispatch, &mut device)));
    let (result, stats) = match ran {
        Ok(Ok(report)) => (Ok(()), Some(report.stats)),
        Ok(Err(e)) => (Err(e.to_string()), None),
        Err(panic) => (Err(format!("panicked: {}", panic_message(&panic))), None),
    };
    // Only the ranges a program can write: a 4 GiB device is never read whole.
    let mut memory = Vec::new();
    for range in program.shape.compared_ranges() {
        match device.read(range.start, range.end - range.start) {
            Ok(bytes) => memory.extend_from_slice(bytes),
            Err(e) => {
                return Outcome { result: Err(format!("device: {e}")), memory: Vec::new(), stats: None }
            }
        }
    }
    Outcome { result, memory, stats }
}

/// The device address of byte `index` of [`Outcome::memory`].
fn address_of(shape: &Shape, index: usize) -> u64 {
    let mut index = index as u64;
    for range in shape.compared_ranges() {
        let len = range.end - range.start;
        if index < len {
            return range.start + index;
        }
        index -= len;
    }
    u64::MAX
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_string()
    }
}

/// `None` when the outcomes are identical; otherwise the first difference, in words.
pub fn difference(shape: &Shape, a: &Outcome, b: &Outcome, names: (&str, &str)) -> Option<String> {
    let (na, nb) = names;
    if a.result != b.result {
        let show = |r: &Result<(), String>| match r {
            Ok(()) => "finished".to_string(),
            Err(e) => format!("error: {e}"),
        };
        return Some(format!("{na}: {}; {nb}: {}", show(&a.result), show(&b.result)));
    }
    if a.stats != b.stats {
        let show = |s: &Option<Stats>| s.as_ref().map_or("none".to_string(), |s| format!("{s:?}"));
        return Some(format!("counters differ: {na}: {}; {nb}: {}", show(&a.stats), show(&b.stats)));
    }
    if a.memory.len() != b.memory.len() {
        return Some(format!("device sizes differ: {} vs {} bytes", a.memory.len(), b.memory.len()));
    }
    let word = |m: &[u8], i: usize| u32::from_le_bytes([m[i], m[i + 1], m[i + 2], m[i + 3]]);
    let differing: Vec<usize> = (0..a.memory.len() / 4)
        .map(|w| w * 4)
        .filter(|&i| word(&a.memory, i) != word(&b.memory, i))
        .collect();
    let &first = differing.first()?;
    let (va, vb) = (word(&a.memory, first), word(&b.memory, first));
    let place = describe_address(shape, address_of(shape, first) as u32);
    Some(format!("{} differing words; first: {place}: {na} = 0x{va:08x}, {nb} = 0x{vb:08x}", differing.len()))
}

/// Name what lives at a device address: a data word, a counter, a word of the top window, or
/// a thread's dumped register.
pub fn describe_address(shape: &Shape, address: u32) -> String {
    if address < shape.data_bytes() {
        return if shape.private_data() {
            format!("data word at 0x{address:x} (copy of workgroup {})", address / DATA_BYTES)
        } else {
            format!("data word at 0x{address:x}")
        };
    }
    if address < shape.counter_base() + COUNTER_BYTES {
        let region = (address - shape.counter_base()) / COUNTER_CLASS_BYTES;
        let kind = ["add/sub", "or", "and", "xor", "min", "max"].get(region as usize).unwrap_or(&"?");
        return format!("counter word at 0x{address:x} ({kind} region)");
    }
    if shape.full_device && address >= TOP_WINDOW_BASE {
        return format!("top-window word at 0x{address:x}");
    }
    let index = (address - shape.dump_base()) / 4;
    let thread = index / DUMP_WORDS_PER_THREAD;
    let slot = index % DUMP_WORDS_PER_THREAD;
    let per_group = shape.threads_per_workgroup().max(1);
    let group = thread / per_group;
    if group >= shape.grid[0] * shape.grid[1] {
        return format!("word at 0x{address:x} past the dump area");
    }
    let local = thread % per_group;
    let what = if slot < REGISTERS { format!("r{slot}") } else { format!("p{}", slot - REGISTERS) };
    format!(
        "final {what} of workgroup ({}, {}) wave {} lane {}",
        group % shape.grid[0].max(1),
        group / shape.grid[0].max(1),
        local / shape.wave_width,
        local % shape.wave_width
    )
}
