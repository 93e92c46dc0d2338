//! The opcode table: the single source of truth for every WAVE instruction.
//!
//! Each entry gives the mnemonic, the (opcode, modifier) pair that encodes it, its size in
//! bytes, its class, and its operands in assembly order together with the encoding slot each
//! operand lives in. The encoder, decoder, assembler, disassembler, validator and analyses
//! all read this table; nothing else matches on opcode numbers.
//!
//! Encoding (wave-format.md §2.1), bit ranges high:low: word0 = `opcode[31:24] rd[23:16]
//! rs1[15:8] modifier[7:4] pred_enable[3] pred_negate[2] pred[1:0]`; word1 (8-byte
//! instructions) = `rs2[31:24] rs3[23:16] rs4[15:8] scope[1:0]`, or a raw 32-bit value
//! (immediate, call target).

/// Where an operand is stored in the instruction words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Slot {
    /// word0 bits 23..16.
    Rd,
    /// word0 bits 15..8.
    Rs1,
    /// word1 bits 31..24.
    Rs2,
    /// word1 bits 23..16.
    Rs3,
    /// word1 bits 15..8.
    Rs4,
    /// word1 bits 1..0.
    Scope,
    /// The whole of word1 (immediate or call target).
    Word1,
}

/// What an operand denotes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// One 32-bit register `rN`.
    Reg,
    /// A register pair `rN, rN+1` (low word first), written as `rN`.
    Pair,
    /// Four registers `rN..rN+3`, written as `rN`.
    Quad,
    /// A predicate register `p0..p3`.
    Pred,
    /// A special register `sr_*` (index into [`SPECIAL_REGISTERS`]).
    Special,
    /// A 32-bit immediate.
    Imm,
    /// A memory scope.
    Scope,
    /// A call target: byte offset relative to the start of the kernel.
    Target,
    /// An MMA fragment id: a register *number* used as a key into one of a lane's three
    /// fragment tables (semantics.md §5.8), not a register value.
    Fragment(Frag),
}

/// The three per-lane MMA fragment tables (semantics.md §5.8): the same register number may
/// name an A, a B and a C fragment at once, each holding its own tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Frag {
    /// Left operands (`mma_load_a`).
    A,
    /// Right operands (`mma_load_b`).
    B,
    /// Accumulators (`mma_compute` adds into them, `mma_store_c` writes them out).
    C,
}

impl Frag {
    /// All three, in table order.
    pub const ALL: [Frag; 3] = [Frag::A, Frag::B, Frag::C];

    /// Position in [`Frag::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Whether an operand is read or written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    Def,
    Use,
}

/// One operand of a table entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct OperandSpec {
    pub kind: Kind,
    pub slot: Slot,
    pub role: Role,
    /// May be left out in assembly (the returning register of an atomic); encodes as 0.
    pub optional: bool,
}

/// Instruction classes, used by `check`, statistics and the analyses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    Integer,
    Float,
    Half,
    BFloat,
    Double,
    Bitwise,
    Compare,
    Select,
    Convert,
    LocalLoad,
    LocalStore,
    DeviceLoad,
    DeviceStore,
    LocalAtomic,
    DeviceAtomic,
    Wave,
    Control,
    Sync,
    Mma,
    Move,
}

const fn spec(kind: Kind, slot: Slot, role: Role) -> OperandSpec {
    OperandSpec { kind, slot, role, optional: false }
}

// Shorthands for the table below. D = defined, U = used; the letter after says the slot.
const D_RD: OperandSpec = spec(Kind::Reg, Slot::Rd, Role::Def);
const DP_RD: OperandSpec = spec(Kind::Pair, Slot::Rd, Role::Def);
const DQ_RD: OperandSpec = spec(Kind::Quad, Slot::Rd, Role::Def);
const DPRED_RD: OperandSpec = spec(Kind::Pred, Slot::Rd, Role::Def);
const D_RD_OPT: OperandSpec =
    OperandSpec { kind: Kind::Reg, slot: Slot::Rd, role: Role::Def, optional: true };
