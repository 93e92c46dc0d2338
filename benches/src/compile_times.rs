//! Compile times of the JIT over every bundled kernel and every conformance kernel: each
//! compiled afresh (the JIT's cache bypassed), one at a time, in checked mode — what a
//! dispatch of that kernel waits for on its first run.

use crate::kernels;
use std::time::Duration;
use wave_isa::module::Module;
use wave_isa::ValidKernel;
use wave_jit_codegen::Tiers;

/// One kernel to compile.
#[derive(Clone, Debug)]
pub struct Subject {
    /// `bench/<file>:<kernel>` or `conformance/<path>:<kernel>`.
    pub label: String,
    pub kernel: ValidKernel,
    /// Threads per workgroup it is dispatched with (its `.workgroup_size`, else the
    /// conformance header's `@workgroup`).
    pub workgroup: [u32; 3],
}

/// Every kernel of the bundled sources and of the conformance programs that assemble and
/// load (programs that test assembler or loader errors have none), in file order.
pub fn subjects() -> Vec<Subject> {
    let mut out = Vec::new();
    let mut add = |prefix: &str, file: &str, source: &str, fallback: [u32; 3]| {
        let Ok(assembled) = wave_isa::asm::assemble(source, file) else { return };
        let Ok(module) = Module::from_wbin(&assembled.file) else { return };
        for kernel in module.kernels {
            let workgroup =
                if kernel.meta.workgroup_size[0] > 0 { kernel.meta.workgroup_size } else { fallback };
            out.push(Subject { label: format!("{prefix}/{file}:{}", kernel.meta.name), kernel, workgroup });
        }
    };
    for (file, source) in kernels::ALL_SOURCES {
        add("bench", file, source, [64, 1, 1]);
    }
    for program in wave_conformance::programs() {
        let workgroup = wave_conformance::header::parse_header(program.path, program.source)
            .map_or([32, 1, 1], |h| h.workgroup);
        add("conformance", program.path, program.source, workgroup);
    }
    out
}

/// The flags a checked dispatch at wave width `width` compiles `subject` with.
pub fn flags(subject: &Subject, width: u32) -> wave_jit_codegen::Flags {
    wave_jit_codegen::Flags {
        width,
        checked: true,
        fuel: false,
        stats: false,
        workgroup: subject.workgroup,
        window_wraps: false,
    }
}

/// How long the survey waits for a kernel's optimized tier before it reports it as still
/// compiling (that compile then goes on in the background).
pub const OPTIMIZED_WAIT_LIMIT: Duration = Duration::from_secs(5);

/// A kernel whose first code takes longer than this is an outlier: the survey does not compile
/// its optimized tier (which would run for minutes in the background and slow every later
/// compile), and the criterion bench leaves it out of its repetitions.
pub const OUTLIER: Duration = Duration::from_secs(1);

/// How long one compile took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompileTime {
    /// Until the first runnable code (the quick tier of a kernel compiled in two).
    pub first: Duration,
    /// Until the optimized code runs (the first code's time for a kernel compiled in one tier);
    /// None: not measured (an [`OUTLIER`]) or not ready within [`OPTIMIZED_WAIT_LIMIT`].
    pub optimized: Option<Duration>,
}

/// Time until the first runnable code of `subject` at `width`, compiled afresh, without the
/// background compile of an optimized tier.
pub fn first_code(subject: &Subject, width: u32) -> Result<Duration, String> {
    let code = wave_jit_codegen::compile_first_tier(&subject.kernel, flags(subject, width))
        .map_err(|e| e.to_string())?;
    Ok(code.compile_time)
}

/// Time until the optimized code of `subject` at `width` runs, compiled afresh as a dispatch
/// compiles it (first tier, then the optimized one in the background); None if it is not
/// ready within [`OPTIMIZED_WAIT_LIMIT`] after the first code.
pub fn optimized_code(subject: &Subject, width: u32) -> Result<Option<Duration>, String> {
    let code =
        wave_jit_codegen::compile_fresh(&subject.kernel, flags(subject, width)).map_err(|e| e.to_string())?;
    let waiting = std::time::Instant::now();
    loop {
        match code.tiers() {
            Tiers::One => return Ok(Some(code.compile_time)),
            Tiers::OptimizedAfter(t) => return Ok(Some(t)),
            // Only the quick tier (no thread for the other): it is the final code.
            Tiers::QuickOnly(_) => return Ok(Some(code.compile_time)),
            Tiers::Pending if waiting.elapsed() >= OPTIMIZED_WAIT_LIMIT => return Ok(None),
            Tiers::Pending => std::thread::sleep(Duration::from_micros(200)),
        }
    }
}

