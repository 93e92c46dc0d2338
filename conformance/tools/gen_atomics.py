#!/usr/bin/env python3
"""Generates the atomic programs. With the decided schedule (workgroups in order, waves in order
up to a barrier, lanes in order) every atomic sequence is a sequential fold in thread order, so
the expectations are computed by folding in Python. Re-run: python3 conformance/tools/gen_atomics.py"""
import os, random
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "programs", "atomics")
os.makedirs(ROOT, exist_ok=True)
M32 = 0xFFFFFFFF
OPS = {
    "add": lambda m, v, e: (m + v) & M32,
    "sub": lambda m, v, e: (m - v) & M32,
    "min": lambda m, v, e: min(m, v),
    "max": lambda m, v, e: max(m, v),
    "and": lambda m, v, e: m & v,
    "or": lambda m, v, e: m | v,
    "xor": lambda m, v, e: m ^ v,
    "exchange": lambda m, v, e: v,
    "cas": lambda m, v, e: v if m == e else m,
}

def values(op, n, rng):
    if op in ("and",):
        return [M32 ^ (1 << rng.randrange(32)) for _ in range(n)]
    if op in ("or",):
        return [1 << rng.randrange(32) for _ in range(n)]
    if op in ("min", "max"):
        return [rng.choice([rng.randrange(1 << 32), rng.randrange(100), 0xFFFFFFF0 + rng.randrange(16)]) for _ in range(n)]
    return [rng.randrange(1 << 32) if op in ("xor", "exchange") else rng.randrange(1000) for _ in range(n)]

def gen(space, op, grid, n, seed):
    rng = random.Random(seed)
    total = grid * n
    vals = values(op, total, rng)
    init = {"min": 0x80000000, "max": 0x7FFFFFF0, "and": M32, "sub": 100000}.get(op, 0)
    if space == "local":
        init = M32 if op == "and" else (0x80000000 if op == "min" else 0)
    exps = []
    # cas: desired = value, expected = the thread's guess of the current value
    olds = []
    finals = []
    for g in range(grid):
        m = init if (space == "local" or g == 0) else m
        if space == "local":
            m = init
        for t in range(n):
            i = g * n + t
            e = 0
            if op == "cas":
                e = m if rng.random() < 0.6 else (m + 1) & M32
                exps.append(e)
            olds.append(m)
            m = OPS[op](m, vals[i], e)
        finals.append(m)
    hdr = [f"; @desc {space} atomic_{op}: {total} threads on one address, lane/wave/workgroup order; returns the old value",
           f"; @grid {grid},1,1", f"; @workgroup {n},1,1", "; @wave-width all",
           f"; @input 0x1000:u32:{','.join(hex(v) for v in vals)}"]
    if op == "cas":
        hdr.append(f"; @input 0x2000:u32:{','.join(hex(v) for v in exps)}")
    if space == "device":
        hdr.append(f"; @input 0x0:u32:{hex(init)}")
        hdr.append(f"; @expect 0x0:u32:{hex(finals[-1])}")
    else:
        hdr.append(f"; @expect 0x10:u32:{','.join(hex(v) for v in finals)}")
    hdr.append(f"; @expect 0x3000:u32:{','.join(hex(v) for v in olds)}")
    body = [".kernel test",
            "    mov_sr r1, sr_thread_id_x",
            "    mov_sr r2, sr_workgroup_id_x",
            f"    mov_imm r3, {n}",
            "    imad r4, r2, r3, r1           ; global index",
            "    mov_imm r3, 2",
            "    shl r5, r4, r3",
            "    mov_imm r3, 0x1000",
            "    iadd r6, r5, r3",
            "    device_load_u32 r7, r6        ; value",
            "    mov_imm r3, 0x2000",
            "    iadd r6, r5, r3",
            "    device_load_u32 r8, r6        ; cas: expected",
            "    mov_imm r9, 0                 ; the address"]
    if space == "local" and init != 0:
        body += ["    mov_imm r10, 0", "    icmp_eq p1, r1, r10", f"    mov_imm r11, {hex(init)}",
                 "    @p1 local_store_u32 r9, r11", "    barrier"]
    if op == "cas":
        ins = f"atomic_cas r12, r9, r8, r7, .device" if space == "device" else "local_atomic_cas r12, r9, r8, r7"
    else:
        ins = f"atomic_{op} r12, r9, r7, .device" if space == "device" else f"local_atomic_{op} r12, r9, r7"
    body += ["    " + ins, "    mov_imm r3, 0x3000", "    iadd r6, r5, r3", "    device_store_u32 r6, r12"]
    if space == "local":
        body += ["    barrier", "    mov_imm r10, 0", "    icmp_eq p1, r1, r10", "    if p1",
                 "        local_load_u32 r13, r9", "        mov_imm r3, 2", "        shl r14, r2, r3",
                 "        mov_imm r3, 0x10", "        iadd r14, r14, r3", "        device_store_u32 r14, r13", "    endif"]
    body += [".end", ""]
    open(os.path.join(ROOT, f"{space}_{op}.wave"), "w").write("\n".join(hdr) + "\n" + "\n".join(body))

seed = 10
for op in OPS:
    seed += 1
    gen("device", op, 2, 40, seed)
    seed += 1
    gen("local", op, 2, 40, seed)
print("ok")