const U_RD: OperandSpec = spec(Kind::Reg, Slot::Rd, Role::Use);
const U_RS1: OperandSpec = spec(Kind::Reg, Slot::Rs1, Role::Use);
const U_RS2: OperandSpec = spec(Kind::Reg, Slot::Rs2, Role::Use);
const U_RS3: OperandSpec = spec(Kind::Reg, Slot::Rs3, Role::Use);
const U_RS4: OperandSpec = spec(Kind::Reg, Slot::Rs4, Role::Use);
const UP_RS1: OperandSpec = spec(Kind::Pair, Slot::Rs1, Role::Use);
const UP_RS2: OperandSpec = spec(Kind::Pair, Slot::Rs2, Role::Use);
const UP_RS3: OperandSpec = spec(Kind::Pair, Slot::Rs3, Role::Use);
const UQ_RS2: OperandSpec = spec(Kind::Quad, Slot::Rs2, Role::Use);
const UPRED_RS1: OperandSpec = spec(Kind::Pred, Slot::Rs1, Role::Use);
const SR_RS1: OperandSpec = spec(Kind::Special, Slot::Rs1, Role::Use);
const IMM_W1: OperandSpec = spec(Kind::Imm, Slot::Word1, Role::Use);
const SCOPE_W1: OperandSpec = spec(Kind::Scope, Slot::Scope, Role::Use);
const TARGET_W1: OperandSpec = spec(Kind::Target, Slot::Word1, Role::Use);
// MMA fragments, by table (§5.8). The C operand of `mma_compute` is read and written.
const DA_RD: OperandSpec = spec(Kind::Fragment(Frag::A), Slot::Rd, Role::Def);
const DB_RD: OperandSpec = spec(Kind::Fragment(Frag::B), Slot::Rd, Role::Def);
const UA_RD: OperandSpec = spec(Kind::Fragment(Frag::A), Slot::Rd, Role::Use);
const UB_RS1: OperandSpec = spec(Kind::Fragment(Frag::B), Slot::Rs1, Role::Use);
const UC_RS2: OperandSpec = spec(Kind::Fragment(Frag::C), Slot::Rs2, Role::Use);

const R2: &[OperandSpec] = &[D_RD, U_RS1];
const R3: &[OperandSpec] = &[D_RD, U_RS1, U_RS2];
const R4: &[OperandSpec] = &[D_RD, U_RS1, U_RS2, U_RS3];
const R5: &[OperandSpec] = &[D_RD, U_RS1, U_RS2, U_RS3, U_RS4];
const CMP: &[OperandSpec] = &[DPRED_RD, U_RS1, U_RS2];
const D2: &[OperandSpec] = &[DP_RD, UP_RS1];
const D3: &[OperandSpec] = &[DP_RD, UP_RS1, UP_RS2];
const D4: &[OperandSpec] = &[DP_RD, UP_RS1, UP_RS2, UP_RS3];
const LOAD: &[OperandSpec] = &[D_RD, U_RS1];
const LOAD64: &[OperandSpec] = &[DP_RD, U_RS1];
const LOAD128: &[OperandSpec] = &[DQ_RD, U_RS1];
const STORE: &[OperandSpec] = &[U_RS1, U_RS2];
const STORE64: &[OperandSpec] = &[U_RS1, UP_RS2];
const STORE128: &[OperandSpec] = &[U_RS1, UQ_RS2];
const LATOMIC: &[OperandSpec] = &[D_RD_OPT, U_RS1, U_RS2];
const LATOMIC_CAS: &[OperandSpec] = &[D_RD_OPT, U_RS1, U_RS2, U_RS3];
const DATOMIC: &[OperandSpec] = &[D_RD_OPT, U_RS1, U_RS2, SCOPE_W1];
const DATOMIC_CAS: &[OperandSpec] = &[D_RD_OPT, U_RS1, U_RS2, U_RS3, SCOPE_W1];
const PRED_ONLY: &[OperandSpec] = &[UPRED_RS1];
const NONE: &[OperandSpec] = &[];

/// One row of the opcode table.
#[derive(Clone, Copy, Debug)]
pub struct OpInfo {
    pub op: Op,
    /// Canonical (underscore) mnemonic.
    pub mnemonic: &'static str,
    pub opcode: u8,
    pub modifier: u8,
    /// 4 (word0 only) or 8 (word0 + word1).
    pub size: u8,
    pub class: Class,
    /// Operands in assembly order.
    pub operands: &'static [OperandSpec],
}

