//! Checks by the real vendor compilers (run by `.ci/gpu-check`, which sets `WAVE_GPU_CHECK=1`
//! and the toolchain variables of `.ci/gpu-toolchains.sh`; without them the test returns at once):
//! - every conformance program and bundled example, written as PTX, assembles with
//!   `ptxas -arch=sm_75` and `-arch=sm_90`;
//! - written as HIP, compiles with clang for `gfx90a` (wave64) and `gfx1030` (wave32);
//! - written as SYCL, runs on the OpenCL CPU device through `$WAVE_SYCL_RUNNER`, and its device
//!   memory afterwards equals the interpreter's at the same wave width;
//! - the HIP/SYCL helper functions (float NaN rule, sin/cos/exp2/log2), compiled for the host,
//!   give the interpreter's bits on ~150 000 inputs per op;
//! - where `$WAVE_PTX_RUNNER` names the CUDA runner (`.ci/ptx-runner/runner.cpp`, built and run
//!   by `.ci/ptx-device-check` on a machine with an NVIDIA GPU; CI has none), written as PTX,
//!   runs on the GPU, and its device memory afterwards equals the interpreter's at wave width 32.
//!
//! `WAVE_GPU_CHECK_ONLY` (comma-separated: `ptx`, `hip`, `helpers`, `sycl`, `ptx-run`; empty:
//! all) picks the parts; each part needs only its own variables. `ptx-run` named there without
//! `$WAVE_PTX_RUNNER` is an error.
//!
//! Kernels are compiled in batches (one file, many entries) to keep the run short; a failing
//! batch is compiled again kernel by kernel so each failure names its program.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;
use wave_conformance::header::{parse_header, Header};
use wave_gpu_backends::{write_module, Options, Target};
use wave_isa::ValidKernel;
use wave_runtime::{Device, Dispatch, Engine, Interpreter};

/// One kernel to check.
struct Case {
    /// Program path (and kernel name for multi-kernel examples).
    name: String,
    kernel: ValidKernel,
    /// The conformance header; `None` for examples (compiled only).
    header: Option<Header>,
}

fn entry(i: usize) -> String {
    format!("wave_case_{i}")
}

/// Run `f` over `items` on all cores.
fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(usize, &T) -> R + Sync) -> Vec<R> {
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).min(items.len().max(1));
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<(usize, R)>> = Mutex::new(Vec::with_capacity(items.len()));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let r = f(i, item);
                out.lock().unwrap_or_else(|p| p.into_inner()).push((i, r));
            });
        }
    });
    let mut v = out.into_inner().unwrap_or_else(|p| p.into_inner());
    v.sort_by_key(|(i, _)| *i);
    v.into_iter().map(|(_, r)| r).collect()
}

fn collect_cases(skipped: &mut Vec<String>) -> Vec<Case> {
    let mut cases = Vec::new();
    for program in wave_conformance::programs() {
        let header = match parse_header(program.path, program.source) {
            Ok(h) => h,
            Err(e) => {
                skipped.push(format!("{}: bad header: {e}", program.path));
                continue;
            }
        };
        let module = wave_isa::asm::assemble(program.source, program.path)
            .map_err(|d| d.to_string())
            .and_then(|a| wave_isa::module::Module::from_wbin(&a.file).map_err(|e| e.to_string()));
        let module = match module {
            Ok(m) => m,
            Err(e) => {
                // Programs that test assembler/loader errors have no kernel to translate.
                if header.expect_error.is_none() {
                    skipped.push(format!("{}: does not load: {e}", program.path));
                }
                continue;
            }
        };
        let kernel = match &header.kernel {
            Some(k) => module.kernel(k).ok().cloned(),
            None => module.kernels.first().cloned(),
        };
        if let Some(kernel) = kernel {
            cases.push(Case { name: program.path.to_string(), kernel, header: Some(header) });
        }
    }
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut files = Vec::new();
    find_wave_files(&examples, &mut files);
    files.sort();
    for file in files {
        match wave_isa::module::load_file(&file) {
            Ok((module, _)) => {
                for k in module.kernels {
                    cases.push(Case {
                        name: format!("examples/{}#{}", file_name(&file), k.meta.name),
                        kernel: k,
                        header: None,
                    });
                }
            }
            Err(e) => skipped.push(format!("{}: does not load: {e}", file.display())),
        }
    }
    cases
}

fn file_name(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

fn find_wave_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            find_wave_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "wave" || x == "wbin") {
            out.push(p);
        }
    }
}

/// Run a command; Err = its exit status and output.
fn run(cmd: &mut Command) -> Result<(), String> {
    match cmd.output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!(
            "{}\n{}{}",
            o.status,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )),
        Err(e) => Err(format!("cannot start {:?}: {e}", cmd.get_program())),
    }
}

/// A compiler invocation for one source file; `tag` names the variant (arch).
type Compile<'a> = dyn Fn(&Path, &str) -> Result<(), String> + Sync + 'a;

struct TargetReport {
    label: String,
    passed: usize,
    failures: Vec<String>,
    unsupported: Vec<String>,
}

impl TargetReport {
    fn new(label: &str) -> TargetReport {
        TargetReport { label: label.into(), passed: 0, failures: Vec::new(), unsupported: Vec::new() }
    }
}

