//! Compatibility with the reference assembler (`wave-asm` 0.1.2 from crates.io).
//!
//! The reference crate on crates.io encodes instructions in an older word layout than the
//! one wave-format.md §2 documents and our opcode table implements (6-bit opcode at bit 26,
//! 5-bit registers, `iadd` in 4 bytes), so byte equality of the code section is impossible.
//! What must agree, and is checked here for reference-dialect sources (no float immediate,
//! CAS, `@p0`, `call`, bf16, MMA, registers above r31):
//! - the container: kernel names, order, symbol table, `.registers` / `.local_memory` /
//!   `.workgroup_size` metadata;
//! - the program: decoding the reference's code with `wave-decode` gives, instruction by
//!   instruction, the same mnemonic, operand values and predicate as decoding ours.

use std::path::{Path, PathBuf};
use wave_isa::asm::assemble;
use wave_isa::ir::decode_code;
use wave_isa::opcodes::{Class, Kind, Op, Scope, OPS, SPECIAL_REGISTERS};
use wave_isa::wbin::WbinFile;

/// One instruction in a form both decoders can produce.
#[derive(Debug, PartialEq, Eq)]
struct Normal {
    mnemonic: String,
    operands: Vec<u32>,
    predicate: (u8, bool),
}

/// Operand values from the reference's `Debug` form, e.g.
/// `DeviceAtomic { op: Add, rd: Some(5), addr: 2, value: 3, scope: Device }` → [5, 2, 3, 2].
fn reference_operands(debug: &str) -> Vec<u32> {
    let Some(open) = debug.find('{') else { return Vec::new() };
    let body = debug[open + 1..].trim_end_matches('}');
    let mut out = Vec::new();
    for field in body.split(',') {
        let Some((name, value)) = field.split_once(':') else { continue };
        let value = value.trim();
        let value = value.strip_prefix("Some(").and_then(|v| v.strip_suffix(')')).unwrap_or(value);
        if name.trim() == "scope" {
            out.push(Scope::from_name(&value.to_lowercase()).expect("a scope name") as u32);
        } else if let Ok(n) = value.parse::<u32>() {
            out.push(n);
        }
    }
    out
}

fn reference_program(binary: &[u8]) -> Vec<Vec<Normal>> {
    let file = wave_decode::WbinFile::parse(binary).expect("reference output parses");
    (0..file.kernel_count())
        .map(|i| {
            let code = file.kernel_code(i).expect("kernel code");
            wave_decode::decode_all(code)
                .expect("reference output decodes")
                .into_iter()
                .map(|d| {
                    let debug = format!("{:?}", d.operation);
                    let mnemonic =
                        if debug.starts_with("MovSr") { "mov_sr".to_string() } else { d.mnemonic() };
                    Normal {
                        mnemonic,
                        operands: reference_operands(&debug),
                        predicate: (d.predicate, d.predicate_negated),
                    }
                })
                .collect()
        })
        .collect()
}

fn our_program(file: &WbinFile) -> Vec<Vec<Normal>> {
    file.kernels
        .iter()
        .map(|k| {
            decode_code(&k.meta.name, &k.code)
                .expect("our output decodes")
                .into_iter()
                .map(|(_, inst)| Normal {
                    mnemonic: inst.op.mnemonic().to_string(),
                    operands: inst
                        .operands()
                        .map(|(spec, _)| inst.slot_value(spec.slot))
                        .zip(inst.op.operands())
                        .filter(|(v, spec)| !(spec.optional && *v == 0))
                        .map(|(v, _)| v)
                        .collect(),
                    predicate: inst.guard.map_or((0, false), |g| (g.index, g.negated)),
                })
                .collect()
        })
        .collect()
}

