#!/usr/bin/env python3
"""Generates the per-instruction edge-case programs of the conformance suite.

Each program runs one instruction once per thread on a row of operands (one row per thread)
and stores the result. Expected values are computed here, in plain Python, from the rules of
semantics.md (Part B, else Part A) -- independently of any engine. Re-run after editing:
    python3 conformance/tools/gen_alu.py
"""
import ctypes, math, os, struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "programs")
M32 = 0xFFFFFFFF

def s32(x): x &= M32; return x - (1 << 32) if x >> 31 else x
def u32(x): return x & M32
def fbits(x): return struct.unpack("<I", struct.pack("<f", x))[0]
def ffrom(b): return struct.unpack("<f", struct.pack("<I", b & M32))[0]
def f32(x): return ctypes.c_float(x).value
def dbits(x): return struct.unpack("<Q", struct.pack("<d", x))[0]
def dfrom(b): return struct.unpack("<d", struct.pack("<Q", b))[0]
def isnan_b(b): return (b & 0x7F800000) == 0x7F800000 and (b & 0x7FFFFF) != 0
NAN = 0x7FC00000; INF = 0x7F800000; NINF = 0xFF800000; NZ = 0x80000000
def F(x): return fbits(f32(x))

# ---------------------------------------------------------------- reference semantics (Python)
def idiv(a, b):
    a, b = s32(a), s32(b)
    if b == 0: return 0
    if a == -2**31 and b == -1: return u32(a)
    q = abs(a) // abs(b)
    return u32(q if (a < 0) == (b < 0) else -q)
def imod(a, b):
    a, b = s32(a), s32(b)
    if b == 0: return 0
    if a == -2**31 and b == -1: return 0
    r = abs(a) % abs(b)
    return u32(-r if a < 0 else r)
def fmin_b(a, b, is_max=False):
    if isnan_b(a) and isnan_b(b): return NAN
    if isnan_b(a): return b
    if isnan_b(b): return a
    x, y = ffrom(a), ffrom(b)
    if x == y: return a  # equal (incl. +0/-0): first operand
    return a if ((x > y) if is_max else (x < y)) else b
def fmax_b(a, b): return fmin_b(a, b, True)
def fop(a, b, f):
    x, y = ffrom(a), ffrom(b)
    if math.isnan(x) or math.isnan(y): return NAN
    try: r = f(x, y)
    except ZeroDivisionError:
        if x == 0 or math.isnan(x): return NAN
        neg = (math.copysign(1, x) < 0) != (math.copysign(1, y) < 0)
        return NINF if neg else INF
    except (OverflowError, ValueError): return NAN
    if math.isnan(r): return NAN
    return F(r)
def fadd(a, b):
    x, y = ffrom(a), ffrom(b)
    if math.isinf(x) and math.isinf(y) and x != y: return NAN
    return fop(a, b, lambda p, q: p + q)
def fsub(a, b): return fadd(a, b ^ 0x80000000) if not isnan_b(b) else NAN
def fmul(a, b):
    x, y = ffrom(a), ffrom(b)
    if (math.isinf(x) and y == 0) or (math.isinf(y) and x == 0): return NAN
    return fop(a, b, lambda p, q: p * q)
def fdiv(a, b):
    x, y = ffrom(a), ffrom(b)
    if math.isinf(x) and math.isinf(y): return NAN
    return fop(a, b, lambda p, q: p / q)
def fround(b):
    x = ffrom(b)
    if math.isnan(x) or math.isinf(x): return b
    r = math.floor(abs(x) + 0.5) if abs(x) < 2**23 else abs(x)
    return F(math.copysign(r, x))
def ftrunc(b):
    x = ffrom(b)
    if math.isnan(x) or math.isinf(x): return b
    return F(math.copysign(math.trunc(x), x))
def ffloor(b):
    x = ffrom(b)
    if math.isnan(x) or math.isinf(x) or x == 0: return b
    return F(float(math.floor(x)))
def fceil(b):
    x = ffrom(b)
    if math.isnan(x) or math.isinf(x): return b
    c = math.ceil(x)
    return F(-0.0) if (c == 0 and math.copysign(1, x) < 0) else F(c)
def cvt_i32_f32(b):
    x = ffrom(b)
    if math.isnan(x): return 0
    if x >= 2**31: return 0x7FFFFFFF
    if x <= -2**31: return 0x80000000
    return u32(math.trunc(x))
