//! The values of `run`'s flags, parsed while the command line is read: a malformed value is a
//! usage error (exit 2, with clap's message naming the flag), before any file is opened.
//! Numbers are written as wave-emu takes them: offsets and register values in decimal or `0x`
//! hex, counts in decimal.

use std::path::PathBuf;

/// A number in decimal or `0x` hex (wave-emu's offsets and register values).
pub fn number(s: &str) -> Result<u64, String> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).map_err(|e| format!("invalid hex number `{s}`: {e}")),
        None => s.parse::<u64>().map_err(|e| format!("invalid number `{s}`: {e}")),
    }
}

fn count(s: &str) -> Result<u64, String> {
    s.parse::<u64>().map_err(|e| format!("invalid count `{s}`: {e}"))
}

fn split_once<'a>(spec: &'a str, separator: char, form: &str) -> Result<(&'a str, &'a str), String> {
    spec.split_once(separator).ok_or_else(|| format!("expected {form}"))
}

/// `--grid` and `--workgroup`: `X,Y,Z`, three u32 (zeros are allowed: nothing runs).
pub fn dimensions(s: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.len() != 3 {
        return Err(format!("expected X,Y,Z (3 comma-separated values), got {}", parts.len()));
    }
    let mut dims = [0u32; 3];
    for (d, (part, axis)) in dims.iter_mut().zip(parts.iter().zip(["x", "y", "z"])) {
        *d = part.parse().map_err(|e| format!("invalid {axis} `{part}`: {e}"))?;
    }
    Ok(dims)
}

/// `--set-reg REG:VALUE` / `--reg REG=VALUE`: the initial value of a register in every thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegisterInit {
    pub register: u8,
    /// Negative values in two's complement; a value above u32::MAX keeps its low 32 bits, as
    /// wave-emu does.
    pub value: u32,
    /// Whether `value` lost high bits of what was written.
    pub truncated: bool,
}

pub fn register_init(spec: &str) -> Result<RegisterInit, String> {
    let separator = spec.find([':', '=']).ok_or("expected REG:VALUE or REG=VALUE")?;
    let (register, value) = (&spec[..separator], &spec[separator + 1..]);
    let register = register.parse::<u8>().map_err(|e| format!("invalid register `{register}`: {e}"))?;
    if let Some(magnitude) = value.strip_prefix('-') {
        // Kernel arguments from the Python SDK are Python ints, which may be negative.
        return match magnitude.parse::<u32>() {
            Ok(m) if m <= 1 << 31 => Ok(RegisterInit { register, value: m.wrapping_neg(), truncated: false }),
            _ => Err(format!("invalid value `{value}`: a negative value must fit an i32")),
        };
    }
    let wide = number(value)?;
    Ok(RegisterInit { register, value: wide as u32, truncated: wide > u32::MAX as u64 })
}

/// `--arg OFFSET:FILE`: a file's bytes copied into device memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgFile {
    pub offset: u64,
    pub path: PathBuf,
}

pub fn arg_file(spec: &str) -> Result<ArgFile, String> {
    let (offset, path) = split_once(spec, ':', "OFFSET:FILE")?;
    Ok(ArgFile { offset: number(offset)?, path: PathBuf::from(path) })
}

/// `--fill-zero OFFSET:TYPE:COUNT` (COUNT 4-byte words; TYPE is ignored, as wave-emu does).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FillZero {
    pub offset: u64,
    pub words: u64,
}

pub fn fill_zero(spec: &str) -> Result<FillZero, String> {
    let parts: Vec<&str> = spec.split(':').collect();
    let [offset, _type, words] = parts[..] else {
        return Err("expected OFFSET:TYPE:COUNT".into());
    };
    Ok(FillZero { offset: number(offset)?, words: count(words)? })
}

/// `--fill-iota OFFSET:TYPE:COUNT[:SCALE]`: f32 values 0, SCALE, 2·SCALE, … (TYPE is ignored).
#[derive(Clone, Debug, PartialEq)]
pub struct FillIota {
    pub offset: u64,
    pub count: u64,
    pub scale: f32,
}

pub fn fill_iota(spec: &str) -> Result<FillIota, String> {
    let parts: Vec<&str> = spec.split(':').collect();
    let (offset, count_text, scale) = match parts[..] {
        [offset, _type, count] => (offset, count, 1.0),
        [offset, _type, count, scale] => {
            (offset, count, scale.parse::<f32>().map_err(|e| format!("invalid scale `{scale}`: {e}"))?)
        }
        _ => return Err("expected OFFSET:TYPE:COUNT[:SCALE]".into()),
    };
    Ok(FillIota { offset: number(offset)?, count: count(count_text)?, scale })
}

/// `--dump-u32/-f32/-f16/-bf16 OFFSET:COUNT`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DumpValues {
    pub offset: u64,
    pub count: u64,
}

pub fn dump_values(spec: &str) -> Result<DumpValues, String> {
    let (offset, count_text) = split_once(spec, ':', "OFFSET:COUNT")?;
    Ok(DumpValues { offset: number(offset)?, count: count(count_text)? })
}

/// `--dump-memory START:END` with END > START.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryRange {
    pub start: u64,
    pub end: u64,
}

pub fn memory_range(spec: &str) -> Result<MemoryRange, String> {
    let (start, end) = split_once(spec, ':', "START:END")?;
    let (start, end) = (number(start)?, number(end)?);
    if end <= start {
        return Err("END must be greater than START".into());
    }
    Ok(MemoryRange { start, end })
}

/// `--out OFFSET:LEN:FILE`: device bytes written to a file after the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutFile {
    pub offset: u64,
    pub len: u64,
    pub path: PathBuf,
}

pub fn out_file(spec: &str) -> Result<OutFile, String> {
    let mut parts = spec.splitn(3, ':');
    let (Some(offset), Some(len), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
        return Err("expected OFFSET:LEN:FILE".into());
    };
    Ok(OutFile { offset: number(offset)?, len: number(len)?, path: PathBuf::from(path) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_values() {
        let r = register_init("3=0x10").unwrap();
        assert_eq!((r.register, r.value, r.truncated), (3, 16, false));
        let r = register_init("3:-1").unwrap();
        assert_eq!((r.value, r.truncated), (u32::MAX, false));
        assert_eq!(register_init("0:-2147483648").unwrap().value, 0x8000_0000);
        assert!(register_init("0:-2147483649").is_err());
        let r = register_init("0:0x100000005").unwrap();
        assert_eq!((r.value, r.truncated), (5, true));
        assert!(register_init("256:1").is_err());
        assert!(register_init("5").is_err());
    }

    #[test]
    fn specs() {
        assert_eq!(dimensions("0,1,2"), Ok([0, 1, 2]));
        assert!(dimensions("1,1").is_err());
        assert!(memory_range("0x10:0x10").is_err());
        assert_eq!(fill_iota("0:f32:4").unwrap().scale, 1.0);
        assert!(fill_zero("0:f32").is_err());
        assert_eq!(out_file("0:4:a:b").unwrap().path, PathBuf::from("a:b"));
    }
}
