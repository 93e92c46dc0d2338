//! The C ABI from C: programs compiled with gcc against `include/wave_jit.h` and the
//! `libwave_jit.so` this test run built, then run. Without gcc the tests say loudly that they
//! did not run (and fail under `WAVE_JIT_REQUIRE_EXTERNAL_TESTS=1`, as in CI).

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Compile `sources` into `exe` against the header and the library; `None` when there is no C
/// compiler (after `support::missing`).
fn compile(test: &str, sources: &[PathBuf], exe: &Path) -> Option<()> {
    let compiler = std::env::var("CC").unwrap_or_else(|_| "gcc".into());
    if Command::new(&compiler).arg("--version").output().is_err() {
        support::did_not_run(test, &format!("no C compiler (`{compiler}`; set CC to use another)"));
        return None;
    }
    let library_dir = support::library_dir();
    let output = Command::new(&compiler)
        .args(["-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-pedantic"])
        .arg("-I")
        .arg(support::root().join("include"))
        .args(sources)
        .arg("-L")
        .arg(&library_dir)
        .arg(format!("-Wl,-rpath,{}", library_dir.display()))
        .args(["-lwave_jit", "-lm", "-o"])
        .arg(exe)
        .output()
        .expect("running the C compiler");
    assert!(output.status.success(), "{compiler} failed:\n{}", String::from_utf8_lossy(&output.stderr));
    Some(())
}

/// Run a compiled program; it must succeed. Returns its stdout.
fn run(exe: &Path, args: &[&Path], env: &[(&str, &str)]) -> String {
    // cargo's LD_LIBRARY_PATH for tests names target/<profile> too, where an older
    // libwave_jit.so from `cargo build` may lie: it would win over the program's rpath.
    let output: Output = Command::new(exe)
        .args(args)
        .env("LD_LIBRARY_PATH", support::library_dir())
        .envs(env.iter().copied())
        .output()
        .expect("running");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{} failed ({}):\nstdout:\n{stdout}\nstderr:\n{}",
        exe.display(),
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[test]
fn c_example_runs_a_kernel() {
    let dir = support::scratch("c_api", "c_example");
    let exe = dir.join("axpy");
    if compile("c_example_runs_a_kernel", &[support::root().join("examples/c/axpy.c")], &exe).is_none() {
        return;
    }
    let stdout = run(&exe, &[&support::root().join("examples/axpy.wave")], &[]);
    assert_eq!(stdout, "out[0..4] = 0 2.5 5 7.5, out[999] = 2497.5\n");
}

#[test]
fn c_api_handles_buffers_launches_and_errors() {
    let dir = support::scratch("c_api", "c_api");
    let exe = dir.join("api_test");
    if compile(
        "c_api_handles_buffers_launches_and_errors",
        &[support::root().join("tests/c/api_test.c")],
        &exe,
    )
    .is_none()
    {
        return;
    }
    let stdout = run(&exe, &[&support::root().join("examples/axpy.wave")], &[]);
    assert!(stdout.starts_with("api_test: ") && stdout.ends_with(" checks passed\n"), "{stdout}");
}

/// A program written against the reference runtime's `wave_emulate`, unchanged.
#[test]
fn reference_wave_emulate_program_runs_unchanged() {
    let dir = support::scratch("c_api", "reference_emulate");
    let exe = dir.join("reference_emulate");
    if compile(
        "reference_wave_emulate_program_runs_unchanged",
        &[support::root().join("tests/c/reference_emulate.c")],
        &exe,
    )
    .is_none()
    {
        return;
    }
    let source = std::fs::read_to_string(support::root().join("examples/axpy.wave")).unwrap();
    let wbin = dir.join("axpy.wbin");
    std::fs::write(&wbin, wave_jit::assemble(&source, "axpy.wave").unwrap()).unwrap();
    let stdout = run(&exe, &[&wbin], &[]);
    assert!(stdout.starts_with("reference_emulate: ") && stdout.ends_with(" checks passed\n"), "{stdout}");
}

/// Every entry point catches a panic (injected by `WAVE_JIT_TEST_PANIC`) and returns its failure
/// value; the program calls each function the header declares.
#[test]
fn no_panic_crosses_the_c_abi() {
    let program = support::root().join("tests/c/panic_barrier.c");
    let source = std::fs::read_to_string(&program).unwrap();
    let header = std::fs::read_to_string(support::root().join("include/wave_jit.h")).unwrap();
    let declared: Vec<&str> = header
        .lines()
        .filter_map(|line| {
            line.split_once(" wave_").filter(|_| !line.starts_with("//")).map(|(_, rest)| rest)
        })
        .filter_map(|rest| rest.split_once('(').map(|(name, _)| name))
        .collect();
    assert!(declared.len() >= 20, "found only {declared:?} in the header");
    for name in &declared {
        if *name != "last_error" {
            assert!(
                source.contains(&format!("\"wave_{name}\"")),
                "tests/c/panic_barrier.c does not call wave_{name}"
            );
        }
    }

    let dir = support::scratch("c_api", "panic_barrier");
    let exe = dir.join("panic_barrier");
    if compile("no_panic_crosses_the_c_abi", &[program], &exe).is_none() {
        return;
    }
    let stdout = run(&exe, &[], &[("WAVE_JIT_TEST_PANIC", "*"), ("RUST_BACKTRACE", "0")]);
    assert_eq!(
        stdout,
        format!("panic_barrier: {} entry points returned their failure value\n", declared.len() - 1)
    );
}
