//! Parsed instruction → [`Instruction`], driven entirely by the opcode table: the table
//! says which operands an op takes, in which order, of which kind, in which slot.

use super::diagnostics::closest;
use super::parser::{is_cache_hint, InstrAst, LineError, OperandAst, OperandValue, Span};
use crate::instr::{Instruction, PredRef, STRUCT_PRED_NEGATE};
use crate::opcodes::{Frag, Kind, Op, OperandSpec, Scope, OPS};

/// A register operand, kept so the kernel can check it against `.registers`.
#[derive(Clone, Debug, PartialEq)]
pub struct RegisterUse {
    pub first: u32,
    /// How many consecutive registers it covers (1, 2 or 4).
    pub count: u32,
    pub span: Span,
}

/// One instruction ready to encode, except for a call target still to resolve.
#[derive(Clone, Debug, PartialEq)]
pub struct Encoded {
    pub inst: Instruction,
    pub call_label: Option<(String, Span)>,
    pub registers: Vec<RegisterUse>,
}

/// Mnemonics people reach for that WAVE does not have, with what to write instead.
const MISSING: &[(&str, &str)] = &[
    ("fcmp_ge", "WAVE has no `fcmp_ge`: write `fcmp_le pD, rB, rA` (operands swapped)"),
    ("ucmp_gt", "WAVE has no `ucmp_gt`: write `ucmp_lt pD, rB, rA` (operands swapped)"),
    ("ucmp_ge", "WAVE has no `ucmp_ge`: write `ucmp_le pD, rB, rA` (operands swapped)"),
    ("ucmp_eq", "equality does not depend on signedness: use `icmp_eq`"),
    ("ucmp_ne", "equality does not depend on signedness: use `icmp_ne`"),
    ("umin", "WAVE has no unsigned min; compare with `ucmp_lt` and `select`"),
    ("umax", "WAVE has no unsigned max; compare with `ucmp_lt` and `select`"),
    ("mov_special", "use `mov_sr rd, sr_name` (or `mov rd, sr_name`)"),
    ("ret", "did you mean `return`?"),
    ("jmp", "WAVE has no branches: use `if`/`else`/`endif` and `loop`/`break`/`endloop`"),
    ("br", "WAVE has no branches: use `if`/`else`/`endif` and `loop`/`break`/`endloop`"),
];

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Reg => "register",
        Kind::Pair => "register pair",
        Kind::Quad => "register quad",
        Kind::Pred => "predicate",
        Kind::Special => "special register",
        Kind::Imm => "immediate",
        Kind::Scope => "scope",
        Kind::Target => "label",
        Kind::Fragment(_) => "fragment",
    }
}

/// `atomic_add [rd], raddr, rval, .scope`-style usage line, from the table.
pub fn usage(op: Op) -> String {
    let mut out = op.mnemonic().to_string();
    for (i, spec) in op.operands().iter().enumerate() {
        let placeholder = match spec.kind {
            Kind::Reg | Kind::Pair | Kind::Quad => "rN",
            Kind::Pred => "pN",
            Kind::Special => "sr_name",
            Kind::Imm => "imm32",
            Kind::Scope => ".scope",
            Kind::Target => "label",
            Kind::Fragment(Frag::A) => "rA",
            Kind::Fragment(Frag::B) => "rB",
            Kind::Fragment(Frag::C) => "rC",
        };
        out.push_str(if i == 0 { " " } else { ", " });
        if spec.optional {
            out.push_str(&format!("[{placeholder}]"));
        } else {
            out.push_str(placeholder);
        }
    }
    out
}

