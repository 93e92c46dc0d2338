#!/usr/bin/env python3
"""Generates the wave-operation programs: every wave op, under several active masks, checked
at every wave width by the W-parameterised oracles `wave_op` / `wave_shuffle` in
conformance/src/oracles.rs. Re-run after editing: python3 conformance/tools/gen_wave.py"""
import os
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "programs", "wave")
os.makedirs(ROOT, exist_ok=True)

MASKS = {  # name -> (selector, m, k, description)
    "full": ("tid", 1, 1, "every lane active"),
    "tid3": ("tid", 3, 2, "lanes with tid % 3 < 2 active"),
    "lane": ("lane", 8, 3, "lanes with lane_id % 8 < 3 active"),
    "val": ("val", 4, 2, "lanes whose input % 4 < 2 active (data-dependent)"),
}

def mask_code(sel, m, k):
    key = {"tid": "r1", "lane": "r13", "val": "r4"}[sel]
    if sel == "val":  # unsigned: values may use all 32 bits
        return [f"mov_imm r11, {m - 1}", f"and r12, r4, r11", f"mov_imm r11, {k}", "icmp_lt p1, r12, r11"]
    return [f"mov_imm r11, {m}", f"imod r12, {key}, r11", f"mov_imm r11, {k}", "icmp_lt p1, r12, r11"]

def program(name, desc, threads, op_lines, oracle, seed, mx, grid=1, extra=()):
    sel = oracle[1]
    hdr = [f"; @desc {desc}", f"; @grid {grid},1,1", f"; @workgroup {threads},1,1", "; @wave-width all",
           f"; @input 0x0:random-u32:{threads * grid}:seed={seed}:max={mx}",
           ] + ([f"; @expect 0x1000:rust={oracle[0]}"] if oracle[0] else []) + list(extra)
    body = [".kernel test",
            "    mov_sr r1, sr_thread_id_x",
            "    mov_sr r13, sr_lane_id",
            "    mov_sr r14, sr_workgroup_id_x",
            f"    mov_imm r15, {threads}",
            "    imad r16, r14, r15, r1       ; global index",
            "    mov_imm r2, 2",
            "    shl r3, r16, r2",
            "    device_load_u32 r4, r3        ; every lane loads its value, active or not",
            "    mov_imm r8, 0x1000",
            "    iadd r9, r3, r8",
            "    mov_imm r10, 0xdeadbeef",
            "    device_store_u32 r9, r10      ; sentinel for inactive lanes"]
    body += ["    " + l for l in mask_code(*sel)]
    body += ["    if p1"] + ["        " + l for l in op_lines] + ["        device_store_u32 r9, r20", "    endif", ".end", ""]
    with open(os.path.join(ROOT, name + ".wave"), "w") as f:
        f.write("\n".join(hdr) + "\n" + "\n".join(body))

seed = 1
for op, lines in [("prefix_sum", ["wave_prefix_sum r20, r4"]),
                  ("reduce_add", ["wave_reduce_add r20, r4"]),
                  ("reduce_min", ["wave_reduce_min r20, r4"]),
                  ("reduce_max", ["wave_reduce_max r20, r4"]),
                  ("ballot", ["mov_imm r11, 1", "and r12, r4, r11", "icmp_eq p2, r12, r11", "wave_ballot r20, p2"]),
                  ("any", ["mov_imm r11, 1", "and r12, r4, r11", "icmp_eq p2, r12, r11", "wave_any p3, p2",
                           "mov_imm r21, 1", "mov_imm r22, 0", "select r20, p3, r21, r22"]),
                  ("all", ["mov_imm r11, 1", "and r12, r4, r11", "icmp_eq p2, r12, r11", "wave_all p3, p2",
                           "mov_imm r21, 1", "mov_imm r22, 0", "select r20, p3, r21, r22"])]:
    for mname, (sel, m, k, mdesc) in MASKS.items():
        if op in ("any", "all") and mname == "lane":
            continue
        seed += 1
        # min/max use large values to check they are unsigned
        mx = 0 if op in ("reduce_min", "reduce_max") else (7 if op in ("any", "all") else 100000)
        if op == "all":
            mx = 3  # mostly-odd values so `all` is sometimes true
        program(f"{op}_{mname}", f"wave_{op} over the active lanes ({mdesc}); W-dependent oracle",
                64 if mname != "tid3" else 61, lines, (f"wave_op({op}, 0x0, {sel}, {m}, {k})", (sel, m, k)), seed, mx)
# ballot with `all` true pattern: all values odd
program("all_true_full", "wave_all is true when every active lane's predicate holds", 64,
        ["mov_imm r11, 1", "or r4, r4, r11", "and r12, r4, r11", "icmp_eq p2, r12, r11", "wave_all p3, p2",
         "mov_imm r21, 1", "mov_imm r22, 0", "select r20, p3, r21, r22"],
        (None, ("tid", 1, 1)), 99, 100, extra=["; @expect 0x1000:u32:1*64"])
# multi-workgroup prefix sum: each workgroup's waves are separate
program("prefix_sum_grid", "wave_prefix_sum in every wave of every workgroup (grid 3)", 48,
        ["wave_prefix_sum r20, r4"], ("wave_op(prefix_sum, 0x0, tid, 1, 1)", ("tid", 1, 1)), 77, 1000, grid=3)
program("count_partial_wave", "a reduction in a partial last wave sees only the live lanes (workgroup 37)", 37,
        ["mov_imm r4, 1", "wave_reduce_add r20, r4"], ("thread_special(live_lanes)", ("tid", 1, 1)), 5, 10)

for kind, param, pname in [("idx", 3, "idx"), ("up", 1, "up1"), ("up", 5, "up5"), ("down", 1, "down1"),
                           ("down", 7, "down7"), ("xor", 1, "xor1"), ("xor", 6, "xor6"), ("xor", 33, "xor33"),
                           ("broadcast", 2, "broadcast")]:
    instr = {"idx": "wave_shuffle", "up": "wave_shuffle_up", "down": "wave_shuffle_down",
             "xor": "wave_shuffle_xor", "broadcast": "wave_broadcast"}[kind]
    if kind == "idx":
        lane_lines = ["mov_imm r11, 5", "imul r17, r13, r11", f"mov_imm r11, {param}", "iadd r17, r17, r11",
                      "mov_imm r11, 63", "and r17, r17, r11"]
    elif kind == "broadcast":
        lane_lines = [f"mov_imm r11, {param}", "iadd r17, r13, r11"]
    else:
        lane_lines = [f"mov_imm r17, {param}"]
    for mname in ("full", "tid3") if kind != "idx" else ("full", "tid3", "val"):
        sel, m, k, mdesc = MASKS[mname]
        seed += 1
        program(f"shuffle_{pname}_{mname}", f"{instr} ({mdesc}); inactive source lanes are read, out of range gives 0",
                64, lane_lines + [f"{instr} r20, r4, r17"],
                (f"wave_shuffle({kind}, 0x0, {sel}, {m}, {k}, {param})", (sel, m, k)), seed, 100000)
print("ok")