/// Write the cases in batches for `target`, compile each batch with every `tags` variant;
/// a failing batch is retried kernel by kernel.
fn compile_target(
    cases: &[Case],
    target: Target,
    tags: &[&str],
    dir: &Path,
    compile: &Compile,
) -> Vec<TargetReport> {
    const BATCH: usize = 24;
    let opts: Vec<Options> =
        (0..cases.len()).map(|i| Options { entry_name: Some(entry(i)), ..Options::default() }).collect();
    // Cases this target cannot express at all are reported, not compiled.
    let mut unsupported = Vec::new();
    let mut ok_cases = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        match write_module(&[(&c.kernel, &opts[i])], target) {
            Ok(_) => ok_cases.push(i),
            Err(e) => unsupported.push(format!("{target} {}: {e}", c.name)),
        }
    }
    let batches: Vec<Vec<usize>> = ok_cases.chunks(BATCH).map(|c| c.to_vec()).collect();
    let mut reports: Vec<TargetReport> = tags
        .iter()
        .map(|t| TargetReport {
            label: format!("{target} {t}"),
            passed: 0,
            failures: Vec::new(),
            unsupported: unsupported.clone(),
        })
        .collect();
    let jobs: Vec<(usize, usize)> =
        (0..batches.len()).flat_map(|b| (0..tags.len()).map(move |t| (b, t))).collect();
    let results = par_map(&jobs, |_, &(b, t)| {
        let members = &batches[b];
        let write = |idx: &[usize], path: &Path| {
            let pairs: Vec<_> = idx.iter().map(|&i| (&cases[i].kernel, &opts[i])).collect();
            let text = write_module(&pairs, target).map_err(|e| e.to_string())?;
            std::fs::write(path, text).map_err(|e| e.to_string())
        };
        let path = dir.join(format!("batch{b}.{}.{}", tags[t], target.extension()));
        let batch_ok = write(members, &path).and_then(|_| compile(&path, tags[t])).is_ok();
        if batch_ok {
            return (t, members.len(), Vec::new());
        }
        let mut passed = 0;
        let mut failures = Vec::new();
        for &i in members {
            let path = dir.join(format!("case{i}.{}.{}", tags[t], target.extension()));
            match write(&[i], &path).and_then(|_| compile(&path, tags[t])) {
                Ok(()) => passed += 1,
                Err(msg) => failures.push(format!(
                    "{target} {} {}: {}\n  (source: {})",
                    tags[t],
                    cases[i].name,
                    msg.trim(),
                    path.display()
                )),
            }
        }
        (t, passed, failures)
    });
    for (t, passed, failures) in results {
        reports[t].passed += passed;
        reports[t].failures.extend(failures);
    }
    reports
}

/// Why the device atomics of `atomics/device_*.wave` are not compared: 80 threads in two
/// work-groups update one address and store the old values they get.
const TWO_WORKGROUP_OLD_VALUES: &str =
    "the old values returned across its two work-groups record the order they ran in; \
     neither SYCL nor CUDA orders work-groups (the interpreter runs them one after another)";

/// Conformance programs whose results record the order work-groups ran in: neither the SYCL CPU
/// run nor the PTX GPU run compares them, and gpu-check prints each reason.
const WORKGROUP_ORDER_NOT_COMPARED: &[(&str, &str)] = &[
    (
        "atomics/device_cas.wave",
        "the old values returned depend on which work-group reaches the shared address first; \
         neither SYCL nor CUDA orders work-groups (the interpreter runs them one after another)",
    ),
    (
        "atomics/device_exchange.wave",
        "the old values returned depend on which work-group reaches the shared address first; \
         neither SYCL nor CUDA orders work-groups (the interpreter runs them one after another)",
    ),
    (
        "exec/workgroup_order.wave",
        "its tickets (old values of a device atomic_add) record the order work-groups ran in; \
         neither SYCL nor CUDA orders work-groups (the OpenCL CPU device ran them in order in \
         most runs, not in all)",
    ),
    ("atomics/device_add.wave", TWO_WORKGROUP_OLD_VALUES),
    // CI saw the OpenCL CPU device run device_or's second work-group first (2026-11-27): the
    // other read-modify-write programs of the family record the order just the same.
    ("atomics/device_sub.wave", TWO_WORKGROUP_OLD_VALUES),
    ("atomics/device_and.wave", TWO_WORKGROUP_OLD_VALUES),
    ("atomics/device_or.wave", TWO_WORKGROUP_OLD_VALUES),
    ("atomics/device_xor.wave", TWO_WORKGROUP_OLD_VALUES),
    ("atomics/device_min.wave", TWO_WORKGROUP_OLD_VALUES),
    ("atomics/device_max.wave", TWO_WORKGROUP_OLD_VALUES),
    (
        "stress/atomics_many_workgroups.wave",
        "its tickets (old values of a device atomic_add from 64 work-groups) record the order \
         they ran in; neither SYCL nor CUDA orders work-groups (the interpreter runs them one \
         after another)",
    ),
];