/// Join the dotted parts onto the mnemonic while the result is (a prefix of) a known
/// mnemonic; what is left must be cache hints or one scope.
fn resolve_op(ast: &InstrAst) -> Result<(Op, Option<(Scope, Span)>), LineError> {
    let mut name = ast.mnemonic.clone();
    let mut span = ast.mnemonic_span;
    let mut rest = ast.suffixes.as_slice();
    while let Some(((part, part_span), tail)) = rest.split_first() {
        let joined = format!("{name}_{part}");
        let prefix = format!("{joined}_");
        if !OPS.iter().any(|i| i.mnemonic == joined || i.mnemonic.starts_with(&prefix)) {
            break;
        }
        name = joined;
        span = span.to(*part_span);
        rest = tail;
    }
    let Some(op) = Op::from_mnemonic(&name) else {
        let written: String = std::iter::once(ast.mnemonic.as_str())
            .chain(ast.suffixes.iter().map(|(s, _)| s.as_str()))
            .collect::<Vec<_>>()
            .join(".");
        let full = ast.suffixes.last().map_or(ast.mnemonic_span, |(_, s)| ast.mnemonic_span.to(*s));
        let e = LineError::new(full, format!("unknown instruction `{written}`"));
        let normalized = written.replace('.', "_");
        if let Some((_, note)) = MISSING.iter().find(|(m, _)| *m == normalized) {
            return Err(e.hint(*note));
        }
        return Err(match closest(&normalized, OPS.iter().map(|i| i.mnemonic)) {
            Some(best) => e.hint(format!("did you mean `{best}`?")),
            None => e,
        });
    };
    let mut scope = None;
    for (part, part_span) in rest {
        if is_cache_hint(part) {
            continue; // accepted and ignored: the CPU has no cache policy to set
        }
        match Scope::from_name(part) {
            Some(s) if scope.is_none() => scope = Some((s, *part_span)),
            Some(_) => return Err(LineError::new(*part_span, "scope given twice")),
            None => {
                return Err(LineError::new(
                    *part_span,
                    format!("unknown suffix `.{part}` on `{}`", op.mnemonic()),
                )
                .hint("suffixes are cache hints (.cached, .uncached, .streaming) or a scope"))
            }
        }
    }
    Ok((op, scope))
}

/// Match the operands of one parsed instruction against its table entry.
pub fn encode(ast: &InstrAst) -> Result<Encoded, LineError> {
    let (mut op, suffix_scope) = resolve_op(ast)?;
    // `mov rd, sr_x` is the reference's spelling of `mov_sr`.
    if op == Op::Mov && matches!(ast.operands.get(1).map(|o| &o.value), Some(OperandValue::Special(_))) {
        op = Op::MovSr;
    }
    let specs = op.operands();
    let has_scope_spec = specs.iter().any(|s| s.kind == Kind::Scope);
    let mut operands: Vec<OperandAst> = ast.operands.clone();
    if let Some((scope, span)) = suffix_scope {
        if !has_scope_spec {
            return Err(LineError::new(span, format!("`{}` takes no scope", op.mnemonic())));
        }
        if operands.iter().any(|o| matches!(o.value, OperandValue::Scope(_))) {
            return Err(LineError::new(span, "scope given twice (as a suffix and as an operand)"));
        }
        operands.push(OperandAst {
            value: OperandValue::Scope(scope),
            span,
            text: format!(".{}", scope.name()),
        });
    }
    if let Some((pos, o)) =
        operands.iter().enumerate().find(|(_, o)| matches!(o.value, OperandValue::Scope(_)))
    {
        if !has_scope_spec {
            return Err(LineError::new(o.span, format!("`{}` takes no scope", op.mnemonic()))
                .hint(format!("usage: {}", usage(op))));
        }
        if pos + 1 != operands.len() {
            return Err(LineError::new(o.span, "scope must be the last operand")
                .hint(format!("usage: {}", usage(op))));
        }
    }
    let optional = specs.iter().filter(|s| s.optional).count();
    let n = operands.len();
    let skip_optional = if n == specs.len() {
        false
    } else if optional > 0 && n + optional == specs.len() {
        true
    } else {
        let full = match (operands.first(), operands.last()) {
            (Some(a), Some(b)) => a.span.to(b.span),
            _ => ast.mnemonic_span,
        };
        let expected = if optional > 0 {
            format!("{} or {}", specs.len() - optional, specs.len())
        } else {
            specs.len().to_string()
        };
        let plural = if specs.len() == 1 { "" } else { "s" };
        return Err(LineError::new(
            full,
            format!("`{}` takes {expected} operand{plural}, found {n}", op.mnemonic()),
        )
        .hint(format!("usage: {}", usage(op))));
    };

    let mut inst = Instruction::new(op);
    if let Some(guard) = ast.guard {
        if op.is_structural() || op == Op::Call {
            return Err(LineError::new(guard.span, format!("`{}` cannot be predicated", op.mnemonic())).hint(
                "structured control flow takes its predicate as an operand (`if p1`, `break !p2`); wrap a call in `if`",
            ));
        }
        inst.guard = Some(guard.pred);
        // `@p0` always carries the bit: `@p0.enable` is the same instruction.
        let needs_bit = guard.pred == PredRef { index: 0, negated: false };
        inst.explicit_enable = guard.explicit_enable && !needs_bit;
    }
    let mut registers = Vec::new();
    let mut call_label = None;
    let mut written = operands.iter();
    for spec in specs {
        if spec.optional && skip_optional {
            continue; // non-returning atomic: rd = r0
        }
        let Some(operand) = written.next() else { break };
        let value = operand_value(op, spec, operand)?;
        if spec.kind.register_span() > 0 {
            registers.push(RegisterUse {
                first: value,
                count: spec.kind.register_span(),
                span: operand.span,
            });
        }
        if spec.kind == Kind::Target {
            if let OperandValue::Label(l) = &operand.value {
                call_label = Some((l.clone(), operand.span));
            }
        }
        inst.set_slot(spec.slot, value);
    }
    Ok(Encoded { inst, call_label, registers })
}

