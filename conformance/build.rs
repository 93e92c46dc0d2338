//! Embeds every `programs/<section>/<name>.wave` file into the library, so the suite runs the
//! same from `cargo test`, from an installed `wave-jit`, and from any working directory.

use std::fs;
use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    println!("cargo:rerun-if-changed={}", dir.display());
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "wave") {
            println!("cargo:rerun-if-changed={}", path.display());
            out.push(path);
        }
    }
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let programs = root.join("programs");
    let mut files = Vec::new();
    collect(&programs, &mut files);
    files.sort();
    let mut code = String::from(
        "/// Every conformance program, sorted by path.\npub static PROGRAMS: &[Program] = &[\n",
    );
    for file in &files {
        let rel = file.strip_prefix(&programs).expect("collected under programs/");
        let rel = rel.to_string_lossy().replace('\\', "/");
        code.push_str(&format!(
            "    Program {{ path: {:?}, source: include_str!({:?}) }},\n",
            rel,
            file.display().to_string()
        ));
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("programs.rs");
    fs::write(out, code).expect("write programs.rs");
}
