//! What `run` prints after a successful run, in wave-emu's fixed order whatever the order of
//! the flags (wave-format.md §4.1): `--dump-memory`, then `--dump-u32`, `--dump-f32`,
//! `--dump-f16`, `--dump-bf16`, then `--stats`; and the `--out` files.

use super::run::RunArgs;
use super::run_flags::DumpValues;
use std::fmt::Write as _;
use wave_runtime::semantics::{bf16_to_f32, f16_to_f32};
use wave_runtime::{Device, Stats};

/// How a `--dump-*` flag prints one value (of 4 or 2 bytes).
type ShowValue = fn(&[u8]) -> String;

/// Everything for stdout, built before anything is printed so that a failing dump prints
/// nothing (as wave-emu, which fails before printing).
pub fn stdout_text(args: &RunArgs, device: &Device, stats: &Stats) -> Result<String, String> {
    let mut out = String::new();
    if let Some(range) = args.dump_memory {
        let data = device.read(range.start, range.end - range.start).map_err(|e| e.to_string())?;
        let _ = writeln!(out, "Device memory 0x{:08x}-0x{:08x}:", range.start, range.end);
        hex_dump(&mut out, data, range.start);
    }
    let dumps: [(Option<DumpValues>, u64, ShowValue); 4] = [
        (args.dump_u32, 4, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]).to_string()),
        (args.dump_f32, 4, |b| format!("{:?}", f32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
        (args.dump_f16, 2, |b| format!("{:?}", f16_to_f32(u16::from_le_bytes([b[0], b[1]]) as u32))),
        (args.dump_bf16, 2, |b| format!("{:?}", bf16_to_f32(u16::from_le_bytes([b[0], b[1]]) as u32))),
    ];
    for (spec, size, show) in dumps {
        if let Some(spec) = spec {
            dump_values(&mut out, device, spec, size, show)?;
        }
    }
    if args.stats {
        let _ = write!(out, "{stats}");
    }
    Ok(out)
}

/// wave-emu's hex dump: address, 16 bytes in two groups of 8, then the printable characters.
fn hex_dump(out: &mut String, data: &[u8], base: u64) {
    for (i, chunk) in data.chunks(16).enumerate() {
        let _ = write!(out, "{:08x}: ", base + i as u64 * 16);
        for (j, byte) in chunk.iter().enumerate() {
            if j == 8 {
                out.push(' ');
            }
            let _ = write!(out, "{byte:02x} ");
        }
        for _ in chunk.len()..16 {
            out.push_str("   ");
        }
        if chunk.len() <= 8 {
            out.push(' ');
        }
        out.push_str(" |");
        for &byte in chunk {
            out.push(if byte.is_ascii_graphic() || byte == b' ' { byte as char } else { '.' });
        }
        out.push_str("|\n");
    }
}

/// One `--dump-*` flag: COUNT values of `size` bytes from OFFSET, one per line.
fn dump_values(
    out: &mut String,
    device: &Device,
    spec: DumpValues,
    size: u64,
    show: ShowValue,
) -> Result<(), String> {
    let len = spec.count.checked_mul(size).ok_or("dump count too large")?;
    let data = device.read(spec.offset, len).map_err(|e| e.to_string())?;
    for value in data.chunks(size as usize) {
        out.push_str(&show(value));
        out.push('\n');
    }
    Ok(())
}

/// `--out OFFSET:LEN:FILE`: write device bytes to files.
pub fn write_out_files(args: &RunArgs, device: &Device) -> Result<(), String> {
    for out in &args.out {
        let data = device.read(out.offset, out.len).map_err(|e| e.to_string())?;
        std::fs::write(&out.path, data).map_err(|e| format!("cannot write {}: {e}", out.path.display()))?;
    }
    Ok(())
}