/// Conformance programs the SYCL CPU run does not compare besides
/// [`WORKGROUP_ORDER_NOT_COMPARED`]; the PTX GPU run compares them.
const SYCL_NOT_COMPARED: &[(&str, &str)] = &[(
    "sync/barrier_after_halt.wave",
    "a barrier reached after other work-items of the work-group returned is undefined in SYCL \
     (WAVE counts a halted wave as arrived, semantics.md B.16, as NVIDIA and AMD hardware do; \
     the OpenCL CPU device does not)",
)];

/// The old values of a local atomic that the 40 threads of each work-group (two warps at W = 32)
/// apply to one address.
const WARP_ORDER_LOCAL_ATOMIC: &str =
    "the old values returned record the order in which the 40 threads of a work-group (two \
     warps) reached one local address; the interpreter runs waves and lanes in order, CUDA \
     orders neither the warps of a block nor the lanes of one atomic instruction";

/// Conformance programs the PTX GPU run does not compare besides
/// [`WORKGROUP_ORDER_NOT_COMPARED`], each with the reason gpu-check prints.
const PTX_NOT_COMPARED: &[(&str, &str)] = &[
    (
        "memory/device_persists.wave",
        "each work-group reads, adds to and rewrites one device word without atomics: the total \
         assumes work-groups run one after another, which CUDA does not do",
    ),
    (
        "memory/same_address_store.wave",
        "its two warps (40 threads) store to one address, the last thread winning in the \
         interpreter; CUDA orders neither the warps of a block nor same-address stores of one \
         instruction",
    ),
    ("atomics/local_add.wave", WARP_ORDER_LOCAL_ATOMIC),
    ("atomics/local_and.wave", WARP_ORDER_LOCAL_ATOMIC),
    ("atomics/local_cas.wave", WARP_ORDER_LOCAL_ATOMIC),
    ("atomics/local_exchange.wave", WARP_ORDER_LOCAL_ATOMIC),
    ("atomics/local_max.wave", WARP_ORDER_LOCAL_ATOMIC),
    ("atomics/local_min.wave", WARP_ORDER_LOCAL_ATOMIC),
    ("atomics/local_or.wave", WARP_ORDER_LOCAL_ATOMIC),
    ("atomics/local_sub.wave", WARP_ORDER_LOCAL_ATOMIC),
    ("atomics/local_xor.wave", WARP_ORDER_LOCAL_ATOMIC),
    ("float/fsin.wave", SIN_COS_APPROX),
    ("float/fcos.wave", SIN_COS_APPROX),
    ("float/fsin_small.wave", SIN_COS_APPROX),
];

/// Why PTX programs with fsin/fcos are not compared.
const SIN_COS_APPROX: &str = "PTX uses the hardware's sin.approx/cos.approx";

/// The wave width to run a program at on the SYCL CPU device: 32 when listed, else the widest
/// listed width the work-group can hold.
fn sycl_width(header: &Header, threads: u32) -> Result<u32, String> {
    [32, 16, 8, 64, 4]
        .into_iter()
        .find(|w| header.widths.contains(w) && (*w < 64 || threads >= 64))
        .ok_or_else(|| "no wave width the CPU device runs".to_string())
}

/// The wave width to run a program at on an NVIDIA GPU: a warp, 32 lanes, the only width the
/// PTX writer gives.
fn ptx_width(header: &Header, _threads: u32) -> Result<u32, String> {
    if header.widths.contains(&32) {
        Ok(32)
    } else {
        Err(format!("its wave widths {:?} leave out 32, the only one PTX runs", header.widths))
    }
}

/// One conformance program prepared for a run on a device: its launch, device memory before,
/// and the interpreter's device memory after.
struct RunCase {
    case: usize,
    width: u32,
    grid: [u32; 3],
    workgroup: [u32; 3],
    mem_in: Vec<u8>,
    expected: Vec<u8>,
}

/// Why one device run did not match.
enum RunFailure {
    /// The runner failed: compile error, compiler crash, launch error.
    Runner(String),
    /// It ran, and device memory differs from the interpreter's.
    Mismatch(String),
}

impl RunFailure {
    fn message(self) -> String {
        match self {
            RunFailure::Runner(m) | RunFailure::Mismatch(m) => m,
        }
    }
}

/// At most `max` lines of a compiler's output: the start (the diagnostic) and the end (for a
/// crash, the stack dump's last frames name the pass and the function).
fn clip_lines(text: &str, max: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= max {
        return text.to_string();
    }
    let head = max / 2;
    let tail = max - head;
    format!(
        "{}\n  ... ({} lines left out) ...\n{}",
        lines[..head].join("\n"),
        lines.len() - max,
        lines[lines.len() - tail..].join("\n")
    )
}

/// The writer options of one run's kernel.
fn run_options(cases: &[Case], r: &RunCase) -> Options {
    let local = cases[r.case].header.as_ref().and_then(|h| h.local_memory);
    Options { wave_width: Some(r.width), local_memory: local, entry_name: Some(entry(r.case)) }
}

