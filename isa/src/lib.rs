//! wave-jit-isa: the front half of wave-jit.
//!
//! Text or binary in, structured IR out: the opcode table ([`opcodes`]), instruction
//! encoding ([`instr`]), the older encoding of the 0.1.2 toolchain ([`legacy`]) and how a
//! reader tells them apart ([`encoding`]), the `.wbin` container ([`wbin`]), the assembler
//! ([`asm`]), the disassembler ([`disasm`]), the statement-tree IR ([`ir`]), its validator
//! ([`validate`]) and analyses ([`analysis`]).

pub mod analysis;
pub mod asm;
pub mod disasm;
pub mod encoding;
pub mod instr;
pub mod ir;
pub mod legacy;
pub mod module;
pub mod opcodes;
pub mod validate;
pub mod wbin;

pub use encoding::{Encoding, EncodingChoice};
pub use instr::{Instruction, Operand, PredRef, StateRef};
pub use ir::{Block, FuncId, Function, Kernel, KernelMeta, Stmt, StmtKind};
pub use module::{load_file, LoadError, Module};
pub use opcodes::{Class, Frag, Kind, Op, Scope, Space, SpecialReg};
pub use validate::ValidKernel;
pub use wbin::{WbinFile, WbinKernel};
