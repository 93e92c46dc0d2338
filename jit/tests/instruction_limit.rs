//! The instruction limit: the JIT takes from a workgroup's budget exactly what the interpreter
//! counts (`wave_isa::analysis::cost`), so a kernel passes or fails the limit alike on both
//! engines, failing in the same workgroup and wave with the same error.

mod common;

use common::{for_jit, WIDTHS};
use wave_difftest::program::ProgramKind;
use wave_difftest::{gen::GenConfig, run::dispatch_for, run::kernel_of};
use wave_isa::ValidKernel;
use wave_runtime::{Device, Dispatch, Engine, Interpreter, RunError, RunErrorKind, Stats};

fn assembled(source: &str) -> ValidKernel {
    let file = wave_isa::asm::assemble(source, "limit.wave").unwrap_or_else(|e| panic!("{e:?}")).file;
    wave_isa::module::Module::from_wbin(&file).unwrap().kernels[0].clone()
}

fn run(engine: &dyn Engine, kernel: &ValidKernel, d: &Dispatch, data: &[u8]) -> Result<Stats, RunError> {
    let mut device = Device::new(1 << 16).unwrap();
    device.write(0, data).unwrap();
    engine.run(kernel, d, &mut device).map(|report| report.stats)
}

/// Where and why a run stopped, as both engines must agree (the JIT may name another pc).
fn stop(r: &Result<Stats, RunError>) -> Option<(String, [u32; 3], u32)> {
    r.as_ref().err().map(|e| (format!("{:?}", std::mem::discriminant(&e.kind)), e.workgroup, e.wave))
}

/// At every width: the JIT counts what the interpreter counts (one workgroup: its count `T`),
/// both pass with a limit of `T` and both fail with `T − 1`, with the limit error in the same
/// wave.
fn passes_and_fails_alike(kernel: &ValidKernel, base: &Dispatch, data: &[u8]) {
    let jit = wave_jit_codegen::JitEngine::strict();
    for w in WIDTHS {
        let d =
            Dispatch { wave_width: w, grid: [1, 1, 1], max_instructions: u32::MAX as u64, ..base.clone() };
        let count =
            run(&Interpreter::new(), kernel, &d, data).unwrap_or_else(|e| panic!("W={w}: {e}")).instructions;
        let counted = run(&jit, kernel, &d, data).unwrap_or_else(|e| panic!("W={w}: JIT: {e}")).instructions;
        assert_eq!(counted, count, "{} W={w}: the JIT's count", kernel.meta.name);
        let at = |limit: u64| Dispatch { max_instructions: limit, ..d.clone() };
        let jit_at_count = run(&jit, kernel, &at(count), data);
        assert!(jit_at_count.is_ok(), "{} W={w}: limit {count}: {jit_at_count:?}", kernel.meta.name);
        let (ri, rj) =
            (run(&Interpreter::new(), kernel, &at(count - 1), data), run(&jit, kernel, &at(count - 1), data));
        let limit = |r: &Result<Stats, RunError>| matches!(r, Err(e) if matches!(e.kind, RunErrorKind::InstructionLimit { .. }));
        assert!(limit(&ri) && limit(&rj), "{} W={w}: limit {}: {ri:?} / {rj:?}", kernel.meta.name, count - 1);
        assert_eq!(stop(&ri), stop(&rj), "{} W={w}: limit {}", kernel.meta.name, count - 1);
    }
}

/// Repro 2026-11-24 #5 (`nestcharge2_20.wave`, smaller): 20 nested loops, each entered by fewer
/// lanes, the innermost body large. The JIT charged each loop's whole static body (nested
/// loops included) at its back edge: about depth × body, so it failed a limit the
/// interpreter's 1,127 instructions met.
fn nested_divergent_loops(depth: u32, adds: u32) -> String {
    let mut s = String::from(
        ".kernel nested\n    mov_imm r1, 1\n    icmp_eq p3, r1, r1\n    mov_imm r2, 0\n    mov_sr r5, sr_thread_id_x\n",
    );
    for level in 0..depth {
        s += &format!("    loop\n    mov_imm r10, {level}\n    icmp_lt p1, r5, r10\n    break p1\n");
    }
    s += &"    iadd r2, r2, r1\n".repeat(adds as usize);
    s += &"    break p3\n    endloop\n".repeat(depth as usize);
    s += "    mov_imm r4, 2\n    shl r4, r5, r4\n    device_store_u32 r4, r2\n.end\n";
    s
}

