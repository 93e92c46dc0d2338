//! Comparing device memory against an expectation, with precise failure messages.

use crate::header::{ElemType, ExpVal};

/// Expected elements of one type (from the header or an oracle).
#[derive(Clone, Debug, PartialEq)]
pub struct Expected {
    pub ty: ElemType,
    pub values: Vec<ExpVal>,
}

impl Expected {
    pub fn u32s(values: impl IntoIterator<Item = u32>) -> Expected {
        Expected { ty: ElemType::U32, values: values.into_iter().map(|v| ExpVal::Bits(v as u64)).collect() }
    }
    pub fn f32s(values: impl IntoIterator<Item = f32>) -> Expected {
        Expected {
            ty: ElemType::F32,
            values: values
                .into_iter()
                .map(|v| if v.is_nan() { ExpVal::AnyNan } else { ExpVal::Bits(v.to_bits() as u64) })
                .collect(),
        }
    }
    pub fn byte_len(&self) -> usize {
        self.values.len() * self.ty.bytes()
    }
}

fn read_elem(ty: ElemType, bytes: &[u8]) -> u64 {
    let mut buf = [0u8; 8];
    buf[..ty.bytes()].copy_from_slice(&bytes[..ty.bytes()]);
    u64::from_le_bytes(buf)
}

/// Map float bits to a monotonically ordered integer, so ulp distance is a subtraction.
fn ordered(ty: ElemType, bits: u64) -> i128 {
    let (sign, magnitude) = match ty {
        ElemType::F32 => (bits >> 31 & 1 == 1, (bits & 0x7fff_ffff) as i128),
        _ => (bits >> 63 == 1, (bits & 0x7fff_ffff_ffff_ffff) as i128),
    };
    if sign {
        -magnitude
    } else {
        magnitude
    }
}

fn is_nan(ty: ElemType, bits: u64) -> bool {
    match ty {
        ElemType::F32 => f32::from_bits(bits as u32).is_nan(),
        ElemType::F64 => f64::from_bits(bits).is_nan(),
        _ => false,
    }
}

fn matches(ty: ElemType, expected: ExpVal, got: u64, ulp: u64) -> bool {
    match expected {
        ExpVal::DontCare => true,
        ExpVal::AnyNan => is_nan(ty, got),
        ExpVal::Bits(want) if ty.is_float() && ulp > 0 => {
            if is_nan(ty, want) || is_nan(ty, got) {
                return is_nan(ty, want) && is_nan(ty, got);
            }
            (ordered(ty, want) - ordered(ty, got)).unsigned_abs() <= ulp as u128
        }
        ExpVal::Bits(want) => want == got,
    }
}

/// Render one element as hex plus, for floats, its value.
pub fn describe(ty: ElemType, bits: u64) -> String {
    match ty {
        ElemType::F32 => format!("0x{bits:08x} ({:e})", f32::from_bits(bits as u32)),
        ElemType::F64 => format!("0x{bits:016x} ({:e})", f64::from_bits(bits)),
        ElemType::I32 => format!("0x{bits:08x} ({})", bits as u32 as i32),
        ElemType::I64 => format!("0x{bits:016x} ({})", bits as i64),
        ElemType::U64 => format!("0x{bits:016x} ({bits})"),
        ElemType::U8 => format!("0x{bits:02x} ({bits})"),
        ElemType::U16 => format!("0x{bits:04x} ({bits})"),
        ElemType::U32 => {
            // Show the f32 reading too: many u32 expectations hold float bit patterns.
            format!("0x{bits:08x} ({bits}, f32 {:e})", f32::from_bits(bits as u32))
        }
    }
}

fn describe_expected(ty: ElemType, e: ExpVal) -> String {
    match e {
        ExpVal::Bits(b) => describe(ty, b),
        ExpVal::AnyNan => "any NaN".into(),
        ExpVal::DontCare => "anything".into(),
    }
}

/// Compare `memory[address..]` against `expected`; `Err` names the first differing address and
/// how many elements differ.
pub fn compare(memory: &[u8], address: u64, expected: &Expected, ulp: u64) -> Result<(), String> {
    let len = expected.byte_len() as u64;
    let end = address.checked_add(len).filter(|&e| e <= memory.len() as u64).ok_or_else(|| {
        format!("expected {} bytes at 0x{address:x}, but device memory has only {} bytes", len, memory.len())
    })?;
    let region = &memory[address as usize..end as usize];
    let size = expected.ty.bytes();
    let mut first: Option<String> = None;
    let mut differing = 0usize;
    for (i, &want) in expected.values.iter().enumerate() {
        let got = read_elem(expected.ty, &region[i * size..]);
        if !matches(expected.ty, want, got, ulp) {
            differing += 1;
            if first.is_none() {
                first = Some(format!(
                    "at 0x{:x} (element {i}): expected {}{}, got {}",
                    address + (i * size) as u64,
                    describe_expected(expected.ty, want),
                    if ulp > 0 { format!(" within {ulp} ulp") } else { String::new() },
                    describe(expected.ty, got)
                ));
            }
        }
    }
    match first {
        None => Ok(()),
        Some(msg) => Err(format!("{msg}; {differing} of {} elements differ", expected.values.len())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_and_tolerant_compare() {
        let mem: Vec<u8> = [1.0f32, 2.0, f32::NAN].iter().flat_map(|v| v.to_le_bytes()).collect();
        let e = Expected::f32s([1.0, 2.0, f32::NAN]);
        assert_eq!(compare(&mem, 0, &e, 0), Ok(()));
        let off_by_one = Expected::f32s([1.0, f32::from_bits(2.0f32.to_bits() + 1), f32::NAN]);
        let err = compare(&mem, 0, &off_by_one, 0).unwrap_err();
        assert!(err.starts_with("at 0x4 (element 1)"), "{err}");
        assert!(err.contains("1 of 3"), "{err}");
        assert_eq!(compare(&mem, 0, &off_by_one, 1), Ok(()));
        assert!(compare(&mem, 8, &e, 0).is_err(), "reads past the end");
    }

    #[test]
    fn ulp_crosses_zero() {
        let mem = (-0.0f32).to_le_bytes();
        let e = Expected::f32s([f32::from_bits(1)]);
        assert!(compare(&mem, 0, &e, 0).is_err());
        assert_eq!(compare(&mem, 0, &e, 1), Ok(()));
    }
}
