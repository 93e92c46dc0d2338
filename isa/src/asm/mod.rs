//! The assembler: `.wave` text → [`WbinFile`].
//!
//! Accepts the reference dialect (wave-format.md §3) plus our extensions (semantics.md B.1):
//! dotted mnemonics (`icmp.lt`, `device_load.u32`, `atomic_add.device`), `!pN` on
//! `if`/`break`/`continue`, float immediates stored as f32 bits, `@p0` (predicate-enable
//! bit), compare-and-swap with modifier 8, and `call` targets relative to the label's own
//! kernel computed from real instruction sizes. Every line is parsed on its own, so all
//! errors of a file are reported, each with its line, column and the source line.
//!
//! Pipeline: [`lexer`] (one line → tokens) → [`parser`] (tokens → label / directive /
//! instruction) → [`encode`] (operands matched against the opcode table) → this module
//! (kernels, labels, `.registers` limits, call targets, bytes). A kernel whose lines all
//! assembled is then built into its tree and validated exactly as a loaded binary is
//! ([`crate::ir::build_kernel`], [`crate::validate::validate`]), and each structure error
//! (`endif` without `if`, `break` outside a loop, recursion, ...) is reported at the source
//! line of the instruction at its byte offset.

pub mod diagnostics;
pub mod encode;
pub mod lexer;
pub mod parser;

pub use diagnostics::{Diagnostic, Diagnostics, Severity};

use crate::ir::{build_kernel, BuildErrorKind, KernelMeta, MAX_CALL_DEPTH};
use crate::validate::{validate, Rule};
use crate::wbin::{WbinFile, WbinKernel};
use encode::{Encoded, RegisterUse};
use parser::{parse_line, Directive, LineError, Span, Statement};
use std::collections::HashMap;

/// Registers a kernel has when it does not say `.registers` (as the reference).
pub const DEFAULT_REGISTERS: u32 = 32;
/// Largest `.registers` value: register fields are 8 bits wide.
pub const MAX_REGISTERS: u32 = 256;

/// A successful assembly: the binary's contents and any warnings.
#[derive(Clone, Debug)]
pub struct Assembled {
    pub file: WbinFile,
    pub warnings: Vec<Diagnostic>,
}

/// Assemble a whole source file. On failure every diagnostic of the file is returned.
pub fn assemble(source: &str, file_name: &str) -> Result<Assembled, Diagnostics> {
    assemble_with(source, file_name, true)
}

/// [`assemble`] without the structure check: each instruction is encoded, but the kernel's tree
/// is not built and validated. For tests and tools that make binaries the loader rejects (calls
/// nested too deep, recursion, `break` outside a loop).
pub fn assemble_unchecked(source: &str, file_name: &str) -> Result<Assembled, Diagnostics> {
    assemble_with(source, file_name, false)
}

fn assemble_with(source: &str, file_name: &str, check_structure: bool) -> Result<Assembled, Diagnostics> {
    let mut asm =
        Assembler { file: file_name, lines: source.lines().collect(), check_structure, ..Default::default() };
    for index in 0..asm.lines.len() {
        asm.line(index);
    }
    if let Some(k) = asm.current.take() {
        asm.error(
            k.line,
            k.span,
            format!("kernel `{}` is never closed", k.meta.name),
            Some("add `.end` after its last instruction"),
        );
        asm.finish_kernel(k);
    }
    if asm.kernels.is_empty() && !asm.diags.iter().any(|d| d.severity == Severity::Error) {
        // A binary without kernels runs nothing: almost certainly the wrong file.
        asm.diags.push(asm.diagnostic(
            Severity::Error,
            0,
            Span { start: 0, end: 0 },
            "no kernels in this file".into(),
            Some("start one with `.kernel NAME`"),
        ));
    }
    // Kernel-level checks run at `.end`; report in source order.
    asm.diags.sort_by_key(|d| (d.line, d.column));
    if asm.diags.iter().any(|d| d.severity == Severity::Error) {
        return Err(Diagnostics { items: asm.diags });
    }
    Ok(Assembled { file: WbinFile { kernels: asm.kernels, ..Default::default() }, warnings: asm.diags })
}

/// A kernel between `.kernel` and `.end`.
struct OpenKernel {
    meta: KernelMeta,
    /// Line index and span of its `.kernel` directive.
    line: usize,
    span: Span,
    registers_line: Option<usize>,
    /// Each instruction with its line index and the span of the whole statement.
    insts: Vec<(usize, Span, Encoded)>,
    /// Byte offset of the next instruction.
    offset: u32,
    labels: HashMap<String, (u32, usize)>,
    /// A line of it failed, so "no instructions" would be noise.
    had_errors: bool,
}

