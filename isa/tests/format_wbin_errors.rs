//! One failing input per `.wbin` error kind, checking the error and its message.

use wave_isa::ir::KernelMeta;
use wave_isa::module::{LoadErrorKind, Module};
use wave_isa::wbin::{self, parse, parse_header, Section, WbinError, WbinFile, WbinKernel};

fn halt() -> Vec<u8> {
    0x3F00_0090u32.to_le_bytes().to_vec()
}

fn sample() -> Vec<u8> {
    let kernel = |name: &str| WbinKernel {
        meta: KernelMeta { name: name.into(), registers: 32, local_memory: 0, workgroup_size: [0; 3] },
        code: halt(),
    };
    wbin::write(&WbinFile { kernels: vec![kernel("first"), kernel("second")], ..Default::default() }, false)
}

fn set_u32(bytes: &mut [u8], at: usize, value: u32) {
    bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
}

/// File offset of kernel record `i`.
fn record(bytes: &[u8], i: usize) -> usize {
    parse_header(bytes).unwrap().metadata_offset as usize + 4 + 32 * i
}

fn message(bytes: &[u8]) -> (WbinError, String) {
    let e = parse(bytes).unwrap_err();
    let text = e.to_string();
    (e, text)
}

#[test]
fn sample_parses() {
    let file = parse(&sample()).unwrap();
    assert_eq!(file.kernels.len(), 2);
    assert_eq!(file.kernels[1].meta.name, "second");
    assert_eq!(file.kernels[1].code, halt());
}

#[test]
fn truncated_header() {
    let (e, text) = message(&sample()[..31]);
    assert_eq!(e, WbinError::TruncatedHeader { file_len: 31 });
    assert!(text.contains("31 bytes") && text.contains("32-byte header"), "{text}");
}

#[test]
fn bad_magic() {
    let mut bytes = sample();
    bytes[0] = b'X';
    let (e, text) = message(&bytes);
    assert!(matches!(e, WbinError::BadMagic { found: [b'X', b'A', b'V', b'E'] }));
    assert!(text.contains("bad magic") && text.contains("58 41 56 45"), "{text}");
}

#[test]
fn any_version_is_accepted() {
    let mut bytes = sample();
    bytes[4] = 7;
    assert_eq!(parse(&bytes).unwrap(), parse(&sample()).unwrap());
}

#[test]
fn code_section_outside_file() {
    let mut bytes = sample();
    set_u32(&mut bytes, 0x0C, 0xFFFF_FFF0);
    let (e, text) = message(&bytes);
    assert!(matches!(e, WbinError::SectionOutsideFile { section: Section::Code, .. }), "{e:?}");
    assert!(text.starts_with("code section at byte 0x20") && text.contains("beyond the end"), "{text}");
}

#[test]
fn symbol_table_outside_file() {
    let mut bytes = sample();
    let len = bytes.len() as u32;
    set_u32(&mut bytes, 0x10, len);
    let (e, text) = message(&bytes);
    assert!(matches!(e, WbinError::SectionOutsideFile { section: Section::Symbols, .. }), "{e:?}");
    assert!(text.starts_with("symbol table"), "{text}");
}

#[test]
fn metadata_outside_file() {
    let mut bytes = sample();
    set_u32(&mut bytes, 0x1C, 1000);
    let (e, text) = message(&bytes);
    assert!(matches!(e, WbinError::SectionOutsideFile { section: Section::Metadata, size: 1000, .. }));
    assert!(text.starts_with("metadata table"), "{text}");
}

#[test]
fn metadata_too_small() {
    let mut bytes = sample();
    set_u32(&mut bytes, 0x1C, 3);
    let (e, text) = message(&bytes);
    assert!(matches!(e, WbinError::MetadataTooSmall { size: 3, .. }), "{e:?}");
    assert!(text.contains("too few for its 4-byte kernel count"), "{text}");
}

