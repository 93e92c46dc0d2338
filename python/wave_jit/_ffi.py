"""The C ABI of libwave_jit.so (include/wave_jit.h), declared for ctypes.

The library is the one shipped inside this package (the wheel puts it in ``_native/``), or
the one named by the environment variable ``WAVE_JIT_LIBRARY`` (for running from a checkout:
``cargo build`` makes ``target/debug/libwave_jit.so``). tests/test_ffi.py checks these
declarations against the header.
"""

import ctypes
import glob
import os
import struct
import sys

# Status codes (WAVE_OK, WAVE_ERROR_*).
OK = 0
ERROR_ARGUMENT = 1
ERROR_OUT_OF_MEMORY = 2
ERROR_LOAD = 3
ERROR_WRITE = 4
ERROR_RUN = 5
ERROR_READ = 6
ERROR_NOT_FOUND = 7
ERROR_INTERNAL = 8

ENGINE_JIT = 0
ENGINE_INTERPRETER = 1

ARG_BUFFER = 0
ARG_U32 = 1
ARG_I32 = 2
ARG_F32 = 3
ARG_HOST = 4


class WaveHostArray(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("len", ctypes.c_uint64),
        ("align", ctypes.c_uint32),
        ("copy_back", ctypes.c_uint32),
    ]


class WaveArgValue(ctypes.Union):
    _fields_ = [
        ("buffer", ctypes.c_void_p),
        ("uint32", ctypes.c_uint32),
        ("int32", ctypes.c_int32),
        ("float32", ctypes.c_float),
        ("host", WaveHostArray),
    ]


class WaveArg(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_uint32), ("value", WaveArgValue)]


class WaveLaunchOptions(ctypes.Structure):
    _fields_ = [
        ("wave_width", ctypes.c_uint32),
        ("unchecked", ctypes.c_uint32),
        ("max_instructions", ctypes.c_uint64),
    ]


# Launch arguments are packed with `struct` (much faster than filling ctypes structures): one
# WaveArg is kind, padding, then the union, whose members all start at its first byte.
ARG = struct.Struct("<I4xQQII")
assert ARG.size == ctypes.sizeof(WaveArg)
assert WaveArg.value.offset == 8 and WaveHostArray.len.offset == 8
assert WaveHostArray.align.offset == 16 and WaveHostArray.copy_back.offset == 20
DIMS = struct.Struct("<3I")
OPTIONS = struct.Struct("<IIQ")
assert OPTIONS.size == ctypes.sizeof(WaveLaunchOptions)

_p = ctypes.c_void_p
_u32 = ctypes.c_uint32
_u64 = ctypes.c_uint64
_i32 = ctypes.c_int32
_size = ctypes.c_size_t
_str = ctypes.c_char_p
_out = ctypes.POINTER(ctypes.c_void_p)

# name: (restype, argtypes), in the header's order.
FUNCTIONS = {
    "wave_last_error": (_p, [ctypes.POINTER(_size)]),
    "wave_emulate": (_i32, [_p, _size, _p, _size, _p, _size, _p, _p]),
    "wave_device_new": (_i32, [_u64, _u32, _u32, _out]),
    "wave_device_free": (None, [_p]),
    "wave_device_memory_size": (_u64, [_p]),
    "wave_device_write": (_i32, [_p, _u64, _p, _size]),
    "wave_device_read": (_i32, [_p, _u64, _p, _size]),
    "wave_module_load": (_i32, [_p, _size, _str, _out]),
    "wave_module_load_file": (_i32, [_str, _out]),
    "wave_module_free": (None, [_p]),
    "wave_module_kernel_count": (_size, [_p]),
    "wave_module_kernel": (_i32, [_p, _str, _out]),
    "wave_module_kernel_at": (_i32, [_p, _size, _out]),
    "wave_kernel_free": (None, [_p]),
    "wave_kernel_name": (_p, [_p, ctypes.POINTER(_size)]),
    "wave_kernel_registers": (_u32, [_p]),
    "wave_buffer_alloc": (_i32, [_p, _u64, _u64, _out]),
    "wave_buffer_free": (None, [_p]),
    "wave_buffer_address": (_u32, [_p]),
    "wave_buffer_size": (_u64, [_p]),
    "wave_buffer_write": (_i32, [_p, _u64, _p, _size]),
    "wave_buffer_read": (_i32, [_p, _u64, _p, _size]),
    "wave_launch": (_i32, [_p, _p, _p, _p, _p, _size, _p]),
    "wave_assemble": (_i32, [_p, _size, _str, _out, ctypes.POINTER(_size)]),
    "wave_free": (None, [_p, _size]),
}


def _library_file():
    if sys.platform == "darwin":
        return "libwave_jit.dylib", "lib*.dylib"
    if sys.platform == "win32":
        return "wave_jit.dll", "*.dll"
    return "libwave_jit.so", "lib*.so"


def library_path():
    """The path of the C library this package loads."""
    explicit = os.environ.get("WAVE_JIT_LIBRARY")
    if explicit:
        return explicit
    name, pattern = _library_file()
    native = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_native")
    found = sorted(glob.glob(os.path.join(native, pattern)))
    if found:
        return found[0]
    raise ImportError(
        "wave_jit: the C library %s is not in %s; install the package with "
        "`pip install ./python` from a wave-jit checkout, or set WAVE_JIT_LIBRARY to a built "
        "libwave_jit (cargo build makes target/debug/%s)" % (name, native, name)
    )


def load():
    """Load the library and declare every function."""
    lib = ctypes.CDLL(library_path())
    for name, (restype, argtypes) in FUNCTIONS.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes
    return lib


lib = load()


def last_error():
    """The message of the last failed call on this thread."""
    length = _size(0)
    pointer = lib.wave_last_error(ctypes.byref(length))
    if not pointer or length.value == 0:
        return ""
    return ctypes.string_at(pointer, length.value).decode("utf-8", errors="replace")
