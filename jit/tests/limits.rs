//! The JIT's limits: kernels too large once calls are inlined (declined, then interpreted or
//! failed by policy), and dispatches that stop promptly when a workgroup faults.

use wave_jit_codegen::compiler::{check_size, instruction_limit, COMPILE_BUDGET};
use wave_jit_codegen::engine::MAX_CLAIM;
use wave_jit_codegen::{compile, Flags, JitEngine, JitError};
use wave_runtime::{Device, Dispatch, Engine, Interpreter, RunErrorKind};

fn load(source: &str) -> wave_isa::ValidKernel {
    let (module, _) =
        wave_isa::module::load_bytes(source.as_bytes(), "k.wave").unwrap_or_else(|e| panic!("{e}"));
    module.kernels.into_iter().next().unwrap()
}

/// Thread `t` of the workgroup adds 1 to `r6` once per inlined copy of the deepest function
/// and stores it at `4 t`: `levels` functions, each calling the next `fan` times.
fn fan_kernel(levels: usize, fan: usize) -> wave_isa::ValidKernel {
    let mut s = String::from(
        ".kernel fan\n    mov_sr r1, sr_thread_id_x\n    mov_imm r6, 0\n    call f1\n    mov_imm r2, 2\n    shl r3, r1, r2\n    device_store_u32 r3, r6\n    halt\n",
    );
    for level in 1..=levels {
        s += &format!("f{level}:\n");
        if level < levels {
            s += &format!("    call f{}\n", level + 1).repeat(fan);
        } else {
            s += "    mov_imm r10, 1\n    iadd r6, r6, r10\n";
        }
        s += "    return\n";
    }
    load(&(s + ".end\n"))
}

fn flags(width: u32) -> Flags {
    Flags { width, checked: true, fuel: true, workgroup: [width, 1, 1], stats: false, window_wraps: false }
}

#[test]
fn the_limit_scales_with_the_wave_width() {
    // W/4 + 2 units an instruction.
    assert_eq!(instruction_limit(4), COMPILE_BUDGET / 3);
    assert_eq!(instruction_limit(32), COMPILE_BUDGET / 10);
    assert_eq!(instruction_limit(64), COMPILE_BUDGET / 18);
    // A straight-line kernel exactly at the limit at W = 64 fits; one more instruction does not.
    let limit = instruction_limit(64) as usize;
    let at = load(&format!(".kernel k\n{}    halt\n.end\n", "    nop\n".repeat(limit - 1)));
    assert_eq!(wave_isa::analysis::inlined_instructions(&at), limit as u64);
    assert_eq!(check_size(&at, 64), Ok(()));
    let over = load(&format!(".kernel k\n{}    halt\n.end\n", "    nop\n".repeat(limit)));
    assert!(matches!(check_size(&over, 64), Err(JitError::TooLarge(_))));
    // The smaller widths take it.
    assert_eq!(check_size(&over, 32), Ok(()));
}

#[test]
fn kernels_too_large_once_inlined_are_declined() {
    // 7 levels of 4 calls: 40 instructions, 4^6 copies of the last level.
    let kernel = fan_kernel(7, 4);
    let inlined = wave_isa::analysis::inlined_instructions(&kernel);
    assert_eq!(inlined, 7 + (1 + 4 + 16 + 64 + 256 + 1024) * 5 + 4096 * 3);
    let message = format!(
        "kernel `fan` is too large for the JIT ({inlined} instructions after inlining calls, limit {} at wave width 32)",
        instruction_limit(32)
    );
    match compile(&kernel, flags(32)) {
        Err(e) => assert_eq!(e, JitError::TooLarge(message.clone())),
        Ok(_) => panic!("compiled a kernel of {inlined} instructions"),
    }
    // Strict: the error, before anything runs.
    let dispatch = Dispatch { workgroup: [32, 1, 1], threads: 1, ..Dispatch::default() };
    let mut device = Device::new(1 << 16).unwrap();
    let err = JitEngine::strict().run(&kernel, &dispatch, &mut device).unwrap_err();
    assert_eq!(err.kind, RunErrorKind::Unsupported(message.clone()));
    assert_eq!(
        err.to_string(),
        format!("kernel `fan`, workgroup (0,0,0), wave 0, pc 0x0000: unsupported: {message}")
    );
    assert!(device.read(0, 128).unwrap().iter().all(|&b| b == 0), "the strict engine ran something");
}