#[derive(Default)]
struct Assembler<'a> {
    file: &'a str,
    lines: Vec<&'a str>,
    diags: Vec<Diagnostic>,
    kernels: Vec<WbinKernel>,
    current: Option<OpenKernel>,
    /// Kernel name → line index of its `.kernel`.
    kernel_lines: HashMap<String, usize>,
    /// Label name → kernel that defines it (for "label is in another kernel").
    label_kernels: HashMap<String, String>,
    /// Build and validate each kernel's tree (see [`assemble_unchecked`]).
    check_structure: bool,
}

impl Assembler<'_> {
    fn diagnostic(
        &self,
        severity: Severity,
        line: usize,
        span: Span,
        message: String,
        hint: Option<&str>,
    ) -> Diagnostic {
        let text = self.lines.get(line).copied().unwrap_or("");
        let start = span.start.min(text.len());
        let end = span.end.clamp(start, text.len());
        let column = text.get(..start).map_or(start, |s| s.chars().count()) as u32 + 1;
        let width = text.get(start..end).map_or(1, |s| s.chars().count()) as u32;
        Diagnostic {
            severity,
            file: self.file.to_string(),
            line: line as u32 + 1,
            column,
            width: width.max(1),
            message,
            source_line: text.trim_end_matches('\r').to_string(),
            hint: hint.map(str::to_string),
        }
    }

    fn error(&mut self, line: usize, span: Span, message: String, hint: Option<&str>) {
        let d = self.diagnostic(Severity::Error, line, span, message, hint);
        self.diags.push(d);
    }

    fn warning(&mut self, line: usize, span: Span, message: String, hint: Option<&str>) {
        let d = self.diagnostic(Severity::Warning, line, span, message, hint);
        self.diags.push(d);
    }

    fn line_error(&mut self, line: usize, e: LineError) {
        if let Some(k) = self.current.as_mut() {
            k.had_errors = true;
        }
        self.error(line, e.span, e.message, e.hint.as_deref());
    }

    fn line(&mut self, index: usize) {
        let parsed = match parse_line(self.lines[index]) {
            Ok(p) => p,
            Err(e) => {
                self.line_error(index, e);
                return self.recover_structure(index);
            }
        };
        if let Some((name, span)) = parsed.label {
            self.label(index, name, span);
        }
        match parsed.statement {
            None => {}
            Some(Statement::Directive(d, span)) => self.directive(index, d, span),
            Some(Statement::Instr(ast)) => {
                let Some(k) = self.current.as_mut() else {
                    return self.error(
                        index,
                        ast.mnemonic_span,
                        "instruction outside a kernel".into(),
                        Some("start a kernel with `.kernel NAME` and close it with `.end`"),
                    );
                };
                match encode::encode(&ast) {
                    Ok(e) => {
                        k.offset += e.inst.size();
                        k.insts.push((index, statement_span(&ast), e));
                    }
                    Err(e) => self.line_error(index, e),
                }
            }
        }
    }

    /// After a syntax error on a `.kernel NAME …` or `.end` line, still open or close the
    /// kernel, so one typo does not cascade into errors on every following line.
    fn recover_structure(&mut self, index: usize) {
        let tokens = lexer::lex_line(lexer::strip_comment(self.lines[index]));
        let span = Span { start: 0, end: 0 };
        match tokens.as_slice() {
            [first, second, ..] if first.tok == lexer::Tok::DotWord("kernel".into()) => {
                if let lexer::Tok::Word(name) = &second.tok {
                    self.directive(index, Directive::Kernel(name.clone()), span);
                }
            }
            [first, ..] if first.tok == lexer::Tok::DotWord("end".into()) => {
                if let Some(k) = self.current.take() {
                    self.finish_kernel(k);
                }
            }
            _ => {}
        }
    }

    fn label(&mut self, index: usize, name: String, span: Span) {
        let Some(k) = self.current.as_mut() else {
            return self.error(
                index,
                span,
                format!("label `{name}` outside a kernel"),
                Some("labels mark call targets inside a kernel"),
            );
        };
        if let Some(&(_, first)) = k.labels.get(&name) {
            let msg =
                format!("label `{name}` is already defined in kernel `{}` (line {})", k.meta.name, first + 1);
            return self.error(index, span, msg, None);
        }
        k.labels.insert(name.clone(), (k.offset, index));
        self.label_kernels.entry(name).or_insert_with(|| k.meta.name.clone());
    }

    fn directive(&mut self, index: usize, d: Directive, span: Span) {
        if let Directive::Kernel(name) = d {
            if let Some(open) = self.current.take() {
                let msg = format!(
                    "`.kernel {name}` inside kernel `{}` (opened at line {})",
                    open.meta.name,
                    open.line + 1
                );
                self.error(index, span, msg, Some("close the previous kernel with `.end` first"));
                self.finish_kernel(open);
            }
            if let Some(&first) = self.kernel_lines.get(&name) {
                let msg = format!("a kernel named `{name}` is already defined at line {}", first + 1);
                self.warning(
                    index,
                    span,
                    msg,
                    Some("the binary allows it, but loaders that pick kernels by name find the first"),
                );
            } else {
                self.kernel_lines.insert(name.clone(), index);
            }
            let meta =
                KernelMeta { name, registers: DEFAULT_REGISTERS, local_memory: 0, workgroup_size: [0; 3] };
            self.current = Some(OpenKernel {
                meta,
                line: index,
                span,
                registers_line: None,
                insts: Vec::new(),
                offset: 0,
                labels: HashMap::new(),
                had_errors: false,
            });
            return;
        }
        let Some(k) = self.current.as_mut() else {
            let what = match d {
                Directive::End => "`.end` without a matching `.kernel`".to_string(),
                _ => "directive outside a kernel".to_string(),
            };
            return self.error(
                index,
                span,
                what,
                Some("kernel directives go between `.kernel NAME` and `.end`"),
            );
        };
        match d {
            Directive::Kernel(_) => unreachable!("handled above"),
            Directive::End => {
                let k = self.current.take().expect("checked above");
                self.finish_kernel(k);
            }
            Directive::Registers(n) => {
                if n == 0 || n > MAX_REGISTERS {
                    let msg = format!("`.registers {n}` is out of range");
                    return self.error(index, span, msg, Some("a kernel has 1 to 256 registers"));
                }
                let previous = k.registers_line.replace(index);
                k.meta.registers = n;
                if let Some(p) = previous {
                    self.warning(
                        index,
                        span,
                        format!("`.registers` overrides the value given at line {}", p + 1),
                        None,
                    );
                }
            }
            Directive::LocalMemory(n) => k.meta.local_memory = n,
            Directive::WorkgroupSize(size) => k.meta.workgroup_size = size,
        }
    }

    fn error_count(&self) -> usize {
        self.diags.iter().filter(|d| d.severity == Severity::Error).count()
    }

    /// Kernel-level checks (registers, call targets), then encode the kernel's bytes, then
    /// (when all of it assembled) check its structure.
    fn finish_kernel(&mut self, k: OpenKernel) {
        let errors_before = self.error_count();
        let declared = k.meta.registers;
        let mut code = Vec::with_capacity(k.offset as usize);
        if k.insts.is_empty() && !k.had_errors {
            self.warning(k.line, k.span, format!("kernel `{}` has no instructions", k.meta.name), None);
        }
        let mut sites = Vec::with_capacity(k.insts.len());
        for (line, statement, mut e) in k.insts {
            sites.push(Site { offset: code.len() as u32, line, span: statement });
            for RegisterUse { first, count, span } in &e.registers {
                let last = first + count - 1;
                if last >= declared {
                    let what = if *count == 1 {
                        format!("register r{first}")
                    } else {
                        format!("register r{first} (covering r{first} to r{last})")
                    };
                    let msg =
                        format!("{what} is beyond the {declared} registers of kernel `{}`", k.meta.name);
                    let hint = if k.registers_line.is_some() {
                        "raise the kernel's `.registers` count (at most 256)"
                    } else {
                        "a kernel has 32 registers unless it declares `.registers N` (at most 256)"
                    };
                    self.error(line, *span, msg, Some(hint));
                }
            }
            if let Some((label, span)) = &e.call_label {
                match k.labels.get(label) {
                    Some(&(target, _)) if target < k.offset => e.inst.imm = target,
                    Some(_) => {
                        let msg = format!(
                            "label `{label}` is at the end of kernel `{}`: no instruction follows it",
                            k.meta.name
                        );
                        self.error(line, *span, msg, None);
                    }
                    None => {
                        let hint = match self.label_kernels.get(label) {
                            Some(other) => Some(format!("`{label}` is a label of kernel `{other}`; `call` reaches only labels of its own kernel")),
                            None => diagnostics::closest(label, k.labels.keys().map(String::as_str)).map(|b| format!("did you mean `{b}`?")),
                        };
                        let msg = format!("undefined label `{label}` in kernel `{}`", k.meta.name);
                        self.error(line, *span, msg, hint.as_deref());
                    }
                }
            }
            e.inst.encode_into(&mut code);
        }
        if self.check_structure && !k.had_errors && self.error_count() == errors_before {
            self.check_structure(&k.meta, &code, &sites, (k.line, k.span));
        }
        self.kernels.push(WbinKernel { meta: k.meta, code });
    }

    /// Build the kernel's tree and validate it, as the loader does with a binary; report
    /// every error at the instruction whose byte offset it names.
    fn check_structure(&mut self, meta: &KernelMeta, code: &[u8], sites: &[Site], kernel_at: (usize, Span)) {
        let at = |offset: u32| {
            sites
                .binary_search_by_key(&offset, |s| s.offset)
                .map_or(kernel_at, |i| (sites[i].line, sites[i].span))
        };
        match build_kernel(meta.clone(), code) {
            Err(e) => {
                let (line, span) = at(e.offset);
                self.error(line, span, e.kind.to_string(), build_hint(&e.kind));
            }
            Ok(kernel) => {
                for e in validate(&kernel).err().unwrap_or_default() {
                    let (line, span) = at(e.offset);
                    self.error(line, span, e.message, rule_hint(e.rule).as_deref());
                }
            }
        }
    }
}

