//! Line parser: tokens of one line → label, directive or instruction, with byte spans.
//! Knows the dialect's syntax only; which operands an instruction takes is the
//! encoder's business (driven by the opcode table).

use super::lexer::{lex_line, strip_comment, Tok, Token};
use crate::instr::PredRef;
use crate::opcodes::{Scope, SpecialReg, SPECIAL_REGISTERS};

/// Byte range inside one source line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    fn of(t: &Token) -> Span {
        Span { start: t.start, end: t.end }
    }
    pub fn to(self, other: Span) -> Span {
        Span { start: self.start, end: other.end }
    }
}

/// A syntax error in one line.
#[derive(Clone, Debug, PartialEq)]
pub struct LineError {
    pub span: Span,
    pub message: String,
    pub hint: Option<String>,
}

impl LineError {
    pub fn new(span: Span, message: impl Into<String>) -> LineError {
        LineError { span, message: message.into(), hint: None }
    }
    pub fn hint(mut self, hint: impl Into<String>) -> LineError {
        self.hint = Some(hint.into());
        self
    }
}

/// An operand as written, before it is matched against the opcode table.
#[derive(Clone, Debug, PartialEq)]
pub enum OperandValue {
    Reg(u32),
    Pred {
        index: u32,
        negated: bool,
    },
    Special(SpecialReg),
    Int(i64),
    /// An f32 bit pattern.
    Float(u32),
    Scope(Scope),
    Label(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct OperandAst {
    pub value: OperandValue,
    pub span: Span,
    /// The source text, for messages.
    pub text: String,
}

/// `@pN`, `@!pN`, or with an explicit predicate-enable bit, `@pN.enable`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GuardAst {
    pub pred: PredRef,
    /// `.enable` written: set word0 bit 3 even where the guard does not need it (see
    /// [`crate::instr::Instruction::explicit_enable`]).
    pub explicit_enable: bool,
    pub span: Span,
}

/// The guard suffix that keeps the predicate-enable bit.
pub const GUARD_ENABLE_SUFFIX: &str = "enable";

#[derive(Clone, Debug, PartialEq)]
pub struct InstrAst {
    pub guard: Option<GuardAst>,
    /// The mnemonic word as written, without dotted parts.
    pub mnemonic: String,
    pub mnemonic_span: Span,
    /// Dotted parts written right after the mnemonic (`device_load.u32`, `atomic_add.device`).
    pub suffixes: Vec<(String, Span)>,
    pub operands: Vec<OperandAst>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Directive {
    Kernel(String),
    End,
    Registers(u32),
    LocalMemory(u32),
    WorkgroupSize([u32; 3]),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Statement {
    Directive(Directive, Span),
    Instr(InstrAst),
}

/// One parsed line: an optional label, then an optional statement.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Line {
    pub label: Option<(String, Span)>,
    pub statement: Option<Statement>,
}

pub const DIRECTIVES: &[&str] = &["kernel", "end", "registers", "local_memory", "workgroup_size"];
pub const CACHE_HINTS: &[&str] = &["cached", "uncached", "streaming"];
const SCOPES: &[&str] = &["wave", "workgroup", "device", "system"];

pub fn is_cache_hint(word: &str) -> bool {
    CACHE_HINTS.contains(&word)
}

/// `rN`, `pN` and `sr_*` words are registers, never names.
fn register_like(word: &str) -> bool {
    let digits_after = |p: &str| {
        word.strip_prefix(p).is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
    };
    digits_after("r") || digits_after("p") || word.starts_with("sr_")
}

fn describe(t: &Token) -> String {
    match &t.tok {
        Tok::Word(w) => format!("`{w}`"),
        Tok::DotWord(w) => format!("`.{w}`"),
        Tok::Number(n) => format!("`{n}`"),
        Tok::Comma => "`,`".into(),
        Tok::Colon => "`:`".into(),
        Tok::At => "`@`".into(),
        Tok::Bang => "`!`".into(),
        Tok::Minus => "`-`".into(),
        Tok::Stray(c) => format!("`{c}`"),
    }
}

/// Parse one source line.
pub fn parse_line(line: &str) -> Result<Line, LineError> {
    let tokens = lex_line(strip_comment(line));
    let mut p = Cursor { line, tokens: &tokens, pos: 0 };
    let mut out = Line::default();
    if let (Some(Tok::Word(name)), Some(Tok::Colon)) = (p.peek_tok(0), p.peek_tok(1)) {
        let span = Span::of(&tokens[0]).to(Span::of(&tokens[1]));
        if register_like(name) {
            return Err(LineError::new(
                Span::of(&tokens[0]),
                format!("`{name}` is a register name and cannot be a label"),
            ));
        }
        out.label = Some((name.clone(), span));
        p.pos = 2;
    }
    match p.peek() {
        None => {}
        Some(t) if matches!(t.tok, Tok::DotWord(_)) => out.statement = Some(p.directive()?),
        Some(_) => out.statement = Some(Statement::Instr(p.instruction()?)),
    }
    Ok(out)
}

struct Cursor<'a> {
    line: &'a str,
    tokens: &'a [Token],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<&'a Token> {
        self.tokens.get(self.pos)
    }
    fn peek_tok(&self, ahead: usize) -> Option<&'a Tok> {
        self.tokens.get(self.pos + ahead).map(|t| &t.tok)
    }
    fn next(&mut self) -> Option<&'a Token> {
        let t = self.tokens.get(self.pos);
        self.pos += usize::from(t.is_some());
        t
    }
    /// Span just past the end of the line's code, for "expected X" at end of line.
    fn end_span(&self) -> Span {
        let end = self.tokens.last().map_or(self.line.trim_end().len(), |t| t.end);
        Span { start: end, end: end + 1 }
    }
    fn expect_end(&self, after: &str) -> Result<(), LineError> {
        match self.peek() {
            None => Ok(()),
            Some(t) => Err(LineError::new(Span::of(t), format!("unexpected {} after {after}", describe(t)))),
        }
    }

    fn directive(&mut self) -> Result<Statement, LineError> {
        let t = self.next().expect("caller checked");
        let Tok::DotWord(name) = &t.tok else { unreachable!("caller checked") };
        let span = Span::of(t);
        let directive = match name.as_str() {
            "kernel" => match self.next() {
                Some(Token { tok: Tok::Word(n), .. }) => Directive::Kernel(n.clone()),
                Some(t) => {
                    return Err(LineError::new(
                        Span::of(t),
                        format!("expected a kernel name, found {}", describe(t)),
                    ))
                }
                None => {
                    return Err(LineError::new(self.end_span(), "expected a kernel name after `.kernel`"))
                }
            },
            "end" => Directive::End,
            "registers" => Directive::Registers(self.directive_number(".registers")?),
            "local_memory" => Directive::LocalMemory(self.directive_number(".local_memory")?),
            "workgroup_size" => {
                let x = self.directive_number(".workgroup_size")?;
                self.expect_comma(".workgroup_size takes three numbers: X, Y, Z")?;
                let y = self.directive_number(".workgroup_size")?;
                self.expect_comma(".workgroup_size takes three numbers: X, Y, Z")?;
                let z = self.directive_number(".workgroup_size")?;
                Directive::WorkgroupSize([x, y, z])
            }
            other => {
                let mut e = LineError::new(span, format!("unknown directive `.{other}`"));
                if is_cache_hint(other) || SCOPES.contains(&other) {
                    e = e.hint(format!("`.{other}` is not a directive; it belongs after a mnemonic"));
                } else if let Some(best) = super::diagnostics::closest(other, DIRECTIVES.iter().copied()) {
                    e = e.hint(format!("did you mean `.{best}`?"));
                } else {
                    e = e.hint("directives are .kernel, .end, .registers, .local_memory, .workgroup_size");
                }
                return Err(e);
            }
        };
        self.expect_end(&format!("`.{name}`"))?;
        let end = self.tokens.last().map_or(span, Span::of);
        Ok(Statement::Directive(directive, span.to(end)))
    }

    fn expect_comma(&mut self, what: &str) -> Result<(), LineError> {
        match self.next() {
            Some(Token { tok: Tok::Comma, .. }) => Ok(()),
            Some(t) => {
                Err(LineError::new(Span::of(t), format!("expected `,`, found {}", describe(t))).hint(what))
            }
            None => Err(LineError::new(self.end_span(), "expected `,`").hint(what)),
        }
    }

    fn directive_number(&mut self, directive: &str) -> Result<u32, LineError> {
        match self.next() {
            Some(t @ Token { tok: Tok::Number(text), .. }) => match parse_number(text) {
                Ok(Number::Int(v)) => u32::try_from(v)
                    .map_err(|_| LineError::new(Span::of(t), format!("`{text}` does not fit in 32 bits"))),
                Ok(Number::Float(_)) => {
                    Err(LineError::new(Span::of(t), format!("{directive} needs an integer, found `{text}`")))
                }
                Err(msg) => Err(LineError::new(Span::of(t), msg)),
            },
            Some(t @ Token { tok: Tok::Minus, .. }) => {
                Err(LineError::new(Span::of(t), format!("{directive} needs a non-negative integer")))
            }
            Some(t) => Err(LineError::new(
                Span::of(t),
                format!("{directive} needs an integer, found {}", describe(t)),
            )),
            None => Err(LineError::new(self.end_span(), format!("{directive} needs an integer"))),
        }
    }

    fn instruction(&mut self) -> Result<InstrAst, LineError> {
        let guard = if let Some(at) = self.peek().filter(|t| t.tok == Tok::At) {
            self.pos += 1;
            let negated = self.peek_tok(0) == Some(&Tok::Bang);
            self.pos += usize::from(negated);
            let (index, mut last) =
                self.predicate_word("`@` must be followed by a predicate register, like `@p1` or `@!p1`")?;
            let mut explicit_enable = false;
            if let Some(t @ Token { tok: Tok::DotWord(suffix), spaced: false, .. }) = self.peek() {
                if suffix != GUARD_ENABLE_SUFFIX {
                    return Err(LineError::new(Span::of(t), format!("unknown guard suffix `.{suffix}`"))
                        .hint("the only guard suffix is `.enable` (`@p1.enable`), which keeps the predicate-enable bit"));
                }
                explicit_enable = true;
                last = Span::of(t);
                self.pos += 1;
            }
            let pred = PredRef { index: index as u8, negated };
            Some(GuardAst { pred, explicit_enable, span: Span::of(at).to(last) })
        } else {
            None
        };
        let (mnemonic, mnemonic_span) = match self.next() {
            Some(t @ Token { tok: Tok::Word(w), .. }) => (w.clone(), Span::of(t)),
            Some(t) => {
                return Err(LineError::new(
                    Span::of(t),
                    format!("expected an instruction, found {}", describe(t)),
                ))
            }
            None => {
                return Err(LineError::new(self.end_span(), "expected an instruction after the predicate"))
            }
        };
        let mut suffixes = Vec::new();
        while let Some(t @ Token { tok: Tok::DotWord(w), spaced, .. }) = self.peek() {
            // Attached parts (`icmp.lt`) and spaced cache hints (`device_load_u32 .cached`) belong
            // to the mnemonic; a spaced scope is the first operand (`fence_acquire .device`).
            if *spaced && !is_cache_hint(w) {
                break;
            }
            suffixes.push((w.clone(), Span::of(t)));
            self.pos += 1;
        }
        let mut operands = Vec::new();
        if self.peek().is_some() {
            loop {
                operands.push(self.operand()?);
                match self.next() {
                    None => break,
                    Some(Token { tok: Tok::Comma, .. }) => {
                        if self.peek().is_none() {
                            return Err(LineError::new(self.end_span(), "expected an operand after `,`"));
                        }
                    }
                    Some(t) => {
                        return Err(LineError::new(
                            Span::of(t),
                            format!("expected `,` or end of line, found {}", describe(t)),
                        )
                        .hint("operands are separated by commas"))
                    }
                }
            }
        }
        Ok(InstrAst { guard, mnemonic, mnemonic_span, suffixes, operands })
    }

    /// A `pN` word; returns its index and span.
    fn predicate_word(&mut self, what: &str) -> Result<(u32, Span), LineError> {
        match self.next() {
            Some(t @ Token { tok: Tok::Word(w), .. }) => match predicate_index(w) {
                Some(i) => check_predicate(i, Span::of(t)).map(|i| (i, Span::of(t))),
                None => {
                    Err(LineError::new(Span::of(t), format!("expected a predicate register, found `{w}`"))
                        .hint(what))
                }
            },
            Some(t) => Err(LineError::new(
                Span::of(t),
                format!("expected a predicate register, found {}", describe(t)),
            )
            .hint(what)),
            None => Err(LineError::new(self.end_span(), "expected a predicate register").hint(what)),
        }
    }

    fn operand(&mut self) -> Result<OperandAst, LineError> {
        let first = self.next().expect("caller checked");
        let span = Span::of(first);
        let value = match &first.tok {
            Tok::Word(w) => self.word_operand(w, span)?,
            Tok::DotWord(w) => match Scope::from_name(w) {
                Some(s) => OperandValue::Scope(s),
                None => {
                    let mut e = LineError::new(span, format!("unknown scope `.{w}`"));
                    e = match super::diagnostics::closest(w, SCOPES.iter().copied()) {
                        Some(best) => e.hint(format!("did you mean `.{best}`?")),
                        None => e.hint("scopes are .wave, .workgroup, .device, .system"),
                    };
                    return Err(e);
                }
            },
            Tok::Number(text) => number_operand(text, false, span)?,
            Tok::Minus => match self.peek() {
                Some(t @ Token { tok: Tok::Number(text), spaced: false, .. }) => {
                    self.pos += 1;
                    number_operand(text, true, span.to(Span::of(t)))?
                }
                Some(t @ Token { tok: Tok::Word(w), spaced: false, .. }) if w == "inf" => {
                    self.pos += 1;
                    let _ = t;
                    OperandValue::Float(f32::NEG_INFINITY.to_bits())
                }
                _ => return Err(LineError::new(span, "`-` must be followed by a number")),
            },
            Tok::Bang => {
                let (index, last) = self.predicate_word("`!` negates a predicate register: `!p1`")?;
                let full = span.to(last);
                return Ok(OperandAst {
                    value: OperandValue::Pred { index, negated: true },
                    span: full,
                    text: self.line[full.start..full.end].to_string(),
                });
            }
            _ => return Err(LineError::new(span, format!("expected an operand, found {}", describe(first)))),
        };
        let mut full = span;
        if let OperandValue::Reg(_) = value {
            if let Some(t @ Token { tok: Tok::DotWord(suffix), spaced: false, .. }) = self.peek() {
                let e = if suffix == "lo" || suffix == "hi" {
                    LineError::new(span.to(Span::of(t)), format!("register halves (`.{suffix}`) are not supported"))
                        .hint("no WAVE instruction encodes a register half; the reference assembler silently drops it, which changes the meaning")
                } else {
                    LineError::new(Span::of(t), format!("unexpected `.{suffix}` after a register"))
                };
                return Err(e);
            }
        }
        if let Some(t) = self.tokens.get(self.pos - 1) {
            full = span.to(Span::of(t));
        }
        Ok(OperandAst { value, span: full, text: self.line[full.start..full.end].to_string() })
    }

    fn word_operand(&mut self, w: &str, span: Span) -> Result<OperandValue, LineError> {
        if let Some(digits) =
            w.strip_prefix('r').filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
        {
            return match digits.parse::<u32>() {
                Ok(n) if n <= 255 => Ok(OperandValue::Reg(n)),
                _ => Err(LineError::new(span, format!("register `{w}` does not exist"))
                    .hint("registers are r0 to r255")),
            };
        }
        if let Some(i) = predicate_index(w) {
            return check_predicate(i, span).map(|index| OperandValue::Pred { index, negated: false });
        }
        if w.starts_with("sr_") {
            return SpecialReg::from_name(w).map(OperandValue::Special).ok_or_else(|| {
                let e = LineError::new(span, format!("unknown special register `{w}`"));
                match super::diagnostics::closest(w, SPECIAL_REGISTERS.iter().copied()) {
                    Some(best) => e.hint(format!("did you mean `{best}`?")),
                    None => e,
                }
            });
        }
        if let Some(s) = Scope::from_name(w) {
            return Ok(OperandValue::Scope(s));
        }
        match w {
            "inf" => Ok(OperandValue::Float(f32::INFINITY.to_bits())),
            "nan" => Ok(OperandValue::Float(f32::NAN.to_bits())),
            _ => Ok(OperandValue::Label(w.to_string())),
        }
    }
}