def cvt_u32_f32(b):
    x = ffrom(b)
    if math.isnan(x) or x <= 0: return 0
    if x >= 2**32: return M32
    return math.trunc(x)
def to_f16(x):  # f64/f32 value -> f16 bits, RNE; NaN -> 0x7E00
    if math.isnan(x): return 0x7E00
    try: return struct.unpack("<H", struct.pack("<e", x))[0]
    except OverflowError: return 0xFC00 if x < 0 else 0x7C00
def from_f16(h): return struct.unpack("<e", struct.pack("<H", h & 0xFFFF))[0]
def to_bf16(fb):  # f32 bits -> bf16 bits, RNE, NaN quiet
    if isnan_b(fb): return ((fb >> 16) | 0x40) & 0xFFFF
    lsb = (fb >> 16) & 1
    return ((fb + 0x7FFF + lsb) >> 16) & 0xFFFF
def bfe(s, o, w):
    w &= 31; o &= 31
    return (s >> o) & ((1 << w) - 1)
def bfi(base, ins, o, w):
    w &= 31; o &= 31
    mask = (((1 << w) - 1) << o) & M32
    return (base & ~mask & M32) | ((ins << o) & mask)
def clz(x):
    return M32 if x == 0 else 32 - x.bit_length()
def bitrev(x): return int(f"{x:032b}"[::-1], 2)

# ---------------------------------------------------------------- program writer
A, B, C, D, OUT = 0x0, 0x400, 0x800, 0xC00, 0x1000

def hexl(vals): return ",".join(f"0x{v:08x}" for v in vals)

def write(section, name, desc, op_lines, rows, expected, nin, exp_type="u32", extra_header=(), ulp=0):
    """rows: list of tuples of u32 inputs (nin each); expected: one u32 (or 'nan') per row."""
    n = len(rows)
    hdr = [f"; @desc {desc}", f"; @workgroup {n},1,1", "; @wave-width all"]
    for i, base in enumerate([A, B, C, D][:nin]):
        hdr.append(f"; @input 0x{base:x}:u32:{hexl([r[i] for r in rows])}")
    hdr.extend(extra_header)
    vals = []
    for e in expected:
        if e == "nan": vals.append("nan")
        else: vals.append(f"0x{e:08x}")
    tol = f" ulp={ulp}" if ulp else ""
    hdr.append(f"; @expect 0x{OUT:x}:{exp_type}:{','.join(vals)}{tol}")
    body = [".kernel test",
            "    mov_sr r1, sr_thread_id_x",
            "    mov_imm r2, 2",
            "    shl r3, r1, r2            ; r3 = 4 * tid",]
    for i, base in enumerate([A, B, C, D][:nin]):
        reg = 4 + i
        body += [f"    mov_imm r8, 0x{base:x}", "    iadd r9, r3, r8", f"    device_load_u32 r{reg}, r9"]
    body += ["    " + l for l in op_lines]
    body += [f"    mov_imm r8, 0x{OUT:x}", "    iadd r9, r3, r8", "    device_store_u32 r9, r20", ".end", ""]
    d = os.path.join(ROOT, section)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name + ".wave"), "w") as f:
        f.write("\n".join(hdr) + "\n" + "\n".join(body))

def binop(section, mn, desc, rows, fn, exp_type="u32"):
    write(section, mn, desc, [f"{mn} r20, r4, r5"], rows, [fn(*r) for r in rows], 2, exp_type)
def unop(section, mn, desc, vals, fn, name=None, exp_type="u32"):
    rows = [(v,) for v in vals]
    write(section, name or mn, desc, [f"{mn} r20, r4"], rows, [fn(v) for v in vals], 1, exp_type)
def triop(section, mn, desc, rows, fn, name=None):
    write(section, name or mn, desc, [f"{mn} r20, r4, r5, r6"], rows, [fn(*r) for r in rows], 3)

IMIN, IMAX = 0x80000000, 0x7FFFFFFF
ints = [0, 1, 2, 7, M32, u32(-7), IMIN, IMAX, 0x12345678, 0xDEADBEEF, 0x10000, u32(-2)]
pairs = [(a, b) for a in [0, 1, M32, IMIN, IMAX, u32(-7), 7, 0x12345678] for b in [0, 1, M32, IMIN, IMAX, 2, u32(-2), 3]]

