//! Runs conformance programs on an engine and compares device memory with the expectations.

use crate::compare::{compare, Expected};
use crate::header::{parse_header, Container, ErrorClass, ExpectSource, Header};
use crate::oracles::{self, OracleCtx};
use crate::Program;
use wave_runtime::{Device, Dispatch, Engine};

/// Which wave widths to run each program at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WidthPolicy {
    /// Every width the program lists.
    All,
    /// Only this width; programs that do not list it are skipped.
    Only(u32),
    /// The listed widths the program also lists; a program listing none of them runs at its own.
    Prefer(Vec<u32>),
}

impl WidthPolicy {
    fn select(&self, listed: &[u32]) -> Vec<u32> {
        match self {
            WidthPolicy::All => listed.to_vec(),
            WidthPolicy::Only(w) => listed.iter().copied().filter(|x| x == w).collect(),
            WidthPolicy::Prefer(ws) => {
                let both: Vec<u32> = listed.iter().copied().filter(|x| ws.contains(x)).collect();
                if both.is_empty() {
                    listed.to_vec()
                } else {
                    both
                }
            }
        }
    }
}

/// How one (program, width) went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Pass,
    Fail(String),
}

/// The result of one program at one wave width (width 0: the header did not parse).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseResult {
    pub program: String,
    pub width: u32,
    pub outcome: Outcome,
}

impl CaseResult {
    pub fn passed(&self) -> bool {
        self.outcome == Outcome::Pass
    }
}

impl std::fmt::Display for CaseResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let width = if self.width == 0 { "W=?".to_string() } else { format!("W={}", self.width) };
        match &self.outcome {
            Outcome::Pass => write!(f, "PASS {} {width}", self.program),
            Outcome::Fail(msg) => write!(f, "FAIL {} {width}: {msg}", self.program),
        }
    }
}

/// Totals of a suite run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub passed: usize,
    pub failed: usize,
    pub failures: Vec<CaseResult>,
}

/// Run every program whose path contains `filter` (all when `None`), calling `report` for each
/// result as it is produced.
pub fn run_suite(
    engine: &dyn Engine,
    policy: &WidthPolicy,
    filter: Option<&str>,
    mut report: impl FnMut(&CaseResult),
) -> Summary {
    let mut summary = Summary::default();
    for program in crate::programs() {
        if filter.is_some_and(|f| !program.path.contains(f)) {
            continue;
        }
        for result in run_program(engine, program, policy) {
            report(&result);
            if result.passed() {
                summary.passed += 1;
            } else {
                summary.failed += 1;
                summary.failures.push(result);
            }
        }
    }
    summary
}

/// Why assembling or loading failed.
struct BuildFailure {
    class: ErrorClass,
    message: String,
}

/// Assemble `source`, pass it through the container the header asks for, and load the kernel
/// the header names (the first one by default).
fn build_kernel(program: &Program, header: &Header) -> Result<wave_isa::ValidKernel, BuildFailure> {
    use wave_isa::module::Module;
    let assembled = wave_isa::asm::assemble(program.source, program.path)
        .map_err(|d| BuildFailure { class: ErrorClass::Assemble, message: d.to_string() })?;
    let invalid = |message: String| BuildFailure { class: ErrorClass::Validation, message };
    let module = match header.container {
        Container::InMemory => Module::from_wbin(&assembled.file),
        Container::Bytes => Module::from_bytes(&wave_isa::wbin::write(&assembled.file, false)),
        Container::ReferenceStripped => {
            // The reference writer's stripped layout: no symbols and metadata_offset = 0
            // (wave-format.md 1.4); the loader must find the table after the code (B.5).
            let mut bytes = wave_isa::wbin::write(&assembled.file, true);
            if bytes.len() >= 0x1c {
                bytes[0x18..0x1c].copy_from_slice(&0u32.to_le_bytes());
            }
            Module::from_bytes(&bytes)
        }
    }
    .map_err(|e| invalid(e.to_string()))?;
    let kernel = match &header.kernel {
        Some(name) => module.kernel(name).map_err(|e| invalid(e.to_string()))?,
        None => module.kernels.first().ok_or_else(|| invalid("the module has no kernel".into()))?,
    };
    Ok(kernel.clone())
}

