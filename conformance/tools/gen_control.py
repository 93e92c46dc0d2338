#!/usr/bin/env python3
"""Generates the structured-control-flow programs. Without wave ops or barriers, GPU
structured control flow (semantics.md B.9-B.11, ir.rs) gives every thread the result of running
the program sequentially on its own, so each expectation is that sequential result, computed by
the small Python model next to each program. Re-run: python3 conformance/tools/gen_control.py"""
import os
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "programs", "control")
os.makedirs(ROOT, exist_ok=True)
M32 = 0xFFFFFFFF

PRO = """.kernel test
    mov_sr r1, sr_thread_id_x
    mov_imm r2, 2
    shl r3, r1, r2
    mov_imm r4, 0x1000
    iadd r3, r3, r4               ; r3 = &out[tid]
    mov_imm r30, 1
    mov_imm r29, 0
    icmp_eq p3, r30, r30          ; p3 = true everywhere
"""
EPI = "    device_store_u32 r3, r6\n.end\n"

def prog(name, desc, n, body, model, extra_hdr=(), widths="all"):
    vals = [model(t) & M32 for t in range(n)]
    hdr = [f"; @desc {desc}", f"; @workgroup {n},1,1", f"; @wave-width {widths}"] + list(extra_hdr)
    hdr.append(f"; @expect 0x1000:u32:{','.join(map(str, vals))}")
    with open(os.path.join(ROOT, name + ".wave"), "w") as f:
        f.write("\n".join(hdr) + "\n" + PRO + "    mov_imm r6, 0\n" + body.strip("\n") + "\n" + EPI)

prog("if_else", "divergent if/else: each side runs only its lanes, all rejoin after endif", 48, """
    and r7, r1, r30
    icmp_eq p1, r7, r30           ; odd
    if p1
        iadd r6, r1, r1
    else
        mov_imm r8, 100
        iadd r6, r1, r8
    endif
    mov_imm r8, 0x10000
    iadd r6, r6, r8               ; every lane again
""", lambda t: (2 * t if t & 1 else t + 100) + 0x10000)

prog("if_nested", "three nested divergent if/else levels on bits of the thread id", 40, """
    mov_imm r10, 1
    and r7, r1, r10
    icmp_ne p1, r7, r29
    if p1
        mov_imm r10, 2
        and r7, r1, r10
        icmp_ne p2, r7, r29
        if p2
            mov_imm r6, 3
        else
            mov_imm r10, 4
            and r7, r1, r10
            icmp_ne p2, r7, r29
            if p2
                mov_imm r6, 5
            else
                mov_imm r6, 1
            endif
        endif
    else
        mov_imm r10, 8
        and r7, r1, r10
        icmp_ne p2, r7, r29
        if p2
            mov_imm r6, 8
        endif
        iadd r6, r6, r30
    endif
""", lambda t: (3 if t & 2 else (5 if t & 4 else 1)) if t & 1 else ((8 if t & 8 else 0) + 1))

prog("if_uniform", "uniform if (all true) and uniform else (all false)", 32, """
    if p3
        mov_imm r6, 7
    else
        mov_imm r6, 9
    endif
    icmp_ne p1, r30, r30
    if p1
        mov_imm r6, 11
    else
        iadd r6, r6, r30
    endif
""", lambda t: 8)

prog("if_negated", "`if !p` runs where p is false (our structural predicate negation)", 32, """
    mov_imm r10, 5
    icmp_lt p1, r1, r10
    if !p1
        mov_imm r6, 1
    else
        mov_imm r6, 2
    endif
""", lambda t: 2 if t < 5 else 1)

prog("loop_counted", "per-lane trip counts (tid % 7) with break; lanes leave at different iterations", 45, """
    mov_imm r10, 7
    imod r11, r1, r10             ; n = tid % 7
    mov_imm r5, 0                 ; i
    loop
        icmp_ge p1, r5, r11
        break p1
        iadd r6, r6, r5
        iadd r6, r6, r5
        iadd r5, r5, r30
    endloop
    mov_imm r10, 1000
    iadd r6, r6, r10              ; after the loop every lane is back
""", lambda t: sum(2 * i for i in range(t % 7)) + 1000)

prog("break_in_if", "a lane that breaks inside an if stays out of the rest of the iteration (B.10)", 40, """
    mov_imm r5, 0
    loop
        iadd r5, r5, r30
        mov_imm r10, 3
        imod r11, r1, r10
        icmp_eq p1, r11, r29
        if p1                      ; lanes with tid % 3 == 0
            mov_imm r10, 5
            icmp_ge p2, r5, r10
            break p2               ; leave at iteration 5
            iadd r6, r6, r30
        endif
        mov_imm r10, 100
        iadd r6, r6, r10           ; the loop tail
        mov_imm r10, 8
        icmp_ge p2, r5, r10
        break p2
    endloop
""", lambda t: (4 * 101) if t % 3 == 0 else 800)

