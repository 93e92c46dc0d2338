//! The declarative header of a conformance program: `; @directive ...` lines in the leading
//! comment block of a `.wave` file. The grammar is documented in `conformance/README.md`.

use std::fmt;

/// Every wave width the engines support (semantics.md B.19).
pub const ALL_WIDTHS: [u32; 5] = [4, 8, 16, 32, 64];

/// A header that does not parse, naming file and line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for HeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

impl std::error::Error for HeaderError {}

/// Element type of an `@input` or `@expect` list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElemType {
    U8,
    U16,
    U32,
    I32,
    U64,
    I64,
    F32,
    F64,
}

impl ElemType {
    pub fn parse(text: &str) -> Option<ElemType> {
        Some(match text {
            "u8" => ElemType::U8,
            "u16" => ElemType::U16,
            "u32" => ElemType::U32,
            "i32" => ElemType::I32,
            "u64" => ElemType::U64,
            "i64" => ElemType::I64,
            "f32" => ElemType::F32,
            "f64" => ElemType::F64,
            _ => return None,
        })
    }

    pub fn bytes(self) -> usize {
        match self {
            ElemType::U8 => 1,
            ElemType::U16 => 2,
            ElemType::U32 | ElemType::I32 | ElemType::F32 => 4,
            ElemType::U64 | ElemType::I64 | ElemType::F64 => 8,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, ElemType::F32 | ElemType::F64)
    }
}

/// One expected element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExpVal {
    /// These exact bits (or within the tolerance, for floats).
    Bits(u64),
    /// Any NaN of the element's float type.
    AnyNan,
    /// Not checked.
    DontCare,
}

/// An `@input`: bytes written into device memory before the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    pub address: u64,
    pub bytes: Vec<u8>,
}

/// An argument of a `rust=` oracle call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OracleArg {
    Num(u64),
    Ident(String),
}

/// What an `@expect` compares against.
#[derive(Clone, Debug, PartialEq)]
pub enum ExpectSource {
    Values { ty: ElemType, values: Vec<ExpVal> },
    Oracle { name: String, args: Vec<OracleArg> },
}

/// An `@expect`: device memory at `address` after the run.
#[derive(Clone, Debug, PartialEq)]
pub struct Expect {
    /// Header line, for messages.
    pub line: usize,
    /// Widths this expectation applies to (`[w=8,16]`); `None` = all.
    pub widths: Option<Vec<u32>>,
    pub address: u64,
    pub source: ExpectSource,
    /// Float tolerance in units in the last place (0 = exact bits).
    pub ulp: u64,
}

/// The error a program must stop with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    /// The assembler rejects the source.
    Assemble,
    /// The module loader / validator rejects the binary.
    Validation,
    /// Either the assembler or the loader rejects it (the suite does not care which).
    Rejected,
    /// The dispatch is rejected before anything runs.
    Dispatch,
    OutOfBounds,
    InstructionLimit,
    Unsupported,
}

impl ErrorClass {
    /// Whether an error of class `got` satisfies `@expect-error self`.
    pub fn accepts(self, got: ErrorClass) -> bool {
        self == got
            || (self == ErrorClass::Rejected && matches!(got, ErrorClass::Assemble | ErrorClass::Validation))
    }

    pub fn parse(text: &str) -> Option<ErrorClass> {
        Some(match text {
            "assemble" => ErrorClass::Assemble,
            "validation" => ErrorClass::Validation,
            "rejected" => ErrorClass::Rejected,
            "dispatch" => ErrorClass::Dispatch,
            "out-of-bounds" => ErrorClass::OutOfBounds,
            "instruction-limit" => ErrorClass::InstructionLimit,
            "unsupported" => ErrorClass::Unsupported,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::Assemble => "assemble",
            ErrorClass::Validation => "validation",
            ErrorClass::Rejected => "rejected",
            ErrorClass::Dispatch => "dispatch",
            ErrorClass::OutOfBounds => "out-of-bounds",
            ErrorClass::InstructionLimit => "instruction-limit",
            ErrorClass::Unsupported => "unsupported",
        }
    }
}

/// How the assembled program reaches the loader (`@container`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Container {
    /// The assembler's in-memory file (default).
    #[default]
    InMemory,
    /// Written to `.wbin` bytes and parsed back (`@container bytes`).
    Bytes,
    /// Written stripped, with the reference's broken metadata_offset = 0
    /// (`@container reference-stripped`).
    ReferenceStripped,
}