macro_rules! op_table {
    ($( $variant:ident = $mn:literal, $opc:literal, $modi:literal, $size:literal, $class:ident, $ops:expr; )*) => {
        /// Every WAVE instruction, one variant per mnemonic.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum Op { $( $variant, )* }

        /// The table, indexed by `Op as usize`.
        pub static OPS: &[OpInfo] = &[
            $( OpInfo { op: Op::$variant, mnemonic: $mn, opcode: $opc, modifier: $modi, size: $size,
                        class: Class::$class, operands: $ops }, )*
        ];
    };
}

op_table! {
    Iadd = "iadd", 0x00, 0, 8, Integer, R3;
    Isub = "isub", 0x01, 0, 8, Integer, R3;
    Imul = "imul", 0x02, 0, 8, Integer, R3;
    ImulHi = "imul_hi", 0x03, 0, 8, Integer, R3;
    Imad = "imad", 0x04, 0, 8, Integer, R4;
    Idiv = "idiv", 0x05, 0, 8, Integer, R3;
    Imod = "imod", 0x06, 0, 8, Integer, R3;
    Ineg = "ineg", 0x07, 0, 4, Integer, R2;
    Iabs = "iabs", 0x08, 0, 4, Integer, R2;
    Imin = "imin", 0x09, 0, 8, Integer, R3;
    Imax = "imax", 0x0A, 0, 8, Integer, R3;
    Iclamp = "iclamp", 0x0B, 0, 8, Integer, R4;
    Fadd = "fadd", 0x10, 0, 8, Float, R3;
    Fsub = "fsub", 0x11, 0, 8, Float, R3;
    Fmul = "fmul", 0x12, 0, 8, Float, R3;
    Fma = "fma", 0x13, 0, 8, Float, R4;
    Fdiv = "fdiv", 0x14, 0, 8, Float, R3;
    Fneg = "fneg", 0x15, 0, 4, Float, R2;
    Fabs = "fabs", 0x16, 0, 4, Float, R2;
    Fmin = "fmin", 0x17, 0, 8, Float, R3;
    Fmax = "fmax", 0x18, 0, 8, Float, R3;
    Fclamp = "fclamp", 0x19, 0, 8, Float, R4;
    Fsqrt = "fsqrt", 0x1A, 0, 4, Float, R2;
    Frsqrt = "frsqrt", 0x1B, 0, 4, Float, R2;
    Frcp = "frcp", 0x1B, 1, 4, Float, R2;
    Ffloor = "ffloor", 0x1B, 2, 4, Float, R2;
    Fceil = "fceil", 0x1B, 3, 4, Float, R2;
    Fround = "fround", 0x1B, 4, 4, Float, R2;
    Ftrunc = "ftrunc", 0x1B, 5, 4, Float, R2;
    Ffract = "ffract", 0x1B, 6, 4, Float, R2;
    Fsat = "fsat", 0x1B, 7, 4, Float, R2;
    Fsin = "fsin", 0x1B, 8, 4, Float, R2;
    Fcos = "fcos", 0x1B, 9, 4, Float, R2;
    Fexp2 = "fexp2", 0x1B, 10, 4, Float, R2;
    Flog2 = "flog2", 0x1B, 11, 4, Float, R2;
    Hadd = "hadd", 0x1C, 0, 8, Half, R3;
    Hsub = "hsub", 0x1C, 1, 8, Half, R3;
    Hmul = "hmul", 0x1C, 2, 8, Half, R3;
    Hma = "hma", 0x1C, 3, 8, Half, R4;
    Hadd2 = "hadd2", 0x1D, 0, 8, Half, R3;
    Hmul2 = "hmul2", 0x1D, 1, 8, Half, R3;
    Hma2 = "hma2", 0x1D, 2, 8, Half, R4;
    Dadd = "dadd", 0x1E, 0, 8, Double, D3;
    Dsub = "dsub", 0x1E, 1, 8, Double, D3;
    Dmul = "dmul", 0x1E, 2, 8, Double, D3;
    Dma = "dma", 0x1E, 3, 8, Double, D4;
    Ddiv = "ddiv", 0x1F, 0, 8, Double, D3;
    Dsqrt = "dsqrt", 0x1F, 1, 4, Double, D2;
    And = "and", 0x20, 0, 8, Bitwise, R3;
    Or = "or", 0x21, 0, 8, Bitwise, R3;
    Xor = "xor", 0x22, 0, 8, Bitwise, R3;
    Not = "not", 0x23, 0, 4, Bitwise, R2;
    Shl = "shl", 0x24, 0, 8, Bitwise, R3;
    Shr = "shr", 0x25, 0, 8, Bitwise, R3;
    Sar = "sar", 0x26, 0, 8, Bitwise, R3;
    Bitcount = "bitcount", 0x27, 0, 4, Bitwise, R2;
    Bitfind = "bitfind", 0x27, 1, 4, Bitwise, R2;
    Bitrev = "bitrev", 0x27, 2, 4, Bitwise, R2;
    Bfe = "bfe", 0x27, 3, 8, Bitwise, R4;
    Bfi = "bfi", 0x27, 4, 8, Bitwise, R5;
    IcmpEq = "icmp_eq", 0x28, 0, 8, Compare, CMP;
    IcmpNe = "icmp_ne", 0x28, 1, 8, Compare, CMP;
    IcmpLt = "icmp_lt", 0x28, 2, 8, Compare, CMP;
    IcmpLe = "icmp_le", 0x28, 3, 8, Compare, CMP;
    IcmpGt = "icmp_gt", 0x28, 4, 8, Compare, CMP;
    IcmpGe = "icmp_ge", 0x28, 5, 8, Compare, CMP;
    UcmpLt = "ucmp_lt", 0x29, 2, 8, Compare, CMP;
    UcmpLe = "ucmp_le", 0x29, 3, 8, Compare, CMP;
    FcmpEq = "fcmp_eq", 0x2A, 0, 8, Compare, CMP;
    FcmpNe = "fcmp_ne", 0x2A, 1, 8, Compare, CMP;
    FcmpLt = "fcmp_lt", 0x2A, 2, 8, Compare, CMP;
    FcmpLe = "fcmp_le", 0x2A, 3, 8, Compare, CMP;
    FcmpGt = "fcmp_gt", 0x2A, 4, 8, Compare, CMP;
    FcmpOrd = "fcmp_ord", 0x2A, 6, 8, Compare, CMP;
    FcmpUnord = "fcmp_unord", 0x2A, 7, 8, Compare, CMP;
    Select = "select", 0x2B, 0, 8, Select, &[D_RD, UPRED_RS1, U_RS2, U_RS3];
    CvtF32I32 = "cvt_f32_i32", 0x2C, 0, 4, Convert, R2;
    CvtF32U32 = "cvt_f32_u32", 0x2C, 1, 4, Convert, R2;
    CvtI32F32 = "cvt_i32_f32", 0x2C, 2, 4, Convert, R2;
    CvtU32F32 = "cvt_u32_f32", 0x2C, 3, 4, Convert, R2;
    CvtF32F16 = "cvt_f32_f16", 0x2C, 4, 4, Convert, R2;
    CvtF16F32 = "cvt_f16_f32", 0x2C, 5, 4, Convert, R2;
    CvtF32F64 = "cvt_f32_f64", 0x2C, 6, 4, Convert, &[D_RD, UP_RS1];
    CvtF64F32 = "cvt_f64_f32", 0x2C, 7, 4, Convert, &[DP_RD, U_RS1];
    CvtF32Bf16 = "cvt_f32_bf16", 0x2C, 8, 4, Convert, R2;
    CvtBf16F32 = "cvt_bf16_f32", 0x2C, 9, 4, Convert, R2;
    Badd = "badd", 0x2D, 0, 8, BFloat, R3;
    Bsub = "bsub", 0x2D, 1, 8, BFloat, R3;
    Bmul = "bmul", 0x2D, 2, 8, BFloat, R3;
    Bma = "bma", 0x2D, 3, 8, BFloat, R4;
    Badd2 = "badd2", 0x2E, 0, 8, BFloat, R3;
    Bmul2 = "bmul2", 0x2E, 1, 8, BFloat, R3;
    Bma2 = "bma2", 0x2E, 2, 8, BFloat, R4;
    LocalLoadU8 = "local_load_u8", 0x30, 0, 4, LocalLoad, LOAD;
    LocalLoadU16 = "local_load_u16", 0x30, 1, 4, LocalLoad, LOAD;
    LocalLoadU32 = "local_load_u32", 0x30, 2, 4, LocalLoad, LOAD;
    LocalLoadU64 = "local_load_u64", 0x30, 3, 4, LocalLoad, LOAD64;
    LocalStoreU8 = "local_store_u8", 0x31, 0, 8, LocalStore, STORE;
    LocalStoreU16 = "local_store_u16", 0x31, 1, 8, LocalStore, STORE;
    LocalStoreU32 = "local_store_u32", 0x31, 2, 8, LocalStore, STORE;
    LocalStoreU64 = "local_store_u64", 0x31, 3, 8, LocalStore, STORE64;
    DeviceLoadU8 = "device_load_u8", 0x38, 0, 4, DeviceLoad, LOAD;
    DeviceLoadU16 = "device_load_u16", 0x38, 1, 4, DeviceLoad, LOAD;
    DeviceLoadU32 = "device_load_u32", 0x38, 2, 4, DeviceLoad, LOAD;
    DeviceLoadU64 = "device_load_u64", 0x38, 3, 4, DeviceLoad, LOAD64;
    DeviceLoadU128 = "device_load_u128", 0x38, 4, 4, DeviceLoad, LOAD128;
    DeviceStoreU8 = "device_store_u8", 0x39, 0, 8, DeviceStore, STORE;
    DeviceStoreU16 = "device_store_u16", 0x39, 1, 8, DeviceStore, STORE;
    DeviceStoreU32 = "device_store_u32", 0x39, 2, 8, DeviceStore, STORE;
    DeviceStoreU64 = "device_store_u64", 0x39, 3, 8, DeviceStore, STORE64;
    DeviceStoreU128 = "device_store_u128", 0x39, 4, 8, DeviceStore, STORE128;
    LocalAtomicAdd = "local_atomic_add", 0x3C, 0, 8, LocalAtomic, LATOMIC;
    LocalAtomicSub = "local_atomic_sub", 0x3C, 1, 8, LocalAtomic, LATOMIC;
    LocalAtomicMin = "local_atomic_min", 0x3C, 2, 8, LocalAtomic, LATOMIC;
    LocalAtomicMax = "local_atomic_max", 0x3C, 3, 8, LocalAtomic, LATOMIC;
    LocalAtomicAnd = "local_atomic_and", 0x3C, 4, 8, LocalAtomic, LATOMIC;
    LocalAtomicOr = "local_atomic_or", 0x3C, 5, 8, LocalAtomic, LATOMIC;
    LocalAtomicXor = "local_atomic_xor", 0x3C, 6, 8, LocalAtomic, LATOMIC;
    LocalAtomicExchange = "local_atomic_exchange", 0x3C, 7, 8, LocalAtomic, LATOMIC;
    LocalAtomicCas = "local_atomic_cas", 0x3C, 8, 8, LocalAtomic, LATOMIC_CAS;
    AtomicAdd = "atomic_add", 0x3D, 0, 8, DeviceAtomic, DATOMIC;
    AtomicSub = "atomic_sub", 0x3D, 1, 8, DeviceAtomic, DATOMIC;
    AtomicMin = "atomic_min", 0x3D, 2, 8, DeviceAtomic, DATOMIC;
    AtomicMax = "atomic_max", 0x3D, 3, 8, DeviceAtomic, DATOMIC;
    AtomicAnd = "atomic_and", 0x3D, 4, 8, DeviceAtomic, DATOMIC;
    AtomicOr = "atomic_or", 0x3D, 5, 8, DeviceAtomic, DATOMIC;
    AtomicXor = "atomic_xor", 0x3D, 6, 8, DeviceAtomic, DATOMIC;
    AtomicExchange = "atomic_exchange", 0x3D, 7, 8, DeviceAtomic, DATOMIC;
    AtomicCas = "atomic_cas", 0x3D, 8, 8, DeviceAtomic, DATOMIC_CAS;
    WaveShuffle = "wave_shuffle", 0x3E, 0, 8, Wave, R3;
    WaveShuffleUp = "wave_shuffle_up", 0x3E, 1, 8, Wave, R3;
    WaveShuffleDown = "wave_shuffle_down", 0x3E, 2, 8, Wave, R3;
    WaveShuffleXor = "wave_shuffle_xor", 0x3E, 3, 8, Wave, R3;
    WaveBroadcast = "wave_broadcast", 0x3E, 4, 8, Wave, R3;
    WaveBallot = "wave_ballot", 0x3E, 5, 4, Wave, &[D_RD, UPRED_RS1];
    WaveAny = "wave_any", 0x3E, 6, 4, Wave, &[DPRED_RD, UPRED_RS1];
    WaveAll = "wave_all", 0x3E, 7, 4, Wave, &[DPRED_RD, UPRED_RS1];
    WavePrefixSum = "wave_prefix_sum", 0x3E, 8, 4, Wave, R2;
    WaveReduceAdd = "wave_reduce_add", 0x3E, 9, 4, Wave, R2;
    WaveReduceMin = "wave_reduce_min", 0x3E, 10, 4, Wave, R2;
    WaveReduceMax = "wave_reduce_max", 0x3E, 11, 4, Wave, R2;
    If = "if", 0x3F, 0, 4, Control, PRED_ONLY;
    Else = "else", 0x3F, 1, 4, Control, NONE;
    Endif = "endif", 0x3F, 2, 4, Control, NONE;
    Loop = "loop", 0x3F, 3, 4, Control, NONE;
    Break = "break", 0x3F, 4, 4, Control, PRED_ONLY;
    Continue = "continue", 0x3F, 5, 4, Control, PRED_ONLY;
    Endloop = "endloop", 0x3F, 6, 4, Control, NONE;
    Call = "call", 0x3F, 7, 8, Control, &[TARGET_W1];
    Return = "return", 0x3F, 8, 4, Sync, NONE;
    Halt = "halt", 0x3F, 9, 4, Sync, NONE;
    Barrier = "barrier", 0x3F, 10, 4, Sync, NONE;
    FenceAcquire = "fence_acquire", 0x3F, 11, 8, Sync, &[SCOPE_W1];
    FenceRelease = "fence_release", 0x3F, 12, 8, Sync, &[SCOPE_W1];
    FenceAcqRel = "fence_acq_rel", 0x3F, 13, 8, Sync, &[SCOPE_W1];
    Wait = "wait", 0x3F, 14, 4, Sync, NONE;
    Nop = "nop", 0x3F, 15, 4, Sync, NONE;
    MmaLoadA = "mma_load_a", 0x40, 0, 8, Mma, &[DA_RD, U_RS1, U_RS2];
    MmaLoadB = "mma_load_b", 0x40, 1, 8, Mma, &[DB_RD, U_RS1, U_RS2];
    MmaStoreC = "mma_store_c", 0x40, 2, 8, Mma, &[U_RD, U_RS1, UC_RS2];
    // `mma_compute a, b, c`: C[c] += A[a] · B[b] (wave-format.md §3, semantics.md §5.8).
    MmaCompute = "mma_compute", 0x40, 3, 8, Mma, &[UA_RD, UB_RS1, UC_RS2];
    Mov = "mov", 0x41, 0, 4, Move, R2;
    MovImm = "mov_imm", 0x41, 1, 8, Move, &[D_RD, IMM_W1];
    MovSr = "mov_sr", 0x41, 2, 4, Move, &[D_RD, SR_RS1];
}