def cont_model(t):
    acc, n = 0, t % 9 + 2
    for i in range(n):
        if i % 2 == 1: continue
        acc += i
    return acc
prog("continue", "continue skips to the next iteration and the lane rejoins it (B.9)", 40, """
    mov_imm r10, 9
    imod r11, r1, r10
    mov_imm r10, 2
    iadd r11, r11, r10            ; n = tid % 9 + 2
    mov_imm r5, 0
    loop
        icmp_ge p1, r5, r11
        break p1
        and r12, r5, r30
        icmp_eq p2, r12, r30
        iadd r5, r5, r30
        continue p2               ; odd i: skip
        isub r13, r5, r30
        iadd r6, r6, r13
    endloop
""", cont_model)

def cont_all(t):
    acc = 0
    for i in range(6):
        if i == 2: continue
        acc += 1
    return acc
prog("continue_all_lanes", "every lane continues in the same iteration: the loop goes on (the reference hangs)", 32, """
    mov_imm r5, 0
    loop
        mov_imm r10, 6
        icmp_ge p1, r5, r10
        break p1
        mov_imm r10, 2
        icmp_eq p2, r5, r10
        iadd r5, r5, r30
        continue p2
        iadd r6, r6, r30
    endloop
""", cont_all, extra_hdr=["; @max-instructions 100000"])

def cont_if(t):
    acc = 0
    for i in range(8):
        if t & 1:
            if i % 3 == 0: continue
            acc += 10
        acc += 1
    return acc
prog("continue_in_if", "continue nested in an if: the lane skips the tail and comes back next iteration", 33, """
    mov_imm r5, 0
    and r12, r1, r30
    icmp_eq p2, r12, r30           ; odd lanes
    loop
        mov_imm r10, 8
        icmp_ge p1, r5, r10
        break p1
        mov_imm r10, 3
        imod r11, r5, r10
        iadd r5, r5, r30
        if p2
            icmp_eq p1, r11, r29
            continue p1
            mov_imm r10, 10
            iadd r6, r6, r10
        endif
        iadd r6, r6, r30
    endloop
""", cont_if)

def neg_model(t):
    acc, i = 0, 0
    while True:
        if not (i < t % 5 + 1): break
        if not (i & 1): 
            i += 1
            continue
        acc += i
        i += 1
    return acc
prog("break_continue_negated", "`break !p` and `continue !p` act where p is false (spec 5.1)", 32, """
    mov_imm r10, 5
    imod r11, r1, r10
    iadd r11, r11, r30            ; limit = tid % 5 + 1
    mov_imm r5, 0
    loop
        icmp_lt p1, r5, r11
        break !p1
        and r12, r5, r30
        icmp_eq p2, r12, r30      ; i odd
        iadd r5, r5, r30
        continue !p2
        isub r13, r5, r30
        iadd r6, r6, r13
    endloop
""", neg_model)

def nested_loops(t):
    acc = 0
    for i in range(t % 4 + 1):
        j = 0
        while True:
            if j >= i + (t % 3): break
            acc += 1
            j += 1
        acc += 100
    return acc
prog("nested_loops", "break leaves only the innermost loop", 36, """
    mov_imm r10, 4
    imod r11, r1, r10
    iadd r11, r11, r30            ; outer count
    mov_imm r10, 3
    imod r14, r1, r10             ; inner extra
    mov_imm r5, 0
    loop
        icmp_ge p1, r5, r11
        break p1
        mov_imm r7, 0
        iadd r15, r5, r14
        loop
            icmp_ge p2, r7, r15
            break p2
            iadd r6, r6, r30
            iadd r7, r7, r30
        endloop
        mov_imm r10, 100
        iadd r6, r6, r10
        iadd r5, r5, r30
    endloop
""", nested_loops)

def break_else(t):
    acc = 0
    for i in range(10):
        if (t + i) % 4 != 0:
            acc += 1
        else:
            if i >= 3: break
            acc += 20
        acc += 300
    return acc
prog("break_in_else", "break inside an else branch, with code after the endif", 32, """
    mov_imm r5, 0
    loop
        mov_imm r10, 10
        icmp_ge p1, r5, r10
        break p1
        iadd r11, r1, r5
        mov_imm r10, 4
        imod r11, r11, r10
        icmp_ne p1, r11, r29
        if p1
            iadd r6, r6, r30
        else
            mov_imm r10, 3
            icmp_ge p2, r5, r10
            break p2
            mov_imm r10, 20
            iadd r6, r6, r10
        endif
        mov_imm r10, 300
        iadd r6, r6, r10
        iadd r5, r5, r30
    endloop
""", break_else)