/// Assemble with both and compare everything the two formats share.
fn check_compatible(source: &str, name: &str) {
    let reference = wave_asm::assemble(source, name)
        .unwrap_or_else(|e| panic!("{name}: the reference rejects it: {e:?}"))
        .binary;
    let ours = assemble(source, name).unwrap_or_else(|d| panic!("{name}: we reject it:\n{d}")).file;

    let ref_file = wave_decode::WbinFile::parse(&reference).expect("reference output parses");
    assert_eq!(ref_file.kernel_count(), ours.kernels.len(), "{name}: kernel count");
    for (i, (r, o)) in ref_file.kernels.iter().zip(&ours.kernels).enumerate() {
        assert_eq!(r.name, o.meta.name, "{name}: kernel {i} name");
        assert_eq!(r.register_count, o.meta.registers, "{name}: kernel {i} registers");
        assert_eq!(r.local_memory_size, o.meta.local_memory, "{name}: kernel {i} local memory");
        assert_eq!(r.workgroup_size, o.meta.workgroup_size, "{name}: kernel {i} workgroup size");
    }
    // The symbol table is the same bytes (names, NUL-terminated, in order).
    let ours_bytes = wave_isa::wbin::write(&ours, false);
    let symbols = |b: &[u8]| {
        let at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap()) as usize;
        b[at(0x10)..at(0x10) + at(0x14)].to_vec()
    };
    assert_eq!(symbols(&reference), symbols(&ours_bytes), "{name}: symbol table");

    let (theirs, mine) = (reference_program(&reference), our_program(&ours));
    for (k, (t, m)) in theirs.iter().zip(&mine).enumerate() {
        assert_eq!(t.len(), m.len(), "{name}: kernel {k} instruction count");
        for (j, (a, b)) in t.iter().zip(m).enumerate() {
            assert_eq!(a, b, "{name}: kernel {k} instruction {j}");
        }
    }
}

fn reference_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/reference")
}

#[test]
fn hand_written_reference_dialect_kernels() {
    let mut n = 0;
    for entry in std::fs::read_dir(reference_dir()).expect("tests/golden/reference exists") {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "wave") {
            let text = std::fs::read_to_string(&path).unwrap();
            check_compatible(&text, &path.file_name().unwrap().to_string_lossy());
            n += 1;
        }
    }
    assert!(n > 0);
}

/// The examples shipped inside the reference crate, when its sources are on disk.
#[test]
fn reference_crate_examples() {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")));
    let Some(src) = home.map(|h| h.join("registry/src")) else { return };
    let Ok(registries) = std::fs::read_dir(src) else { return };
    for registry in registries.flatten() {
        let examples = registry.path().join("wave-asm-0.1.2/examples");
        let Ok(files) = std::fs::read_dir(examples) else { continue };
        for f in files.flatten() {
            let path = f.path();
            if path.extension().is_some_and(|e| e == "wave") {
                let text = std::fs::read_to_string(&path).unwrap();
                check_compatible(&text, &path.display().to_string());
            }
        }
    }
}

/// Ops the crates.io reference cannot assemble, or assembles wrongly (CAS), or that need
/// label resolution (call); everything else in the table is generated below.
fn reference_knows(op: Op) -> bool {
    !matches!(op.class(), Class::BFloat | Class::Mma)
        && !matches!(op, Op::CvtF32Bf16 | Op::CvtBf16F32 | Op::Call | Op::AtomicCas | Op::LocalAtomicCas)
}