/// 256 opcodes × 16 modifiers → index into [`OPS`] (+1; 0 = invalid). Built once.
fn decode_table() -> &'static [[u8; 16]; 256] {
    use std::sync::OnceLock;
    static TABLE: OnceLock<Box<[[u8; 16]; 256]>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = Box::new([[0u8; 16]; 256]);
        for (i, info) in OPS.iter().enumerate() {
            t[info.opcode as usize][info.modifier as usize] = (i + 1) as u8;
        }
        t
    })
}

impl Op {
    /// The table row of this op.
    pub fn info(self) -> &'static OpInfo {
        &OPS[self as usize]
    }
    pub fn mnemonic(self) -> &'static str {
        self.info().mnemonic
    }
    pub fn size(self) -> u32 {
        self.info().size as u32
    }
    pub fn class(self) -> Class {
        self.info().class
    }
    pub fn operands(self) -> &'static [OperandSpec] {
        self.info().operands
    }
    /// The op encoded by (opcode, modifier), if any.
    pub fn from_encoding(opcode: u8, modifier: u8) -> Option<Op> {
        let idx = *decode_table()[opcode as usize].get(modifier as usize)?;
        (idx != 0).then(|| OPS[idx as usize - 1].op)
    }
    /// Whether any op uses this opcode (to tell "unknown opcode" from "unknown modifier").
    pub fn opcode_exists(opcode: u8) -> bool {
        decode_table()[opcode as usize].iter().any(|&i| i != 0)
    }
    /// Look an op up by its canonical mnemonic.
    pub fn from_mnemonic(name: &str) -> Option<Op> {
        OPS.iter().find(|i| i.mnemonic == name).map(|i| i.op)
    }
    /// Atomics whose returning register may be omitted (rd = r0 means "no return").
    pub fn is_atomic(self) -> bool {
        matches!(self.class(), Class::LocalAtomic | Class::DeviceAtomic)
    }
    /// Where this op keeps its operand naming a fragment of `table` (MMA ops only).
    pub fn fragment_slot(self, table: Frag) -> Option<Slot> {
        self.operands().iter().find(|s| s.kind == Kind::Fragment(table)).map(|s| s.slot)
    }
    /// Structured control-flow markers that the IR turns into tree nodes.
    pub fn is_structural(self) -> bool {
        matches!(self, Op::If | Op::Else | Op::Endif | Op::Loop | Op::Break | Op::Continue | Op::Endloop)
    }
    /// Whether this op computes with or converts to or from half or bfloat16 values.
    pub fn uses_f16_bf16(self) -> bool {
        use Op::*;
        matches!(self.class(), Class::Half | Class::BFloat)
            || matches!(self, CvtF32F16 | CvtF16F32 | CvtF32Bf16 | CvtBf16F32)
    }
    /// Whether this op computes with or converts to or from f64 values.
    pub fn uses_f64(self) -> bool {
        self.class() == Class::Double || matches!(self, Op::CvtF32F64 | Op::CvtF64F32)
    }
    /// Bytes accessed by a load or store (0 for anything else).
    pub fn access_bytes(self) -> u32 {
        use Op::*;
        match self {
            LocalLoadU8 | LocalStoreU8 | DeviceLoadU8 | DeviceStoreU8 => 1,
            LocalLoadU16 | LocalStoreU16 | DeviceLoadU16 | DeviceStoreU16 => 2,
            LocalLoadU32 | LocalStoreU32 | DeviceLoadU32 | DeviceStoreU32 => 4,
            LocalLoadU64 | LocalStoreU64 | DeviceLoadU64 | DeviceStoreU64 => 8,
            DeviceLoadU128 | DeviceStoreU128 => 16,
            _ if self.is_atomic() => 4,
            _ => 0,
        }
    }
}