# ---------------------------------------------------------------- 6.2 integer
S = "integer"
binop(S, "iadd", "iadd wraps modulo 2^32", pairs, lambda a, b: u32(a + b))
binop(S, "isub", "isub wraps modulo 2^32", pairs, lambda a, b: u32(a - b))
binop(S, "imul", "imul keeps the low 32 bits", pairs, lambda a, b: u32(a * b))
binop(S, "imul_hi", "imul_hi is the UNSIGNED high word (Part A 5.2)", pairs + [(M32, M32), (u32(-2), 3)],
      lambda a, b: (a * b) >> 32)
binop(S, "idiv", "idiv truncates; x/0 = 0; INT_MIN/-1 = INT_MIN", pairs + [(u32(-7), 2), (7, u32(-2))], idiv)
binop(S, "imod", "imod sign follows dividend; x%0 = 0; INT_MIN%-1 = 0", pairs + [(u32(-7), 2), (7, u32(-2))], imod)
unop(S, "ineg", "ineg wraps (INT_MIN stays INT_MIN)", ints, lambda a: u32(-a))
unop(S, "iabs", "iabs wraps (iabs INT_MIN = INT_MIN)", ints, lambda a: u32(abs(s32(a))))
binop(S, "imin", "imin is signed", pairs, lambda a, b: u32(min(s32(a), s32(b))))
binop(S, "imax", "imax is signed", pairs, lambda a, b: u32(max(s32(a), s32(b))))
imad_rows = [(a, b, c) for (a, b) in pairs[::3] for c in [0, 1, M32, IMIN]]
triop(S, "imad", "imad = a*b + c, wrapping", imad_rows, lambda a, b, c: u32(a * b + c))
clamp_rows = [(x, lo, hi) for x in [0, 5, u32(-5), IMIN, IMAX, 100] for (lo, hi) in [(0, 10), (u32(-3), 3), (IMIN, IMAX), (10, 0), (7, 7)]]
triop(S, "iclamp", "iclamp = min(max(x, lo), hi), signed; lo > hi gives hi (B.13)", clamp_rows,
      lambda x, lo, hi: u32(min(max(s32(x), s32(lo)), s32(hi))))

# ---------------------------------------------------------------- 6.3 bitwise
S = "bitwise"
binop(S, "and", "and", pairs, lambda a, b: a & b)
binop(S, "or", "or", pairs, lambda a, b: a | b)
binop(S, "xor", "xor", pairs, lambda a, b: a ^ b)
unop(S, "not", "not", ints, lambda a: ~a & M32)
sh = [(v, s) for v in [1, 0x80000001, M32, 0x12345678] for s in [0, 1, 4, 31, 32, 33, 63, 0xFFFFFFE1]]
binop(S, "shl", "shl masks the shift to 5 bits (32 -> 0, 33 -> 1)", sh, lambda a, b: u32(a << (b & 31)))
binop(S, "shr", "shr is logical, shift masked to 5 bits", sh, lambda a, b: a >> (b & 31))
binop(S, "sar", "sar is arithmetic, shift masked to 5 bits", sh, lambda a, b: u32(s32(a) >> (b & 31)))
bits = [0, 1, 2, 3, M32, IMIN, IMAX, 0x00010000, 0x12345678, 0xF0F0F0F0, 0x80, 0x40000000]
unop(S, "bitcount", "bitcount = population count", bits, lambda a: bin(a).count("1"))
unop(S, "bitfind", "bitfind = count of leading zeros; 0 -> 0xFFFFFFFF (Part A 5.2)", bits, clz)
unop(S, "bitrev", "bitrev reverses all 32 bits", bits, bitrev)
bfe_rows = [(s, o, w) for s in [0xDEADBEEF, M32] for (o, w) in [(0, 8), (4, 8), (28, 8), (0, 0), (0, 32), (8, 31), (31, 1), (32, 4), (36, 4), (0, 33)]]
triop(S, "bfe", "bfe: unsigned extract, offset and width masked to 5 bits (width 32 -> 0)", bfe_rows,
      lambda s, o, w: bfe(s, o, w))