/// Everything the header of one program declares.
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    pub desc: String,
    pub grid: [u32; 3],
    pub workgroup: [u32; 3],
    pub widths: Vec<u32>,
    pub device_memory: u64,
    pub local_memory: Option<u32>,
    pub registers: Option<u32>,
    pub max_instructions: u64,
    pub kernel: Option<String>,
    pub container: Container,
    pub set_regs: Vec<(u8, u32)>,
    pub inputs: Vec<Input>,
    pub expects: Vec<Expect>,
    pub expect_error: Option<ErrorClass>,
    /// `@expect-error-text TEXT`: words the error message must contain.
    pub error_text: Vec<String>,
    /// `@expect-fault key=value ...`: where a runtime error must be reported.
    pub fault: Fault,
}

/// Where a runtime error is expected (`@expect-fault workgroup=X,Y,Z wave=N lane=N pc=N
/// address=N`); fields left out are not checked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fault {
    pub workgroup: Option<[u32; 3]>,
    pub wave: Option<u32>,
    pub lane: Option<u32>,
    pub pc: Option<u32>,
    pub address: Option<u64>,
}

impl Default for Header {
    fn default() -> Header {
        Header {
            desc: String::new(),
            grid: [1, 1, 1],
            workgroup: [32, 1, 1],
            widths: ALL_WIDTHS.to_vec(),
            device_memory: 65536,
            local_memory: None,
            registers: None,
            max_instructions: 1_000_000,
            kernel: None,
            container: Container::InMemory,
            set_regs: Vec::new(),
            inputs: Vec::new(),
            expects: Vec::new(),
            expect_error: None,
            error_text: Vec::new(),
            fault: Fault::default(),
        }
    }
}

/// Parse the header of `source` (`file` only names it in errors).
pub fn parse_header(file: &str, source: &str) -> Result<Header, HeaderError> {
    let mut header = Header::default();
    for (index, raw) in source.lines().enumerate() {
        let line = index + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            continue;
        }
        let Some(comment) = trimmed.strip_prefix(';').or_else(|| trimmed.strip_prefix('#')) else {
            break; // the header is the leading comment block
        };
        let comment = comment.trim();
        let Some(directive) = comment.strip_prefix('@') else { continue };
        let (name, rest) = directive.split_once(char::is_whitespace).unwrap_or((directive, ""));
        let err = |message: String| HeaderError { file: file.to_string(), line, message };
        parse_directive(&mut header, name, rest.trim(), line).map_err(err)?;
    }
    if header.expects.is_empty() && header.expect_error.is_none() {
        return Err(HeaderError {
            file: file.to_string(),
            line: 1,
            message: "the header declares neither `@expect` nor `@expect-error`".into(),
        });
    }
    Ok(header)
}