fn found(o: &OperandAst) -> String {
    format!("`{}`", o.text)
}

/// The slot value of one operand, or why it does not fit the table's operand kind.
fn operand_value(op: Op, spec: &OperandSpec, o: &OperandAst) -> Result<u32, LineError> {
    let mismatch = || {
        let what = match spec.kind {
            Kind::Reg | Kind::Pair | Kind::Quad | Kind::Fragment(_) => "expected register",
            Kind::Pred => "expected predicate register",
            Kind::Special => "expected special register",
            Kind::Imm => "expected immediate",
            Kind::Scope => "expected scope",
            Kind::Target => "expected label",
        };
        let e = LineError::new(o.span, format!("{what}, found {}", found(o)));
        let hint = match (&o.value, spec.kind) {
            (OperandValue::Int(_) | OperandValue::Float(_), Kind::Reg) if op == Op::Mov => {
                Some("use `mov_imm rd, value` to load an immediate".to_string())
            }
            (OperandValue::Pred { .. }, Kind::Reg | Kind::Pair | Kind::Quad) => {
                Some(format!("`{}` is a predicate register; this operand is a general register rN", o.text))
            }
            (OperandValue::Reg(_), Kind::Pred) => Some("predicate registers are p0 to p3".into()),
            (_, Kind::Scope) => {
                Some("the scope is .wave, .workgroup, .device or .system, written last".into())
            }
            (OperandValue::Label(l), Kind::Reg | Kind::Pair | Kind::Quad | Kind::Fragment(_)) => {
                Some(format!("`{l}` is not a register; registers are written r0 to r255"))
            }
            _ => None,
        };
        let e = match hint {
            Some(h) => e.hint(h),
            None => e.hint(format!("usage: {} (operand is a {})", usage(op), kind_name(spec.kind))),
        };
        Err(e)
    };
    match (&o.value, spec.kind) {
        (OperandValue::Reg(r), Kind::Reg | Kind::Pair | Kind::Quad | Kind::Fragment(_)) => Ok(*r),
        (OperandValue::Pred { index, negated }, Kind::Pred) => {
            if *negated && !op.is_structural() {
                return Err(LineError::new(
                    o.span,
                    format!("`{}` cannot take a negated predicate", op.mnemonic()),
                )
                .hint(
                    "only `if`, `break` and `continue` accept `!pN`; elsewhere compute the opposite compare",
                ));
            }
            let pred = PredRef { index: *index as u8, negated: *negated };
            Ok(u32::from(pred.index) | if pred.negated { u32::from(STRUCT_PRED_NEGATE) } else { 0 })
        }
        (OperandValue::Special(sr), Kind::Special) => Ok(*sr as u32),
        (OperandValue::Int(v), Kind::Imm) => {
            if (-(1i64 << 31)..=u32::MAX as i64).contains(v) {
                Ok(*v as u32)
            } else {
                Err(LineError::new(o.span, format!("immediate {} does not fit in 32 bits", o.text))
                    .hint("immediates range from -2147483648 to 4294967295"))
            }
        }
        (OperandValue::Float(bits), Kind::Imm) => Ok(*bits),
        (OperandValue::Scope(s), Kind::Scope) => Ok(*s as u32),
        // Resolved by the kernel once every label is known.
        (OperandValue::Label(_), Kind::Target) => Ok(0),
        _ => mismatch(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asm::parser::{parse_line, Statement};

    fn enc(line: &str) -> Result<Encoded, LineError> {
        match parse_line(line).unwrap().statement {
            Some(Statement::Instr(i)) => encode(&i),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn dotted_forms_match_underscore_forms() {
        for (a, b) in [
            ("device_load.u32 r1, r2", "device_load_u32 r1, r2"),
            ("icmp.lt p1, r2, r3", "icmp_lt p1, r2, r3"),
            ("cvt.f32.i32 r1, r2", "cvt_f32_i32 r1, r2"),
            ("fence_acquire.workgroup", "fence_acquire .workgroup"),
            ("atomic_add.device r4, r1, r2", "atomic_add r4, r1, r2, .device"),
            ("wave.reduce.add r1, r2", "wave_reduce_add r1, r2"),
            ("device_store_u32.cached r1, r2", "device_store_u32 r1, r2"),
            ("device_load_u32 .streaming r1, r2", "device_load_u32 r1, r2"),
            ("mov r1, sr_lane_id", "mov_sr r1, sr_lane_id"),
        ] {
            assert_eq!(enc(a).unwrap().inst, enc(b).unwrap().inst, "{a}");
        }
    }

    #[test]
    fn optional_rd_and_cas() {
        let e = enc("atomic_add r1, r2, device").unwrap();
        assert_eq!((e.inst.rd, e.inst.rs1, e.inst.rs2, e.inst.scope), (0, 1, 2, Scope::Device));
        let e = enc("atomic_cas r9, r1, r2, r3, .system").unwrap();
        assert_eq!((e.inst.rd, e.inst.rs1, e.inst.rs2, e.inst.rs3), (9, 1, 2, 3));
        assert_eq!(e.inst.encode_words().0 >> 4 & 0xF, 8);
        let e = enc("local_atomic_cas r1, r2, r3").unwrap();
        assert_eq!(e.inst.rd, 0);
    }

    #[test]
    fn structural_negation() {
        let e = enc("break !p2").unwrap();
        assert_eq!(e.inst.rs1, 2 | STRUCT_PRED_NEGATE);
        assert!(enc("select r1, !p1, r2, r3").is_err());
        assert!(enc("@p1 if p2").is_err());
    }

    #[test]
    fn errors_have_hints() {
        let e = enc("icmp_lz p1, r2, r3").unwrap_err();
        assert_eq!(e.hint.as_deref(), Some("did you mean `icmp_lt`?"));
        let e = enc("atomic_add r1, .device, r2").unwrap_err();
        assert_eq!(e.message, "scope must be the last operand");
        let e = enc("iadd r1, x, r2").unwrap_err();
        assert_eq!(e.message, "expected register, found `x`");
        let e = enc("iadd r1, r2").unwrap_err();
        assert_eq!(e.message, "`iadd` takes 3 operands, found 2");
        assert_eq!(e.hint.as_deref(), Some("usage: iadd rN, rN, rN"));
    }
}