/// Run every conformance program that can be compared through the interpreter, at the wave
/// width `width` picks (from the header and the work-group's thread count). Programs that
/// expect an error, those listed in `not_compared`, and those the interpreter stops on are
/// left out, each with its reason in the second list.
fn prepare_runs(
    cases: &[Case],
    not_compared: &[&[(&str, &str)]],
    width: &dyn Fn(&Header, u32) -> Result<u32, String>,
) -> (Vec<RunCase>, Vec<String>) {
    let mut skipped = Vec::new();
    let mut runs = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let Some(h) = &c.header else { continue };
        if h.expect_error.is_some() {
            skipped.push(format!("{}: expects an error", c.name));
            continue;
        }
        if let Some((_, why)) = not_compared.iter().flat_map(|l| l.iter()).find(|(p, _)| *p == c.name) {
            skipped.push(format!("{}: {why}", c.name));
            continue;
        }
        let mut device = match Device::new(h.device_memory) {
            Ok(d) => d,
            Err(e) => {
                skipped.push(format!("{}: device memory: {e}", c.name));
                continue;
            }
        };
        for input in &h.inputs {
            let _ = device.write(input.address, &input.bytes);
        }
        let mem_in = device.bytes().to_vec();
        let defaults = Dispatch::default();
        let mut dispatch = Dispatch {
            grid: h.grid,
            workgroup: h.workgroup,
            registers: h.registers.unwrap_or(defaults.registers),
            local_memory: h.local_memory.unwrap_or(defaults.local_memory),
            initial_registers: h.set_regs.clone(),
            max_instructions: h.max_instructions,
            ..defaults
        };
        let launch = match wave_runtime::resolve(&c.kernel, &dispatch, &device) {
            Ok(l) => l,
            Err(e) => {
                skipped.push(format!("{}: dispatch: {e}", c.name));
                continue;
            }
        };
        let threads = launch.workgroup.iter().product::<u32>();
        let width = match width(h, threads) {
            Ok(w) => w,
            Err(why) => {
                skipped.push(format!("{}: {why}", c.name));
                continue;
            }
        };
        dispatch.wave_width = width;
        if let Err(e) = Interpreter::new().run(&c.kernel, &dispatch, &mut device) {
            skipped.push(format!("{}: the interpreter stops with an error: {e}", c.name));
            continue;
        }
        runs.push(RunCase {
            case: i,
            width,
            grid: launch.grid,
            workgroup: launch.workgroup,
            mem_in,
            expected: device.bytes().to_vec(),
        });
    }
    (runs, skipped)
}

/// The files a runner reads and writes for run `r`, named after `base`: device memory before
/// (up to its last non-zero byte; the runner zeroes the rest), the 256 initial registers, and
/// device memory after (not yet written).
struct RunFiles {
    mem_in: PathBuf,
    regs: PathBuf,
    out: PathBuf,
}

impl RunFiles {
    fn write(cases: &[Case], r: &RunCase, base: &Path) -> Result<RunFiles, RunFailure> {
        let mut regs = [0u32; 256];
        for &(reg, val) in cases[r.case].header.as_ref().map_or(&[][..], |h| &h.set_regs[..]) {
            regs[reg as usize] = val;
        }
        let regs: Vec<u8> = regs.iter().flat_map(|x| x.to_le_bytes()).collect();
        let used = r.mem_in.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
        let files = RunFiles {
            mem_in: base.with_extension("in"),
            regs: base.with_extension("regs"),
            out: base.with_extension("out"),
        };
        let io = |e: std::io::Error| RunFailure::Runner(e.to_string());
        std::fs::write(&files.mem_in, &r.mem_in[..used]).map_err(io)?;
        std::fs::write(&files.regs, regs).map_err(io)?;
        Ok(files)
    }

    /// The runner's arguments for the files: `--mem-in`, `--regs`, `--out`.
    fn args(&self) -> [&std::ffi::OsStr; 6] {
        [
            "--mem-in".as_ref(),
            self.mem_in.as_os_str(),
            "--regs".as_ref(),
            self.regs.as_os_str(),
            "--out".as_ref(),
            self.out.as_os_str(),
        ]
    }

    /// Compare the memory the runner wrote with the interpreter's; `device` names the runner's
    /// side in the message.
    fn compare(&self, r: &RunCase, device: &str) -> Result<(), RunFailure> {
        let got = std::fs::read(&self.out).map_err(|e| RunFailure::Runner(e.to_string()))?;
        let _ = std::fs::remove_file(&self.out);
        let _ = std::fs::remove_file(&self.mem_in);
        if got == r.expected {
            return Ok(());
        }
        let diff: Vec<usize> =
            (0..got.len().min(r.expected.len())).filter(|&i| got[i] != r.expected[i]).collect();
        let first = diff.first().copied().unwrap_or(0) & !3;
        let word =
            |m: &[u8]| m.get(first..first + 4).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        Err(RunFailure::Mismatch(format!(
            "memory differs from the interpreter at W={}: {} bytes, first at 0x{first:x}: {device} 0x{:08x}, interpreter 0x{:08x}",
            r.width,
            diff.len(),
            word(&got),
            word(&r.expected)
        )))
    }
}

/// `X,Y,Z` for a runner's command line.
fn xyz(v: [u32; 3]) -> String {
    format!("{},{},{}", v[0], v[1], v[2])
}

