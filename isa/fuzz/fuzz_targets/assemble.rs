//! Arbitrary UTF-8 through the assembler, and whatever assembles through the loader and
//! disassembler. Any panic is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wave_isa::disasm::{disassemble, DisasmOptions};
use wave_isa::module::load_bytes;

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else { return };
    let _ = wave_isa::asm::assemble(source, "fuzz.wave");
    if let Ok((_, file)) = load_bytes(source.as_bytes(), "fuzz.wave") {
        let _ = disassemble(&file, DisasmOptions::default());
    }
});
