//! Stack frames of compiled code: every function is compiled with inline stack probes, the
//! frame of each is recorded, and a frame over the limit declines the kernel.

use cranelift_codegen::settings::ProbestackStrategy;
use wave_jit_codegen::compiler::{check_frame, host_isa, MAX_FRAME, STACK_MARGIN};
use wave_jit_codegen::{compile, Flags, JitError};

/// `depth` nested loops, each left by a divergent `break` (all lanes but lane 0) and then by a
/// uniform one (the shape of the repros in `tests/stack-frames/`, whose frames grow fastest),
/// then each thread stores how many loop bodies it ran.
fn nested_loops(depth: usize) -> wave_isa::ValidKernel {
    let mut source = String::from(concat!(
        ".kernel nest\n    mov_sr r1, sr_thread_id_x\n    mov_imm r2, 1\n    mov_imm r6, 0\n",
        "    icmp_ge p1, r1, r2\n    icmp_eq p2, r2, r2\n"
    ));
    source += &"    loop\n    iadd r6, r6, r2\n".repeat(depth);
    source += &"    break p1\n    break p2\n    endloop\n".repeat(depth);
    source += "    mov_imm r2, 2\n    shl r3, r1, r2\n    device_store_u32 r3, r6\n.end\n";
    let file = wave_isa::asm::assemble(&source, "nest.wave").unwrap_or_else(|e| panic!("{e:?}")).file;
    wave_isa::module::Module::from_wbin(&file).unwrap_or_else(|e| panic!("{e}")).kernels[0].clone()
}

#[test]
fn both_tiers_probe_the_stack_inline() {
    for quick in [false, true] {
        let isa = host_isa(quick).unwrap_or_else(|e| panic!("{e}"));
        assert!(isa.flags().enable_probestack(), "quick tier: {quick}");
        assert_eq!(isa.flags().probestack_strategy(), ProbestackStrategy::Inline, "quick tier: {quick}");
    }
}

/// The recorded frame grows with the nesting and covers at least the stack slots of the
/// loop state (W = 64: 16 vectors of 16 bytes per register live across a loop).
#[test]
fn frames_are_recorded_and_grow_with_nesting() {
    let flags = Flags {
        width: 64,
        checked: true,
        fuel: false,
        stats: false,
        workgroup: [64, 1, 1],
        window_wraps: false,
    };
    let shallow = compile(&nested_loops(2), flags).unwrap_or_else(|e| panic!("{e}"));
    let deep = compile(&nested_loops(24), flags).unwrap_or_else(|e| panic!("{e}"));
    let (shallow, deep) = (shallow.entry(), deep.entry());
    assert!(shallow.frame >= 16, "a frame holds at least the frame pointer and return address");
    assert!(deep.frame > shallow.frame, "frames {} and {} bytes", shallow.frame, deep.frame);
    assert_eq!(deep.stack_needed(), deep.frame + STACK_MARGIN);
}

#[test]
fn frames_over_the_limit_decline_the_kernel() {
    assert_eq!(check_frame("k", 64, MAX_FRAME), Ok(()));
    assert_eq!(
        check_frame("k", 64, MAX_FRAME + (MAX_FRAME >> 3)),
        Err(JitError::TooLarge(
            "kernel `k` is too deep for the JIT (stack frame of 72.0 MiB at wave width 64, limit 64 MiB)"
                .into()
        ))
    );
}