/// Run one program at each width `policy` selects.
pub fn run_program(engine: &dyn Engine, program: &Program, policy: &WidthPolicy) -> Vec<CaseResult> {
    let result =
        |width: u32, outcome: Outcome| CaseResult { program: program.path.to_string(), width, outcome };
    let header = match parse_header(program.path, program.source) {
        Ok(h) => h,
        Err(e) => return vec![result(0, Outcome::Fail(format!("bad header: {e}")))],
    };
    let widths = policy.select(&header.widths);
    if widths.is_empty() {
        return Vec::new();
    }
    let kernel = match build_kernel(program, &header) {
        Ok(k) => k,
        Err(failure) => {
            let outcome = match header.expect_error {
                Some(class) if class.accepts(failure.class) => check_error_text(&header, &failure.message),
                Some(class) => Outcome::Fail(format!(
                    "expected a `{}` error, got a `{}` error: {}",
                    class.name(),
                    failure.class.name(),
                    failure.message
                )),
                None => Outcome::Fail(format!("{} failed: {}", failure.class.name(), failure.message)),
            };
            return widths.iter().map(|&w| result(w, outcome.clone())).collect();
        }
    };
    if let Some(class @ (ErrorClass::Assemble | ErrorClass::Validation | ErrorClass::Rejected)) =
        header.expect_error
    {
        let outcome =
            Outcome::Fail(format!("expected a `{}` error, but it assembled and loaded", class.name()));
        return widths.iter().map(|&w| result(w, outcome.clone())).collect();
    }
    widths.iter().map(|&w| result(w, run_at_width(engine, &kernel, &header, w))).collect()
}

fn check_error_text(header: &Header, message: &str) -> Outcome {
    for words in &header.error_text {
        if !message.contains(words.as_str()) {
            return Outcome::Fail(format!("the error does not mention `{words}`: {message}"));
        }
    }
    Outcome::Pass
}

/// Compare where the error was reported with `@expect-fault`.
fn check_fault(header: &Header, e: &wave_runtime::RunError) -> Result<(), String> {
    let f = &header.fault;
    let mismatch =
        |what: &str, want: String, got: String| Err(format!("fault {what}: expected {want}, got {got}"));
    if let Some(w) = f.workgroup.filter(|&w| w != e.workgroup) {
        return mismatch("workgroup", format!("{w:?}"), format!("{:?}", e.workgroup));
    }
    if let Some(w) = f.wave.filter(|&w| w != e.wave) {
        return mismatch("wave", w.to_string(), e.wave.to_string());
    }
    if let Some(l) = f.lane.filter(|&l| Some(l) != e.lane) {
        return mismatch("lane", l.to_string(), format!("{:?}", e.lane));
    }
    if let Some(pc) = f.pc.filter(|&pc| pc != e.pc) {
        return mismatch("pc", format!("0x{pc:x}"), format!("0x{:x}", e.pc));
    }
    if let Some(a) = f.address {
        match &e.kind {
            wave_runtime::RunErrorKind::OutOfBounds { address, .. } if *address == a => {}
            wave_runtime::RunErrorKind::OutOfBounds { address, .. } => {
                return mismatch("address", format!("0x{a:x}"), format!("0x{address:x}"))
            }
            _ => return Err("fault address: the error is not out-of-bounds".into()),
        }
    }
    Ok(())
}

/// The class of a runtime error, for `@expect-error`.
fn classify(kind: &wave_runtime::RunErrorKind) -> Option<ErrorClass> {
    use wave_runtime::RunErrorKind as K;
    Some(match kind {
        K::OutOfBounds { .. } => ErrorClass::OutOfBounds,
        K::InstructionLimit { .. } => ErrorClass::InstructionLimit,
        K::Dispatch(_) => ErrorClass::Dispatch,
        K::Unsupported(_) => ErrorClass::Unsupported,
        #[allow(unreachable_patterns)]
        _ => return None,
    })
}

