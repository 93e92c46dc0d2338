//! The `.wbin` container: reading and writing, byte-compatible with the reference writer
//! (wave-format.md §1).
//!
//! Layout written by [`write()`]: a 32-byte header, the code of every kernel concatenated in
//! order, the symbol table (each kernel name + NUL, in kernel order; omitted when stripped),
//! then the metadata table (u32 count + one 32-byte record per kernel). Integers are
//! little-endian and nothing is padded.
//!
//! [`parse`] never panics: every offset and size read from the file is checked, with
//! 64-bit arithmetic, before it is used.

use crate::ir::KernelMeta;
use std::fmt;

/// `WAVE`: the first four bytes of every `.wbin` file.
pub const MAGIC: [u8; 4] = *b"WAVE";
/// The version the reference writer stores. Readers accept any version (as wave-emu does).
pub const VERSION: u16 = 1;
/// Size of the fixed header.
pub const HEADER_SIZE: u32 = 32;
/// Size of one kernel record in the metadata table.
pub const RECORD_SIZE: u32 = 32;

/// A whole `.wbin` file: its kernels in file order.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct WbinFile {
    pub kernels: Vec<WbinKernel>,
}

/// One kernel: its metadata and exactly its own code (`code_size` bytes, semantics B.17).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct WbinKernel {
    pub meta: KernelMeta,
    pub code: Vec<u8>,
}

/// A header section, for error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    Code,
    Symbols,
    Metadata,
}

impl fmt::Display for Section {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Section::Code => "code section",
            Section::Symbols => "symbol table",
            Section::Metadata => "metadata table",
        })
    }
}

/// Why bytes are not a readable `.wbin` file. Offsets are file byte offsets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WbinError {
    /// Fewer than the 32 bytes of the header.
    TruncatedHeader { file_len: u64 },
    /// The file does not start with `WAVE`.
    BadMagic { found: [u8; 4] },
    /// A section named in the header does not lie inside the file.
    SectionOutsideFile { section: Section, offset: u64, size: u64, file_len: u64 },
    /// The metadata table is too small to hold its kernel count.
    MetadataTooSmall { offset: u64, size: u64 },
    /// The kernel count promises a record that the metadata table does not contain.
    RecordBeyondTable { kernel: u32, count: u32, record_offset: u64, table_end: u64 },
    /// A kernel's code range is not inside the code section.
    KernelCodeOutside { kernel: u32, name: String, code_offset: u64, code_size: u64, section_size: u64 },
    /// A kernel's code size is not a whole number of 4-byte words.
    CodeSizeMisaligned { kernel: u32, name: String, code_size: u32 },
    /// A kernel's name offset does not point into the symbol table.
    NameOutsideSymbols { kernel: u32, name_offset: u64, symbols_start: u64, symbols_end: u64 },
    /// A kernel name runs to the end of the symbol table without a NUL byte.
    NameNotTerminated { kernel: u32, name_offset: u64 },
    /// A kernel name is not valid UTF-8.
    NameNotUtf8 { kernel: u32, name_offset: u64, error_at: u64 },
}

