//! The lowering rules of every op, in one table: which ops the translator lowers to vector
//! code of its own (no helper call), and which of those also have a scalar form (a value kept
//! as one scalar for the whole vector, see [`super::shadow`]). Chunk-major loops admit only
//! native ops (a helper sees whole waves, a chunk-major loop holds one vector), shadows only
//! ops with a scalar form; `int_op` and `float_op` lower the native ones and send the others to
//! the lane helper. The engine tests run every native op inside chunk-major loops (a helper
//! call there trips a debug assertion) and against the interpreter.

use wave_isa::opcodes::Class;
use wave_isa::Op;

/// How the translator lowers an op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lowering {
    /// Vector code of its own, and a scalar form for shadowed values.
    NativeWithScalar,
    /// Vector code of its own.
    Native,
    /// Vector code where the second operand (a shift amount) is the same in every running
    /// lane of each vector: Cranelift's vector shifts take one scalar amount. Elsewhere (and
    /// in chunk-major loops, which admit only native ops) the lane helper.
    NativeWhenUniformAmount,
    /// Vector code where every running lane's input lies in the range it covers, else the
    /// lane helper for the wave (`fexp2`, `flog2`: see [`super::transcendental`]). Not native: in
    /// chunk-major loops it would need the helper.
    VectorOrHelper,
    /// A whole-wave helper: the lane helper (`semantics::alu`) for lane ops, or the memory,
    /// atomic, wave and MMA helpers.
    Helper,
    /// Not an op the translator lowers (control and synchronisation are statements).
    Statement,
}

/// The rule of `op`.
pub fn lowering(op: Op) -> Lowering {
    use Op::*;
    match op {
        Iadd | Isub | Imul | Imad | Imin | Imax | And | Or | Xor | Not | Ineg | Mov | MovImm | IcmpEq
        | IcmpNe | IcmpLt | IcmpLe | IcmpGt | IcmpGe | UcmpLt | UcmpLe => Lowering::NativeWithScalar,
        Iabs | Iclamp | FcmpEq | FcmpNe | FcmpLt | FcmpLe | FcmpGt | FcmpOrd | FcmpUnord | Select | MovSr
        | CvtF32I32 | CvtF32U32 | CvtI32F32 | CvtU32F32 => Lowering::Native,
        // IEEE-exact f32 ops; NaN operands are fixed up in vector code (see `fp`).
        Fadd | Fsub | Fmul | Fma | Fdiv | Fneg | Fabs | Fsqrt | Frsqrt | Frcp | Ffloor | Fceil | Ftrunc
        | Ffract | Fmin | Fmax | Fclamp => Lowering::Native,
        Shl | Shr | Sar => Lowering::NativeWhenUniformAmount,
        Fexp2 | Flog2 => Lowering::VectorOrHelper,
        _ => match op.class() {
            // Loads are vector code; stores and atomics run lane by lane in order (helpers).
            Class::LocalLoad | Class::DeviceLoad => Lowering::Native,
            Class::Control | Class::Sync => Lowering::Statement,
            _ => Lowering::Helper,
        },
    }
}

/// Whether `op` is lowered to vector code only, with no helper call.
pub fn is_native(op: Op) -> bool {
    matches!(lowering(op), Lowering::Native | Lowering::NativeWithScalar)
}

/// Whether `op` has a scalar form ([`super::Translator::scalar_op`]).
pub fn has_scalar_form(op: Op) -> bool {
    lowering(op) == Lowering::NativeWithScalar
}

/// The error for an op the table calls native that has no native lowering (the table and the
/// lowerings disagree: a bug, caught by the engine tests and `tests/op_checklist.rs`).
pub fn no_lowering(op: Op) -> crate::error::JitError {
    crate::error::JitError::Codegen(format!(
        "`{}` is native by the lowering rules (jit/src/translate/rules.rs) but has no native lowering",
        op.mnemonic()
    ))
}