bfi_rows = [(b, i, o, w) for b in [0xFFFFFFFF, 0x12345678] for (i, o, w) in [(0, 0, 8), (0xAB, 8, 8), (0xFF, 28, 8), (0x5, 0, 0), (0x3, 31, 2), (1, 0, 32), (0xF, 32, 4), (0x7, 4, 36)]]
write(S, "bfi", "bfi: insert width&31 low bits at offset&31; bits past 31 are lost; width 0 keeps base",
      ["bfi r20, r4, r5, r6, r7"], bfi_rows, [bfi(*r) for r in bfi_rows], 4)

# ---------------------------------------------------------------- 6.8 compares
S = "compare"
def cmp_prog(mn, rows, fn):
    write(S, mn, f"{mn} sets a predicate (read back with select)",
          [f"{mn} p1, r4, r5", "mov_imm r10, 1", "mov_imm r11, 0", "select r20, p1, r10, r11"],
          rows, [1 if fn(*r) else 0 for r in rows], 2)
ipairs = [(a, b) for a in [0, 1, M32, IMIN, IMAX, 5] for b in [0, 1, M32, IMIN, IMAX, 5]]
cmp_prog("icmp_eq", ipairs, lambda a, b: a == b)
cmp_prog("icmp_ne", ipairs, lambda a, b: a != b)
cmp_prog("icmp_lt", ipairs, lambda a, b: s32(a) < s32(b))
cmp_prog("icmp_le", ipairs, lambda a, b: s32(a) <= s32(b))
cmp_prog("icmp_gt", ipairs, lambda a, b: s32(a) > s32(b))
cmp_prog("icmp_ge", ipairs, lambda a, b: s32(a) >= s32(b))
cmp_prog("ucmp_lt", ipairs, lambda a, b: a < b)
cmp_prog("ucmp_le", ipairs, lambda a, b: a <= b)
fvals = [F(0.0), NZ, F(1.0), F(-1.0), INF, NINF, NAN, 0x00000001]
fpairs = [(a, b) for a in fvals for b in fvals]
def fc(fn):
    return lambda a, b: (not isnan_b(a) and not isnan_b(b) and fn(ffrom(a), ffrom(b)))
cmp_prog("fcmp_eq", fpairs, fc(lambda x, y: x == y))
cmp_prog("fcmp_ne", fpairs, lambda a, b: isnan_b(a) or isnan_b(b) or ffrom(a) != ffrom(b))
cmp_prog("fcmp_lt", fpairs, fc(lambda x, y: x < y))
cmp_prog("fcmp_le", fpairs, fc(lambda x, y: x <= y))
cmp_prog("fcmp_gt", fpairs, fc(lambda x, y: x > y))
cmp_prog("fcmp_ord", fpairs, lambda a, b: not isnan_b(a) and not isnan_b(b))
cmp_prog("fcmp_unord", fpairs, lambda a, b: isnan_b(a) or isnan_b(b))
sel_rows = [(a, b, c) for a in [0, 1, 2, M32] for (b, c) in [(0x11, 0x22), (0, M32)]]
write(S, "select", "select rd, p, a, b picks a where p (here p = x odd)",
      ["mov_imm r10, 1", "and r11, r4, r10", "icmp_eq p2, r11, r10", "select r20, p2, r5, r6"],
      sel_rows, [b if a & 1 else c for (a, b, c) in sel_rows], 3)

# ---------------------------------------------------------------- 6.4 f32
S = "float"
fv = [F(0.0), NZ, F(1.0), F(-1.0), F(1.5), F(-2.5), INF, NINF, NAN, 0x00000001, 0x807FFFFF, 0x7F7FFFFF, F(3.0), F(1e-30)]
fp = [(a, b) for a in fv for b in fv]
def ex(v): return ["nan" if isnan_b(x) else x for x in v]
def fbin(mn, desc, fn, rows=fp):
    write(S, mn, desc, [f"{mn} r20, r4, r5"], rows, ex([fn(*r) for r in rows]), 2, "f32")