fn parse_directive(h: &mut Header, name: &str, rest: &str, line: usize) -> Result<(), String> {
    match name {
        "desc" => h.desc = rest.to_string(),
        "grid" => h.grid = parse_dims(rest)?,
        "workgroup" => h.workgroup = parse_dims(rest)?,
        "wave-width" => h.widths = parse_widths(rest)?,
        "invalid-wave-width" => h.widths = vec![parse_u32(rest)?],
        "device-memory" => h.device_memory = parse_u64(rest)?,
        "local-memory" => h.local_memory = Some(parse_u32(rest)?),
        "registers" => h.registers = Some(parse_u32(rest)?),
        "max-instructions" => h.max_instructions = parse_u64(rest)?,
        "kernel" => h.kernel = Some(rest.to_string()),
        "container" => {
            h.container = match rest {
                "memory" => Container::InMemory,
                "bytes" => Container::Bytes,
                "reference-stripped" => Container::ReferenceStripped,
                _ => return Err(format!("unknown container `{rest}` (memory, bytes, reference-stripped)")),
            }
        }
        "set-reg" => {
            let (reg, value) = rest.split_once(':').ok_or("expected `@set-reg rN:VALUE`")?;
            let index = reg
                .trim()
                .strip_prefix('r')
                .and_then(|n| n.parse::<u8>().ok())
                .ok_or_else(|| format!("`{reg}` is not a register rN"))?;
            h.set_regs.push((index, parse_int_u32(value.trim())?));
        }
        "input" => h.inputs.push(parse_input(rest)?),
        "expect" => h.expects.push(parse_expect(rest, line)?),
        "expect-error" => {
            h.expect_error =
                Some(ErrorClass::parse(rest).ok_or_else(|| format!("unknown error class `{rest}`"))?)
        }
        "expect-error-text" => h.error_text.push(rest.to_string()),
        "expect-fault" => {
            for item in rest.split_whitespace() {
                let (key, value) =
                    item.split_once('=').ok_or_else(|| format!("expected key=value, got `{item}`"))?;
                match key {
                    "workgroup" => h.fault.workgroup = Some(parse_dims(value)?),
                    "wave" => h.fault.wave = Some(parse_u32(value)?),
                    "lane" => h.fault.lane = Some(parse_u32(value)?),
                    "pc" => h.fault.pc = Some(parse_u32(value)?),
                    "address" => h.fault.address = Some(parse_u64(value)?),
                    _ => {
                        return Err(format!(
                            "unknown fault field `{key}` (workgroup, wave, lane, pc, address)"
                        ))
                    }
                }
            }
        }
        _ => return Err(format!("unknown directive `@{name}`")),
    }
    Ok(())
}

fn parse_dims(text: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("expected 1 to 3 comma-separated sizes, got `{text}`"));
    }
    let mut dims = [1u32; 3];
    for (d, p) in dims.iter_mut().zip(&parts) {
        *d = parse_u32(p)?;
    }
    Ok(dims)
}

fn parse_widths(text: &str) -> Result<Vec<u32>, String> {
    if text == "all" {
        return Ok(ALL_WIDTHS.to_vec());
    }
    let mut widths = Vec::new();
    for p in text.split(',') {
        let w = parse_u32(p.trim())?;
        if !ALL_WIDTHS.contains(&w) {
            return Err(format!("wave width {w} is not one of 4, 8, 16, 32, 64"));
        }
        widths.push(w);
    }
    if widths.is_empty() {
        return Err("empty wave-width list".into());
    }
    Ok(widths)
}

/// A decimal or `0x` hex integer, `_` separators allowed.
pub fn parse_u64(text: &str) -> Result<u64, String> {
    let clean = text.trim().replace('_', "");
    let parsed = match clean.strip_prefix("0x").or_else(|| clean.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => clean.parse::<u64>(),
    };
    parsed.map_err(|_| format!("`{text}` is not an unsigned integer"))
}

fn parse_u32(text: &str) -> Result<u32, String> {
    let v = parse_u64(text)?;
    u32::try_from(v).map_err(|_| format!("`{text}` does not fit in 32 bits"))
}

/// An integer that may be negative (stored two's complement in 32 bits).
fn parse_int_u32(text: &str) -> Result<u32, String> {
    match text.strip_prefix('-') {
        Some(abs) => {
            let v = parse_u64(abs)?;
            if v > 1 << 31 {
                return Err(format!("`{text}` is below i32::MIN"));
            }
            Ok((v as u32).wrapping_neg())
        }
        None => parse_u32(text),
    }
}