/// Issue 16's compile-time target for every kernel at W = 32: the kernels over it are named.
pub const TARGET: Duration = Duration::from_millis(50);

/// Median and maximum of compile times over kernels, with the slowest kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Spread {
    pub p50: Duration,
    pub max: Duration,
    pub slowest: String,
    /// The kernels over [`TARGET`], slowest first.
    pub over_target: Vec<(String, Duration)>,
}

/// The spread of `times` (label, time); None when empty.
pub fn spread(times: &[(String, Duration)]) -> Option<Spread> {
    let mut sorted: Vec<&(String, Duration)> = times.iter().collect();
    sorted.sort_by_key(|(_, t)| *t);
    let (slowest, max) = (*sorted.last()?).clone();
    // The lower median for an even count: a time some kernel really took.
    let p50 = sorted[(sorted.len() - 1) / 2].1;
    let over_target = sorted.iter().rev().take_while(|(_, t)| *t > TARGET).map(|&x| x.clone()).collect();
    Some(Spread { p50, max, slowest, over_target })
}

/// What [`survey`] found at one width.
#[derive(Clone, Debug, Default)]
pub struct Survey {
    /// (label, times) of the kernels that compiled.
    pub times: Vec<(String, CompileTime)>,
    /// (label, why) of those that did not.
    pub failed: Vec<(String, String)>,
}

/// Compile every subject at `width`: first the time to the first code of each (no compile
/// left running), then the time to the optimized code of each that is not an [`OUTLIER`].
pub fn survey(subjects: &[Subject], width: u32, progress: &mut dyn FnMut(&str)) -> Survey {
    let mut times = Vec::new();
    let mut failed = Vec::new();
    for (i, subject) in subjects.iter().enumerate() {
        if i % 16 == 0 {
            progress(&format!("compile W = {width}: first code, {i}/{} kernels", subjects.len()));
        }
        match first_code(subject, width) {
            Ok(first) => times.push((subject, CompileTime { first, optimized: None })),
            Err(e) => failed.push((subject.label.clone(), e)),
        }
    }
    for (i, (subject, time)) in times.iter_mut().enumerate() {
        if i % 16 == 0 {
            progress(&format!("compile W = {width}: optimized code, {i} kernels"));
        }
        if time.first <= OUTLIER {
            // It compiled a moment ago: an error now would be the JIT's own flakiness.
            time.optimized = optimized_code(subject, width).unwrap_or(None);
        }
    }
    let times = times.into_iter().map(|(s, t)| (s.label.clone(), t)).collect();
    Survey { times, failed }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_takes_the_lower_median_and_names_the_slowest() {
        let ms = Duration::from_millis;
        let times = vec![
            ("a".to_string(), ms(3)),
            ("b".to_string(), ms(9)),
            ("c".to_string(), ms(1)),
            ("d".to_string(), ms(4)),
        ];
        let want = Spread { p50: ms(3), max: ms(9), slowest: "b".into(), over_target: vec![] };
        assert_eq!(spread(&times), Some(want));
        assert_eq!(spread(&[]), None);
    }

    #[test]
    fn spread_names_the_kernels_over_the_target_slowest_first() {
        let ms = Duration::from_millis;
        let times = vec![
            ("fast".to_string(), ms(2)),
            ("slow".to_string(), ms(80)),
            ("at".to_string(), TARGET),
            ("slower".to_string(), ms(300)),
        ];
        let over = spread(&times).unwrap().over_target;
        assert_eq!(over, vec![("slower".to_string(), ms(300)), ("slow".to_string(), ms(80))]);
    }

    #[test]
    fn subjects_cover_bundled_and_conformance_kernels() {
        let all = subjects();
        // prefix_sum.wave has three kernels; every bundled source assembles.
        let bundled = all.iter().filter(|s| s.label.starts_with("bench/")).count();
        assert_eq!(bundled, kernels::ALL_SOURCES.len() + 2);
        assert!(all.iter().any(|s| s.label == "bench/gemm_gpu.wave:gemm_gpu" && s.workgroup == [16, 16, 1]));
        let conformance = all.len() - bundled;
        assert!(conformance > 200, "only {conformance} conformance kernels");
    }
}
