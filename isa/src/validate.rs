//! The validator: rules a kernel tree must satisfy before any engine or writer runs it.
//!
//! The builder ([`crate::ir::build_kernel`]) already guarantees well-nested structure, call
//! targets on instruction starts and nesting ≤ [`crate::ir::MAX_NESTING`]. This module checks
//! the rest and reports every violation, not just the first:
//! - `break`/`continue` only inside a `loop` of the same function;
//! - no recursion, and call chains at most [`MAX_CALL_DEPTH`] deep;
//! - no guard on `if`/`loop`/`break`/`continue`/`call` (unsupported);
//! - every register operand (pairs and quads entirely) below the declared register count;
//! - predicate indices ≤ 3, special-register indices < 20.
//!
//! A declared register count of 0 means "the runtime's value" (wave-format.md §1.3), so the
//! register rule is checked at dispatch instead (see [`KernelInfo::registers_used`]).
//!
//! A kernel that passes becomes a [`ValidKernel`], which carries what validation learned
//! ([`KernelInfo`]). Engines and writers take only valid kernels, so none of them re-checks
//! these rules or recomputes those facts.

use crate::analysis::{
    call_graph, kernel_info, uniformity_with, CallSite, KernelInfo, Uniformity, UniformityOptions,
};
use crate::instr::{Instruction, PredRef};
use crate::ir::{FuncId, Kernel, Stmt, StmtKind, MAX_CALL_DEPTH};
use crate::opcodes::{Kind, SPECIAL_REGISTERS};
use std::fmt;

/// Which rule a [`ValidationError`] breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rule {
    /// `break`/`continue` not inside a `loop` of the same function.
    BreakOutsideLoop,
    /// A cycle in the call graph.
    Recursion,
    /// A call chain deeper than [`MAX_CALL_DEPTH`].
    CallDepth,
    /// A guard on `if`, `loop`, `break`, `continue` or `call`.
    PredicatedControl,
    /// A register at or beyond the declared register count.
    RegisterRange,
    /// A predicate index above 3.
    PredicateRange,
    /// A special-register index with no register behind it.
    SpecialRegister,
}

impl Rule {
    /// Short kebab-case name, shown in brackets in messages.
    pub fn name(self) -> &'static str {
        match self {
            Rule::BreakOutsideLoop => "break-outside-loop",
            Rule::Recursion => "recursion",
            Rule::CallDepth => "call-depth",
            Rule::PredicatedControl => "predicated-control",
            Rule::RegisterRange => "register-range",
            Rule::PredicateRange => "predicate-range",
            Rule::SpecialRegister => "special-register",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One broken rule at one instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidationError {
    pub kernel: String,
    /// Byte offset of the instruction, relative to the kernel's code.
    pub offset: u32,
    pub rule: Rule,
    pub message: String,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "kernel `{}` at byte 0x{:x}: [{}] {}", self.kernel, self.offset, self.rule, self.message)
    }
}

impl std::error::Error for ValidationError {}

/// Check every rule and return what was learned; on failure return all violations, ordered
/// by offset.
pub fn validate(kernel: &Kernel) -> Result<KernelInfo, Vec<ValidationError>> {
    let graph = call_graph(kernel);
    let mut v = Validator { kernel, errors: Vec::new() };
    for func in &kernel.funcs {
        v.block(&func.body, false);
    }
    v.calls(&graph);
    let mut errors = v.errors;
    if errors.is_empty() {
        return Ok(kernel_info(kernel, graph));
    }
    errors.sort_by_key(|e| e.offset);
    errors.dedup();
    Err(errors)
}

/// A kernel that passed [`validate`], and what validation learned about it. The interpreter,
/// the JIT and the GPU writers take only these: holding one is the proof that every rule of
/// this module holds, so they neither re-check the rules nor recompute the facts.
#[derive(Clone, Debug, PartialEq)]
pub struct ValidKernel {
    kernel: Kernel,
    info: KernelInfo,
}