fn parse_input(text: &str) -> Result<Input, String> {
    let (addr, spec) = text.split_once(':').ok_or("expected `@input ADDR:TYPE:VALUES`")?;
    let address = parse_u64(addr)?;
    let (kind, rest) = spec.split_once(':').ok_or("expected `ADDR:TYPE:VALUES`")?;
    let bytes = match kind.trim() {
        "iota-u32" | "iota-f32" => {
            let nums: Vec<&str> = rest.split(':').collect();
            let count = parse_u64(nums[0])? as usize;
            let start: f64 = nums.get(1).map(|s| parse_f64(s)).transpose()?.unwrap_or(0.0);
            let step: f64 = nums.get(2).map(|s| parse_f64(s)).transpose()?.unwrap_or(1.0);
            let mut bytes = Vec::with_capacity(count * 4);
            for i in 0..count {
                let v = start + step * i as f64;
                let word = if kind.trim() == "iota-u32" { v as i64 as u32 } else { (v as f32).to_bits() };
                bytes.extend_from_slice(&word.to_le_bytes());
            }
            bytes
        }
        "fill-u32" => {
            let (count, value) = rest.split_once(':').ok_or("expected `fill-u32:COUNT:VALUE`")?;
            let word = parse_int_u32(value.trim())?;
            word.to_le_bytes().repeat(parse_u64(count)? as usize)
        }
        "random-u32" | "random-f32" => {
            let mut parts = rest.split(':');
            let count = parse_u64(parts.next().unwrap_or(""))? as usize;
            let mut seed = 1u64;
            let mut max: Option<u64> = None;
            for p in parts {
                match p.split_once('=') {
                    Some(("seed", v)) => seed = parse_u64(v)?,
                    Some(("max", v)) => max = Some(parse_u64(v)?),
                    _ => return Err(format!("unknown random option `{p}` (seed=, max=)")),
                }
            }
            let mut rng = SplitMix64::new(seed);
            let mut bytes = Vec::with_capacity(count * 4);
            for _ in 0..count {
                let word = if kind.trim() == "random-f32" {
                    rng.next_f32_signed_unit().to_bits()
                } else {
                    match max {
                        Some(m) if m > 0 => (rng.next_u64() % m) as u32,
                        _ => rng.next_u64() as u32,
                    }
                };
                bytes.extend_from_slice(&word.to_le_bytes());
            }
            bytes
        }
        "bytes" => {
            let hex: String = rest.chars().filter(|c| !c.is_whitespace() && *c != '_').collect();
            if !hex.len().is_multiple_of(2) {
                return Err("`bytes:` needs an even number of hex digits".into());
            }
            (0..hex.len() / 2)
                .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16))
                .collect::<Result<_, _>>()
                .map_err(|_| format!("`{hex}` is not hex"))?
        }
        other => {
            let ty = ElemType::parse(other).ok_or_else(|| format!("unknown input type `{other}`"))?;
            let mut bytes = Vec::new();
            for v in expand_list(rest)? {
                let bits = match parse_value(ty, &v)? {
                    ExpVal::Bits(bits) => bits,
                    // An input `nan` is the canonical quiet NaN.
                    ExpVal::AnyNan if ty == ElemType::F32 => 0x7fc0_0000,
                    ExpVal::AnyNan => 0x7ff8_0000_0000_0000,
                    ExpVal::DontCare => return Err(format!("`{v}` is not a concrete input value")),
                };
                bytes.extend_from_slice(&bits.to_le_bytes()[..ty.bytes()]);
            }
            bytes
        }
    };
    Ok(Input { address, bytes })
}