fbin("fadd", "fadd IEEE RNE incl. inf-inf = NaN, denormals kept", fadd)
fbin("fsub", "fsub IEEE RNE, denormals kept", fsub)
fbin("fmul", "fmul IEEE RNE, 0*inf = NaN, denormal results kept", fmul)
fbin("fdiv", "fdiv IEEE: x/+-0 = +-inf by sign, 0/0 = NaN (B.12)", fdiv)
fbin("fmin", "fmin = minNum; equal zeros give the first operand", fmin_b)
fbin("fmax", "fmax = maxNum; equal zeros give the first operand", fmax_b)
fma_rows = [(F(1 + 2**-23), F(1 - 2**-23), F(-1.0)), (F(2.0), F(3.0), F(4.0)), (F(0.1), F(10.0), F(-1.0)),
            (INF, F(0.0), F(1.0)), (F(1.0), F(1.0), NAN), (INF, F(1.0), NINF), (F(-0.0), F(1.0), F(0.0)),
            (F(1e-20), F(1e-20), F(0.0)), (0x7F7FFFFF, F(2.0), NINF), (F(3.0), F(-0.0), F(-0.0))]
def fma_ref(a, b, c):
    x, y, z = ffrom(a), ffrom(b), ffrom(c)
    if any(math.isnan(v) for v in (x, y, z)): return NAN
    if (math.isinf(x) and y == 0) or (math.isinf(y) and x == 0): return NAN
    p = x * y
    if math.isinf(p) or math.isinf(z):
        if math.isinf(p) and math.isinf(z) and p != z: return NAN
        return F(p + z)
    from fractions import Fraction
    r = Fraction(x) * Fraction(y) + Fraction(z)
    if r == 0:
        neg = (math.copysign(1, x) * math.copysign(1, y) < 0) and math.copysign(1, z) < 0
        return NZ if neg else 0
    return F(float(r))
write(S, "fma", "fma is fused (single rounding)", ["fma r20, r4, r5, r6"], fma_rows, ex([fma_ref(*r) for r in fma_rows]), 3, "f32")
fcl = [(x, lo, hi) for x in [F(0.5), F(-3.0), F(7.0), NAN, NZ, INF] for (lo, hi) in [(F(0.0), F(1.0)), (F(2.0), F(1.0)), (NAN, F(1.0)), (F(0.0), NAN)]]
write(S, "fclamp", "fclamp = fmin(fmax(x, lo), hi) with minNum rules; lo > hi and NaN bounds are defined (B.13)",
      ["fclamp r20, r4, r5, r6"], fcl, ex([fmin_b(fmax_b(x, lo), hi) for (x, lo, hi) in fcl]), 3, "f32")
uv = [F(0.0), NZ, F(1.0), F(-1.0), F(2.5), F(-2.5), F(0.5), F(-0.5), F(1.25), F(-1.25), INF, NINF, NAN, 0x00000001, F(4.0), F(8388609.0), F(0.49999997), F(-7.75)]
def fun(mn, desc, fn, vals=uv, name=None):
    write(S, name or mn, desc, [f"{mn} r20, r4"], [(v,) for v in vals], ex([fn(v) for v in vals]), 1, "f32")
fun("fneg", "fneg flips the sign (also of zeros and infinities)", lambda b: b ^ 0x80000000 if not isnan_b(b) else NAN)
fun("fabs", "fabs clears the sign", lambda b: b & 0x7FFFFFFF if not isnan_b(b) else NAN)
def fsqrt(b):
    x = ffrom(b)
    if math.isnan(x) or (x < 0): return NAN
    if math.isinf(x): return b
    if x == 0: return b
    return F(math.sqrt(x))
fun("fsqrt", "fsqrt IEEE: sqrt(-0) = -0, sqrt(-1) = NaN", fsqrt)
def frcp(b):
    x = ffrom(b)
    if math.isnan(x): return NAN
    if x == 0: return NINF if b >> 31 else INF
    if math.isinf(x): return NZ if b >> 31 else 0
    return F(1.0 / x)
fun("frcp", "frcp = exact IEEE 1/x", frcp)
def frsqrt(b):
    s = fsqrt(b)
    if s == NAN: return NAN
    return frcp(s)
rs = [F(1.0), F(4.0), F(2.0), F(0.0), F(-1.0), INF, NAN, F(0.25), F(3.0), F(100.0), 0x00000001]
fun("frsqrt", "frsqrt = 1/sqrt(x) with two roundings; 0 -> inf, negative -> NaN", frsqrt, rs)
fun("ffloor", "ffloor IEEE", ffloor)
fun("fceil", "fceil IEEE (ceil(-0.5) = -0)", fceil)
fun("ftrunc", "ftrunc IEEE", ftrunc)
fun("fround", "fround rounds half away from zero", fround)
def ffract(b):
    t = ftrunc(b)
    if isnan_b(b): return NAN
    return fsub(b, t)
