//! (being written)
use super::CliResult;
use clap::Args;

#[derive(Args, Debug)]
pub struct EmitArgs {}

pub fn emit(_args: EmitArgs) -> CliResult {
    Err("unsupported: not available yet".into())
}
