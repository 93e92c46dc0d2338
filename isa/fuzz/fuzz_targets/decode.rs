//! Arbitrary bytes through the whole loading path: `.wbin` parsing, tree building,
//! validation (which returns what it learned), uniformity analysis and disassembly. Any
//! panic is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wave_isa::disasm::{disassemble, DisasmOptions};
use wave_isa::module::Module;
use wave_isa::{analysis, wbin};

fuzz_target!(|data: &[u8]| {
    let Ok(file) = wbin::parse(data) else { return };
    let _ = disassemble(&file, DisasmOptions { offsets: true });
    // What parses must write back and parse to the same kernels.
    let again = wbin::parse(&wbin::write(&file, false)).expect("written file parses");
    assert_eq!(again, file);
    if let Ok(module) = Module::from_wbin(&file) {
        for kernel in &module.kernels {
            let _ = analysis::uniformity(kernel);
        }
    }
});
