//! Golden tests: the kernels in `tests/golden/*.wave` assemble to the bytes pinned in the
//! matching `.hex` files, together use every mnemonic of the opcode table, validate, and
//! survive disassemble → assemble and `.wbin` write → parse unchanged.
//!
//! Regenerate the `.hex` files after an intended encoding change with
//! `WAVE_BLESS=1 cargo test -p wave-jit-isa --test golden`, then review the diff.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use wave_isa::asm::assemble;
use wave_isa::disasm::{disassemble, DisasmOptions};
use wave_isa::ir::{build_kernel, decode_code};
use wave_isa::opcodes::OPS;
use wave_isa::validate::validate;
use wave_isa::wbin::{self, WbinFile};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// Every golden source, sorted, with its text.
fn sources() -> Vec<(PathBuf, String)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(golden_dir())
        .expect("tests/golden exists")
        .map(|e| e.expect("readable directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "wave"))
        .collect();
    files.sort();
    assert!(files.len() >= 5, "golden sources missing: {files:?}");
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("readable source");
            (p, text)
        })
        .collect()
}

fn assemble_ok(path: &Path, text: &str) -> WbinFile {
    let name = path.file_name().unwrap().to_string_lossy();
    match assemble(text, &name) {
        Ok(a) => {
            assert!(a.warnings.is_empty(), "{name}: unexpected warnings: {:?}", a.warnings);
            a.file
        }
        Err(d) => panic!("{name} does not assemble:\n{d}"),
    }
}

/// The pinned text form: kernel metadata, then one line per instruction (offset, words).
fn hex_listing(file: &WbinFile) -> String {
    let mut out = String::new();
    for k in &file.kernels {
        let m = &k.meta;
        let [x, y, z] = m.workgroup_size;
        let _ = writeln!(
            out,
            "# kernel {} registers={} local_memory={} workgroup_size={x},{y},{z}",
            m.name, m.registers, m.local_memory
        );
        for (offset, inst) in decode_code(&m.name, &k.code).expect("our own code decodes") {
            let bytes = &k.code[offset as usize..(offset + inst.size()) as usize];
            let words: Vec<String> = bytes
                .chunks(4)
                .map(|c| format!("{:08x}", u32::from_le_bytes([c[0], c[1], c[2], c[3]])))
                .collect();
            let _ = writeln!(out, "{offset:04x} {}", words.join(" "));
        }
    }
    out
}

#[test]
fn golden_bytes_are_pinned() {
    let bless = std::env::var_os("WAVE_BLESS").is_some_and(|v| v == "1");
    let mut failures = Vec::new();
    for (path, text) in sources() {
        let listing = hex_listing(&assemble_ok(&path, &text));
        let hex_path = path.with_extension("hex");
        if bless {
            std::fs::write(&hex_path, &listing).expect("write .hex");
            continue;
        }
        let pinned = std::fs::read_to_string(&hex_path)
            .unwrap_or_else(|_| panic!("{} missing: run with WAVE_BLESS=1", hex_path.display()));
        if pinned != listing {
            let first = pinned.lines().zip(listing.lines()).position(|(a, b)| a != b);
            failures.push(format!(
                "{}: differs at listing line {:?}\npinned:\n{pinned}\nnow:\n{listing}",
                path.display(),
                first.map(|i| i + 1)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn golden_kernels_use_every_mnemonic() {
    let mut used = BTreeSet::new();
    for (path, text) in sources() {
        for k in assemble_ok(&path, &text).kernels {
            for (_, inst) in decode_code(&k.meta.name, &k.code).unwrap() {
                used.insert(inst.op);
            }
        }
    }
    let missing: Vec<&str> = OPS.iter().filter(|i| !used.contains(&i.op)).map(|i| i.mnemonic).collect();
    assert!(missing.is_empty(), "no golden kernel uses: {missing:?}");
}

#[test]
fn golden_kernels_build_and_validate() {
    for (path, text) in sources() {
        for k in assemble_ok(&path, &text).kernels {
            let kernel =
                build_kernel(k.meta.clone(), &k.code).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            if let Err(errors) = validate(&kernel) {
                let list: Vec<String> = errors.iter().map(ToString::to_string).collect();
                panic!("{}:\n{}", path.display(), list.join("\n"));
            }
        }
    }
}

#[test]
fn disassembly_reassembles_to_the_same_bytes() {
    for (path, text) in sources() {
        let file = assemble_ok(&path, &text);
        for offsets in [false, true] {
            let listing = disassemble(&file, DisasmOptions { offsets }).expect("disassembles");
            let again = match assemble(&listing, "disassembly.wave") {
                Ok(a) => a.file,
                Err(d) => panic!("{}: disassembly does not assemble:\n{d}\n{listing}", path.display()),
            };
            assert_eq!(again, file, "{}: round trip changed the file\n{listing}", path.display());
        }
    }
}

#[test]
fn wbin_write_then_parse_is_identity() {
    for (path, text) in sources() {
        let file = assemble_ok(&path, &text);
        let bytes = wbin::write(&file, false);
        assert_eq!(wbin::parse(&bytes).expect("parses"), file, "{}", path.display());
    }
}

#[test]
fn dotted_spellings_equal_underscore_spellings() {
    let dir = golden_dir();
    let read = |n: &str| std::fs::read_to_string(dir.join(n)).expect("golden source");
    let dotted = assemble(&read("dotted.wave"), "dotted.wave").unwrap().file;
    let plain = assemble(&read("dotted_underscored.wave"), "dotted_underscored.wave").unwrap().file;
    assert_eq!(dotted, plain);
}