#[test]
fn nested_divergent_loops_are_charged_what_runs() {
    let k = assembled(&nested_divergent_loops(20, 300));
    let d = Dispatch { workgroup: [4, 1, 1], wave_width: 4, threads: 1, ..Dispatch::default() };
    // As the repro's command (there 1,127 of 20,000 for a body of about 1,000): the
    // interpreter needs 427 of 2,000, the JIT charged about 20 × 300.
    let limit = Dispatch { max_instructions: 2_000, ..d.clone() };
    let interp = run(&Interpreter::new(), &k, &limit, &[]).expect("the interpreter passes");
    assert!(interp.instructions < 1000, "{}", interp.instructions);
    let jit = run(&wave_jit_codegen::JitEngine::strict(), &k, &limit, &[]);
    assert_eq!(jit.map(|s| s.instructions).map_err(|e| e.to_string()), Ok(interp.instructions));
    passes_and_fails_alike(&k, &Dispatch { workgroup: [16, 1, 1], ..d }, &[]);
}

/// Repro 2026-11-24 #5 (`overcharge_uniform.wave`, smaller): a loop holding an `if` on a
/// predicate false in every lane, with a large body. The interpreter walks (and counts) the
/// body with an empty mask; the JIT jumped over it and charged nothing for it.
fn uniformly_false_if_in_loop(trips: u32, adds: u32) -> String {
    let mut s = format!(
        ".kernel skipped\n    mov_imm r1, 0\n    mov_imm r2, 1\n    mov_imm r5, {trips}\n    icmp_lt p2, r2, r1\n    loop\n    iadd r1, r1, r2\n    if p2\n"
    );
    s += &"    iadd r8, r8, r2\n".repeat(adds as usize);
    s += "    endif\n    icmp_ge p1, r1, r5\n    break p1\n    endloop\n    mov_imm r9, 0\n    device_store_u32 r9, r1\n.end\n";
    s
}

#[test]
fn uniformly_false_if_bodies_are_charged() {
    let k = assembled(&uniformly_false_if_in_loop(20, 500));
    let d = Dispatch { workgroup: [32, 1, 1], threads: 1, ..Dispatch::default() };
    // The repro's command, scaled: a limit the interpreter's count exceeds.
    let limit = Dispatch { max_instructions: 20 * 500, ..d.clone() };
    let (ri, rj) = (
        run(&Interpreter::new(), &k, &limit, &[]),
        run(&wave_jit_codegen::JitEngine::strict(), &k, &limit, &[]),
    );
    assert!(matches!(&ri, Err(e) if matches!(e.kind, RunErrorKind::InstructionLimit { .. })), "{ri:?}");
    assert_eq!(stop(&ri), stop(&rj), "{rj:?}");
    passes_and_fails_alike(&k, &d, &[]);
}

#[test]
fn halts_breaks_barriers_and_calls_are_charged_what_runs() {
    // A loop whose lanes halt one by one (the wave ends inside it: what follows is never
    // counted), uniform and divergent breaks and continues, a barrier skipped by a uniform
    // break, a call with a divergent return, and a lane-local loop (compiled per vector).
    let source = "
.kernel mixed
    mov_sr r1, sr_thread_id_x
    mov_sr r2, sr_wave_id
    mov_imm r3, 1
    mov_imm r4, 0
    mov_imm r6, 3
    and r7, r1, r6
    mov_imm r8, 0
    loop
        iadd r8, r8, r3
        icmp_gt p1, r8, r6
        break p1
        barrier
        icmp_eq p2, r7, r8
        continue p2
        iadd r4, r4, r8
    endloop
    call f
    mov_imm r9, 0
    loop
        iadd r9, r9, r3
        imul r10, r9, r9
        icmp_ge p1, r9, r7
        break p1
        iadd r4, r4, r10
    endloop
    mov_imm r11, 0
    loop
        iadd r11, r11, r3
        icmp_gt p1, r11, r7
        @p1 halt
        iadd r4, r4, r11
    endloop
    iadd r4, r4, r4
    iadd r4, r4, r4
    iadd r4, r4, r4
    iadd r4, r4, r4
    halt
f:
    icmp_eq p1, r7, r4
    @p1 return
    iadd r4, r4, r3
    return
.end
";
    let k = assembled(source);
    passes_and_fails_alike(&k, &Dispatch { workgroup: [64, 1, 1], threads: 1, ..Dispatch::default() }, &[]);
    // Over several workgroups on several threads, with `--stats` code: the same counters.
    let d = Dispatch {
        grid: [6, 1, 1],
        workgroup: [48, 1, 1],
        wave_width: 16,
        threads: 2,
        ..Dispatch::default()
    };
    let want = run(&Interpreter::new(), &k, &d, &[]).unwrap();
    let got = run(&wave_jit_codegen::JitEngine::strict().with_stats(true), &k, &d, &[]).unwrap();
    assert_eq!(got, want);
    assert!(want.barriers > 0, "{want:?}");
}

