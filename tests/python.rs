//! The Python package (`python/`) from a checkout: its pytest suite and its example, in a venv
//! under target/ with numpy and pytest, against the `libwave_jit.so` this test run built
//! (`WAVE_JIT_LIBRARY`). .ci/run also builds the wheel with maturin and runs the suite against
//! the installed package. Without python3, venv or pip (or the network, for numpy and pytest)
//! this test says loudly that it did not run, and fails under `WAVE_JIT_REQUIRE_EXTERNAL_TESTS=1`.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

const TEST: &str = "python_package_tests_pass";
/// What the venv holds; a change makes a fresh venv.
const REQUIREMENTS: &[&str] = &["numpy", "pytest"];

/// A venv with the requirements, made once and reused; `None` after `support::missing`.
fn venv() -> Option<PathBuf> {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    if Command::new(&python).arg("--version").output().is_err() {
        support::did_not_run(TEST, &format!("no `{python}` (set PYTHON to use another)"));
        return None;
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("python-venv");
    let marker = dir.join("wave-jit-requirements");
    let wanted = REQUIREMENTS.join(" ");
    if std::fs::read_to_string(&marker).ok().as_deref() == Some(wanted.as_str()) {
        return Some(dir);
    }
    let _ = std::fs::remove_dir_all(&dir);
    let made = Command::new(&python).args(["-m", "venv"]).arg(&dir).output();
    if !made.as_ref().is_ok_and(|o| o.status.success()) {
        let why =
            made.map(|o| String::from_utf8_lossy(&o.stderr).into_owned()).unwrap_or_else(|e| e.to_string());
        support::did_not_run(TEST, &format!("`{python} -m venv` failed (install python3-venv?): {why}"));
        return None;
    }
    let installed = Command::new(bin(&dir, "python"))
        .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"])
        .args(REQUIREMENTS)
        .output()
        .expect("running pip");
    if !installed.status.success() {
        support::did_not_run(
            TEST,
            &format!(
                "pip could not install {wanted} (no network?): {}",
                String::from_utf8_lossy(&installed.stderr)
            ),
        );
        return None;
    }
    std::fs::write(&marker, wanted).unwrap();
    Some(dir)
}

fn bin(venv: &Path, program: &str) -> PathBuf {
    venv.join(if cfg!(windows) { "Scripts" } else { "bin" }).join(program)
}

/// Run the venv's python with the package from the checkout and the library cargo built.
fn python(venv: &Path, args: &[&str]) -> String {
    let root = support::root();
    let output = Command::new(bin(venv, "python"))
        .args(args)
        .current_dir(&root)
        .env("PYTHONPATH", root.join("python"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("WAVE_JIT_LIBRARY", support::library_dir().join(support::library_file()))
        .env_remove("WAVE_JIT_EXPECT_WHEEL")
        .output()
        .expect("running python");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "python {args:?} failed ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[test]
fn python_package_tests_pass() {
    let Some(venv) = venv() else { return };
    let stdout = python(&venv, &["-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", "python/tests"]);
    println!("{stdout}");
    let summary = stdout.lines().last().unwrap_or_default();
    assert!(summary.contains(" passed") && !summary.contains("skipped"), "pytest: {summary}");

    let example = python(&venv, &["python/examples/axpy.py"]);
    assert!(example.contains("out[999] = 2497.5"), "{example}");
}
