//! The instruction encodings a `.wbin` file's code may be in, and how a reader picks one.
//!
//! Both encodings share the container and its version number (1), so the choice is made by
//! decoding: see [`crate::module::load_wbin`] for the rule.

use crate::instr::{DecodeError, Instruction};
use std::fmt;
use std::str::FromStr;

/// How a kernel's instruction words are laid out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// The encoding wave-format.md §2 documents (8-bit opcodes, 8-bit register fields), which
    /// our assembler writes.
    #[default]
    Current,
    /// The older encoding of the 0.1.2 toolchain on crates.io (`wave-asm`, `wave-compiler`,
    /// `wave-emu`): 6-bit opcodes, 5-bit register fields ([`crate::legacy`]).
    Legacy012,
}

impl Encoding {
    /// The name used on the command line (`--encoding`).
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Current => "current",
            Encoding::Legacy012 => "legacy-0.1.2",
        }
    }

    /// A phrase for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Encoding::Current => "the current instruction encoding",
            Encoding::Legacy012 => "the instruction encoding of wave-asm/wave-compiler 0.1.2 from crates.io",
        }
    }

    /// Decode the instruction at `code[0..]`: the instruction and its size in bytes.
    pub fn decode(self, code: &[u8]) -> Result<(Instruction, u32), DecodeError> {
        match self {
            Encoding::Current => Instruction::decode(code).map(|i| (i, i.size())),
            Encoding::Legacy012 => crate::legacy::decode(code),
        }
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which encoding a reader should assume: one, or whichever the code decodes in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EncodingChoice {
    #[default]
    Auto,
    Force(Encoding),
}

impl FromStr for EncodingChoice {
    type Err = String;

    fn from_str(s: &str) -> Result<EncodingChoice, String> {
        match s {
            "auto" => Ok(EncodingChoice::Auto),
            "current" => Ok(EncodingChoice::Force(Encoding::Current)),
            "legacy-0.1.2" => Ok(EncodingChoice::Force(Encoding::Legacy012)),
            other => Err(format!("unknown encoding `{other}` (choose auto, current or legacy-0.1.2)")),
        }
    }
}