/// Count each run's result into `report` (failures prefixed by `prefix` and the program), in
/// program order.
fn record_runs(
    report: &mut TargetReport,
    prefix: &str,
    cases: &[Case],
    runs: &[RunCase],
    mut results: Vec<(usize, Result<(), RunFailure>)>,
) {
    results.sort_by_key(|(k, _)| runs[*k].case);
    for (k, res) in results {
        match res {
            Ok(()) => report.passed += 1,
            Err(f) => report.failures.push(format!("{prefix} {}: {}", cases[runs[k].case].name, f.message())),
        }
    }
}

fn sycl_check(cases: &[Case], runner: &str, dir: &Path) -> (TargetReport, Vec<String>) {
    let mut report = TargetReport::new("sycl cpu-run");
    let (runs, skipped) =
        prepare_runs(cases, &[WORKGROUP_ORDER_NOT_COMPARED, SYCL_NOT_COMPARED], &sycl_width);
    // Kernels of one wave width in sources of a few each: compiled once (the run-time compiler
    // caches them) and small enough that loading one from the cache stays fast.
    const PER_SOURCE: usize = 12;
    let mut by_width: BTreeMap<(u32, usize), Vec<usize>> = BTreeMap::new();
    let mut count: BTreeMap<u32, usize> = BTreeMap::new();
    for (k, r) in runs.iter().enumerate() {
        let n = count.entry(r.width).or_default();
        by_width.entry((r.width, *n / PER_SOURCE)).or_default().push(k);
        *n += 1;
    }
    let mut source_of = vec![(0u32, 0usize); runs.len()];
    for (key, members) in &by_width {
        for &k in members {
            source_of[k] = *key;
        }
    }
    let mut sources = BTreeMap::new();
    for (&(w, chunk), members) in &by_width {
        let opts: Vec<Options> = members.iter().map(|&k| run_options(cases, &runs[k])).collect();
        let pairs: Vec<_> =
            members.iter().zip(&opts).map(|(&k, o)| (&cases[runs[k].case].kernel, o)).collect();
        match write_module(&pairs, Target::Sycl) {
            Ok(text) => {
                let path = dir.join(format!("sycl_w{w}_{chunk}.cpp"));
                let _ = std::fs::write(&path, text);
                sources.insert((w, chunk), path);
            }
            Err(e) => {
                for &k in members {
                    report.unsupported.push(format!("sycl {}: {e}", cases[runs[k].case].name));
                }
            }
        }
    }
    // A source holding only run `k`'s kernel: used when its shared source does not build, so
    // a compiler crash or error names the one program that causes it.
    let alone = |k: usize| -> Result<PathBuf, RunFailure> {
        let r = &runs[k];
        let text = wave_gpu_backends::write(&cases[r.case].kernel, Target::Sycl, &run_options(cases, r))
            .map_err(|e| RunFailure::Runner(e.to_string()))?;
        let path = dir.join(format!("sycl_case{}.cpp", r.case));
        std::fs::write(&path, text).map_err(|e| RunFailure::Runner(e.to_string()))?;
        Ok(path)
    };
    let run_one = |k: usize, isolated: bool| -> Result<(), RunFailure> {
        let r = &runs[k];
        let source = if isolated {
            alone(k)?
        } else {
            sources.get(&source_of[k]).cloned().ok_or(RunFailure::Runner("no source".into()))?
        };
        let files = RunFiles::write(cases, r, &dir.join(format!("sycl_case{}", r.case)))?;
        let global = [r.grid[0] * r.workgroup[0], r.grid[1] * r.workgroup[1], r.grid[2] * r.workgroup[2]];
        run(Command::new("timeout")
            .arg("300")
            .arg(runner)
            .arg("--source")
            .arg(&source)
            .args(["--kernel", &entry(r.case), "--global", &xyz(global), "--local", &xyz(r.workgroup)])
            .args(["--sg", &r.width.to_string(), "--mem-size", &r.expected.len().to_string()])
            .args(files.args()))
        .map_err(|e| {
            RunFailure::Runner(format!(
                "wave-sycl-runner failed (W={}, source {}): {}",
                r.width,
                source.display(),
                clip_lines(e.trim(), 40)
            ))
        })?;
        files.compare(r, "sycl")
    };
    // Compile each shared source once (first case of each), then run the rest from the cache.
    // When a shared source does not build (the run-time compiler has crashed on some kernels),
    // its kernels are compiled and run one by one, each alone in a source.
    let firsts: Vec<usize> = by_width.values().filter_map(|m| m.first().copied()).collect();
    let first_results = par_map(&firsts, |_, &k| (k, run_one(k, false)));
    let mut broken = Vec::new();
    let mut results = Vec::new();
    for (k, res) in first_results {
        match res {
            Err(RunFailure::Runner(msg)) => {
                let path = sources.get(&source_of[k]).map(|p| p.display().to_string());
                let why = msg.lines().find(|l| !l.trim().is_empty()).unwrap_or("").to_string();
                eprintln!(
                    "sycl: {} failed ({why}); its kernels are retried one by one",
                    path.unwrap_or_default()
                );
                broken.push(source_of[k]);
            }
            other => results.push((k, other)),
        }
    }
    let rest: Vec<(usize, bool)> = by_width
        .iter()
        .flat_map(|(key, m)| {
            let isolated = broken.contains(key);
            m.iter().skip(usize::from(!isolated)).map(move |&k| (k, isolated))
        })
        .collect();
    results.extend(par_map(&rest, |_, &(k, isolated)| (k, run_one(k, isolated))));
    // A runner failure in a shared source that did build: check that kernel alone too.
    let retry: Vec<usize> = results
        .iter()
        .filter(|(k, r)| matches!(r, Err(RunFailure::Runner(_))) && !broken.contains(&source_of[*k]))
        .map(|(k, _)| *k)
        .collect();
    let retried = par_map(&retry, |_, &k| (k, run_one(k, true)));
    results.retain(|(k, _)| !retry.contains(k));
    results.extend(retried);
    record_runs(&mut report, "sycl", cases, &runs, results);
    (report, skipped)
}

