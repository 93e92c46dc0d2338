//! (being written)
use super::CliResult;
use clap::Args;

#[derive(Args, Debug)]
pub struct ConformanceArgs {}

pub fn conformance(_args: ConformanceArgs) -> CliResult {
    Err("unsupported: not available yet".into())
}
