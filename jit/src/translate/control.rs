//! Structured control flow with explicit masks (gallivm style).
//!
//! `exec` is kept up to date incrementally: lanes leave it at `break`, `continue`, `return`
//! and `halt`; a construct's exit mask is the union of the masks its paths end with, plus the
//! lanes that rejoin there (broken lanes at a loop exit, returned lanes at a call's end).
//! Every statement is walked whatever the mask (ir.rs), so barriers inside empty bodies are
//! still reached, exactly as the interpreter.

use super::Translator;
use crate::ctx::status;
use crate::error::JitError;
use crate::helpers;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I64};
use cranelift_codegen::ir::{InstBuilder, MemFlagsData};
use cranelift_frontend::Variable;
use wave_isa::ir::{walk_block, MAX_CALL_DEPTH};
use wave_isa::{FuncId, Stmt, StmtKind};

/// One open construct that `break`/`continue`/`return` refer to.
pub enum Frame {
    /// Lanes that broke out (rejoin at the exit) and lanes that continued (rejoin at the latch).
    Loop { brk: Vec<Variable>, cont: Vec<Variable> },
    /// An inlined call: lanes that returned (rejoin at the call's end).
    Call { ret: Vec<Variable> },
}

#[derive(Default)]
pub struct ControlStack {
    pub frames: Vec<Frame>,
}

impl ControlStack {
    /// Depth of inlined calls open now.
    fn call_depth(&self) -> u32 {
        self.frames.iter().filter(|f| matches!(f, Frame::Call { .. })).count() as u32
    }

    /// The innermost loop of the current function.
    fn innermost_loop(&self) -> Option<(&Vec<Variable>, &Vec<Variable>)> {
        // `if` opens no frame, so the innermost frame is the loop, or a call (none then).
        match self.frames.last()? {
            Frame::Loop { brk, cont } => Some((brk, cont)),
            Frame::Call { .. } => None,
        }
    }

    fn innermost_call(&self) -> Option<&Vec<Variable>> {
        self.frames.iter().rev().find_map(|f| match f {
            Frame::Call { ret } => Some(ret),
            Frame::Loop { .. } => None,
        })
    }
}

