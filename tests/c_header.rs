//! `include/wave_jit.h` must be exactly what cbindgen makes of the C ABI in `src/capi/` (with
//! `cbindgen.toml`), so the header C programs compile against is what the library exports.
//! `WAVE_JIT_BLESS=1 cargo test --test c_header` rewrites the header after a change.

use std::path::Path;

#[test]
fn header_matches_the_exported_c_abi() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_crate(root)
        .with_config(config)
        .generate()
        .expect("cbindgen cannot read the C ABI");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let generated = String::from_utf8(generated).unwrap();

    let header = root.join("include/wave_jit.h");
    if std::env::var_os("WAVE_JIT_BLESS").is_some() {
        std::fs::write(&header, &generated).unwrap();
        return;
    }
    let checked_in = std::fs::read_to_string(&header).unwrap_or_default();
    if checked_in != generated {
        let first_difference = checked_in
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| checked_in.lines().count().min(generated.lines().count()));
        panic!(
            "include/wave_jit.h is not what the code exports (first difference at line {}: \
             checked in {:?}, generated {:?}); run `WAVE_JIT_BLESS=1 cargo test --test c_header` \
             and commit the header",
            first_difference + 1,
            checked_in.lines().nth(first_difference),
            generated.lines().nth(first_difference)
        );
    }
}
