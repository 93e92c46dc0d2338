//! (being written)
use super::CliResult;
use clap::Args;

#[derive(Args, Debug)]
pub struct AsmArgs {}

pub fn asm(_args: AsmArgs) -> CliResult {
    Err("unsupported: not available yet".into())
}

#[derive(Args, Debug)]
pub struct DisArgs {}

pub fn dis(_args: DisArgs) -> CliResult {
    Err("unsupported: not available yet".into())
}

#[derive(Args, Debug)]
pub struct CheckArgs {}

pub fn check(_args: CheckArgs) -> CliResult {
    Err("unsupported: not available yet".into())
}