fn run_at_width(engine: &dyn Engine, kernel: &wave_isa::ValidKernel, header: &Header, width: u32) -> Outcome {
    let mut device = match Device::new(header.device_memory) {
        Ok(d) => d,
        Err(e) => {
            return Outcome::Fail(format!(
                "cannot create {} bytes of device memory: {e}",
                header.device_memory
            ))
        }
    };
    for input in &header.inputs {
        if let Err(e) = device.write(input.address, &input.bytes) {
            return Outcome::Fail(format!("@input at 0x{:x} does not fit: {e}", input.address));
        }
    }
    let initial = device.bytes().to_vec();
    let defaults = Dispatch::default();
    let dispatch = Dispatch {
        grid: header.grid,
        workgroup: header.workgroup,
        wave_width: width,
        registers: header.registers.unwrap_or(defaults.registers),
        local_memory: header.local_memory.unwrap_or(defaults.local_memory),
        initial_registers: header.set_regs.clone(),
        max_instructions: header.max_instructions,
        // One worker: workgroups then run in the interpreter's order, so programs whose result
        // depends on workgroup order (atomics returning old values across workgroups) are exact.
        threads: 1,
        ..defaults
    };
    let run = engine.run(kernel, &dispatch, &mut device);
    match (&run, header.expect_error) {
        (Ok(_), Some(class)) => {
            return Outcome::Fail(format!("expected a `{}` error, but the run succeeded", class.name()))
        }
        (Err(e), None) => return Outcome::Fail(format!("run failed: {e}")),
        (Err(e), Some(class)) => {
            let got = classify(&e.kind);
            if !got.is_some_and(|g| class.accepts(g)) {
                let got = got.map_or("other", ErrorClass::name);
                return Outcome::Fail(format!(
                    "expected a `{}` error, got a `{got}` error: {e}",
                    class.name()
                ));
            }
            if let Outcome::Fail(msg) = check_error_text(header, &e.to_string()) {
                return Outcome::Fail(msg);
            }
            if let Err(msg) = check_fault(header, e) {
                return Outcome::Fail(format!("{msg} (error: {e})"));
            }
        }
        (Ok(_), None) => {}
    }
    let ctx = OracleCtx { memory: &initial, width, grid: header.grid, workgroup: header.workgroup };
    for expect in &header.expects {
        if expect.widths.as_ref().is_some_and(|ws| !ws.contains(&width)) {
            continue;
        }
        let expected = match &expect.source {
            ExpectSource::Values { ty, values } => Expected { ty: *ty, values: values.clone() },
            ExpectSource::Oracle { name, args } => match oracles::call(name, args, &ctx) {
                Ok(e) => e,
                Err(msg) => return Outcome::Fail(format!("line {}: oracle `{name}`: {msg}", expect.line)),
            },
        };
        if let Err(msg) = compare(device.bytes(), expect.address, &expected, expect.ulp) {
            return Outcome::Fail(format!("@expect on line {}: {msg}", expect.line));
        }
    }
    Outcome::Pass
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn width_policies() {
        let listed = [4, 8, 16, 32, 64];
        assert_eq!(WidthPolicy::All.select(&listed), listed.to_vec());
        assert_eq!(WidthPolicy::Only(16).select(&listed), vec![16]);
        assert_eq!(WidthPolicy::Only(16).select(&[8]), Vec::<u32>::new());
        assert_eq!(WidthPolicy::Prefer(vec![8, 32]).select(&listed), vec![8, 32]);
        assert_eq!(WidthPolicy::Prefer(vec![8, 32]).select(&[4, 64]), vec![4, 64]);
        assert_eq!(WidthPolicy::Prefer(vec![8, 32]).select(&[32, 64]), vec![32]);
    }
}