fun("ffract", "ffract = x - trunc(x)", ffract)
def fsat(b):
    if isnan_b(b): return NAN
    x = ffrom(b)
    if x < 0: return 0
    if x > 1: return F(1.0)
    return b
fun("fsat", "fsat clamps to [0,1], NaN passes, -0 stays -0", fsat)

# ---------------------------------------------------------------- 6.7 conversions
S = "convert"
ci = [0, 1, M32, IMIN, IMAX, 16777217, u32(-16777217), 0x7FFFFFC0, 12345, u32(-3)]
unop(S, "cvt_f32_i32", "cvt_f32_i32 rounds to nearest even", ci, lambda a: F(float(s32(a))))
unop(S, "cvt_f32_u32", "cvt_f32_u32 rounds to nearest even", ci, lambda a: F(float(a)))
cf = [F(0.0), NZ, F(1.9), F(-1.9), F(2.5e9), F(-2.5e9), F(4.5e9), INF, NINF, NAN, F(2147483520.0), F(-2147483648.0), F(0.999), 0x00000001]
unop(S, "cvt_i32_f32", "cvt_i32_f32 truncates, saturates, NaN -> 0", cf, cvt_i32_f32)
unop(S, "cvt_u32_f32", "cvt_u32_f32 truncates, negative -> 0, saturates, NaN -> 0", cf, cvt_u32_f32)
hf = [F(0.0), NZ, F(1.0), F(-2.0), F(65504.0), F(65520.0), F(1e6), NINF, NAN, F(6e-8), F(2.98e-8), F(1e-9), F(1.0009765625), F(1.00048828125), F(1.00146484375), F(0.333333333)]
unop(S, "cvt_f16_f32", "cvt_f16_f32: RNE, overflow -> inf, subnormals, NaN -> 0x7E00, zero-extended", hf,
     lambda b: to_f16(ffrom(b)))
hh = [0x0000, 0x8000, 0x3C00, 0xC000, 0x7BFF, 0x7C00, 0xFC00, 0x0001, 0x03FF, 0x3555, 0xABCD3C00, 0xFFFF4000]
unop(S, "cvt_f32_f16", "cvt_f32_f16 is exact and uses the low 16 bits only", hh, lambda h: fbits(from_f16(h)))
bf = [F(1.0), F(-2.0), 0x3F808000, 0x3F818000, 0x3F80FFFF, 0x3F807FFF, 0x7F7FFFFF, INF, NINF, NZ, 0x00000001, 0x40490FDB]
unop(S, "cvt_bf16_f32", "cvt_bf16_f32 rounds to nearest even (B.14)", bf, to_bf16)
unop(S, "cvt_f32_bf16", "cvt_f32_bf16 shifts left 16 (exact)", [0x3F80, 0xC000, 0x7F80, 0x0001, 0xFFFF3F80], lambda h: (h & 0xFFFF) << 16)
write(S, "cvt_bf16_f32_nan", "cvt_bf16_f32 keeps NaN a NaN, even with the payload only in the low bits (B.14)",
      ["cvt_bf16_f32 r10, r4", "cvt_f32_bf16 r20, r10"], [(0x7F800001,), (0xFF800001,), (NAN,), (0x7FFFFFFF,)], ["nan"] * 4, 1, "f32")
# f64 <-> f32 through register pairs
d_in = [1.0, -2.5, 1e300, -1e-300, 3.0000000000000004, float("inf"), 0.1, -0.0]
rows = [(dbits(x) & M32, dbits(x) >> 32) for x in d_in]
write(S, "cvt_f32_f64", "cvt_f32_f64 reads a register pair (low, high) and rounds to nearest",
      ["mov r12, r4", "mov r13, r5", "cvt_f32_f64 r20, r12"], rows, [F(x) for x in d_in], 2, "f32")
f_in = [F(1.0), F(-2.5), INF, F(0.1), NZ, 0x00000001]
write(S, "cvt_f64_f32_lo", "cvt_f64_f32 writes the low word to rd", ["cvt_f64_f32 r20, r4"], [(v,) for v in f_in],
      [dbits(ffrom(v)) & M32 for v in f_in], 1)
