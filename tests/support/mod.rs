//! Shared by the tests that need tools outside Rust (gcc, python3): where the built C library
//! is, and what to do when a tool is missing.

#![allow(dead_code)] // each test uses part of it

use std::io::Write as _;
use std::path::PathBuf;

/// The CI variable that turns a missing external tool from a loud notice into a failure.
pub const REQUIRE_EXTERNAL: &str = "WAVE_JIT_REQUIRE_EXTERNAL";

/// A tool this test needs is missing: under `WAVE_JIT_REQUIRE_EXTERNAL=1` (CI) the test fails;
/// otherwise it says loudly on stderr that it did not run, and the caller returns.
pub fn missing(test: &str, what: &str) {
    if std::env::var(REQUIRE_EXTERNAL).is_ok_and(|v| v == "1") {
        panic!("{test}: {what}, and {REQUIRE_EXTERNAL}=1 requires it");
    }
    // Straight to the process's stderr: the test harness captures `eprintln!` of passing tests.
    let _ = writeln!(
        std::io::stderr(),
        "\n!!!!!!!! {test} DID NOT RUN: {what}. It is a real test of the C ABI or the Python \
         package: install what is missing (CI sets {REQUIRE_EXTERNAL}=1 and fails instead). !!!!!!!!\n"
    );
}

/// The directory holding the `libwave_jit.so` this test run built (cargo builds the cdylib
/// next to the test executables, in `target/<profile>/deps`).
pub fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable's path");
    let dir = exe.parent().expect("target/<profile>/deps").to_path_buf();
    let library = dir.join(library_file());
    assert!(library.is_file(), "{} was not built next to the tests", library.display());
    dir
}

/// The C library's file name on this host.
pub fn library_file() -> &'static str {
    if cfg!(target_os = "macos") {
        "libwave_jit.dylib"
    } else {
        "libwave_jit.so"
    }
}

/// A fresh scratch directory for one test.
pub fn scratch(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}
