//! Writer tests without vendor compilers: every op handled by every writer, errors for what a
//! target cannot express, golden files, and structural checks of the (not compiler-checked) MSL.

mod common;

use wave_gpu_backends::ops::{lowering, Lowering};
use wave_gpu_backends::{write, write_module, EmitError, Options, Target};
use wave_isa::instr::{Instruction, PredRef};
use wave_isa::opcodes::{Class, Op, Slot, OPS};

fn opts() -> Options {
    Options::default()
}

#[test]
fn every_op_is_handled_by_every_writer() {
    let mut checked = 0;
    for info in OPS {
        if lowering(info.op) == Lowering::Statement {
            continue;
        }
        let kernel = common::kernel("one", &[common::sample(info.op)]);
        for target in Target::ALL {
            let result = write(&kernel, target, &opts());
            if target == Target::Metal && info.op.uses_f64() {
                let err = result.expect_err("f64 must be rejected on Metal");
                assert_eq!(
                    err,
                    EmitError::UnsupportedOp {
                        target,
                        what: "f64".into(),
                        mnemonic: info.mnemonic,
                        offset: 0
                    }
                );
                assert_eq!(
                    err.to_string(),
                    format!("unsupported on metal: f64 (instruction {} at offset 0x0)", info.mnemonic)
                );
                continue;
            }
            let text = result.unwrap_or_else(|e| panic!("{target} {}: {e}", info.mnemonic));
            // Each op leaves a comment naming it next to its code.
            assert!(text.contains(&format!("// {} (0x0)", info.mnemonic)), "{target} {}", info.mnemonic);
            checked += 1;
        }
    }
    assert!(checked > 4 * 130, "only {checked} (op, target) pairs checked");
}

#[test]
fn statements_of_every_kind_are_written() {
    let kernel = common::control_kernel();
    for target in Target::ALL {
        let text = write(&kernel, target, &opts()).unwrap_or_else(|e| panic!("{target}: {e}"));
        let wants: &[&str] = match target {
            Target::Ptx => {
                &["bra.uni LOOP_", "vote.sync.any.pred", "bar.sync 0;", "@!%q0 exit;", "%ret", "%brk", "%cnt"]
            }
            _ => &[
                "while (WAVE_ANY(exec))",
                "WAVE_BARRIER();",
                "if (!WAVE_ANY(live)) return;",
                "ret",
                "brk",
                "cnt",
            ],
        };
        for w in wants {
            assert!(text.contains(w), "{target}: missing `{w}`");
        }
    }
}

#[test]
fn wave_width_must_be_one_the_target_gives() {
    let kernel = common::kernel("k", &[Instruction::new(Op::Nop)]);
    for (target, w) in [(Target::Ptx, 64), (Target::Metal, 16), (Target::Hip, 16), (Target::Sycl, 128)] {
        let err = write(&kernel, target, &Options { wave_width: Some(w), ..opts() }).unwrap_err();
        assert!(matches!(err, EmitError::WaveWidth { width, .. } if width == w), "{target}");
        assert!(err.to_string().starts_with(&format!("unsupported on {target}: wave width {w}")), "{err}");
    }
    for (target, w) in [(Target::Ptx, 32), (Target::Metal, 32), (Target::Hip, 64), (Target::Sycl, 8)] {
        write(&kernel, target, &Options { wave_width: Some(w), ..opts() }).unwrap();
    }
    let hip = write(&kernel, Target::Hip, &Options { wave_width: Some(64), ..opts() }).unwrap();
    assert!(hip.contains("__AMDGCN_WAVEFRONT_SIZE != 64"));
    let sycl = write(&kernel, Target::Sycl, &Options { wave_width: Some(8), ..opts() }).unwrap();
    assert!(sycl.contains("#define WAVE_SUB_GROUP_SIZE 8"));
}