impl Kind {
    /// Number of consecutive registers an operand of this kind covers.
    pub fn register_span(self) -> u32 {
        match self {
            Kind::Reg => 1,
            Kind::Pair => 2,
            Kind::Quad => 4,
            _ => 0,
        }
    }
}

/// The memory an access goes to: the workgroup's local memory or device memory. One
/// definition for the engines' errors, the JIT's fault records and the GPU writers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    Local,
    Device,
}

impl std::fmt::Display for Space {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Space::Local => "local",
            Space::Device => "device",
        })
    }
}

/// Memory scope (word1 bits 1..0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Scope {
    #[default]
    Wave = 0,
    Workgroup = 1,
    Device = 2,
    System = 3,
}

impl Scope {
    pub fn from_bits(bits: u32) -> Scope {
        match bits & 3 {
            0 => Scope::Wave,
            1 => Scope::Workgroup,
            2 => Scope::Device,
            _ => Scope::System,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Scope::Wave => "wave",
            Scope::Workgroup => "workgroup",
            Scope::Device => "device",
            Scope::System => "system",
        }
    }
    pub fn from_name(name: &str) -> Option<Scope> {
        Some(match name {
            "wave" => Scope::Wave,
            "workgroup" => Scope::Workgroup,
            "device" => Scope::Device,
            "system" => Scope::System,
            _ => return None,
        })
    }
}

