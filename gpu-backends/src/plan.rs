//! Facts about a kernel that every writer needs, gathered once: registers and MMA fragments
//! used, local memory size, the wave width, the entry name, and the checks that reject what a
//! target cannot express (f64 on Metal, kernels too large once calls are inlined). The rest
//! (no recursion, call chains within the limit, `break` only in a loop) holds for every
//! kernel a writer gets: it takes only validated ones.

use crate::{EmitError, Options, Target, DEFAULT_LOCAL_MEMORY};
use std::collections::BTreeSet;
use wave_isa::ir::StmtKind;
use wave_isa::opcodes::{Class, Frag, Kind, Op};
use wave_isa::{Instruction, ValidKernel};

/// The most instructions a kernel may have once its calls are inlined
/// ([`wave_isa::analysis::inlined_instructions`]) for a writer to write it: every writer
/// inlines calls, and a few calls deep the copies multiply (eight functions each calling the
/// next six times, 1.7 KB of source, made 278 MB of PTX). About 100 bytes of PTX each: at
/// most some 27 MB of source.
pub const MAX_INLINED_INSTRUCTIONS: u64 = 1 << 18;

/// What the writers need to know besides the tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub target: Target,
    /// Registers read or written anywhere (pairs and quads expanded), ascending.
    pub registers: Vec<u8>,
    /// MMA fragments used, as (table, id), ascending; a fragment's storage slot is its index
    /// here. The tables A, B and C are separate (semantics.md §5.8): (A, 0) and (C, 0) are two
    /// fragments.
    pub fragments: Vec<(Frag, u8)>,
    /// Whether any instruction touches local memory (local ops, local atomics, MMA).
    pub uses_local: bool,
    /// Local memory bytes (metadata, else options, else the default), rounded up to 16.
    pub local_bytes: u32,
    /// Fixed wave width, or `None` for "whatever the architecture gives" (HIP, SYCL).
    pub wave_width: Option<u32>,
    /// Entry point name.
    pub entry: String,
}

impl Plan {
    pub fn new(kernel: &ValidKernel, target: Target, opts: &Options) -> Result<Plan, EmitError> {
        let wave_width = match (opts.wave_width, target) {
            (Some(w), _) if !target.wave_widths().contains(&w) => {
                return Err(EmitError::WaveWidth { target, width: w, supported: target.wave_widths() })
            }
            (Some(w), _) => Some(w),
            (None, Target::Ptx | Target::Metal) => Some(32),
            (None, Target::Hip | Target::Sycl) => None,
        };
        let mut registers = BTreeSet::new();
        let mut fragments = BTreeSet::new();
        let mut uses_local = false;
        let mut first_error: Option<EmitError> = None;
        kernel.walk(&mut |_, stmt, _| {
            let StmtKind::Op(inst) = &stmt.kind else { return };
            let op = inst.op;
            if target == Target::Metal && first_error.is_none() && op.uses_f64() {
                first_error = Some(EmitError::op(target, "f64", op, stmt.offset));
            }
            uses_local |=
                matches!(op.class(), Class::LocalLoad | Class::LocalStore | Class::LocalAtomic | Class::Mma);
            // At W = 64 a ballot also writes rd+1 (semantics.md B.15).
            if op == Op::WaveBallot && inst.rd < 255 {
                registers.insert(inst.rd + 1);
            }
            for (spec, _) in inst.operands() {
                let base = inst.slot_value(spec.slot);
                match spec.kind {
                    Kind::Reg | Kind::Pair | Kind::Quad => {
                        for k in 0..spec.kind.register_span() {
                            if let Ok(r) = u8::try_from(base + k) {
                                registers.insert(r);
                            }
                        }
                    }
                    Kind::Fragment(table) => {
                        fragments.insert((table, base as u8));
                    }
                    _ => {}
                }
            }
        });
        if let Some(e) = first_error {
            return Err(e);
        }
        // Before walking the call tree, whose size this is. (Validation ruled out recursion,
        // call chains deeper than the limit, and `break` outside a loop.)
        let inlined = kernel.info().inlined_instructions;
        if inlined > MAX_INLINED_INSTRUCTIONS {
            return Err(EmitError::TooLarge {
                target,
                kernel: kernel.meta.name.clone(),
                inlined,
                limit: MAX_INLINED_INSTRUCTIONS,
            });
        }
        let local = if kernel.meta.local_memory > 0 {
            kernel.meta.local_memory
        } else {
            opts.local_memory.unwrap_or(DEFAULT_LOCAL_MEMORY)
        };
        let local_bytes = local.max(16).div_ceil(16) * 16;
        let entry = opts.entry_name.clone().unwrap_or_else(|| entry_name(&kernel.meta.name));
        Ok(Plan {
            target,
            registers: registers.into_iter().collect(),
            fragments: fragments.into_iter().collect(),
            uses_local,
            local_bytes,
            wave_width,
            entry,
        })
    }

    /// The fragments in slot order, as `A[r1], C[r1]` (for comments in the output).
    pub fn fragment_names(&self) -> String {
        let names: Vec<String> = self.fragments.iter().map(|(t, id)| format!("{t:?}[r{id}]")).collect();
        names.join(", ")
    }

    /// Storage slot of the fragment `inst` names in `table`.
    pub fn fragment_slot(&self, inst: &Instruction, table: Frag) -> usize {
        let id = inst.fragment(table).unwrap_or(0);
        self.fragments.iter().position(|&f| f == (table, id)).unwrap_or(0)
    }
}

/// The kernel name as a C/PTX identifier (`wave_` in front when it would not be one).
pub fn entry_name(name: &str) -> String {
    let mut s: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    const RESERVED: &[&str] = &[
        "main",
        "kernel",
        "void",
        "int",
        "float",
        "double",
        "if",
        "else",
        "for",
        "while",
        "do",
        "return",
        "const",
        "static",
        "extern",
        "char",
        "bool",
        "auto",
        "struct",
        "union",
        "class",
        "half",
        "uint",
        "device",
        "constant",
        "threadgroup",
    ];
    if s.is_empty()
        || s.starts_with(|c: char| c.is_ascii_digit())
        || RESERVED.contains(&s.as_str())
        || s.starts_with("__")
    {
        s.insert_str(0, "wave_");
    }
    s
}