/// Where one instruction of a kernel came from.
struct Site {
    /// Byte offset in the kernel's code.
    offset: u32,
    line: usize,
    span: Span,
}

/// The whole instruction as written: guard, mnemonic and operands.
fn statement_span(ast: &parser::InstrAst) -> Span {
    let start = ast.guard.map_or(ast.mnemonic_span, |g| g.span);
    let end = ast
        .operands
        .last()
        .map(|o| o.span)
        .or_else(|| ast.suffixes.last().map(|(_, s)| *s))
        .unwrap_or(ast.mnemonic_span);
    start.to(end)
}

fn build_hint(kind: &BuildErrorKind) -> Option<&'static str> {
    Some(match kind {
        BuildErrorKind::ElseWithoutIf => "`else` belongs between `if pN` and its `endif`",
        BuildErrorKind::EndifWithoutIf => "remove it, or open the block with `if pN` before it",
        BuildErrorKind::EndloopWithoutLoop => "remove it, or open the loop with `loop` before it",
        BuildErrorKind::DuplicateElse => "an `if` has at most one `else`",
        BuildErrorKind::UnclosedIf => "add `endif` after the block",
        BuildErrorKind::UnclosedLoop => "add `endloop` after the loop body",
        _ => return None,
    })
}

fn rule_hint(rule: Rule) -> Option<String> {
    Some(match rule {
        Rule::BreakOutsideLoop => "`break` and `continue` act on the innermost `loop` of the same function: put them between `loop` and `endloop`".into(),
        Rule::Recursion => "calls may not form a cycle: WAVE has no recursion".into(),
        Rule::CallDepth => format!("calls nest at most {MAX_CALL_DEPTH} deep"),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(src: &str) -> Vec<u32> {
        let a = assemble(src, "t.wave").unwrap_or_else(|d| panic!("{d}"));
        a.file.kernels[0].code.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
    }

    #[test]
    fn encodes_a_small_kernel() {
        let w = words(".kernel k\n  iadd r1, r2, r3\n  @p0 mov_imm r4, 1.0\n  halt\n.end\n");
        assert_eq!(w, vec![0x0001_0200, 0x0300_0000, 0x4104_0018, 0x3f80_0000, 0x3f00_0090]);
    }

    #[test]
    fn call_targets_are_kernel_relative() {
        let src = ".kernel a\nnop\n.end\n.kernel b\n  iadd r1, r1, r1\n  call f\n  halt\nf: return\n.end\n";
        let a = assemble(src, "t.wave").unwrap();
        let code = &a.file.kernels[1].code;
        // iadd (8) + call (8) + halt (4) → f at 20.
        assert_eq!(u32::from_le_bytes(code[12..16].try_into().unwrap()), 20);
    }

    #[test]
    fn reports_every_error() {
        let src = ".kernel k\n  iadd r1, r2\n  bogus r1\n  iadd r40, r1, r2\n  call nowhere\n";
        let d = assemble(src, "t.wave").unwrap_err();
        let lines: Vec<u32> = d.errors().map(|e| e.line).collect();
        assert_eq!(lines, vec![1, 2, 3, 4, 5], "{d}");
    }
}