/// Special registers readable with `mov_sr` (index = value in the rs1 slot).
pub static SPECIAL_REGISTERS: &[&str] = &[
    "sr_thread_id_x",
    "sr_thread_id_y",
    "sr_thread_id_z",
    "sr_wave_id",
    "sr_lane_id",
    "sr_workgroup_id_x",
    "sr_workgroup_id_y",
    "sr_workgroup_id_z",
    "sr_workgroup_size_x",
    "sr_workgroup_size_y",
    "sr_workgroup_size_z",
    "sr_grid_size_x",
    "sr_grid_size_y",
    "sr_grid_size_z",
    "sr_wave_width",
    "sr_num_waves",
    "sr_mma_supported",
    "sr_mma_m",
    "sr_mma_n",
    "sr_mma_k",
];

/// Special register indices by meaning (keep in the order of [`SPECIAL_REGISTERS`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum SpecialReg {
    ThreadIdX = 0,
    ThreadIdY,
    ThreadIdZ,
    WaveId,
    LaneId,
    WorkgroupIdX,
    WorkgroupIdY,
    WorkgroupIdZ,
    WorkgroupSizeX,
    WorkgroupSizeY,
    WorkgroupSizeZ,
    GridSizeX,
    GridSizeY,
    GridSizeZ,
    WaveWidth,
    NumWaves,
    MmaSupported,
    MmaM,
    MmaN,
    MmaK,
}