impl ValidKernel {
    /// Validate `kernel`.
    pub fn new(kernel: Kernel) -> Result<ValidKernel, Vec<ValidationError>> {
        let info = validate(&kernel)?;
        Ok(ValidKernel { kernel, info })
    }

    /// What validation learned.
    pub fn info(&self) -> &KernelInfo {
        &self.info
    }

    /// The tree.
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// The uniformity and lane-affine analysis, on demand: it depends on the dispatch
    /// (`options`), so it is not part of [`KernelInfo`].
    pub fn uniformity(&self, options: UniformityOptions) -> Uniformity {
        uniformity_with(&self.kernel, options)
    }

    /// The tree, to change it (it must be validated again to run).
    pub fn into_kernel(self) -> Kernel {
        self.kernel
    }
}

impl std::ops::Deref for ValidKernel {
    type Target = Kernel;

    fn deref(&self) -> &Kernel {
        &self.kernel
    }
}

struct Validator<'a> {
    kernel: &'a Kernel,
    errors: Vec<ValidationError>,
}

impl Validator<'_> {
    fn error(&mut self, offset: u32, rule: Rule, message: String) {
        self.errors.push(ValidationError { kernel: self.kernel.meta.name.clone(), offset, rule, message });
    }

    fn block(&mut self, block: &[Stmt], in_loop: bool) {
        for stmt in block {
            self.stmt(stmt, in_loop);
        }
    }

    fn stmt(&mut self, stmt: &Stmt, in_loop: bool) {
        let control = match &stmt.kind {
            StmtKind::If { .. } => Some("if"),
            StmtKind::Loop { .. } => Some("loop"),
            StmtKind::Break { .. } => Some("break"),
            StmtKind::Continue { .. } => Some("continue"),
            StmtKind::Call { .. } => Some("call"),
            _ => None,
        };
        if let (Some(name), Some(guard)) = (control, stmt.guard) {
            self.error(
                stmt.offset,
                Rule::PredicatedControl,
                format!("unsupported: predicated `{name}` (guard @{guard}); guards are allowed only on data and sync instructions"),
            );
        }
        match &stmt.kind {
            StmtKind::Op(inst) => self.operands(stmt.offset, inst),
            StmtKind::If { pred, then_body, else_body, .. } => {
                self.struct_pred(stmt.offset, "if", *pred);
                self.block(then_body, in_loop);
                self.block(else_body, in_loop);
            }
            StmtKind::Loop { body, .. } => self.block(body, true),
            StmtKind::Break { pred } | StmtKind::Continue { pred } => {
                let name = if matches!(stmt.kind, StmtKind::Break { .. }) { "break" } else { "continue" };
                self.struct_pred(stmt.offset, name, *pred);
                if !in_loop {
                    self.error(
                        stmt.offset,
                        Rule::BreakOutsideLoop,
                        format!("`{name}` is not inside a `loop` of the same function"),
                    );
                }
            }
            _ => {}
        }
    }

    fn struct_pred(&mut self, offset: u32, name: &str, pred: PredRef) {
        if pred.index > 3 {
            self.error(
                offset,
                Rule::PredicateRange,
                format!("`{name}` uses predicate p{}; only p0..p3 exist", pred.index),
            );
        }
    }

    fn operands(&mut self, offset: u32, inst: &Instruction) {
        let declared = self.kernel.meta.registers;
        for (spec, _) in inst.operands() {
            let value = inst.slot_value(spec.slot);
            match spec.kind {
                Kind::Reg | Kind::Pair | Kind::Quad => {
                    // A non-returning atomic writes rd = 0: no register is named.
                    if declared == 0 || (spec.optional && value == 0) {
                        continue;
                    }
                    let span = spec.kind.register_span();
                    let last = value + span - 1;
                    if last >= declared {
                        let what = match spec.kind {
                            Kind::Reg => format!("r{value}"),
                            Kind::Pair => format!("register pair r{value}..r{last}"),
                            _ => format!("register quad r{value}..r{last}"),
                        };
                        self.error(
                            offset,
                            Rule::RegisterRange,
                            format!(
                                "{what} used by `{}` but the kernel declares {declared} registers (.registers)",
                                inst.op.mnemonic()
                            ),
                        );
                    }
                }
                Kind::Pred if value > 3 => self.error(
                    offset,
                    Rule::PredicateRange,
                    format!("`{}` uses predicate p{value}; only p0..p3 exist", inst.op.mnemonic()),
                ),
                Kind::Special if value as usize >= SPECIAL_REGISTERS.len() => self.error(
                    offset,
                    Rule::SpecialRegister,
                    format!(
                        "special register index {value} does not exist (0..{} are sr_thread_id_x..sr_mma_k)",
                        SPECIAL_REGISTERS.len() - 1
                    ),
                ),
                _ => {}
            }
        }
    }

    /// Recursion and call depth, over the call graph.
    fn calls(&mut self, graph: &[Vec<CallSite>]) {
        let name = |f: FuncId| -> String {
            match f {
                0 => "entry".to_string(),
                _ => format!("0x{:x}", self.kernel.funcs[f].offset),
            }
        };
        let chain = |path: &[FuncId]| path.iter().map(|&f| name(f)).collect::<Vec<_>>().join(" -> ");

        // Iterative depth-first search (a long chain of calls must not overflow the stack).
        #[derive(Clone, Copy, PartialEq)]
        enum State {
            New,
            OnPath,
            Done,
        }
        let n = graph.len();
        let mut state = vec![State::New; n];
        // Deepest call chain below each function (valid once Done).
        let mut depth = vec![0u32; n];
        // The call site that starts that deepest chain.
        let mut deepest_call: Vec<Option<&CallSite>> = vec![None; n];
        let mut recursion = Vec::new();
        // (function, next call site to look at)
        let mut stack: Vec<(FuncId, usize)> = vec![(0, 0)];
        if n > 0 {
            state[0] = State::OnPath;
        }
        while let Some(&mut (func, ref mut next)) = stack.last_mut() {
            if let Some(site) = graph[func].get(*next) {
                *next += 1;
                match state[site.callee] {
                    State::New => {
                        state[site.callee] = State::OnPath;
                        stack.push((site.callee, 0));
                    }
                    State::OnPath => {
                        let start = stack.iter().position(|&(f, _)| f == site.callee).unwrap_or(0);
                        let mut path: Vec<FuncId> = stack[..].iter().map(|&(f, _)| f).collect();
                        path.push(site.callee);
                        let cycle = chain(&path[start..]);
                        recursion.push((
                            site.offset,
                            format!(
                                "recursive call: {cycle} (call chain {}); recursion is not supported",
                                chain(&path)
                            ),
                        ));
                    }
                    State::Done => {}
                }
            } else {
                stack.pop();
                state[func] = State::Done;
                for site in &graph[func] {
                    if state[site.callee] == State::Done {
                        let d = depth[site.callee].saturating_add(1);
                        if d > depth[func] {
                            depth[func] = d;
                            deepest_call[func] = Some(site);
                        }
                    }
                }
            }
        }
        let recursive = !recursion.is_empty();
        for (offset, message) in recursion {
            self.error(offset, Rule::Recursion, message);
        }
        if !recursive && n > 0 && depth[0] > MAX_CALL_DEPTH {
            let mut path = vec![0];
            let mut func = 0;
            while let Some(site) = deepest_call[func] {
                path.push(site.callee);
                func = site.callee;
            }
            let offset = deepest_call[0].map_or(0, |s| s.offset);
            self.error(
                offset,
                Rule::CallDepth,
                format!(
                    "call chain {} is {} calls deep; the limit is {MAX_CALL_DEPTH}",
                    chain(&path),
                    depth[0]
                ),
            );
        }
    }
}