prog("break_all_first_iteration", "every lane breaks in the first iteration; the rest of the body does nothing", 32, """
    loop
        break p3
        mov_imm r6, 99
    endloop
    iadd r6, r6, r30
""", lambda t: 1)

def deep_break(t):
    acc = 0
    for i in range(6):
        if t & 1:
            if t & 2:
                if i == t % 5:
                    break
                acc += 1
            acc += 10
        acc += 100
    return acc
prog("break_deep_in_ifs", "break three ifs deep; the lane skips every enclosing endif's tail (B.10)", 40, """
    mov_imm r5, 0
    mov_imm r10, 1
    and r11, r1, r10
    icmp_ne p1, r11, r29           ; bit 0
    mov_imm r10, 2
    and r11, r1, r10
    icmp_ne p2, r11, r29           ; bit 1
    mov_imm r10, 5
    imod r14, r1, r10
    loop
        mov_imm r10, 6
        icmp_ge p0, r5, r10
        break p0
        if p1
            if p2
                icmp_eq p0, r5, r14
                if p0
                    break p3
                endif
                iadd r6, r6, r30
            endif
            mov_imm r10, 10
            iadd r6, r6, r10
        endif
        mov_imm r10, 100
        iadd r6, r6, r10
        iadd r5, r5, r30
    endloop
""", deep_break)

def halt_if(t):
    return 0 if t & 1 else 5
prog("halt_in_if", "halt inside a divergent if stops only the active lanes (B.11)", 40, """
    and r7, r1, r30
    icmp_eq p1, r7, r30
    mov_imm r6, 5
    if p1
        halt
    endif
""", halt_if)
prog("halt_in_if_empty", "halt inside an if no lane takes does nothing (the reference kills the wave)", 32, """
    icmp_ne p1, r30, r30
    if p1
        halt
    endif
    mov_imm r6, 6
""", lambda t: 6)
prog("halt_predicated", "@p halt removes exactly the lanes where p holds", 40, """
    mov_imm r10, 3
    imod r11, r1, r10
    icmp_eq p1, r11, r29
    mov_imm r6, 4
    @p1 halt
""", lambda t: 0 if t % 3 == 0 else 4)

prog("halt_in_loop", "odd lanes halt mid-loop; the others finish it and store", 36, """
    mov_imm r5, 0
    mov_imm r10, 4
    imod r11, r1, r10
    mov_imm r10, 2
    iadd r11, r11, r10
    and r12, r1, r30
    icmp_eq p2, r12, r30
    loop
        mov_imm r10, 8
        icmp_ge p1, r5, r10
        break p1
        icmp_eq p1, r5, r11
        if p2
            if p1
                halt
            endif
        endif
        iadd r6, r6, r30
        iadd r5, r5, r30
    endloop
""", lambda t: 0 if t & 1 else 8)

prog("return_in_entry", "return in the entry function is halt", 32, """
    mov_imm r10, 10
    icmp_lt p1, r1, r10
    mov_imm r6, 3
    if p1
        return
    endif
""", lambda t: 0 if t < 10 else 3)

def gen_nest(depth, name, desc, n):
    body = []
    for k in range(depth):
        body.append(" " * 4 + f"mov_imm r10, {k}")
        body.append(" " * 4 + "icmp_gt p1, r1, r10")
        body.append(" " * 4 + "if p1")
        body.append(" " * 4 + "iadd r6, r6, r30")
    for k in range(depth):
        body.append(" " * 4 + "endif")
    prog(name, desc, n, "\n".join(body), lambda t: min(t, depth))
gen_nest(32, "nest_if_32", "32 nested divergent ifs (spec minimum depth)", 40)
gen_nest(64, "nest_if_64", "64 nested divergent ifs (the depth we promise)", 70)

def gen_loop_nest(depth, name, desc, n):
    body = []
    for k in range(depth):
        body += ["    loop", f"    mov_imm r10, {k}", "    icmp_lt p1, r1, r10", "    break p1", "    iadd r6, r6, r30"]
    for k in range(depth):
        body += ["    break p3", "    endloop"]
    prog(name, desc, n, "\n".join(body), lambda t: min(t, depth - 1) + 1)
gen_loop_nest(32, "nest_loop_32", "32 nested loops, lanes breaking out at different depths", 40)
gen_loop_nest(64, "nest_loop_64", "64 nested loops, lanes breaking out at different depths", 70)