fn predicate_index(w: &str) -> Option<u32> {
    let digits = w.strip_prefix('p')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(digits.parse::<u32>().unwrap_or(u32::MAX))
}

fn check_predicate(index: u32, span: Span) -> Result<u32, LineError> {
    if index <= 3 {
        Ok(index)
    } else {
        Err(LineError::new(span, format!("predicate register `p{index}` does not exist"))
            .hint("predicate registers are p0 to p3"))
    }
}

/// A number literal's value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    Int(i64),
    /// f32 bit pattern.
    Float(u32),
}

/// Parse a number literal: decimal or `0x` hex integers, or decimal floats, `_` separators.
pub fn parse_number(text: &str) -> Result<Number, String> {
    let clean: String = text.chars().filter(|&c| c != '_').collect();
    let invalid = || format!("invalid number `{text}`");
    if let Some(hex) = clean.strip_prefix("0x").or_else(|| clean.strip_prefix("0X")) {
        if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(invalid());
        }
        return u32::from_str_radix(hex, 16)
            .map(|v| Number::Int(v as i64))
            .map_err(|_| format!("`{text}` does not fit in 32 bits"));
    }
    if clean.bytes().all(|b| b.is_ascii_digit()) && !clean.is_empty() {
        return clean
            .parse::<i64>()
            .map(Number::Int)
            .map_err(|_| format!("`{text}` does not fit in 32 bits"));
    }
    let float_chars =
        clean.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
    match clean.parse::<f32>() {
        Ok(v) if float_chars && v.is_finite() => Ok(Number::Float(v.to_bits())),
        Ok(_) if float_chars => Err(format!("`{text}` is too large for an f32")),
        _ => Err(invalid()),
    }
}