#[test]
fn a_budget_that_runs_out_in_a_per_vector_loop_stops_both_engines_alike() {
    // A lane-local loop (run per vector by the JIT) whose trip count depends on the lane,
    // with f32 accumulators fed NaNs in some lanes (those vectors bail out to the wave-major
    // copy of the loop).
    let source = "
.kernel vectors
    mov_sr r1, sr_thread_id_x
    mov_imm r2, 2
    shl r3, r1, r2
    device_load_u32 r4, r3
    mov_imm r5, 0
    mov_imm r6, 1
    mov_imm r7, 7
    and r8, r1, r7
    iadd r8, r8, r7
    loop
        iadd r5, r5, r6
        fadd r4, r4, r4
        fmul r9, r4, r4
        icmp_ge p1, r5, r8
        break p1
    endloop
    device_store_u32 r3, r4
.end
";
    let k = assembled(source);
    let d = Dispatch { workgroup: [64, 1, 1], threads: 1, ..Dispatch::default() };
    let finite: Vec<u8> = (0..64u32).flat_map(|i| (i as f32 * 0.25).to_bits().to_le_bytes()).collect();
    passes_and_fails_alike(&k, &d, &finite);
    let nans: Vec<u8> =
        (0..64u32).flat_map(|i| if i % 5 == 3 { 0x7fc0_0000 | i } else { i }.to_le_bytes()).collect();
    passes_and_fails_alike(&k, &d, &nans);
}

#[test]
fn random_programs_pass_and_fail_the_limit_alike() {
    let config = for_jit(GenConfig { max_statements: 24, ..GenConfig::default() });
    programs_pass_and_fail_the_limit_alike(&config, 60);
}

/// Nested divergent loops with breaks and continues up to 8 deep, and bodies of uniformly
/// false ifs, are charged alike.
#[test]
fn deeply_nested_random_programs_pass_and_fail_the_limit_alike() {
    let config = for_jit(GenConfig { max_statements: 32, ..GenConfig::only(ProgramKind::DeepNesting) });
    programs_pass_and_fail_the_limit_alike(&config, 15);
}

fn programs_pass_and_fail_the_limit_alike(config: &GenConfig, cases: u64) {
    // For each program: the smallest limit the interpreter passes with (per workgroup, so
    // searched for); the JIT passes with it and fails with one less, in the same wave.
    let jit = wave_jit_codegen::JitEngine::strict();
    for case in 0..cases {
        let (_, program) = wave_difftest::case_program(0x11A1, case, &WIDTHS, config);
        let kernel = kernel_of(&program).unwrap();
        let run_at = |engine: &dyn Engine, limit: u64| {
            let d = Dispatch { max_instructions: limit, ..dispatch_for(&program.shape) };
            let mut device = Device::new(program.shape.device_bytes()).unwrap();
            device.write(0, &program.data).unwrap();
            engine.run(&kernel, &d, &mut device).map(|report| report.stats)
        };
        let total =
            run_at(&Interpreter::new(), u32::MAX as u64).expect("generated programs run").instructions;
        let (mut fails, mut passes) = (0u64, total);
        while passes - fails > 1 {
            let mid = (fails + passes) / 2;
            if run_at(&Interpreter::new(), mid).is_ok() {
                passes = mid;
            } else {
                fails = mid;
            }
        }
        let width = program.shape.wave_width;
        assert!(
            run_at(&jit, passes).is_ok(),
            "case {case} W={width}: limit {passes}: {:?}",
            run_at(&jit, passes)
        );
        if fails > 0 {
            let (ri, rj) = (run_at(&Interpreter::new(), fails), run_at(&jit, fails));
            assert_eq!(stop(&ri), stop(&rj), "case {case} W={width}: limit {fails}: {ri:?} / {rj:?}");
        }
    }
}
