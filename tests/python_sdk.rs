//! wave-jit as the emulator of the published Python SDK (`wave-gpu` 0.1.2 on PyPI): the SDK's
//! own `wave_gpu.runtime.launch_emulator` runs `wave-emu KERNEL.wbin --memory-file MEM.bin
//! --grid X,Y,Z --workgroup X,Y,Z --reg I=V ...` and reads its buffers back from MEM.bin; here
//! `wave-emu` is a symlink to the built wave-jit, first on PATH.
//!
//! The SDK is installed with pip into a virtual environment under the target directory
//! (`target/tmp/wave-gpu-sdk`, reused by later runs). Without Python's venv, pip or the network
//! the test says loudly that it did not run (under `WAVE_JIT_REQUIRE_EXTERNAL_TESTS=1`, it fails).

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use support::{cache_dir, did_not_run, scratch, wave_jit, with_lock};

const TEST: &str = "python_sdk::sdk_launch_emulator_runs_wave_jit";

/// c[i] = a[i] + b[i] for i < n; buffers at the byte offsets in r0, r1, r2, n in r3 (the SDK
/// passes buffers first, then scalars).
const VECTOR_ADD: &str = "
.kernel vadd
    mov r4, sr_thread_id_x
    mov r5, sr_workgroup_id_x
    mov r6, sr_workgroup_size_x
    imad r4, r5, r6, r4
    icmp_lt p1, r4, r3
    if p1
        mov_imm r7, 2
        shl r8, r4, r7
        iadd r9, r8, r0
        device_load_u32 r10, r9
        iadd r9, r8, r1
        device_load_u32 r11, r9
        fadd r10, r10, r11
        iadd r9, r8, r2
        device_store_u32 r9, r10
    endif
    halt
.end
";

/// Runs the SDK on the kernel in argv[1]; prints where `wave-emu` was found, then the buffers.
const SCRIPT: &str = r#"
import shutil, sys
from wave_gpu.array import WaveArray
from wave_gpu.runtime import launch_emulator

n = 100
a = WaveArray([i * 0.5 for i in range(n)])
b = WaveArray([1000.0 - i for i in range(n)])
c = WaveArray([-1.0] * 128)
with open(sys.argv[1], "rb") as f:
    wbin = f.read()
launch_emulator(wbin, [a, b, c], [n], (2, 1, 1), (64, 1, 1))
print(shutil.which("wave-emu"))
for name, buf in (("a", a), ("b", b), ("c", c)):
    print(name, " ".join(repr(v) for v in buf.to_list()))
"#;

/// A virtual environment with wave-gpu 0.1.2, made once; its python, or why there is none.
fn sdk_python() -> Result<PathBuf, String> {
    let root = cache_dir("wave-gpu-sdk");
    // The SDK looks for its tools in `target/` next to the directory that holds the venv
    // (`parents[5]` of its runtime.py): `root` has none, so PATH decides.
    let venv = root.join("venv");
    let python = venv.join("bin").join("python");
    with_lock(&root, || {
        let installed = Command::new(&python)
            .args(["-c", "import wave_gpu, sys; sys.exit(wave_gpu.__version__ != '0.1.2')"])
            .output()
            .is_ok_and(|out| out.status.success());
        if installed {
            return Ok(python.clone());
        }
        let made = ["python3", "python"].iter().find_map(|host| {
            Command::new(host)
                .args(["-m", "venv", "--clear"])
                .arg(&venv)
                .output()
                .ok()
                .filter(|o| o.status.success())
        });
        if made.is_none() {
            return Err(
                "cannot make a virtual environment (`python3 -m venv`): is Python 3 with venv installed?"
                    .into(),
            );
        }
        let pip = Command::new(&python)
            .args(["-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--retries", "2"])
            .args(["--timeout", "20", "wave-gpu==0.1.2"])
            .output()
            .map_err(|e| format!("cannot run pip: {e}"))?;
        if !pip.status.success() {
            return Err(format!(
                "`pip install wave-gpu==0.1.2` failed (no network?):\n{}",
                String::from_utf8_lossy(&pip.stderr).trim()
            ));
        }
        Ok(python.clone())
    })?
}

fn floats(line: &str, name: &str) -> Vec<f64> {
    let values = line
        .strip_prefix(name)
        .and_then(|l| l.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no `{name}` line: {line}"));
    values.split(' ').map(|v| v.parse().unwrap_or_else(|e| panic!("`{v}`: {e}"))).collect()
}

#[test]
fn sdk_launch_emulator_runs_wave_jit() {
    let python = match sdk_python() {
        Ok(python) => python,
        Err(why) => return did_not_run(TEST, &why),
    };
    let dir = scratch("python-sdk", "launch_emulator");
    let source = dir.join("vadd.wave");
    let wbin = dir.join("vadd.wbin");
    std::fs::write(&source, VECTOR_ADD).unwrap();
    let asm = Command::new(wave_jit()).arg("asm").arg(&source).arg("-o").arg(&wbin).output().unwrap();
    assert!(asm.status.success(), "{}", String::from_utf8_lossy(&asm.stderr));

    let bin = dir.join("bin");
    std::fs::create_dir(&bin).unwrap();
    let wave_emu = bin.join("wave-emu");
    std::os::unix::fs::symlink(wave_jit(), &wave_emu).unwrap();
    let path = std::env::join_paths(
        std::iter::once(bin.clone()).chain(std::env::var_os("PATH").iter().flat_map(std::env::split_paths)),
    )
    .unwrap();
    let script = dir.join("launch.py");
    std::fs::write(&script, SCRIPT).unwrap();
    let out = Command::new(&python)
        .arg(&script)
        .arg(&wbin)
        .env("PATH", path)
        .env_remove("PYTHONPATH")
        .env_remove("PYTHONHOME")
        .current_dir(&dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "the SDK failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));

    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{stdout}");
    assert_eq!(Path::new(lines[0]), wave_emu, "the SDK ran another wave-emu");
    let n = 100;
    let a: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
    let b: Vec<f64> = (0..n).map(|i| 1000.0 - i as f64).collect();
    assert_eq!(floats(lines[1], "a"), a);
    assert_eq!(floats(lines[2], "b"), b);
    let c = floats(lines[3], "c");
    let expected: Vec<f64> =
        (0..128).map(|i| if i < n { (a[i] as f32 + b[i] as f32) as f64 } else { -1.0 }).collect();
    assert_eq!(c, expected);
    let _ = std::fs::remove_dir_all(&dir);
}
