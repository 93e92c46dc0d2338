//! Disassembler output: layout, labels, offsets, extensions, and the round trip through our
//! assembler.

use wave_isa::disasm::{disassemble, DisasmOptions};
use wave_isa::instr::Instruction;
use wave_isa::ir::KernelMeta;
use wave_isa::module::load_bytes;
use wave_isa::opcodes::Op;
use wave_isa::wbin::{self, WbinFile, WbinKernel};

const SOURCE: &str = "
.kernel main
.registers 16
.local_memory 256
.workgroup_size 64, 1, 1
    mov_sr r1, sr_lane_id
    icmp_lt p1, r1, r2
    if !p1
        loop
            @p0 iadd r3, r3, r1
            break !p2
        endloop
    else
        call helper
    endif
    atomic_cas r4, r1, r2, r3, .device
    local_atomic_cas r5, r1, r2, r3
    halt
helper:
    fence_acq_rel .workgroup
    return
.end

.kernel second
    mov_imm r0, 0x3f800000
.end
";

fn assembled() -> WbinFile {
    load_bytes(SOURCE.as_bytes(), "main.wave").unwrap_or_else(|e| panic!("{e}")).1
}

#[test]
fn layout_and_round_trip() {
    let file = assembled();
    let text = disassemble(&file, DisasmOptions::default()).unwrap();
    let expected = "\
.kernel main
.registers 16
.local_memory 256
.workgroup_size 64, 1, 1
    mov_sr r1, sr_lane_id
    icmp_lt p1, r1, r2
    if !p1
        loop
            @p0 iadd r3, r3, r1
            break !p2
        endloop
    else
        call L_0048
    endif
    atomic_cas r4, r1, r2, r3, .device
    local_atomic_cas r5, r1, r2, r3
    halt
L_0048:
    fence_acq_rel .workgroup
    return
.end

.kernel second
.registers 32
    mov_imm r0, 0x3f800000
.end
";
    assert_eq!(text, expected);
    let (_, again) = load_bytes(text.as_bytes(), "dis.wave").unwrap();
    assert_eq!(again, file);
    assert_eq!(wbin::write(&again, false), wbin::write(&file, false));
}

#[test]
fn offsets_as_comments() {
    let text = disassemble(&assembled(), DisasmOptions { offsets: true }).unwrap();
    let line = text.lines().find(|l| l.contains("icmp_lt")).unwrap();
    assert!(line.ends_with("; 0x0004"), "{line}");
    let line = text.lines().find(|l| l.contains("fence_acq_rel")).unwrap();
    assert!(line.ends_with("; 0x0048"), "{line}");
    let (_, again) = load_bytes(text.as_bytes(), "dis.wave").unwrap();
    assert_eq!(again, assembled());
}

#[test]
fn broken_structure_still_disassembles() {
    let mut code = Vec::new();
    for op in [Op::Endif, Op::Else, Op::Loop, Op::Nop] {
        Instruction::new(op).encode_into(&mut code);
    }
    let mut call = Instruction::new(Op::Call);
    call.imm = 2;
    call.encode_into(&mut code);
    let meta = KernelMeta { name: "broken".into(), registers: 8, ..Default::default() };
    let file = WbinFile { kernels: vec![WbinKernel { meta, code }], ..Default::default() };
    let text = disassemble(&file, DisasmOptions::default()).unwrap();
    assert!(text.contains("\n    endif\n    else\n        loop\n            nop\n"), "{text}");
    assert!(text.contains("call L_0002") && text.contains("not the start of an instruction"), "{text}");
}

#[test]
fn undecodable_code_is_an_error() {
    let meta = KernelMeta { name: "bad".into(), registers: 8, ..Default::default() };
    let file =
        WbinFile { kernels: vec![WbinKernel { meta, code: vec![0, 0, 0, 0xFF] }], ..Default::default() };
    let e = disassemble(&file, DisasmOptions::default()).unwrap_err();
    assert_eq!(e.to_string(), "kernel `bad` at byte 0x0: unknown opcode 0xff");
}