fn parse_expect(text: &str, line: usize) -> Result<Expect, String> {
    let mut text = text.trim();
    let mut widths = None;
    if let Some(rest) = text.strip_prefix("[w=") {
        let (list, after) = rest.split_once(']').ok_or("unclosed `[w=...]`")?;
        widths = Some(parse_widths(list)?);
        text = after.trim();
    }
    let mut ulp = 0;
    let mut body = text;
    if let Some((before, tol)) = text.rsplit_once(char::is_whitespace) {
        if let Some(n) = tol.strip_prefix("ulp=") {
            ulp = parse_u64(n)?;
            body = before.trim();
        }
    }
    let (addr, spec) = body.split_once(':').ok_or("expected `@expect ADDR:TYPE:VALUES`")?;
    let address = parse_u64(addr)?;
    let source = if let Some(call) = spec.trim().strip_prefix("rust=") {
        let (name, args) = call.split_once('(').ok_or("expected `rust=name(args)`")?;
        let args = args.strip_suffix(')').ok_or("missing `)` after oracle arguments")?;
        let args = args
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .map(|a| {
                if a.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
                    Ok(OracleArg::Ident(a.to_string()))
                } else {
                    parse_u64(a).map(OracleArg::Num)
                }
            })
            .collect::<Result<_, _>>()?;
        ExpectSource::Oracle { name: name.trim().to_string(), args }
    } else {
        let (ty, values) = spec.split_once(':').ok_or("expected `TYPE:VALUES` or `rust=...`")?;
        let ty = ElemType::parse(ty.trim()).ok_or_else(|| format!("unknown type `{ty}`"))?;
        let values = expand_list(values)?.iter().map(|v| parse_value(ty, v)).collect::<Result<_, _>>()?;
        ExpectSource::Values { ty, values }
    };
    Ok(Expect { line, widths, address, source, ulp })
}

/// Split a comma list, expanding `VALUE*COUNT` repetitions.
fn expand_list(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim) {
        if item.is_empty() {
            return Err("empty value in list".into());
        }
        match item.rsplit_once('*') {
            Some((value, count)) => {
                let n = parse_u64(count)?;
                if n > 1 << 20 {
                    return Err(format!("repetition `{item}` is too large"));
                }
                out.extend(std::iter::repeat_n(value.trim().to_string(), n as usize));
            }
            None => out.push(item.to_string()),
        }
    }
    Ok(out)
}

fn parse_f64(text: &str) -> Result<f64, String> {
    let t = text.trim();
    match t {
        "inf" | "+inf" => Ok(f64::INFINITY),
        "-inf" => Ok(f64::NEG_INFINITY),
        "nan" => Ok(f64::NAN),
        _ => t.parse::<f64>().map_err(|_| format!("`{t}` is not a number")),
    }
}

/// One value of type `ty`: `_` (don't care), hex bits `0x..`, a signed integer, or for float
/// types a decimal float, `inf`, `-inf`, `nan` (any NaN when expected; 0x7fc00000 as input).
pub fn parse_value(ty: ElemType, text: &str) -> Result<ExpVal, String> {
    let t = text.trim();
    if t == "_" {
        return Ok(ExpVal::DontCare);
    }
    if t.starts_with("0x") {
        let bits = parse_u64(t)?;
        if ty.bytes() < 8 && bits >> (8 * ty.bytes()) != 0 {
            return Err(format!("`{t}` does not fit in {} bytes", ty.bytes()));
        }
        return Ok(ExpVal::Bits(bits));
    }
    if ty.is_float() {
        if t == "nan" {
            return Ok(ExpVal::AnyNan);
        }
        let v = parse_f64(t)?;
        return Ok(ExpVal::Bits(if ty == ElemType::F32 { (v as f32).to_bits() as u64 } else { v.to_bits() }));
    }
    let (neg, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, t),
    };
    let mag = parse_u64(digits)?;
    let bits = if neg { mag.wrapping_neg() } else { mag };
    let mask = if ty.bytes() == 8 { u64::MAX } else { (1u64 << (8 * ty.bytes())) - 1 };
    let fits = if neg { mag <= 1u64 << (8 * ty.bytes() - 1) } else { ty.bytes() == 8 || mag <= mask };
    if !fits {
        return Err(format!("`{t}` does not fit in {} bytes", ty.bytes()));
    }
    Ok(ExpVal::Bits(bits & mask))
}

