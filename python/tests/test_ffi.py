"""The ctypes declarations in wave_jit/_ffi.py match include/wave_jit.h (generated from the
Rust code, so the C ABI itself): the same functions, argument counts and return types."""

import ctypes
import pathlib
import re

import pytest

from wave_jit import _ffi

HEADER = pathlib.Path(__file__).resolve().parents[2] / "include" / "wave_jit.h"

RETURN_TYPES = {
    "void": None,
    "int32_t": ctypes.c_int32,
    "uint32_t": ctypes.c_uint32,
    "uint64_t": ctypes.c_uint64,
    "size_t": ctypes.c_size_t,
}


def declarations(text):
    """name -> (return type, number of parameters) of every function the header declares."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)
    found = {}
    for match in re.finditer(r"([A-Za-z_][\w \*]*?)\s*\b(wave_\w+)\(", text):
        start = match.end()
        depth, end = 1, start
        while depth:
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            end += 1
        params, returns = text[start : end - 1], match.group(1).strip()
        if not text[end:].lstrip().startswith(";"):
            continue
        top_level_commas = 0
        depth = 0
        for ch in params:
            depth += {"(": 1, ")": -1, "[": 1, "]": -1}.get(ch, 0)
            top_level_commas += ch == "," and depth == 0
        count = 0 if params.strip() in ("", "void") else top_level_commas + 1
        found[match.group(2)] = (returns, count)
    return found


@pytest.mark.skipif(not HEADER.is_file(), reason="not run from a wave-jit checkout")
def test_declarations_match_the_header():
    declared = declarations(HEADER.read_text())
    assert len(declared) >= 20
    assert set(declared) == set(_ffi.FUNCTIONS)
    for name, (returns, count) in declared.items():
        restype, argtypes = _ffi.FUNCTIONS[name]
        assert len(argtypes) == count, name
        if returns.endswith("*"):
            assert restype is ctypes.c_void_p, name
        else:
            assert restype is RETURN_TYPES[returns.replace("const", "").strip()], name
    defines = dict(re.findall(r"#define (WAVE_\w+) (\d+)", HEADER.read_text()))
    for name, value in defines.items():
        ours = name[len("WAVE_") :]
        assert getattr(_ffi, ours) == int(value), name