#[test]
fn the_default_engine_runs_declined_kernels_on_the_interpreter() {
    let kernel = fan_kernel(7, 4);
    let dispatch = Dispatch { workgroup: [32, 1, 1], threads: 1, ..Dispatch::default() };
    let mut jit_device = Device::new(1 << 16).unwrap();
    let report = JitEngine::new().run(&kernel, &dispatch, &mut jit_device).unwrap();
    let note = report.fallback.clone().expect("the run says it fell back");
    assert!(note.starts_with("kernel `fan` is too large for the JIT ("), "{note}");
    assert!(note.ends_with("): running it on the interpreter"), "{note}");
    let mut interp_device = Device::new(1 << 16).unwrap();
    let interp = Interpreter::new().run(&kernel, &dispatch, &mut interp_device).unwrap();
    // The interpreter's complete counters, and its results: 4^6 per thread. Nothing compiled.
    assert_eq!(report, wave_runtime::RunReport { fallback: Some(note), ..interp });
    assert_eq!(report.compile, None);
    assert_eq!(jit_device.read(0, 128).unwrap(), interp_device.read(0, 128).unwrap());
    assert_eq!(jit_device.read(0, 4).unwrap(), 4096u32.to_le_bytes());
    // A kernel within the limit runs on the JIT: no note. (Compiled first: this dispatch is
    // small enough that the default engine would interpret the uncompiled kernel, and say so.)
    let small = fan_kernel(3, 4);
    JitEngine::strict().run(&small, &dispatch, &mut Device::new(1 << 16).unwrap()).unwrap();
    let report = JitEngine::new().run(&small, &dispatch, &mut jit_device).unwrap();
    assert_eq!(report.fallback, None);
    // From the cache: compiled by the strict engine's run.
    assert!(report.compile.as_ref().is_some_and(|c| !c.compiled_now), "{:?}", report.compile);
    assert_eq!(jit_device.read(0, 4).unwrap(), 16u32.to_le_bytes());
}

/// Every workgroup adds 1 at byte 0 and raises byte 4 to its x id; those with x id at least
/// `from` then store out of bounds.
fn faulting_from(from: u32) -> wave_isa::ValidKernel {
    load(&format!(
        "
.kernel stop
    mov_sr r1, sr_workgroup_id_x
    mov_sr r2, sr_thread_id_x
    mov_imm r3, 0
    mov_imm r4, 4
    mov_imm r5, 1
    icmp_eq p1, r2, r3
    @p1 atomic_add r3, r5, .device
    @p1 atomic_max r4, r1, .device
    mov_imm r6, {from}
    icmp_ge p2, r1, r6
    mov_imm r7, 0xfffffff0
    @p2 device_store_u32 r7, r1
.end
"
    ))
}

fn counters(device: &Device) -> (u32, u32) {
    let b = device.read(0, 8).unwrap();
    (u32::from_le_bytes([b[0], b[1], b[2], b[3]]), u32::from_le_bytes([b[4], b[5], b[6], b[7]]))
}

#[test]
fn a_fault_stops_the_other_workers_promptly() {
    let from = 5000;
    let kernel = faulting_from(from);
    let base =
        Dispatch { grid: [10_000_000, 1, 1], workgroup: [4, 1, 1], wave_width: 4, ..Dispatch::default() };
    // One thread: workgroups in order, the fault at `from`.
    let mut device = Device::new(1 << 16).unwrap();
    let err =
        JitEngine::strict().run(&kernel, &Dispatch { threads: 1, ..base.clone() }, &mut device).unwrap_err();
    assert_eq!(err.workgroup, [from, 0, 0]);
    assert_eq!(counters(&device), (from + 1, from));
    // Several: workgroups are taken in order from one counter, and no worker starts one after
    // a failure it sees; each runs at most one faulting workgroup. So no workgroup beyond the
    // claims the workers can hold ran (rayon's range splitting used to start a worker in the
    // middle of the grid), and the one reported is the lowest that failed.
    for threads in [2, 4] {
        let mut device = Device::new(1 << 16).unwrap();
        let err =
            JitEngine::strict().run(&kernel, &Dispatch { threads, ..base.clone() }, &mut device).unwrap_err();
        let (ran, highest) = counters(&device);
        let reach = from + (threads as u32 + 1) * MAX_CLAIM as u32;
        assert!(highest < reach, "{threads} threads: workgroup {highest} ran (fault from {from})");
        assert!(ran < reach, "{threads} threads: {ran} workgroups ran (fault from {from})");
        assert!((from..=highest).contains(&err.workgroup[0]), "{threads} threads: {err}");
        assert!(matches!(err.kind, RunErrorKind::OutOfBounds { .. }), "{err}");
    }
    // 10^15 workgroups: the dispatch ends with the fault (it visited every id before).
    let mut device = Device::new(1 << 16).unwrap();
    let huge = Dispatch { grid: [100_000, 100_000, 100_000], threads: 2, ..base };
    let err = JitEngine::strict().run(&kernel, &huge, &mut device).unwrap_err();
    assert_eq!(err.workgroup[1..], [0, 0]);
    assert!(counters(&device).0 < from + 3 * MAX_CLAIM as u32, "{:?}", counters(&device));
}