impl fmt::Display for WbinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use WbinError::*;
        match self {
            TruncatedHeader { file_len } => write!(
                f,
                "not a .wbin file: {file_len} bytes is shorter than the {HEADER_SIZE}-byte header"
            ),
            BadMagic { found } => write!(
                f,
                "not a .wbin file: bad magic at byte 0x0: expected `WAVE` (57 41 56 45), found {:02x} {:02x} {:02x} {:02x}",
                found[0], found[1], found[2], found[3]
            ),
            SectionOutsideFile { section, offset, size, file_len } => write!(
                f,
                "{section} at byte 0x{offset:x} with {size} bytes ends at byte 0x{:x}, beyond the end of the {file_len}-byte file",
                offset + size
            ),
            MetadataTooSmall { offset, size } => write!(
                f,
                "metadata table at byte 0x{offset:x} has {size} bytes, too few for its 4-byte kernel count"
            ),
            RecordBeyondTable { kernel, count, record_offset, table_end } => write!(
                f,
                "kernel record {kernel} (of {count}) at byte 0x{record_offset:x} lies beyond the end of the metadata table at byte 0x{table_end:x}"
            ),
            KernelCodeOutside { kernel, name, code_offset, code_size, section_size } => write!(
                f,
                "kernel {kernel} `{name}`: code at offset 0x{code_offset:x} with {code_size} bytes lies outside the {section_size}-byte code section"
            ),
            CodeSizeMisaligned { kernel, name, code_size } => write!(
                f,
                "kernel {kernel} `{name}`: code size {code_size} is not a multiple of 4"
            ),
            NameOutsideSymbols { kernel, name_offset, symbols_start, symbols_end } => write!(
                f,
                "kernel {kernel}: name offset 0x{name_offset:x} is outside the symbol table (bytes 0x{symbols_start:x}..0x{symbols_end:x})"
            ),
            NameNotTerminated { kernel, name_offset } => write!(
                f,
                "kernel {kernel}: name at byte 0x{name_offset:x} is not NUL-terminated inside the symbol table"
            ),
            NameNotUtf8 { kernel, name_offset, error_at } => write!(
                f,
                "kernel {kernel}: name at byte 0x{name_offset:x} is not valid UTF-8 (bad byte at 0x{error_at:x})"
            ),
        }
    }
}

impl std::error::Error for WbinError {}

/// The raw header fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub version: u16,
    pub flags: u16,
    pub code_offset: u32,
    pub code_size: u32,
    pub symbol_offset: u32,
    pub symbol_size: u32,
    pub metadata_offset: u32,
    pub metadata_size: u32,
}