#[test]
fn record_beyond_table() {
    let mut bytes = sample();
    let count_at = parse_header(&bytes).unwrap().metadata_offset as usize;
    set_u32(&mut bytes, count_at, 3);
    let (e, text) = message(&bytes);
    assert!(matches!(e, WbinError::RecordBeyondTable { kernel: 2, count: 3, .. }), "{e:?}");
    assert!(text.starts_with("kernel record 2 (of 3)") && text.contains("beyond the end"), "{text}");
    // A huge count must fail the same way, without allocating for it.
    set_u32(&mut bytes, count_at, u32::MAX);
    assert!(matches!(parse(&bytes), Err(WbinError::RecordBeyondTable { kernel: 2, .. })));
}

#[test]
fn kernel_code_outside_code_section() {
    let mut bytes = sample();
    let at = record(&bytes, 1);
    set_u32(&mut bytes, at + 24, 8);
    let (e, text) = message(&bytes);
    assert!(matches!(e, WbinError::KernelCodeOutside { kernel: 1, code_offset: 8, .. }), "{e:?}");
    assert!(text.starts_with("kernel 1 `second`: code at offset 0x8"), "{text}");
    // Offset + size overflowing 32 bits is caught too.
    set_u32(&mut bytes, at + 24, 0xFFFF_FFFC);
    set_u32(&mut bytes, at + 28, 8);
    assert!(matches!(parse(&bytes), Err(WbinError::KernelCodeOutside { .. })));
}

#[test]
fn code_size_not_multiple_of_4() {
    let mut bytes = sample();
    let at = record(&bytes, 0);
    set_u32(&mut bytes, at + 28, 3);
    let (e, text) = message(&bytes);
    assert!(matches!(e, WbinError::CodeSizeMisaligned { kernel: 0, code_size: 3, .. }), "{e:?}");
    assert_eq!(text, "kernel 0 `first`: code size 3 is not a multiple of 4");
}

#[test]
fn name_outside_symbol_table() {
    let mut bytes = sample();
    let at = record(&bytes, 0);
    set_u32(&mut bytes, at, 4);
    let (e, text) = message(&bytes);
    assert!(matches!(e, WbinError::NameOutsideSymbols { kernel: 0, name_offset: 4, .. }), "{e:?}");
    assert!(text.contains("name offset 0x4 is outside the symbol table"), "{text}");
}

#[test]
fn name_not_terminated() {
    let mut bytes = sample();
    let header = parse_header(&bytes).unwrap();
    let last = (header.symbol_offset + header.symbol_size - 1) as usize;
    bytes[last] = b'!';
    let (e, text) = message(&bytes);
    assert!(matches!(e, WbinError::NameNotTerminated { kernel: 1, .. }), "{e:?}");
    assert!(text.contains("not NUL-terminated"), "{text}");
}

#[test]
fn name_not_utf8() {
    let mut bytes = sample();
    let header = parse_header(&bytes).unwrap();
    bytes[header.symbol_offset as usize + 2] = 0xFF;
    let (e, text) = message(&bytes);
    assert!(matches!(e, WbinError::NameNotUtf8 { kernel: 0, .. }), "{e:?}");
    assert!(text.contains("not valid UTF-8"), "{text}");
}

#[test]
fn module_reports_file_errors_and_build_errors() {
    let e = Module::from_bytes(&sample()[..10]).unwrap_err();
    assert!(matches!(e.kind, LoadErrorKind::Wbin(WbinError::TruncatedHeader { .. })));
    // An unknown opcode inside kernel 1's code.
    let mut bytes = sample();
    bytes[32 + 4 + 3] = 0xFF;
    let e = Module::from_bytes(&bytes).unwrap_err();
    // Undecodable as current code, so the 0.1.2 encoding was tried too, and the note says so.
    assert_eq!(
        e.to_string(),
        "kernel `second` at byte 0x0: unknown opcode 0xff\n  note: it does not load in the instruction encoding of wave-asm/wave-compiler 0.1.2 from crates.io either: kernel `first` at byte 0x0: unknown opcode 0x0f"
    );
}