impl Translator<'_, '_> {
    pub fn block(&mut self, stmts: &[Stmt], func: FuncId) -> Result<(), JitError> {
        for s in stmts {
            self.stmt(s, func)?;
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt, func: FuncId) -> Result<(), JitError> {
        match &s.kind {
            StmtKind::Op(inst) => self.op(inst, s.offset),
            StmtKind::If { pred, then_body, else_body, .. } => {
                let entry = self.get(&self.exec.clone());
                let p = self.pred_ref(*pred);
                let then_mask = self.and(&entry, &p);
                let else_mask = self.and_not(&entry, &p);
                let exec = self.exec.clone();
                self.set(&exec, &then_mask);
                self.block(then_body, func)?;
                let after_then = self.get(&exec);
                self.set(&exec, &else_mask);
                self.block(else_body, func)?;
                let after_else = self.get(&exec);
                let merged = self.or(&after_then, &after_else);
                self.set(&exec, &merged);
                Ok(())
            }
            StmtKind::Loop { body, .. } => self.loop_(s.offset, body, func),
            StmtKind::Break { pred } | StmtKind::Continue { pred } => {
                let is_break = matches!(s.kind, StmtKind::Break { .. });
                let Some((brk, cont)) = self.cf.innermost_loop() else {
                    return Err(JitError::Unsupported(format!(
                        "`{}` outside a loop at byte 0x{:x}",
                        if is_break { "break" } else { "continue" },
                        s.offset
                    )));
                };
                let target = if is_break { brk.clone() } else { cont.clone() };
                let exec_vars = self.exec.clone();
                let exec = self.get(&exec_vars);
                let p = self.pred_ref(*pred);
                let leaving = self.and(&exec, &p);
                let acc = self.get(&target);
                let acc = self.or(&acc, &leaving);
                self.set(&target, &acc);
                let exec = self.and_not(&exec, &leaving);
                self.set(&exec_vars, &exec);
                Ok(())
            }
            StmtKind::Call { func: callee, .. } => self.call(*callee, s.offset),
            StmtKind::Return => {
                let leaving = self.op_mask(s.guard);
                match self.cf.innermost_call().cloned() {
                    Some(ret) => {
                        let acc = self.get(&ret);
                        let acc = self.or(&acc, &leaving);
                        self.set(&ret, &acc);
                        let exec_vars = self.exec.clone();
                        let exec = self.get(&exec_vars);
                        let exec = self.and_not(&exec, &leaving);
                        self.set(&exec_vars, &exec);
                    }
                    None => self.halt(&leaving),
                }
                Ok(())
            }
            StmtKind::Halt { .. } => {
                let leaving = self.op_mask(s.guard);
                self.halt(&leaving);
                Ok(())
            }
            StmtKind::Barrier => {
                self.barrier(s);
                Ok(())
            }
            StmtKind::Fence { .. } | StmtKind::Wait | StmtKind::Nop => Ok(()),
        }
    }

    /// Lanes of `leaving` halt for good; the wave ends when no lane is live.
    fn halt(&mut self, leaving: &[cranelift_codegen::ir::Value]) {
        let live_vars = self.live.clone();
        let live = self.get(&live_vars);
        let live = self.and_not(&live, leaving);
        self.set(&live_vars, &live);
        let exec_vars = self.exec.clone();
        let exec = self.get(&exec_vars);
        let exec = self.and_not(&exec, leaving);
        self.set(&exec_vars, &exec);
        let any = self.any(&live);
        let next = self.b.create_block();
        let done = self.b.ins().iconst(I32, status::DONE as i64);
        self.b.ins().brif(any, next, &[], self.exit, &[done.into()]);
        self.b.switch_to_block(next);
    }

    fn barrier(&mut self, s: &Stmt) {
        let wait = self.b.create_block();
        let after = self.b.create_block();
        if s.guard.is_some() {
            let m = self.op_mask(s.guard);
            let any = self.any(&m);
            self.b.ins().brif(any, wait, &[], after, &[]);
        } else {
            self.b.ins().jump(wait, &[]);
        }
        self.b.switch_to_block(wait);
        let zero = self.b.ins().iconst(I64, 0);
        let st = self.call_helper(helpers::barrier, 0, zero, s.offset);
        self.b.ins().brif(st, self.exit, &[st.into()], after, &[]);
        self.b.switch_to_block(after);
    }

    fn loop_(&mut self, offset: u32, body: &[Stmt], func: FuncId) -> Result<(), JitError> {
        let zero = self.zeros();
        let brk = self.new_vars(&zero);
        let cont = self.new_vars(&zero);
        let header = self.b.create_block();
        self.b.ins().jump(header, &[]);
        self.b.switch_to_block(header);
        self.set(&cont, &zero);
        self.cf.frames.push(Frame::Loop { brk: brk.clone(), cont: cont.clone() });
        let result = self.block(body, func);
        self.cf.frames.pop();
        result?;
        // Latch: continuing lanes rejoin; repeat while any lane is left.
        let exec_vars = self.exec.clone();
        let exec = self.get(&exec_vars);
        let c = self.get(&cont);
        let next = self.or(&exec, &c);
        self.set(&exec_vars, &next);
        if self.flags.fuel {
            self.charge_fuel(offset, body);
        }
        let any = self.any(&next);
        let exit = self.b.create_block();
        self.b.ins().brif(any, header, &[], exit, &[]);
        self.b.switch_to_block(exit);
        let broke = self.get(&brk);
        self.set(&exec_vars, &broke);
        Ok(())
    }

    /// Take the statements of one iteration from the workgroup's budget; stop when spent.
    fn charge_fuel(&mut self, offset: u32, body: &[Stmt]) {
        let mut cost = 1i64; // the endloop itself
        walk_block(body, 0, &mut |_, _| cost += 1);
        let fuel_ptr = self.load_ctx(I64, self.env.fuel_offset());
        let flags = MemFlagsData::new().with_notrap();
        let fuel = self.b.ins().load(I64, flags, fuel_ptr, 0);
        let cost_v = self.b.ins().iconst(I64, cost);
        let left = self.b.ins().isub(fuel, cost_v);
        self.b.ins().store(flags, left, fuel_ptr, 0);
        let spent = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, left, 0);
        let stop = self.b.create_block();
        let go = self.b.create_block();
        self.b.ins().brif(spent, stop, &[], go, &[]);
        self.b.switch_to_block(stop);
        let zero = self.b.ins().iconst(I64, 0);
        let st = self.call_helper(helpers::instruction_limit, 0, zero, offset);
        self.b.ins().jump(self.exit, &[st.into()]);
        self.b.switch_to_block(go);
    }

    fn call(&mut self, callee: FuncId, offset: u32) -> Result<(), JitError> {
        if self.cf.call_depth() >= MAX_CALL_DEPTH {
            // The interpreter fails when the call runs; so does the compiled code.
            let zero = self.b.ins().iconst(I64, 0);
            let st = self.call_helper(helpers::call_depth, 0, zero, offset);
            self.b.ins().jump(self.exit, &[st.into()]);
            let dead = self.b.create_block();
            self.b.switch_to_block(dead);
            return Ok(());
        }
        let func = self
            .kernel
            .funcs
            .get(callee)
            .ok_or_else(|| JitError::Unsupported(format!("call to unknown function {callee}")))?;
        let zero = self.zeros();
        let ret = self.new_vars(&zero);
        self.cf.frames.push(Frame::Call { ret: ret.clone() });
        let result = self.block(&func.body, callee);
        self.cf.frames.pop();
        result?;
        let exec_vars = self.exec.clone();
        let exec = self.get(&exec_vars);
        let r = self.get(&ret);
        let joined = self.or(&exec, &r);
        self.set(&exec_vars, &joined);
        Ok(())
    }
}