/// Writers inline calls and turn `break` into flags of the enclosing loop, so recursion and a
/// `break` outside a loop cannot be written: such kernels never reach a writer, which takes
/// only kernels that passed validation.
#[test]
fn recursion_and_stray_break_never_reach_a_writer() {
    use wave_isa::validate::Rule;
    let built = |name: &str, insts: &[Instruction]| {
        let mut code = Vec::new();
        for i in insts {
            i.encode_into(&mut code);
        }
        let meta = wave_isa::KernelMeta { name: name.into(), registers: 32, ..Default::default() };
        wave_isa::ir::build_kernel(meta, &code).expect("builds")
    };
    let mut call = Instruction::new(Op::Call);
    call.imm = 8;
    let recursive = built("rec", &[call, call, Instruction::new(Op::Return)]);
    let rules = |k| wave_isa::ValidKernel::new(k).unwrap_err().iter().map(|e| e.rule).collect::<Vec<_>>();
    assert_eq!(rules(recursive), [Rule::Recursion]);
    assert_eq!(rules(built("brk", &[Instruction::new(Op::Break)])), [Rule::BreakOutsideLoop]);
}

#[test]
fn modules_share_one_header_and_need_distinct_names() {
    let a = common::kernel("a", &[Instruction::new(Op::Nop)]);
    let b = common::kernel("b", &[Instruction::new(Op::Nop)]);
    let o = opts();
    for target in Target::ALL {
        let text = write_module(&[(&a, &o), (&b, &o)], target).unwrap();
        let marker = if target == Target::Ptx { ".version" } else { "WAVE_FN u32 wave_idiv" };
        assert_eq!(text.matches(marker).count(), 1, "{target}");
        let err = write_module(&[(&a, &o), (&a, &o)], target).unwrap_err();
        assert!(err.to_string().contains("two kernels named `a`"), "{target}");
    }
}

#[test]
fn entry_names_are_identifiers() {
    let k = common::kernel("3d-stencil.v2", &[Instruction::new(Op::Nop)]);
    let text = write(&k, Target::Ptx, &opts()).unwrap();
    assert!(text.contains(".visible .entry wave_3d_stencil_v2("));
    let text = write(&k, Target::Hip, &Options { entry_name: Some("my_entry".into()), ..opts() }).unwrap();
    assert!(text.contains("my_entry(uint8_t*"));
}

#[test]
fn guards_narrow_exec() {
    let mut add = common::sample(Op::Iadd);
    add.guard = Some(PredRef { index: 2, negated: true });
    let k = common::kernel("g", &[add]);
    assert!(write(&k, Target::Sycl, &opts()).unwrap().contains("if ((exec && !p2)) r4 = r8 + r12;"));
    assert!(write(&k, Target::Ptx, &opts()).unwrap().contains("and.pred %act, %exec, !%p2;"));
}

/// The walk's rules where the golden kernel does not reach: inside an inlined call, a loop and
/// an `if` in it rejoin without the lanes that returned, and PTX's barrier labels take their
/// numbers from the counter of the flags (call 1, loop 2, if 3, barrier 4).
#[test]
fn loops_inside_calls_rejoin_without_returned_lanes() {
    let source = "
.kernel k
    call f
    halt
f:
    loop
        if p1
            @p2 return
        endif
        @p3 barrier
        break p2
    endloop
    return
.end
";
    let file = wave_isa::asm::assemble(source, "k.wave").unwrap().file;
    let kernel = &wave_isa::module::Module::from_wbin(&file).unwrap().kernels[0];
    let hip = write(kernel, Target::Hip, &opts()).unwrap();
    for want in [
        "if ((exec && p2)) { ret1 = true; exec = false; } // return (0x14)",
        "exec = ife3 && live && !brk2 && !cnt2 && !ret1;",
        "exec = le2 && live && !brk2 && !ret1;\n      } while (WAVE_ANY(exec));\n      exec = le2 && live && !ret1;",
        "(void)ret1;\n    exec = ce1 && live;",
    ] {
        assert!(hip.contains(want), "hip: missing `{want}`");
    }
    let ptx = write(kernel, Target::Ptx, &opts()).unwrap();
    for want in [".reg .pred %ret1;", "or.pred %ret1, %ret1, %act;", "@!%q0 bra.uni BARRIER_SKIP_4;"] {
        assert!(ptx.contains(want), "ptx: missing `{want}`");
    }
}

