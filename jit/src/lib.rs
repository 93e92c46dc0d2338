//! wave-jit-codegen: Cranelift lowering of the WAVE IR (being written).

pub mod difftest;