/// Run each conformance program's PTX on the NVIDIA GPU through `$WAVE_PTX_RUNNER`
/// (`.ci/ptx-runner/runner.cpp`), one kernel a module, and compare device memory afterwards with
/// the interpreter's at wave width 32.
fn ptx_run_check(cases: &[Case], runner: &str, dir: &Path) -> (TargetReport, Vec<String>) {
    let mut report = TargetReport::new("ptx gpu-run");
    let (runs, skipped) = prepare_runs(cases, &[WORKGROUP_ORDER_NOT_COMPARED, PTX_NOT_COMPARED], &ptx_width);
    // Kernels the PTX writer cannot express are reported as unsupported, not run.
    let mut ready = Vec::new();
    for (k, r) in runs.iter().enumerate() {
        let path = dir.join(format!("ptx_case{}.ptx", r.case));
        match wave_gpu_backends::write(&cases[r.case].kernel, Target::Ptx, &run_options(cases, r)) {
            Ok(text) => match std::fs::write(&path, text) {
                Ok(()) => ready.push((k, path)),
                Err(e) => report.failures.push(format!("ptx gpu-run {}: {e}", cases[r.case].name)),
            },
            Err(e) => report.unsupported.push(format!("ptx {}: {e}", cases[r.case].name)),
        }
    }
    let run_one = |r: &RunCase, ptx: &Path| -> Result<(), RunFailure> {
        let files = RunFiles::write(cases, r, &ptx.with_extension(""))?;
        run(Command::new("timeout")
            .arg("60")
            .arg(runner)
            .arg("--ptx")
            .arg(ptx)
            .args(["--kernel", &entry(r.case), "--grid", &xyz(r.grid), "--block", &xyz(r.workgroup)])
            .args(["--mem-size", &r.expected.len().to_string()])
            .args(files.args()))
        .map_err(|e| {
            let timed_out = if e.starts_with("exit status: 124") { ", killed after 60 s" } else { "" };
            RunFailure::Runner(format!(
                "ptx runner failed (PTX {}{timed_out}): {}",
                ptx.display(),
                clip_lines(e.trim(), 40)
            ))
        })?;
        files.compare(r, "gpu")
    };
    let results = par_map(&ready, |_, (k, ptx)| (*k, run_one(&runs[*k], ptx)));
    record_runs(&mut report, "ptx gpu-run", cases, &runs, results);
    (report, skipped)
}

/// The f32 ops the host check runs through the helpers, in output order.
const HOST_F32_OPS: [&str; 12] =
    ["fsin", "fcos", "fexp2", "flog2", "fadd", "fsub", "fmul", "fdiv", "fma", "fsqrt", "frsqrt", "frcp"];
/// The f64 ops, in output order after the f32 ones.
const HOST_F64_OPS: [&str; 6] = ["dadd", "dsub", "dmul", "ddiv", "dma", "dsqrt"];

const HOST_MAIN: &str = r#"
#include <cstdio>
#include <vector>
// usage: helpers IN OUT; IN: u32 triples (a, b, c); OUT: per triple 12 u32 then 6 u64 results.
int main(int argc, char** argv) {
  if (argc != 3) return 64;
  FILE* in = std::fopen(argv[1], "rb");
  FILE* out = std::fopen(argv[2], "wb");
  if (!in || !out) return 64;
  u32 t[3];
  while (std::fread(t, 4, 3, in) == 3) {
    const u32 a = t[0], b = t[1], c = t[2];
    const u32 r[12] = {wave_fsin(a), wave_fcos(a), wave_fexp2(a), wave_flog2(a), wave_fadd(a, b),
                       wave_fsub(a, b), wave_fmul(a, b), wave_fdiv(a, b), wave_fma(a, b, c),
                       wave_fsqrt(a), wave_frsqrt(a), wave_fdiv(0x3F800000u, a)};
    const u64 d1 = WAVE_PAIR(a, b), d2 = WAVE_PAIR(b, c), d3 = WAVE_PAIR(c, a);
    const u64 d[6] = {wave_dadd(d1, d2), wave_dsub(d1, d2), wave_dmul(d1, d2), wave_ddiv(d1, d2),
                      wave_dma(d1, d2, d3), wave_dsqrt(d1)};
    std::fwrite(r, 4, 12, out);
    std::fwrite(d, 8, 6, out);
  }
  return std::fclose(out) == 0 ? 0 : 1;
}
"#;