write(S, "cvt_f64_f32_hi", "cvt_f64_f32 writes the high word to rd+1", ["cvt_f64_f32 r19, r4"], [(v,) for v in f_in],
      [dbits(ffrom(v)) >> 32 for v in f_in], 1)

# ---------------------------------------------------------------- 6.5 f16, bf16 arithmetic
S = "half"
def h_arith(a, b, op, c=None):
    x, y = from_f16(a), from_f16(b)
    if op == "add": r = f32(x + y)
    elif op == "sub": r = f32(x - y)
    elif op == "mul": r = f32(x * y)
    else: r = f32(x * y + from_f16(c))
    return to_f16(r)
H = [0x3C00, 0x4000, 0xBC00, 0x7BFF, 0x0001, 0x3555, 0x8000, 0x7C00, 0x4248]
hrows = [(a | 0xABCD0000, b) for a in H for b in H[:5]]
for op in ("add", "sub", "mul"):
    write(S, "h" + op, f"h{op}: low halves as f16, computed in f32, rounded RNE to f16, zero-extended",
          [f"h{op} r20, r4, r5"], hrows, [h_arith(a & 0xFFFF, b, op) for (a, b) in hrows], 2)
hma_rows = [(a, b, c) for (a, b) in [(0x3C00, 0x4000), (0x3555, 0x4200), (0x7BFF, 0x4000), (0x0001, 0x3800)] for c in [0x3C00, 0xBC00, 0x0000]]
triop(S, "hma", "hma = f16(fma_f32(a, b, c))", hma_rows, lambda a, b, c: h_arith(a, b, "ma", c))
def packed(a, b, op, c=0):
    lo = h_arith(a & 0xFFFF, b & 0xFFFF, op, c & 0xFFFF)
    hi = h_arith(a >> 16, b >> 16, op, c >> 16)
    return lo | hi << 16
prow = [(0x3C004000, 0x40003C00), (0x7BFF0001, 0x40003800), (0xBC003555, 0x3C003C00), (0x7C000000, 0x3C000000)]
write(S, "hadd2", "hadd2 adds low and high halves independently", ["hadd2 r20, r4, r5"], prow, [packed(a, b, "add") for a, b in prow], 2)
write(S, "hmul2", "hmul2 multiplies low and high halves independently", ["hmul2 r20, r4, r5"], prow, [packed(a, b, "mul") for a, b in prow], 2)
p3 = [(a, b, 0x3C00BC00) for a, b in prow]
write(S, "hma2", "hma2 per half fma", ["hma2 r20, r4, r5, r6"], p3, [packed(a, b, "ma", c) for a, b, c in p3], 3)

S = "bfloat"
def b_arith(a, b, op, c=None):
    x, y = ffrom((a & 0xFFFF) << 16), ffrom((b & 0xFFFF) << 16)
    if op == "add": r = fadd(fbits(x), fbits(y))
    elif op == "sub": r = fsub(fbits(x), fbits(y))
    elif op == "mul": r = fmul(fbits(x), fbits(y))
    else: r = fma_ref(fbits(x), fbits(y), (c & 0xFFFF) << 16)
    return to_bf16(r)
BV = [0x3F80, 0x4000, 0xBF80, 0x3F81, 0x4049, 0x7F7F, 0x0000, 0x3C00]
brows = [(a, b) for a in BV for b in BV[:4]]
for op in ("add", "sub", "mul"):
    write(S, "b" + op, f"b{op}: computed in f32, rounded RNE to bf16 (B.14)", [f"b{op} r20, r4, r5"], brows,
          [b_arith(a, b, op) for (a, b) in brows], 2)
bma_rows = [(a, b, c) for (a, b) in [(0x3F81, 0x3F81), (0x4049, 0x4049), (0x3F80, 0x3C00)] for c in [0x3F80, 0xBF80]]
triop(S, "bma", "bma = bf16_rne(fma_f32(a, b, c))", bma_rows, lambda a, b, c: b_arith(a, b, "ma", c))
def bpacked(a, b, op, c=0):
    return b_arith(a & 0xFFFF, b & 0xFFFF, op, c & 0xFFFF) | b_arith(a >> 16, b >> 16, op, c >> 16) << 16
