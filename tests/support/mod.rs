//! Shared by the command-line tests: the built `wave-jit`, scratch directories, and the external
//! things some tests need, which they fetch themselves:
//! - the reference `wave-asm`/`wave-emu` 0.1.2: from `$WAVE_TOOLS` (a directory) or `$PATH` if
//!   they are version 0.1.2 there, else installed once with `cargo install` under the target
//!   directory (`target/tmp/wave-tools`);
//! - Python's `venv` and pip, and the network (the Python SDK test and the Python package's
//!   tests);
//! - a C compiler (the C ABI tests), and the `libwave_jit` the test run built.
//!
//! When they cannot be had, the test says loudly on stderr that it did not run, and passes;
//! with `WAVE_JIT_REQUIRE_EXTERNAL_TESTS=1` (CI sets it) it fails instead.

// Each test file uses a part of this module.
#![allow(dead_code)]

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Set (to anything but `0`) where a test that cannot run must fail: CI.
pub const REQUIRE_EXTERNAL: &str = "WAVE_JIT_REQUIRE_EXTERNAL_TESTS";

/// The reference toolchain's version that the comparisons are written against.
const REFERENCE_VERSION: &str = "0.1.2";

pub fn wave_jit() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_wave-jit"))
}

/// A directory under the target directory where tests keep what they fetch, across runs.
pub fn cache_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(name)
}

/// A fresh scratch directory for one test.
pub fn scratch(file: &str, test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wave-jit-{file}-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Whether the JIT wrote code dumps into `dir` (`WAVE_JIT_DUMP=dir`): it compiled something.
pub fn has_code_dumps(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some())
}

/// `test` could not run here (`why`). A loud notice on stderr, or a panic under
/// [`REQUIRE_EXTERNAL`].
pub fn did_not_run(test: &str, why: &str) {
    if std::env::var_os(REQUIRE_EXTERNAL).is_some_and(|v| !v.is_empty() && v != "0") {
        panic!("{test} could not run and {REQUIRE_EXTERNAL} is set: {why}");
    }
    let bar = "!".repeat(78);
    let why: String = why.lines().map(|l| format!("!!   {l}\n")).collect();
    let notice = format!(
        "\n{bar}\n!! TEST DID NOT RUN: {test}\n!! why:\n{why}!! It passes without having checked anything. \
         Set {REQUIRE_EXTERNAL}=1 to make this a failure (CI does).\n{bar}\n\n"
    );
    // One write to the stream itself: the test harness captures `eprintln!`, and other tests
    // print between separate writes.
    let _ = std::io::stderr().lock().write_all(notice.as_bytes());
}

/// Hold an exclusive lock on `dir/.lock` (other test threads and processes wait) while `f` runs.
pub fn with_lock<T>(dir: &Path, f: impl FnOnce() -> T) -> Result<T, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let lock_path = dir.join(".lock");
    let lock = File::create(&lock_path).map_err(|e| format!("cannot create {}: {e}", lock_path.display()))?;
    lock.lock().map_err(|e| format!("cannot lock {}: {e}", lock_path.display()))?;
    let result = f();
    drop(lock);
    Ok(result)
}

/// The reference `wave-asm` and `wave-emu` 0.1.2.
#[derive(Clone, Debug)]
pub struct ReferenceTools {
    pub wave_asm: PathBuf,
    pub wave_emu: PathBuf,
}

/// The reference tools, or why they cannot be had (then [`did_not_run`] has been called for
/// `test`).
pub fn reference_tools(test: &str) -> Option<ReferenceTools> {
    static TOOLS: OnceLock<Result<ReferenceTools, String>> = OnceLock::new();
    match TOOLS.get_or_init(find_or_install_reference_tools) {
        Ok(tools) => Some(tools.clone()),
        Err(why) => {
            did_not_run(test, why);
            None
        }
    }
}

/// Whether `path` is the reference tool `name` at the expected version (not, say, a `wave-emu`
/// symlink to wave-jit).
fn is_reference(path: &Path, name: &str) -> bool {
    Command::new(path)
        .arg("--version")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == format!("{name} {REFERENCE_VERSION}"))
}

fn tools_in(dir: &Path) -> Option<ReferenceTools> {
    let tools = ReferenceTools { wave_asm: dir.join("wave-asm"), wave_emu: dir.join("wave-emu") };
    (is_reference(&tools.wave_asm, "wave-asm") && is_reference(&tools.wave_emu, "wave-emu")).then_some(tools)
}

fn find_or_install_reference_tools() -> Result<ReferenceTools, String> {
    if let Some(dir) = std::env::var_os("WAVE_TOOLS") {
        let dir = PathBuf::from(dir);
        return tools_in(&dir).ok_or_else(|| {
            format!("WAVE_TOOLS={} does not hold wave-asm and wave-emu {REFERENCE_VERSION}", dir.display())
        });
    }
    let path_dirs =
        std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect::<Vec<_>>()).unwrap_or_default();
    if let Some(tools) = path_dirs.iter().find_map(|dir| tools_in(dir)) {
        return Ok(tools);
    }
    let root = cache_dir("wave-tools");
    let bin = root.join("bin");
    with_lock(&root, || {
        if let Some(tools) = tools_in(&bin) {
            return Ok(tools);
        }
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let _ = writeln!(
            std::io::stderr(),
            "note: installing the reference wave-asm and wave-emu {REFERENCE_VERSION} into {} (once; about a minute)",
            root.display()
        );
        let output = Command::new(&cargo)
            .args(["install", "--locked", "--quiet", "--root"])
            .arg(&root)
            .arg(format!("wave-asm@{REFERENCE_VERSION}"))
            .arg(format!("wave-emu@{REFERENCE_VERSION}"))
            // cargo install builds in a temporary directory of its own, not in ours (whose lock
            // the cargo running these tests may hold).
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("CARGO_BUILD_TARGET_DIR")
            .output()
            .map_err(|e| format!("cannot run {}: {e}", Path::new(&cargo).display()))?;
        if !output.status.success() {
            return Err(format!(
                "`cargo install wave-asm@{REFERENCE_VERSION} wave-emu@{REFERENCE_VERSION}` failed (no network?):\n{}",
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
        tools_in(&bin).ok_or_else(|| format!("cargo install left no working tools in {}", bin.display()))
    })?
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

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}
