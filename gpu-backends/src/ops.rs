//! The per-op description shared by every writer: what kind of code an op becomes.
//!
//! Writers match on [`Lowering`] for everything with side effects or cross-lane behaviour
//! (memory, atomics, wave ops, MMA, special registers), and render [`Lowering::Pure`] ops
//! (a per-lane function of registers) with their own per-op formula. The semantics of every
//! formula are those of semantics.md (Part B over Part A), not the target's native defaults.

use wave_isa::opcodes::{Class, Op, Scope};

/// Memory an access goes to (defined once, in the ISA crate).
pub use wave_isa::Space;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicKind {
    Add,
    Sub,
    /// Unsigned.
    Min,
    /// Unsigned.
    Max,
    And,
    Or,
    Xor,
    Exchange,
    /// rs2 = expected, rs3 = desired.
    Cas,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaveKind {
    Shuffle,
    ShuffleUp,
    ShuffleDown,
    ShuffleXor,
    Broadcast,
    Ballot,
    Any,
    All,
    /// Exclusive, wrapping, over active lanes.
    PrefixSum,
    ReduceAdd,
    /// Unsigned.
    ReduceMin,
    /// Unsigned.
    ReduceMax,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MmaKind {
    LoadA,
    LoadB,
    StoreC,
    Compute,
}

/// What code an op becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lowering {
    /// A per-lane function of its source registers, written to rd (register, pair or
    /// predicate) on active lanes only.
    Pure,
    /// `mov_sr`: a special register.
    SpecialReg,
    Load {
        space: Space,
        bytes: u32,
    },
    Store {
        space: Space,
        bytes: u32,
    },
    Atomic {
        space: Space,
        kind: AtomicKind,
    },
    Wave(WaveKind),
    Mma(MmaKind),
    /// Structured control flow and synchronisation: statements of the tree, never `StmtKind::Op`.
    Statement,
}

/// The lowering of one op.
pub fn lowering(op: Op) -> Lowering {
    use Op::*;
    let atomic_kind = |op: Op| match op {
        LocalAtomicAdd | AtomicAdd => AtomicKind::Add,
        LocalAtomicSub | AtomicSub => AtomicKind::Sub,
        LocalAtomicMin | AtomicMin => AtomicKind::Min,
        LocalAtomicMax | AtomicMax => AtomicKind::Max,
        LocalAtomicAnd | AtomicAnd => AtomicKind::And,
        LocalAtomicOr | AtomicOr => AtomicKind::Or,
        LocalAtomicXor | AtomicXor => AtomicKind::Xor,
        LocalAtomicExchange | AtomicExchange => AtomicKind::Exchange,
        _ => AtomicKind::Cas,
    };
    match op.class() {
        Class::LocalLoad => Lowering::Load { space: Space::Local, bytes: op.access_bytes() },
        Class::DeviceLoad => Lowering::Load { space: Space::Device, bytes: op.access_bytes() },
        Class::LocalStore => Lowering::Store { space: Space::Local, bytes: op.access_bytes() },
        Class::DeviceStore => Lowering::Store { space: Space::Device, bytes: op.access_bytes() },
        Class::LocalAtomic => Lowering::Atomic { space: Space::Local, kind: atomic_kind(op) },
        Class::DeviceAtomic => Lowering::Atomic { space: Space::Device, kind: atomic_kind(op) },
        Class::Wave => Lowering::Wave(match op {
            WaveShuffle => WaveKind::Shuffle,
            WaveShuffleUp => WaveKind::ShuffleUp,
            WaveShuffleDown => WaveKind::ShuffleDown,
            WaveShuffleXor => WaveKind::ShuffleXor,
            WaveBroadcast => WaveKind::Broadcast,
            WaveBallot => WaveKind::Ballot,
            WaveAny => WaveKind::Any,
            WaveAll => WaveKind::All,
            WavePrefixSum => WaveKind::PrefixSum,
            WaveReduceAdd => WaveKind::ReduceAdd,
            WaveReduceMin => WaveKind::ReduceMin,
            _ => WaveKind::ReduceMax,
        }),
        Class::Mma => Lowering::Mma(match op {
            MmaLoadA => MmaKind::LoadA,
            MmaLoadB => MmaKind::LoadB,
            MmaStoreC => MmaKind::StoreC,
            _ => MmaKind::Compute,
        }),
        Class::Control | Class::Sync => Lowering::Statement,
        _ if op == MovSr => Lowering::SpecialReg,
        _ => Lowering::Pure,
    }
}

/// The four WAVE scopes in the target's words, narrowest first.
#[derive(Clone, Copy, Debug)]
pub struct ScopeNames {
    pub wave: &'static str,
    pub workgroup: &'static str,
    pub device: &'static str,
    pub system: &'static str,
}

impl ScopeNames {
    pub fn get(&self, scope: Scope) -> &'static str {
        match scope {
            Scope::Wave => self.wave,
            Scope::Workgroup => self.workgroup,
            Scope::Device => self.device,
            Scope::System => self.system,
        }
    }
}

/// Side length of the fixed MMA tile (4×4×4, f32).
pub const MMA_DIM: u32 = 4;