bprow = [(0x3F804000, 0x40003F80), (0x3F813F81, 0x3F813F80), (0x40490000, 0x3F80BF80)]
write(S, "badd2", "badd2 per half", ["badd2 r20, r4, r5"], bprow, [bpacked(a, b, "add") for a, b in bprow], 2)
write(S, "bmul2", "bmul2 per half", ["bmul2 r20, r4, r5"], bprow, [bpacked(a, b, "mul") for a, b in bprow], 2)
bp3 = [(a, b, 0x3F80BF80) for a, b in bprow]
write(S, "bma2", "bma2 per half", ["bma2 r20, r4, r5, r6"], bp3, [bpacked(a, b, "ma", c) for a, b, c in bp3], 3)

# ---------------------------------------------------------------- 6.6 f64
S = "double"
def drows(pairs_):
    return [(dbits(x) & M32, dbits(x) >> 32, dbits(y) & M32, dbits(y) >> 32) for x, y in pairs_]
DV = [(1.0, 2.0), (0.1, 0.2), (1e308, 10.0), (-0.0, 2.0), (1.5, -0.0), (float("inf"), 2.0), (3.0, 7.0), (5e-324, 0.5)]
def dop(x, y, op):
    try:
        r = {"add": lambda: x + y, "sub": lambda: x - y, "mul": lambda: x * y, "div": lambda: x / y}[op]()
    except ZeroDivisionError:
        r = math.nan if x == 0 else math.copysign(math.inf, x) * math.copysign(1, y)
    except OverflowError:
        r = math.inf
    return dbits(r) if not math.isnan(r) else None
for op in ("add", "sub", "mul", "div"):
    for part, nm in ((0, "lo"), (1, "hi")):
        res = [dop(x, y, op) for x, y in DV]
        exp = []
        for r in res:
            if r is None: exp.append(0x7FF80000 if part else 0)
            else: exp.append((r >> (32 * part)) & M32)
        lines = ["mov r12, r4", "mov r13, r5", "mov r14, r6", "mov r15, r7", f"d{op} r16, r12, r14",
                 f"mov r20, r{16 + part}"]
        assert not any(r is None for r in res), op
        write(S, f"d{op}_{nm}", f"d{op} on register pairs (IEEE f64), {'high' if part else 'low'} word",
              lines, drows(DV), exp, 4)
sq = [4.0, 2.0, 1e-310, 0.0, -0.0, float("inf"), 1e300]
for part, nm in ((0, "lo"), (1, "hi")):
    rows = [(dbits(x) & M32, dbits(x) >> 32) for x in sq]
    write(S, f"dsqrt_{nm}", f"dsqrt IEEE, {'high' if part else 'low'} word",
          ["mov r12, r4", "mov r13, r5", "dsqrt r16, r12", f"mov r20, r{16 + part}"], rows,
          [(dbits(math.sqrt(x)) >> (32 * part)) & M32 for x in sq], 2)
dma = [(1.0 + 2**-52, 1.0 - 2**-52, -1.0), (2.0, 3.0, 4.0), (0.1, 10.0, -1.0)]
def dma_ref(x, y, z):
    from fractions import Fraction
    return dbits(float(Fraction(x) * Fraction(y) + Fraction(z)))
for part, nm in ((0, "lo"), (1, "hi")):
    rows = [(dbits(x) & M32, dbits(x) >> 32, dbits(y) & M32, dbits(y) >> 32) for x, y, _ in dma]
    cs = [dbits(z) for _, _, z in dma]
    # c comes from a constant pair built in registers: load it from C (low) and D (high)
    rows = [r[:2] + (r[2],) + (r[3],) for r in rows]
    write(S, f"dma_{nm}", f"dma is fused (single rounding), {'high' if part else 'low'} word",
          ["mov r12, r4", "mov r13, r5", "mov r14, r6", "mov r15, r7",
           "mov_imm r8, 0x1400", "iadd r9, r3, r8", "iadd r9, r9, r3", "device_load_u64 r22, r9",
           "dma r16, r12, r14, r22", f"mov r20, r{16 + part}"],
          rows, [(dma_ref(*t) >> (32 * part)) & M32 for t in dma], 4,
          extra_header=[f"; @input 0x1400:u64:{','.join(hex(c) for c in cs)}"])
print("generated")