fn number_operand(text: &str, negative: bool, span: Span) -> Result<OperandValue, LineError> {
    match parse_number(text).map_err(|m| LineError::new(span, m))? {
        Number::Int(v) => Ok(OperandValue::Int(if negative { -v } else { v })),
        Number::Float(bits) => Ok(OperandValue::Float(if negative { bits ^ 0x8000_0000 } else { bits })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_label_and_instruction() {
        let l = parse_line("top: @!p2 atomic_add.device r1, r2, r3 ; c").unwrap();
        assert_eq!(l.label.as_ref().unwrap().0, "top");
        let Some(Statement::Instr(i)) = l.statement else { panic!() };
        assert_eq!(i.guard.unwrap().pred, PredRef { index: 2, negated: true });
        assert!(!i.guard.unwrap().explicit_enable);
        assert_eq!(i.mnemonic, "atomic_add");
        assert_eq!(i.suffixes[0].0, "device");
        assert_eq!(i.operands.len(), 3);
        assert_eq!(i.operands[2].value, OperandValue::Reg(3));
    }

    #[test]
    fn guard_enable_suffix() {
        let l = parse_line("@!p1.enable iadd r1, r2, r3").unwrap();
        let Some(Statement::Instr(i)) = l.statement else { panic!() };
        let g = i.guard.unwrap();
        assert_eq!((g.pred, g.explicit_enable), (PredRef { index: 1, negated: true }, true));
        assert_eq!(g.span, Span { start: 0, end: 11 });
        let e = parse_line("@p1.on iadd r1, r2, r3").unwrap_err();
        assert_eq!(e.message, "unknown guard suffix `.on`");
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_number("0xFF_FF"), Ok(Number::Int(0xFFFF)));
        assert_eq!(parse_number("1_000"), Ok(Number::Int(1000)));
        assert_eq!(parse_number("1.0"), Ok(Number::Float(0x3f80_0000)));
        assert_eq!(parse_number("2.5e3"), Ok(Number::Float(2500f32.to_bits())));
        assert!(parse_number("12abc").is_err());
        assert!(parse_number("0x1_0000_0000").is_err());
        assert!(parse_number("1e39").is_err());
        let l = parse_line("mov_imm r1, -2.5").unwrap();
        let Some(Statement::Instr(i)) = l.statement else { panic!() };
        assert_eq!(i.operands[1].value, OperandValue::Float((-2.5f32).to_bits()));
        assert_eq!(i.operands[1].text, "-2.5");
    }

    #[test]
    fn directives() {
        let l = parse_line(".workgroup_size 64, 1, 1").unwrap();
        assert!(matches!(l.statement, Some(Statement::Directive(Directive::WorkgroupSize([64, 1, 1]), _))));
        let e = parse_line(".registres 8").unwrap_err();
        assert_eq!(e.hint.as_deref(), Some("did you mean `.registers`?"));
        assert!(parse_line(".workgroup_size 64 1 1").is_err());
    }

    #[test]
    fn register_halves_rejected() {
        let e = parse_line("hadd r0.lo, r1, r2").unwrap_err();
        assert!(e.message.contains("register halves"), "{}", e.message);
        assert_eq!(e.span, Span { start: 5, end: 10 });
    }
}