impl SpecialReg {
    pub fn from_index(index: u8) -> Option<SpecialReg> {
        use SpecialReg::*;
        const ALL: [SpecialReg; 20] = [
            ThreadIdX,
            ThreadIdY,
            ThreadIdZ,
            WaveId,
            LaneId,
            WorkgroupIdX,
            WorkgroupIdY,
            WorkgroupIdZ,
            WorkgroupSizeX,
            WorkgroupSizeY,
            WorkgroupSizeZ,
            GridSizeX,
            GridSizeY,
            GridSizeZ,
            WaveWidth,
            NumWaves,
            MmaSupported,
            MmaM,
            MmaN,
            MmaK,
        ];
        ALL.get(index as usize).copied()
    }
    pub fn name(self) -> &'static str {
        SPECIAL_REGISTERS[self as usize]
    }
    pub fn from_name(name: &str) -> Option<SpecialReg> {
        let i = SPECIAL_REGISTERS.iter().position(|n| *n == name)?;
        SpecialReg::from_index(i as u8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_indexed_by_op() {
        for (i, info) in OPS.iter().enumerate() {
            assert_eq!(info.op as usize, i, "{}", info.mnemonic);
        }
    }

    #[test]
    fn encodings_and_mnemonics_are_unique() {
        for (i, a) in OPS.iter().enumerate() {
            for b in &OPS[i + 1..] {
                assert!(
                    (a.opcode, a.modifier) != (b.opcode, b.modifier),
                    "{} and {} share an encoding",
                    a.mnemonic,
                    b.mnemonic
                );
                assert_ne!(a.mnemonic, b.mnemonic);
            }
            assert!(a.modifier < 16 && (a.size == 4 || a.size == 8));
            // Operands stored in word1 need an 8-byte instruction.
            for o in a.operands {
                if matches!(o.slot, Slot::Rs2 | Slot::Rs3 | Slot::Rs4 | Slot::Scope | Slot::Word1) {
                    assert_eq!(a.size, 8, "{} keeps an operand in word1", a.mnemonic);
                }
            }
        }
    }

    #[test]
    fn decode_lookup_matches_table() {
        for info in OPS {
            assert_eq!(Op::from_encoding(info.opcode, info.modifier), Some(info.op));
            assert_eq!(Op::from_mnemonic(info.mnemonic), Some(info.op));
        }
        assert_eq!(Op::from_encoding(0x0C, 0), None);
        assert_eq!(Op::from_encoding(0x2A, 5), None, "there is no fcmp_ge");
        assert!(!Op::opcode_exists(0xFF));
    }

    #[test]
    fn special_registers_round_trip() {
        for (i, name) in SPECIAL_REGISTERS.iter().enumerate() {
            let sr = SpecialReg::from_index(i as u8).unwrap();
            assert_eq!(sr as usize, i);
            assert_eq!(sr.name(), *name);
            assert_eq!(SpecialReg::from_name(name), Some(sr));
        }
        assert_eq!(SpecialReg::from_index(20), None);
    }
}
