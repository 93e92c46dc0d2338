//! Compatibility with the reference toolchain as published on crates.io (wave-asm,
//! wave-decode 0.1.2), at the level of the `.wbin` container.
//!
//! Finding: the crates.io 0.1.2 releases encode *instructions* in an older layout than the
//! one wave-format.md §2 describes (opcode in bits 31..26, 5-bit register fields, modifier at
//! bits 10..7, no bf16 or MMA instructions): `mov r0, sr_thread_id_x` assembles to word
//! 0xFC000102. Their code bytes therefore do not decode with our table, and our disassembly
//! cannot re-assemble with them. The container (header, sections, symbol table, metadata
//! records, stripped-file bug) is the same, and that is what these tests check: code bytes
//! are carried as opaque data.

use wave_isa::wbin::{self, parse_header};

/// Reference-dialect kernels: no float immediates, CAS, `@p0` or `call` (whose meaning or
/// bytes differ between the two assemblers, semantics.md B.1).
const KERNELS: &[&str] = &[
    r"
.kernel vector_add
.registers 8
.local_memory 1024
    mov r0, sr_thread_id_x
    mov_imm r1, 2
    shl r1, r0, r1
    device_load_u32 r2, r1
    iadd r3, r1, r4
    device_load_u32 r5, r3
    fadd r6, r2, r5
    device_store_u32 r3, r6
    barrier
    halt
.end
",
    r"
.kernel control
.registers 32
.workgroup_size 64, 2, 1
    mov_sr r1, sr_lane_id
    mov_imm r2, 0xfffffff0
    icmp_lt p1, r1, r2
    if p1
        @!p2 iadd r3, r1, r2
        loop
            isub r1, r1, r2
            icmp_eq p3, r1, r0
            break p3
            continue p2
        endloop
    else
        @!p0 fmul r4, r1, r1
    endif
    select r5, p1, r3, r4
    return
.end
.kernel memory_and_atomics
.registers 40
    device_load_u64 r2, r1
    device_load_u128 r4, r1
    device_store_u64 r1, r2
    device_store_u128 r1, r4
    local_load_u8 r9, r1
    local_store_u16 r1, r9
    atomic_add r10, r1, r2, .device
    atomic_exchange r1, r2, .workgroup
    atomic_max r11, r1, r2, .system
    local_atomic_min r12, r1, r2
    local_atomic_xor r1, r2
    fence_acquire .workgroup
    fence_release .device
    fence_acq_rel .system
    wait
    nop
.end
",
    r"
.kernel math
.registers 64
    imad r1, r2, r3, r4
    iclamp r1, r2, r3, r4
    fma r5, r6, r7, r8
    fclamp r5, r6, r7, r8
    frcp r1, r2
    flog2 r1, r2
    hma r1, r2, r3, r4
    hma2 r1, r2, r3, r4
    dadd r2, r4, r6
    dma r2, r4, r6, r8
    ddiv r2, r4, r6
    dsqrt r2, r4
    bfe r1, r2, r3, r4
    bfi r1, r2, r3, r4, r5
    bitfind r1, r2
    ucmp_le p2, r1, r2
    fcmp_unord p3, r1, r2
    cvt_f64_f32 r2, r1
    cvt_f32_f64 r1, r2
    wave_shuffle_xor r1, r2, r3
    wave_broadcast r1, r2, r3
    wave_ballot r1, p2
    wave_any p1, p2
    wave_all p3, p1
    wave_prefix_sum r1, r2
    wave_reduce_max r1, r2
    mov r1, r2
.end
",
];

fn reference(source: &str, strip: bool) -> Vec<u8> {
    let options = wave_asm::AssemblerOptions { strip_symbols: strip };
    match wave_asm::assemble_with_options(source, "compat.wave", &options) {
        Ok(result) => result.binary,
        Err(e) => panic!("wave-asm rejects a test kernel: {e:?}\n{source}"),
    }
}

#[test]
fn reference_binaries_load_and_write_back_identically() {
    for source in KERNELS {
        let bytes = reference(source, false);
        let file = wbin::parse(&bytes).unwrap();
        assert_eq!(wbin::write(&file, false), bytes, "{source}");
        // Same kernels, metadata and code as wave-decode sees them.
        let theirs = wave_decode::WbinFile::parse(&bytes).unwrap();
        assert_eq!(theirs.kernels.len(), file.kernels.len());
        for (i, (ours, info)) in file.kernels.iter().zip(&theirs.kernels).enumerate() {
            assert_eq!(ours.meta.name, info.name);
            assert_eq!(ours.meta.registers, info.register_count);
            assert_eq!(ours.meta.local_memory, info.local_memory_size);
            assert_eq!(ours.meta.workgroup_size, info.workgroup_size);
            assert_eq!(ours.code, theirs.kernel_code(i).unwrap());
            // Their instruction boundaries agree with the kernel's code size.
            let sizes: u32 = wave_decode::decode_all(&ours.code).unwrap().iter().map(|d| d.size as u32).sum();
            assert_eq!(sizes as usize, ours.code.len());
        }
    }
}

#[test]
fn stripped_reference_binaries_load() {
    for source in KERNELS {
        let bytes = reference(source, true);
        // The reference's stripped header says metadata_offset = 0 (wave-format.md §1.4).
        assert_eq!(parse_header(&bytes).unwrap().metadata_offset, 0);
        let file = wbin::parse(&bytes).unwrap();
        let named = wbin::parse(&reference(source, false)).unwrap();
        for (i, (s, n)) in file.kernels.iter().zip(&named.kernels).enumerate() {
            assert_eq!(s.meta.name, format!("kernel_{i}"));
            assert_eq!(
                (&s.code, s.meta.registers, s.meta.workgroup_size),
                (&n.code, n.meta.registers, n.meta.workgroup_size)
            );
        }
        // Our stripped writer differs only in writing the true metadata offset.
        let mut ours = wbin::write(&file, true);
        let true_offset = 32 + file.kernels.iter().map(|k| k.code.len() as u32).sum::<u32>();
        assert_eq!(parse_header(&ours).unwrap().metadata_offset, true_offset);
        ours[0x18..0x1C].copy_from_slice(&0u32.to_le_bytes());
        assert_eq!(ours, bytes);
        // wave-decode reads our stripped files (it cannot read the reference's).
        assert!(wave_decode::WbinFile::parse(&wbin::write(&file, true)).is_ok());
    }
}

#[test]
fn our_writer_output_reads_with_wave_decode() {
    for source in KERNELS {
        let file = wbin::parse(&reference(source, false)).unwrap();
        let ours = wbin::write(&file, false);
        let theirs = wave_decode::WbinFile::parse(&ours).unwrap();
        let names: Vec<&str> = theirs.kernels.iter().map(|k| k.name.as_str()).collect();
        let expected: Vec<&str> = file.kernels.iter().map(|k| k.meta.name.as_str()).collect();
        assert_eq!(names, expected);
    }
}
