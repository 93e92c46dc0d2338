//! (being written)
use super::CliResult;
use clap::Args;

#[derive(Args, Debug)]
pub struct RunArgs {}

pub fn run(_args: RunArgs) -> CliResult {
    Err("unsupported: not available yet".into())
}

#[derive(Args, Debug)]
pub struct InfoArgs {}

pub fn info(_args: InfoArgs) -> CliResult {
    Err("unsupported: not available yet".into())
}