/// Golden files: `WAVE_UPDATE_GOLDEN=1 cargo test -p wave-jit-gpu-backends --test writers` rewrites them.
fn golden(name: &str, text: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(name);
    if std::env::var("WAVE_UPDATE_GOLDEN").as_deref() == Ok("1") {
        std::fs::write(&path, text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (set WAVE_UPDATE_GOLDEN=1)", path.display()));
    if want != text {
        let line = want.lines().zip(text.lines()).position(|(a, b)| a != b).unwrap_or(0);
        panic!(
            "{name} differs from the golden file at line {}:\n want: {}\n  got: {}",
            line + 1,
            want.lines().nth(line).unwrap_or(""),
            text.lines().nth(line).unwrap_or("")
        );
    }
}

#[test]
fn golden_files() {
    let control = common::control_kernel();
    let every = common::every_op_kernel(false);
    for target in Target::ALL {
        golden(&format!("control.{}", target.extension()), &write(&control, target, &opts()).unwrap());
    }
    golden("every_op.metal", &write(&every, Target::Metal, &opts()).unwrap());
    golden("every_op.ptx", &write(&common::every_op_kernel(true), Target::Ptx, &opts()).unwrap());
}

/// MSL is not compiled here: check that it is well formed and that every instruction class
/// produced its Metal construct.
#[test]
fn metal_structure_covers_every_class() {
    let text = write(&common::every_op_kernel(false), Target::Metal, &opts()).unwrap();
    for (open, close) in [('{', '}'), ('(', ')'), ('[', ']')] {
        assert_eq!(text.matches(open).count(), text.matches(close).count(), "unbalanced {open}{close}");
    }
    assert!(text.contains(
        "kernel void every_op(device u8* device_mem [[buffer(0)]], constant u32* init_regs [[buffer(1)]]"
    ));
    assert!(!text.contains("double") && !text.contains("f64"), "no f64 on Metal");
    let per_class: &[(Class, &[&str])] = &[
        (Class::Integer, &["wave_idiv(", "wave_imul_hi(", "wave_iclamp("]),
        (Class::Float, &["wave_fma(", "wave_fmin(", "wave_fround(", "wave_fsin(", "wave_flog2("]),
        (Class::Half, &["wave_hadd(", "wave_hma2("]),
        (Class::BFloat, &["wave_badd(", "wave_bma2("]),
        (Class::Bitwise, &["wave_bitfind(", "WAVE_BREV(", "wave_bfi("]),
        (Class::Compare, &["p1 = (i32)r8 < (i32)r12", "p1 = !(WAVE_F(r8) == WAVE_F(r12))"]),
        (Class::Select, &["r4 = p2 ? r12 : r16"]),
        (Class::Convert, &["wave_cvt_i32_f32(", "wave_f32_to_f16(", "wave_f32_to_bf16("]),
        (Class::LocalLoad, &["WAVE_LDS(u8,", "WAVE_LDS(u32,"]),
        (Class::LocalStore, &["WAVE_LDS(u16,"]),
        (Class::DeviceLoad, &["WAVE_DEV(u8,", "WAVE_DEV(u32, r8 + 12u)", "WAVE_DEV(u32, r4 + 12u) = r11"]),
        (Class::DeviceStore, &["WAVE_DEV(u16,"]),
        (Class::LocalAtomic, &["WAVE_LDS_ATOMIC_PTR(", "atomic_fetch_min_explicit("]),
        (Class::DeviceAtomic, &["WAVE_DEV_ATOMIC_PTR(", "atomic_compare_exchange_weak_explicit("]),
        (Class::Wave, &["WAVE_SHFL(", "WAVE_BALLOT(", "WAVE_SCAN_EXCL_ADD(", "WAVE_RED_MIN("]),
        (Class::Sync, &["WAVE_BARRIER();", "atomic_thread_fence(", "thread_scope_device"]),
        (Class::Mma, &["wave_frag[", "acc = acc + p;"]),
        (Class::Move, &["0x3F800000u", "wave_lane;"]),
    ];
    for (class, needles) in per_class {
        for n in *needles {
            assert!(text.contains(n), "{class:?}: `{n}` missing from the MSL");
        }
    }
    // Every class of the opcode table is in the list above (Control is the statement tree).
    for info in OPS {
        if info.class != Class::Control && info.class != Class::Double {
            assert!(per_class.iter().any(|(c, _)| *c == info.class), "{:?} not checked", info.class);
        }
    }
    // The Metal macros map to MSL's SIMD-group functions.
    for n in
        ["simd_shuffle(", "simd_ballot(", "simd_sum(", "simd_prefix_exclusive_sum(", "threadgroup_barrier("]
    {
        assert!(text.contains(n), "`{n}` missing");
    }
}

/// `mma_compute a, b, c` does C[c] += A[a] * B[b] (semantics.md §5.8): a = rd, b = rs1,
/// c = rs2, as the interpreter's `Fragments::compute`.
#[test]
fn mma_compute_accumulates_into_its_c_operand() {
    // Fragments (A, 1) (rd), (B, 2) (rs1), (C, 3) (rs2) get storage slots 0, 1, 2.
    let kernel = common::kernel("mma", &[common::sample(Op::MmaCompute)]);
    for target in [Target::Hip, Target::Sycl, Target::Metal] {
        let text = write(&kernel, target, &opts()).unwrap();
        for needle in [
            "f32 acc = wave_frag[2][i * 4u + j];",
            "wave_frag[0][i * 4u + k] * wave_frag[1][k * 4u + j]",
            "wave_frag[2][i] = t[i];",
        ] {
            assert!(text.contains(needle), "{target}: `{needle}` missing");
        }
    }
    let ptx = write(&kernel, Target::Ptx, &opts()).unwrap();
    for needle in ["mov.f32 %mt0, %fr32;", "mul.rn.f32 %mp, %fr0, %fr16;", "@%act mov.f32 %fr32, %mt0;"] {
        assert!(ptx.contains(needle), "ptx: `{needle}` missing");
    }
}

/// One register number names three fragments, one per table: `mma_load_a r1`, `mma_load_b
/// r1` and `mma_compute r1, r1, r1` use three storage slots, so A·B is not folded into A.
#[test]
fn mma_fragment_tables_are_separate() {
    let mut compute = Instruction::new(Op::MmaCompute);
    for slot in [Slot::Rd, Slot::Rs1, Slot::Rs2] {
        compute.set_slot(slot, 1);
    }
    let mut load_a = common::sample(Op::MmaLoadA);
    let mut load_b = common::sample(Op::MmaLoadB);
    load_a.rd = 1;
    load_b.rd = 1;
    let kernel = common::kernel("mma", &[load_a, load_b, compute]);
    for target in [Target::Hip, Target::Sycl, Target::Metal] {
        let text = write(&kernel, target, &opts()).unwrap();
        for needle in [
            "f32 wave_frag[3][16] = {}; // MMA fragments A[r1], B[r1], C[r1]",
            "wave_frag[0][i * 4u + j] = WAVE_F(",
            "wave_frag[1][i * 4u + j] = WAVE_F(",
            "f32 acc = wave_frag[2][i * 4u + j];",
            "wave_frag[0][i * 4u + k] * wave_frag[1][k * 4u + j]",
        ] {
            assert!(text.contains(needle), "{target}: `{needle}` missing");
        }
    }
    let ptx = write(&kernel, Target::Ptx, &opts()).unwrap();
    for needle in [".reg .f32 %fr<48>;", "mov.f32 %mt0, %fr32;", "mul.rn.f32 %mp, %fr0, %fr16;"] {
        assert!(ptx.contains(needle), "ptx: `{needle}` missing");
    }
}

/// The C-like targets pin WAVE's float results in helpers rather than native operators: the
/// NaN rule of f32/f64 arithmetic and the interpreter's transcendental algorithms.
#[test]
fn float_helpers_are_used() {
    let ops = [Op::Fadd, Op::Fmul, Op::Fdiv, Op::Fsin, Op::Fcos, Op::Fexp2, Op::Flog2, Op::Dadd];
    let kernel = common::kernel("float", &ops.map(common::sample));
    for target in [Target::Hip, Target::Sycl] {
        let text = write(&kernel, target, &opts()).unwrap();
        for needle in [
            "r4 = wave_fadd(r8, r12);",
            "r4 = wave_fmul(r8, r12);",
            "r4 = wave_fdiv(r8, r12);",
            "r4 = wave_fsin(r8);",
            "r4 = wave_fcos(r8);",
            "r4 = wave_fexp2(r8);",
            "r4 = wave_flog2(r8);",
            "wave_dadd(WAVE_PAIR(r8, r9), WAVE_PAIR(r12, r13))",
            "WAVE_FN u32 wave_fsin(u32 u) {",
            "WAVE_FN u32 wave_fexp2(u32 u) {",
        ] {
            assert!(text.contains(needle), "{target}: `{needle}` missing");
        }
    }
}

/// `levels` functions below the entry, each calling the next `fan` times.
fn fan_kernel(levels: usize, fan: usize) -> wave_isa::ValidKernel {
    let mut s = String::from(".kernel fan\n    mov_imm r6, 0\n    call f1\n    halt\n");
    for level in 1..=levels {
        s += &format!("f{level}:\n    mov_imm r10, 1\n    iadd r6, r6, r10\n");
        if level < levels {
            s += &format!("    call f{}\n", level + 1).repeat(fan);
        }
        s += "    return\n";
    }
    s += ".end\n";
    let (module, _) =
        wave_isa::module::load_bytes(s.as_bytes(), "fan.wave").unwrap_or_else(|e| panic!("{e}"));
    module.kernels.into_iter().next().unwrap()
}

#[test]
fn kernels_too_large_once_calls_are_inlined_are_errors() {
    use wave_gpu_backends::plan::MAX_INLINED_INSTRUCTIONS;
    // 8 levels of 5 calls: 62 instructions, 390,626 once inlined.
    let kernel = fan_kernel(8, 5);
    let inlined = wave_isa::analysis::inlined_instructions(&kernel);
    assert_eq!(inlined, 390_626);
    assert!(inlined > MAX_INLINED_INSTRUCTIONS);
    for target in Target::ALL {
        let err = match write(&kernel, target, &opts()) {
            Ok(text) => panic!("{target}: written, {} bytes", text.len()),
            Err(e) => e,
        };
        assert_eq!(
            err,
            EmitError::TooLarge { target, kernel: "fan".into(), inlined, limit: MAX_INLINED_INSTRUCTIONS }
        );
        assert_eq!(
            err.to_string(),
            format!(
                "kernel `fan` is too large for {target}: {inlined} instructions after inlining calls, limit {MAX_INLINED_INSTRUCTIONS} (every writer inlines calls)"
            )
        );
    }
    // Below the limit calls are still inlined: 4 levels of 5 calls.
    let kernel = fan_kernel(4, 5);
    for target in Target::ALL {
        let text = write(&kernel, target, &opts()).unwrap_or_else(|e| panic!("{target}: {e}"));
        assert!(text.contains("iadd"), "{target}");
    }
}