fn u32_at(bytes: &[u8], at: u64) -> Option<u32> {
    let start = usize::try_from(at).ok()?;
    let b = bytes.get(start..start.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Read the header of a `.wbin` file (magic checked, version not).
pub fn parse_header(bytes: &[u8]) -> Result<Header, WbinError> {
    let file_len = bytes.len() as u64;
    if file_len < HEADER_SIZE as u64 {
        return Err(WbinError::TruncatedHeader { file_len });
    }
    let found = [bytes[0], bytes[1], bytes[2], bytes[3]];
    if found != MAGIC {
        return Err(WbinError::BadMagic { found });
    }
    let word = |at: u64| u32_at(bytes, at).unwrap_or(0);
    Ok(Header {
        version: u16::from_le_bytes([bytes[4], bytes[5]]),
        flags: u16::from_le_bytes([bytes[6], bytes[7]]),
        code_offset: word(0x08),
        code_size: word(0x0C),
        symbol_offset: word(0x10),
        symbol_size: word(0x14),
        metadata_offset: word(0x18),
        metadata_size: word(0x1C),
    })
}

fn check_section(section: Section, offset: u32, size: u32, file_len: u64) -> Result<(), WbinError> {
    let (offset, size) = (offset as u64, size as u64);
    // u32 + u32 always fits in u64.
    if offset + size > file_len {
        return Err(WbinError::SectionOutsideFile { section, offset, size, file_len });
    }
    Ok(())
}

/// Parse a `.wbin` file (wave-format.md §1).
///
/// Accepts the reference's stripped files whose header says `metadata_offset = 0` (semantics
/// B.1 #5): the table is then looked for right after the code (and symbol) sections.
/// Stripped kernels (no symbol table, or name offset 0) are named `kernel_<i>`.
pub fn parse(bytes: &[u8]) -> Result<WbinFile, WbinError> {
    let header = parse_header(bytes)?;
    let file_len = bytes.len() as u64;
    check_section(Section::Code, header.code_offset, header.code_size, file_len)?;
    let has_symbols = header.symbol_offset != 0 || header.symbol_size != 0;
    if has_symbols {
        check_section(Section::Symbols, header.symbol_offset, header.symbol_size, file_len)?;
    }
    let code_start = header.code_offset as u64;
    let code_end = code_start + header.code_size as u64;
    let symbols_start = header.symbol_offset as u64;
    let symbols_end = symbols_start + header.symbol_size as u64;

    let metadata_offset = if header.metadata_offset == 0 {
        // The reference writer's stripped-file bug: the table really follows the last section.
        if has_symbols {
            code_end.max(symbols_end)
        } else {
            code_end
        }
    } else {
        header.metadata_offset as u64
    };
    let metadata_size = header.metadata_size as u64;
    if metadata_offset + metadata_size > file_len {
        return Err(WbinError::SectionOutsideFile {
            section: Section::Metadata,
            offset: metadata_offset,
            size: metadata_size,
            file_len,
        });
    }
    let Some(count) = u32_at(bytes, metadata_offset).filter(|_| metadata_size >= 4) else {
        return Err(WbinError::MetadataTooSmall { offset: metadata_offset, size: metadata_size });
    };
    let table_end = metadata_offset + metadata_size;

    // No allocation is sized by `count` before its records are known to exist.
    let mut kernels = Vec::new();
    for index in 0..count {
        let record_offset = metadata_offset + 4 + index as u64 * RECORD_SIZE as u64;
        if record_offset + RECORD_SIZE as u64 > table_end {
            return Err(WbinError::RecordBeyondTable { kernel: index, count, record_offset, table_end });
        }
        let field = |i: u64| u32_at(bytes, record_offset + 4 * i).unwrap_or(0);
        let name_offset = field(0);
        let name = if !has_symbols || name_offset == 0 {
            format!("kernel_{index}")
        } else {
            read_name(bytes, index, name_offset as u64, symbols_start, symbols_end)?
        };
        let meta = KernelMeta {
            name,
            registers: field(1),
            local_memory: field(2),
            workgroup_size: [field(3), field(4), field(5)],
        };
        let (offset, size) = (field(6), field(7));
        if offset as u64 + size as u64 > header.code_size as u64 {
            return Err(WbinError::KernelCodeOutside {
                kernel: index,
                name: meta.name,
                code_offset: offset as u64,
                code_size: size as u64,
                section_size: header.code_size as u64,
            });
        }
        if size % 4 != 0 {
            return Err(WbinError::CodeSizeMisaligned { kernel: index, name: meta.name, code_size: size });
        }
        // In range: offset + size <= code_size and code_start + code_size <= file_len.
        let start = (code_start + offset as u64) as usize;
        let code = bytes[start..start + size as usize].to_vec();
        kernels.push(WbinKernel { meta, code });
    }
    Ok(WbinFile { kernels })
}

fn read_name(
    bytes: &[u8],
    kernel: u32,
    name_offset: u64,
    symbols_start: u64,
    symbols_end: u64,
) -> Result<String, WbinError> {
    if name_offset < symbols_start || name_offset >= symbols_end {
        return Err(WbinError::NameOutsideSymbols { kernel, name_offset, symbols_start, symbols_end });
    }
    // Both bounds were checked against the file length by `check_section`.
    let table = &bytes[name_offset as usize..symbols_end as usize];
    let Some(len) = table.iter().position(|&b| b == 0) else {
        return Err(WbinError::NameNotTerminated { kernel, name_offset });
    };
    std::str::from_utf8(&table[..len]).map(str::to_string).map_err(|e| WbinError::NameNotUtf8 {
        kernel,
        name_offset,
        error_at: name_offset + e.valid_up_to() as u64,
    })
}

/// Write a `.wbin` file, byte for byte as the reference writer lays it out.
///
/// With `strip`, the symbol table is left out, symbol offset/size and every name offset are 0,
/// and (unlike the reference, semantics B.1 #5) the header holds the true metadata offset.
/// A name that occurs more than once is stored each time, but every record points at its
/// first copy (as the reference does).
///
/// Sizes are stored as u32: a file over 4 GiB cannot be written (the counts wrap).
pub fn write(file: &WbinFile, strip: bool) -> Vec<u8> {
    let code_size: usize = file.kernels.iter().map(|k| k.code.len()).sum();
    let symbol_size: usize = if strip { 0 } else { file.kernels.iter().map(|k| k.meta.name.len() + 1).sum() };
    let code_offset = HEADER_SIZE as usize;
    let symbol_offset = if strip { 0 } else { code_offset + code_size };
    let metadata_offset = code_offset + code_size + symbol_size;
    let metadata_size = 4 + RECORD_SIZE as usize * file.kernels.len();

    let mut out = Vec::with_capacity(metadata_offset + metadata_size);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    for value in [code_offset, code_size, symbol_offset, symbol_size, metadata_offset, metadata_size] {
        out.extend_from_slice(&(value as u32).to_le_bytes());
    }
    for kernel in &file.kernels {
        out.extend_from_slice(&kernel.code);
    }
    // Position of each kernel's name in the symbol table: the first copy of that name.
    let mut name_offsets = Vec::with_capacity(file.kernels.len());
    if !strip {
        let mut position = 0usize;
        for (i, kernel) in file.kernels.iter().enumerate() {
            let first = file.kernels[..i].iter().position(|k| k.meta.name == kernel.meta.name);
            let first_position = match first {
                Some(j) => name_offsets[j],
                None => symbol_offset + position,
            };
            name_offsets.push(first_position);
            out.extend_from_slice(kernel.meta.name.as_bytes());
            out.push(0);
            position += kernel.meta.name.len() + 1;
        }
    }
    out.extend_from_slice(&(file.kernels.len() as u32).to_le_bytes());
    let mut kernel_code_offset = 0usize;
    for (i, kernel) in file.kernels.iter().enumerate() {
        let m = &kernel.meta;
        let name_offset = if strip { 0 } else { name_offsets[i] };
        for value in [
            name_offset as u32,
            m.registers,
            m.local_memory,
            m.workgroup_size[0],
            m.workgroup_size[1],
            m.workgroup_size[2],
            kernel_code_offset as u32,
            kernel.code.len() as u32,
        ] {
            out.extend_from_slice(&value.to_le_bytes());
        }
        kernel_code_offset += kernel.code.len();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(name: &str, code: &[u8]) -> WbinKernel {
        WbinKernel {
            meta: KernelMeta { name: name.into(), registers: 32, local_memory: 0, workgroup_size: [0; 3] },
            code: code.to_vec(),
        }
    }

    #[test]
    fn write_then_parse_round_trips() {
        let file = WbinFile { kernels: vec![kernel("a", &[0x00, 0x00, 0x90, 0x3F]), kernel("bb", &[0; 8])] };
        let bytes = write(&file, false);
        assert_eq!(parse(&bytes).unwrap(), file);
        let header = parse_header(&bytes).unwrap();
        assert_eq!(header.symbol_offset, 32 + 12);
        assert_eq!(header.metadata_offset, 32 + 12 + 5);
    }

    #[test]
    fn duplicate_names_point_at_first_copy() {
        let file = WbinFile { kernels: vec![kernel("k", &[]), kernel("x", &[]), kernel("k", &[])] };
        let bytes = write(&file, false);
        let header = parse_header(&bytes).unwrap();
        let table = header.metadata_offset as u64 + 4;
        let name_of = |i: u64| u32_at(&bytes, table + 32 * i).unwrap();
        assert_eq!(name_of(0), header.symbol_offset);
        assert_eq!(name_of(2), header.symbol_offset);
        assert_eq!(name_of(1), header.symbol_offset + 2);
        assert_eq!(header.symbol_size, 6, "every copy is stored");
        assert_eq!(parse(&bytes).unwrap(), file);
    }

    #[test]
    fn stripped_names_and_true_offset() {
        let file = WbinFile { kernels: vec![kernel("a", &[0; 4]), kernel("b", &[0; 4])] };
        let bytes = write(&file, true);
        let header = parse_header(&bytes).unwrap();
        assert_eq!((header.symbol_offset, header.symbol_size), (0, 0));
        assert_eq!(header.metadata_offset, 32 + 8);
        let parsed = parse(&bytes).unwrap();
        assert_eq!(parsed.kernels[0].meta.name, "kernel_0");
        assert_eq!(parsed.kernels[1].meta.name, "kernel_1");
        // The reference writes metadata_offset = 0 for stripped files.
        let mut reference = bytes.clone();
        reference[0x18..0x1C].copy_from_slice(&0u32.to_le_bytes());
        assert_eq!(parse(&reference).unwrap(), parsed);
    }
}
