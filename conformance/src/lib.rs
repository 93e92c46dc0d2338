//! The WAVE conformance suite: programs (`programs/<section>/*.wave`, embedded at build time),
//! their declarative headers ([`header`]), independent expected-value oracles ([`oracles`]),
//! and the runner that executes them on any [`wave_runtime::Engine`] ([`runner`]).
//!
//! The header grammar is documented in `conformance/README.md`.

pub mod compare;
pub mod header;
pub mod oracles;
pub mod runner;

pub use runner::{run_program, run_suite, CaseResult, Outcome, Summary, WidthPolicy};

/// One embedded conformance program.
#[derive(Clone, Copy, Debug)]
pub struct Program {
    /// Path below `conformance/programs/`, e.g. `control/break_in_if.wave`.
    pub path: &'static str,
    pub source: &'static str,
}

impl Program {
    /// The section: the first path component.
    pub fn section(&self) -> &'static str {
        self.path.split('/').next().unwrap_or("")
    }
}

include!(concat!(env!("OUT_DIR"), "/programs.rs"));

/// Every embedded program, sorted by path.
pub fn programs() -> &'static [Program] {
    PROGRAMS
}