/// Inputs for the host check: every triple of special values, a sweep over all f32 bit
/// patterns, and pseudo-random triples.
fn host_inputs() -> Vec<[u32; 3]> {
    const SPECIAL: [u32; 26] = [
        0,
        0x8000_0000,
        1,
        0x8000_0001,
        0x7F80_0000,
        0xFF80_0000,
        0x7FC0_0000,
        0xFFC0_0000,
        0x7F80_0001,
        0xFF81_2345,
        0x7FA0_0000,
        0x3F80_0000,
        0xBF80_0000,
        0x0080_0000,
        0x7F7F_FFFF,
        0x4DC9_0FDB,
        0x4300_0000,
        0xC316_0000,
        0x42FC_0000,
        0x3300_0000,
        0x7FF0_0000,
        0xFFF0_0000,
        0x7FF8_0000,
        0x7FF0_0001,
        0x4049_0FDB,
        0xC0C9_0FDB,
    ];
    let mut v = Vec::new();
    for &a in &SPECIAL {
        for &b in &SPECIAL {
            for &c in &SPECIAL {
                v.push([a, b, c]);
            }
        }
    }
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 32) as u32
    };
    for k in 0..65536u32 {
        v.push([k.wrapping_mul(65537), next(), next()]);
        v.push([next(), next(), next()]);
    }
    v
}

/// Compile the HIP/SYCL helper functions for the host and compare each op with the interpreter's
/// semantics over [`host_inputs`]: the writers' own versions of WAVE's float rules must be exact.
fn host_helpers_check(clang: &str, dir: &Path) -> TargetReport {
    use wave_runtime::semantics as s;
    let mut report = TargetReport::new("helpers host-run");
    let (src, bin, input, output) =
        (dir.join("helpers.cpp"), dir.join("helpers"), dir.join("helpers.in"), dir.join("helpers.out"));
    let inputs = host_inputs();
    let prepared = std::fs::write(&src, wave_gpu_backends::host_helpers_source() + HOST_MAIN)
        .and_then(|_| {
            std::fs::write(&input, inputs.iter().flatten().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>())
        })
        .map_err(|e| e.to_string())
        .and_then(|_| {
            run(Command::new(clang)
                .args(["-x", "c++", "-std=c++17", "-O2", "-ffp-contract=off", "-w"])
                .arg(&src)
                .arg("-o")
                .arg(&bin))
        })
        .and_then(|_| run(Command::new(&bin).arg(&input).arg(&output)))
        .and_then(|_| std::fs::read(&output).map_err(|e| e.to_string()));
    let out = match prepared {
        Ok(out) => out,
        Err(e) => {
            report.failures.push(format!("helpers host-run {}: {}", src.display(), e.trim()));
            return report;
        }
    };
    const RECORD: usize = 12 * 4 + 6 * 8;
    if out.len() != inputs.len() * RECORD {
        report.failures.push(format!(
            "helpers host-run: {} bytes of output, want {}",
            out.len(),
            inputs.len() * RECORD
        ));
        return report;
    }
    let mut bad: BTreeMap<&str, (usize, String)> = BTreeMap::new();
    for (t, rec) in inputs.iter().zip(out.chunks_exact(RECORD)) {
        let [a, b, c] = *t;
        let word =
            |i: usize| u32::from_le_bytes([rec[4 * i], rec[4 * i + 1], rec[4 * i + 2], rec[4 * i + 3]]);
        let dword = |i: usize| {
            let o = 48 + 8 * i;
            u64::from_le_bytes(rec[o..o + 8].try_into().unwrap_or([0; 8]))
        };
        let want32 = [
            s::fsin(a),
            s::fcos(a),
            s::fexp2(a),
            s::flog2(a),
            s::fadd(a, b),
            s::fsub(a, b),
            s::fmul(a, b),
            s::fdiv(a, b),
            s::fma(a, b, c),
            s::fsqrt(a),
            s::frsqrt(a),
            s::frcp(a),
        ];
        let pair = |lo: u32, hi: u32| (u64::from(hi) << 32) | u64::from(lo);
        let (d1, d2, d3) = (pair(a, b), pair(b, c), pair(c, a));
        let want64 = [
            s::dadd(d1, d2),
            s::dsub(d1, d2),
            s::dmul(d1, d2),
            s::ddiv(d1, d2),
            s::dma(d1, d2, d3),
            s::dsqrt(d1),
        ];
        // Count each op's mismatches; keep the first one's inputs and values.
        let mut mismatch =
            |op, first: &dyn Fn() -> String| bad.entry(op).or_insert_with(|| (0, first())).0 += 1;
        for (i, w) in want32.iter().enumerate() {
            if word(i) != *w {
                mismatch(HOST_F32_OPS[i], &|| {
                    format!(
                        "({a:#010x}, {b:#010x}, {c:#010x}): helper {:#010x}, interpreter {w:#010x}",
                        word(i)
                    )
                });
            }
        }
        for (i, w) in want64.iter().enumerate() {
            if dword(i) != *w {
                mismatch(HOST_F64_OPS[i], &|| {
                    format!(
                        "({d1:#018x}, {d2:#018x}, {d3:#018x}): helper {:#018x}, interpreter {w:#018x}",
                        dword(i)
                    )
                });
            }
        }
    }
    report.passed = HOST_F32_OPS.len() + HOST_F64_OPS.len() - bad.len();
    for (op, (n, first)) in bad {
        report.failures.push(format!(
            "helpers host-run {op}: {n} of {} inputs differ from the interpreter, first {first}",
            inputs.len()
        ));
    }
    report
}

