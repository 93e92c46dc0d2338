//! (being written)
use super::CliResult;
use clap::Args;

#[derive(Args, Debug)]
pub struct BenchArgs {}

pub fn bench(_args: BenchArgs) -> CliResult {
    Err("unsupported: not available yet".into())
}

#[derive(Args, Debug)]
pub struct FuzzDiffArgs {}

pub fn fuzz_diff(_args: FuzzDiffArgs) -> CliResult {
    Err("unsupported: not available yet".into())
}