/// Small deterministic generator for `random-*` inputs (the oracle sees the same bytes, so the
/// generator only has to be reproducible, not good).
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [-1, 1) with 24 random bits (exactly representable in f32).
    pub fn next_f32_signed_unit(&mut self) -> f32 {
        let bits = (self.next_u64() >> 40) as i32 - (1 << 23);
        bits as f32 / (1 << 23) as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_full_header() {
        let src = "; @desc demo\n; @grid 2,1,1\n; @workgroup 64\n; @wave-width 8,32\n\
                   ; @set-reg r1:0x100\n; @set-reg r2:-1\n; @input 0x0:u32:1,2,0xffffffff\n\
                   ; @input 0x10:iota-u32:4:10\n; @expect [w=8] 0x20:f32:1.5,nan,_,-0.0 ulp=1\n\
                   ; @expect 0x40:rust=prefix_sum_u32(0x100, 64)\n; @expect 0x0:u32:7*3\n.kernel k\nhalt\n";
        let h = parse_header("t.wave", src).unwrap();
        assert_eq!(h.grid, [2, 1, 1]);
        assert_eq!(h.workgroup, [64, 1, 1]);
        assert_eq!(h.widths, vec![8, 32]);
        assert_eq!(h.set_regs, vec![(1, 0x100), (2, 0xffff_ffff)]);
        assert_eq!(h.inputs[0].bytes, vec![1, 0, 0, 0, 2, 0, 0, 0, 255, 255, 255, 255]);
        assert_eq!(h.inputs[1].bytes[4], 11);
        let e = &h.expects[0];
        assert_eq!((e.widths.clone(), e.ulp, e.address), (Some(vec![8]), 1, 0x20));
        assert_eq!(
            e.source,
            ExpectSource::Values {
                ty: ElemType::F32,
                values: vec![
                    ExpVal::Bits(0x3fc0_0000),
                    ExpVal::AnyNan,
                    ExpVal::DontCare,
                    ExpVal::Bits(0x8000_0000)
                ]
            }
        );
        assert_eq!(
            h.expects[1].source,
            ExpectSource::Oracle {
                name: "prefix_sum_u32".into(),
                args: vec![OracleArg::Num(0x100), OracleArg::Num(64)]
            }
        );
        assert_eq!(
            h.expects[2].source,
            ExpectSource::Values { ty: ElemType::U32, values: vec![ExpVal::Bits(7); 3] }
        );
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse_header("x.wave", "; ok\n; @grid 1,2,3,4\n").unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("x.wave", 2));
        let e = parse_header("x.wave", "; @expect 0x0:u8:256\n").unwrap_err();
        assert!(e.message.contains("does not fit"), "{e}");
        let e = parse_header("x.wave", "; @bogus 1\n").unwrap_err();
        assert!(e.to_string().starts_with("x.wave:1: unknown directive"));
        assert!(parse_header("x.wave", "; nothing\n").is_err());
        assert!(parse_header("x.wave", "; @wave-width 12\n").is_err());
    }

    #[test]
    fn signed_and_negative_values() {
        assert_eq!(parse_value(ElemType::I32, "-2147483648"), Ok(ExpVal::Bits(0x8000_0000)));
        assert_eq!(parse_value(ElemType::U32, "-1"), Ok(ExpVal::Bits(0xffff_ffff)));
        assert!(parse_value(ElemType::I32, "-2147483649").is_err());
        assert_eq!(parse_value(ElemType::F64, "1.0"), Ok(ExpVal::Bits(0x3ff0_0000_0000_0000)));
    }
}
