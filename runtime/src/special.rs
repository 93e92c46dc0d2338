//! What the special registers (`mov_sr`, wave-format §3.4) read, for both engines: the
//! interpreter asks per lane, the JIT fills its wave contexts from the same function.

use crate::caps;
use wave_isa::SpecialReg;

/// The dispatch's shape, as the special registers see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DispatchShape {
    pub workgroup_size: [u32; 3],
    pub grid: [u32; 3],
    pub wave_width: u32,
    pub waves_per_workgroup: u32,
}

/// Where a lane runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LanePlace {
    pub workgroup_id: [u32; 3],
    pub wave: u32,
    pub lane: u32,
}

/// Special register `index` of the lane at `at`; unknown indices read 0. Thread ids number
/// the workgroup's threads x-fastest, wave by wave.
pub fn special_register(index: u8, shape: &DispatchShape, at: LanePlace) -> u32 {
    let [x, y, _] = shape.workgroup_size;
    let linear = at.wave * shape.wave_width + at.lane;
    match SpecialReg::from_index(index) {
        Some(SpecialReg::ThreadIdX) => linear % x,
        Some(SpecialReg::ThreadIdY) => (linear / x) % y,
        Some(SpecialReg::ThreadIdZ) => linear / (x * y),
        Some(SpecialReg::WaveId) => at.wave,
        Some(SpecialReg::LaneId) => at.lane,
        Some(SpecialReg::WorkgroupIdX) => at.workgroup_id[0],
        Some(SpecialReg::WorkgroupIdY) => at.workgroup_id[1],
        Some(SpecialReg::WorkgroupIdZ) => at.workgroup_id[2],
        Some(SpecialReg::WorkgroupSizeX) => shape.workgroup_size[0],
        Some(SpecialReg::WorkgroupSizeY) => shape.workgroup_size[1],
        Some(SpecialReg::WorkgroupSizeZ) => shape.workgroup_size[2],
        Some(SpecialReg::GridSizeX) => shape.grid[0],
        Some(SpecialReg::GridSizeY) => shape.grid[1],
        Some(SpecialReg::GridSizeZ) => shape.grid[2],
        Some(SpecialReg::WaveWidth) => shape.wave_width,
        Some(SpecialReg::NumWaves) => shape.waves_per_workgroup,
        Some(SpecialReg::MmaSupported) => u32::from(caps::CAP_MMA),
        Some(SpecialReg::MmaM) => caps::MMA_M,
        Some(SpecialReg::MmaN) => caps::MMA_N,
        Some(SpecialReg::MmaK) => caps::MMA_K,
        None => 0,
    }
}

impl crate::Launch {
    /// This launch's shape for [`special_register`].
    pub fn shape(&self) -> DispatchShape {
        DispatchShape {
            workgroup_size: self.workgroup,
            grid: self.grid,
            wave_width: self.wave_width,
            waves_per_workgroup: self.waves_per_workgroup,
        }
    }
}
