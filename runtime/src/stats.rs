//! Execution counters, counted and printed as wave-emu's `--stats` does.

use std::fmt;
use wave_isa::analysis::cost::CostClass;

/// Counters of one run. Instructions are wave-instructions (one per wave per executed
/// instruction, structural markers `if/else/endif/loop/endloop` included, the implicit
/// final `halt` not); loads, stores and atomic ops in `atomic_ops` beyond the per-instruction
/// count are per lane, as in wave-emu.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub instructions: u64,
    /// Integer, bitwise, compare and select.
    pub integer_ops: u64,
    /// f32, f16, bf16, f64 and conversions.
    pub float_ops: u64,
    /// Loads and stores (per instruction).
    pub memory_ops: u64,
    /// Control flow, synchronisation, moves.
    pub control_ops: u64,
    pub wave_ops: u64,
    /// One per atomic instruction plus one per lane that performed it (wave-emu's count).
    pub atomic_ops: u64,
    /// MMA instructions (not in wave-emu's output; counted among `control_ops` there: none).
    pub mma_ops: u64,
    pub device_loads: u64,
    pub device_load_bytes: u64,
    pub device_stores: u64,
    pub device_store_bytes: u64,
    pub local_loads: u64,
    pub local_load_bytes: u64,
    pub local_stores: u64,
    pub local_store_bytes: u64,
    /// Barrier releases (one per workgroup-wide barrier).
    pub barriers: u64,
    /// `if`s where at least one executing lane took the else side.
    pub divergent_branches: u64,
    pub workgroups: u64,
    pub waves: u64,
}

impl Stats {
    /// Count `n` instructions of `class` (wave_isa::analysis::cost decides an op's class).
    pub fn add_class(&mut self, class: CostClass, n: u64) {
        let counter = match class {
            CostClass::Integer => &mut self.integer_ops,
            CostClass::Float => &mut self.float_ops,
            CostClass::Memory => &mut self.memory_ops,
            CostClass::Control => &mut self.control_ops,
            CostClass::Wave => &mut self.wave_ops,
            CostClass::Atomic => &mut self.atomic_ops,
            CostClass::Mma => &mut self.mma_ops,
        };
        *counter += n;
    }

    /// Add another run's (or workgroup's) counters.
    pub fn merge(&mut self, o: &Stats) {
        self.instructions += o.instructions;
        self.integer_ops += o.integer_ops;
        self.float_ops += o.float_ops;
        self.memory_ops += o.memory_ops;
        self.control_ops += o.control_ops;
        self.wave_ops += o.wave_ops;
        self.atomic_ops += o.atomic_ops;
        self.mma_ops += o.mma_ops;
        self.device_loads += o.device_loads;
        self.device_load_bytes += o.device_load_bytes;
        self.device_stores += o.device_stores;
        self.device_store_bytes += o.device_store_bytes;
        self.local_loads += o.local_loads;
        self.local_load_bytes += o.local_load_bytes;
        self.local_stores += o.local_stores;
        self.local_store_bytes += o.local_store_bytes;
        self.barriers += o.barriers;
        self.divergent_branches += o.divergent_branches;
        self.workgroups += o.workgroups;
        self.waves += o.waves;
    }
}

/// The exact text of wave-emu's `--stats`.
impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Execution Statistics:")?;
        writeln!(f, "  Instructions executed: {}", self.instructions)?;
        writeln!(f, "    Integer ops:         {}", self.integer_ops)?;
        writeln!(f, "    Float ops:           {}", self.float_ops)?;
        writeln!(f, "    Memory ops:          {}", self.memory_ops)?;
        writeln!(f, "    Control ops:         {}", self.control_ops)?;
        writeln!(f, "    Wave ops:            {}", self.wave_ops)?;
        writeln!(f, "    Atomic ops:          {}", self.atomic_ops)?;
        writeln!(f)?;
        writeln!(f, "  Device memory:")?;
        writeln!(f, "    Loads:  {} ({} bytes)", self.device_loads, self.device_load_bytes)?;
        writeln!(f, "    Stores: {} ({} bytes)", self.device_stores, self.device_store_bytes)?;
        writeln!(f)?;
        writeln!(f, "  Local memory:")?;
        writeln!(f, "    Loads:  {} ({} bytes)", self.local_loads, self.local_load_bytes)?;
        writeln!(f, "    Stores: {} ({} bytes)", self.local_stores, self.local_store_bytes)?;
        writeln!(f)?;
        writeln!(f, "  Barriers: {}", self.barriers)?;
        writeln!(f, "  Divergent branches: {}", self.divergent_branches)?;
        writeln!(f)?;
        writeln!(f, "  Workgroups executed: {}", self.workgroups)?;
        writeln!(f, "  Waves executed: {}", self.waves)?;
        Ok(())
    }
}