/// One line per reference-known op, operands generated from the table (registers r0..r31).
fn generated_source() -> String {
    let mut src = String::from(".kernel every_op\n");
    for (i, info) in OPS.iter().enumerate().filter(|(_, info)| reference_knows(info.op)) {
        let forms: &[bool] = if info.operands.iter().any(|s| s.optional) { &[true, false] } else { &[true] };
        for &with_optional in forms {
            let mut operands = Vec::new();
            for (k, spec) in info.operands.iter().enumerate() {
                if spec.optional && !with_optional {
                    continue;
                }
                let reg = (i * 7 + k * 5 + 1) % 28;
                operands.push(match spec.kind {
                    Kind::Reg | Kind::Pair | Kind::Quad | Kind::Fragment(_) => format!("r{reg}"),
                    Kind::Pred => format!("p{}", 1 + (i + k) % 3),
                    Kind::Special => SPECIAL_REGISTERS[i % 16].to_string(),
                    Kind::Imm => format!("0x{:x}", i * 0x1111),
                    Kind::Scope => [".wave", ".workgroup", ".device", ".system"][i % 4].to_string(),
                    Kind::Target => unreachable!("call is excluded"),
                });
            }
            let guard = ["", "@p1 ", "@!p2 ", "@p3 "][i % 4];
            let guard = if info.op.is_structural() { "" } else { guard };
            src.push_str(&format!("    {guard}{} {}\n", info.mnemonic, operands.join(", ")));
        }
    }
    src.push_str(".end\n");
    src
}

#[test]
fn every_reference_mnemonic_agrees() {
    let src = generated_source();
    assert!(src.lines().count() > 120, "{src}");
    check_compatible(&src, "every_op.wave");
}

/// Guards against a vacuous comparison: the reference side really yields operands.
#[test]
fn reference_side_is_decoded_in_full() {
    let src =
        ".kernel k\n@!p2 atomic_add r5, r2, r3, .device\nmov r1, sr_lane_id\nbfi r1, r2, r3, r4, r5\n.end\n";
    let binary = wave_asm::assemble(src, "k.wave").unwrap().binary;
    let program = reference_program(&binary);
    let expect = |m: &str, operands: Vec<u32>, predicate| Normal { mnemonic: m.into(), operands, predicate };
    assert_eq!(
        program,
        vec![vec![
            expect("atomic_add", vec![5, 2, 3, 2], (2, true)),
            expect("mov_sr", vec![1, 4], (0, false)),
            expect("bfi", vec![1, 2, 3, 4, 5], (0, false)),
        ]]
    );
    let ours = assemble(src, "k.wave").unwrap().file;
    assert_eq!(our_program(&ours), program);
}

/// Every guard the reference assembler can encode (`@p1`..`@p3`, `@!p0`..`@!p3`) gets the
/// same predicate bits from us as from it: word0's low nibble is (negate << 2 | predicate),
/// read from the reference's binary by `wave-decode`, with our predicate-enable bit 3 clear.
/// (Its words are laid out differently, so the comparison is of the decoded predicate.)
#[test]
fn reference_guards_encode_without_the_enable_bit() {
    let lines = [
        "iadd r1, r2, r3",
        "fma r4, r5, r6, r7",
        "device_store_u32 r1, r2",
        "atomic_add r5, r2, r3, .device",
        "mov r1, r2",
        "mov_imm r3, 0x1234",
        "mov r1, sr_lane_id",
        "wave_reduce_add r1, r2",
        "barrier",
        "halt",
    ];
    let mut checked = 0;
    for line in lines {
        for guard in ["@p1", "@p2", "@p3", "@!p0", "@!p1", "@!p2", "@!p3"] {
            let src = format!(".kernel k\n    {guard} {line}\n.end\n");
            let reference =
                wave_asm::assemble(&src, "k.wave").unwrap_or_else(|e| panic!("{src}: {e:?}")).binary;
            let file = wave_decode::WbinFile::parse(&reference).unwrap();
            let decoded = wave_decode::decode_all(file.kernel_code(0).unwrap()).unwrap();
            let expected = u32::from(decoded[0].predicate_negated) << 2 | u32::from(decoded[0].predicate);
            let ours = assemble(&src, "k.wave").unwrap_or_else(|d| panic!("{d}")).file;
            let word0 = u32::from_le_bytes(ours.kernels[0].code[..4].try_into().unwrap());
            assert_eq!(word0 & 0xF, expected, "{guard} {line}: our word0 {word0:#010x}");
            checked += 1;
        }
    }
    assert_eq!(checked, 70);
}