#[test]
fn vendor_compilers() {
    if std::env::var("WAVE_GPU_CHECK").as_deref() != Ok("1") {
        eprintln!("vendor compiler checks skipped: run .ci/gpu-check");
        return;
    }
    let var = |name: &str| {
        std::env::var(name)
            .unwrap_or_else(|_| panic!("{name} is not set: run eval \"$(.ci/gpu-toolchains.sh)\""))
    };
    let dir = std::env::var("WAVE_GPU_CHECK_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| std::env::temp_dir().join("wave-gpu-check"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("work directory");
    let only = std::env::var("WAVE_GPU_CHECK_ONLY").unwrap_or_default();
    let wants = |t: &str| only.is_empty() || only.split(',').any(|x| x == t);

    let mut load_skips = Vec::new();
    let cases = collect_cases(&mut load_skips);
    let mut reports = Vec::new();
    let t0 = Instant::now();
    if wants("ptx") {
        let ptxas = var("WAVE_PTXAS");
        let ptx = |path: &Path, arch: &str| {
            run(Command::new(&ptxas)
                .arg(format!("-arch={arch}"))
                .arg(path)
                .arg("-o")
                .arg(path.with_extension(format!("{arch}.cubin"))))
        };
        reports.extend(compile_target(&cases, Target::Ptx, &["sm_75", "sm_90"], &dir, &ptx));
        eprintln!("ptx: {:.1} s", t0.elapsed().as_secs_f64());
    }
    if wants("hip") {
        let t = Instant::now();
        let (clang, device_libs) = (var("WAVE_HIP_CLANG"), var("WAVE_HIP_DEVICE_LIBS"));
        let hip = |path: &Path, arch: &str| {
            run(Command::new(&clang)
                .args(["-x", "hip", "-std=c++17", "--rocm-path=/usr"])
                .arg(format!("--hip-device-lib-path={device_libs}"))
                .args(["--cuda-device-only", "--no-gpu-bundle-output", "-O3", "-c"])
                .arg(format!("--offload-arch={arch}"))
                .arg(path)
                .arg("-o")
                .arg(path.with_extension(format!("{arch}.o"))))
        };
        reports.extend(compile_target(&cases, Target::Hip, &["gfx90a", "gfx1030"], &dir, &hip));
        eprintln!("hip: {:.1} s", t.elapsed().as_secs_f64());
    }
    if wants("helpers") || wants("sycl") || wants("hip") {
        let t = Instant::now();
        reports.push(host_helpers_check(&var("WAVE_HIP_CLANG"), &dir));
        eprintln!("helpers: {:.1} s", t.elapsed().as_secs_f64());
    }
    // Per device run: the programs it did not compare, with the reasons.
    let mut not_compared: Vec<(&str, Vec<String>)> = Vec::new();
    if wants("sycl") {
        let t = Instant::now();
        let (report, skips) = sycl_check(&cases, &var("WAVE_SYCL_RUNNER"), &dir);
        reports.push(report);
        not_compared.push(("sycl", skips));
        eprintln!("sycl: {:.1} s", t.elapsed().as_secs_f64());
    }
    // Needs an NVIDIA GPU (CI has none): runs where WAVE_PTX_RUNNER is set, or is asked for
    // by name (.ci/ptx-device-check).
    let ptx_runner = std::env::var("WAVE_PTX_RUNNER").ok().filter(|r| !r.is_empty());
    if wants("ptx-run") && (ptx_runner.is_some() || !only.is_empty()) {
        let t = Instant::now();
        let runner =
            ptx_runner.unwrap_or_else(|| panic!("WAVE_PTX_RUNNER is not set: run .ci/ptx-device-check"));
        let (report, skips) = ptx_run_check(&cases, &runner, &dir);
        not_compared.push(("ptx gpu-run", skips));
        reports.push(report);
        eprintln!("ptx-run: {:.1} s", t.elapsed().as_secs_f64());
    }

    let mut failed = 0;
    println!(
        "\n== vendor compiler checks: {} kernels ({} programs not loadable, skipped)",
        cases.len(),
        load_skips.len()
    );
    for s in &load_skips {
        println!("  skipped: {s}");
    }
    for r in &reports {
        for f in &r.failures {
            println!("FAIL {f}");
        }
    }
    for r in &reports {
        println!(
            "{:<16} {:>4} passed, {:>3} failed, {:>3} unsupported",
            r.label,
            r.passed,
            r.failures.len(),
            r.unsupported.len()
        );
        for u in &r.unsupported {
            println!("    unsupported: {u}");
        }
        failed += r.failures.len();
    }
    for (label, skips) in not_compared.iter().filter(|(_, skips)| !skips.is_empty()) {
        println!("{label}: {} programs not compared:", skips.len());
        for s in skips {
            println!("    {s}");
        }
    }
    println!("total {:.1} s; sources in {}", t0.elapsed().as_secs_f64(), dir.display());
    assert_eq!(failed, 0, "{failed} vendor-compiler failures (see FAIL lines above)");
}