def gen_mixed(depth, name, n):
    body = []
    for k in range(depth):
        if k % 2 == 0:
            body += [f"    mov_imm r10, {k}", "    icmp_gt p1, r1, r10", "    if p1", "    iadd r6, r6, r30"]
        else:
            body += ["    loop", f"    mov_imm r10, {k}", "    icmp_le p1, r1, r10", "    break p1",
                     "    iadd r6, r6, r30"]
    for k in reversed(range(depth)):
        body += ["    endif"] if k % 2 == 0 else ["    break p3", "    endloop"]
    prog(name, f"{depth} levels alternating divergent if and loop", n, "\n".join(body), lambda t: min(t, depth))
gen_mixed(64, "nest_mixed_64", 70)

prog("predicated_in_if", "a predicated op inside a divergent if runs on (mask AND predicate)", 32, """
    mov_imm r10, 2
    and r11, r1, r10
    icmp_ne p1, r11, r29           ; bit 1
    and r11, r1, r30
    icmp_ne p2, r11, r29           ; bit 0
    if p1
        @p2 mov_imm r6, 7
        @!p2 mov_imm r6, 8
    endif
""", lambda t: (7 if t & 1 else 8) if t & 2 else 0)

prog("loop_long_uniform", "a uniform loop of 1000 iterations", 8, """
    mov_imm r5, 0
    loop
        mov_imm r10, 1000
        icmp_ge p1, r5, r10
        break p1
        iadd r6, r6, r5
        iadd r5, r5, r30
    endloop
""", lambda t: sum(range(1000)))

prog("loop_empty_mask", "a loop reached with no active lane changes nothing", 32, """
    icmp_ne p1, r30, r30
    mov_imm r6, 12
    if p1
        loop
            mov_imm r6, 99
            device_store_u32 r3, r6
            break p3
        endloop
    endif
""", lambda t: 12)

# calls
CALL_HDR = ""
def call_prog(name, desc, n, body, funcs, model):
    vals = [model(t) & M32 for t in range(n)]
    src = (f"; @desc {desc}\n; @workgroup {n},1,1\n; @wave-width all\n; @expect 0x1000:u32:{','.join(map(str, vals))}\n"
           + PRO + "    mov_imm r6, 0\n" + body.strip("\n") + "\n" + "    device_store_u32 r3, r6\n    halt\n" + funcs.strip("\n") + "\n.end\n")
    open(os.path.join(ROOT, name + ".wave"), "w").write(src)

call_prog("call_basic", "call runs the function and returns to the next instruction", 32, """
    call add_ten
    call add_ten
    iadd r6, r6, r1
""", """
add_ten:
    mov_imm r10, 10
    iadd r6, r6, r10
    return
""", lambda t: 20 + t)

call_prog("call_divergent", "call inside a divergent if: the function runs on the active lanes only", 32, """
    and r7, r1, r30
    icmp_eq p1, r7, r30
    if p1
        call twice
    endif
    iadd r6, r6, r30
""", """
twice:
    iadd r6, r1, r1
    return
""", lambda t: (2 * t if t & 1 else 0) + 1)

call_prog("call_return_in_if", "a divergent return leaves the function for those lanes only; all rejoin after the call", 32, """
    call f
    mov_imm r10, 1000
    iadd r6, r6, r10
""", """
f:
    mov_imm r10, 4
    icmp_lt p1, r1, r10
    mov_imm r6, 1
    if p1
        return
    endif
    mov_imm r6, 2
    return
""", lambda t: (1 if t < 4 else 2) + 1000)

def depth8():
    def g(k, v):
        v += k
        if k < 8: v = g(k + 1, v)
        return v * 2
    return g(1, 0)
call_prog("call_depth_8", "calls nested 8 deep (MAX_CALL_DEPTH)", 16, """
    call f1
""", "\n".join(f"""f{k}:
    mov_imm r10, {k}
    iadd r6, r6, r10
    {'call f' + str(k + 1) if k < 8 else ''}
    iadd r6, r6, r6
    return""" for k in range(1, 9)), lambda t: depth8())

call_prog("call_halt_inside", "a lane halted inside a function stays halted after the return", 32, """
    call f
    mov_imm r6, 9
""", """
f:
    mov_imm r10, 3
    and r11, r1, r10
    icmp_eq p1, r11, r29
    @p1 halt
    return
""", lambda t: 0 if t % 4 == 0 else 9)

call_prog("call_in_loop", "a call inside a loop whose lanes leave at different iterations", 32, """
    mov_imm r5, 0
    mov_imm r10, 5
    imod r11, r1, r10
    loop
        icmp_gt p1, r5, r11
        break p1
        call addi
        iadd r5, r5, r30
    endloop
""", """
addi:
    iadd r6, r6, r5
    iadd r6, r6, r30
    return
""", lambda t: sum(i + 1 for i in range(t % 5 + 1)))
