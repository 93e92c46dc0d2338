"""wave_jit: run WAVE GPU kernels on the CPU, from Python.

A thin layer over the C ABI of libwave_jit.so (the same library C programs link to)::

    import numpy as np
    import wave_jit

    dev = wave_jit.Device()
    mod = dev.load("examples/axpy.wave")          # a path, or .wbin / .wave bytes
    axpy = mod["axpy"]                            # by name, or mod[0]
    x = np.arange(1000, dtype=np.float32)
    y = np.ones(1000, dtype=np.float32)
    out = np.empty_like(x)
    axpy(x, y, out, 1000, 2.0, grid=(4, 1, 1), workgroup=(256, 1, 1))

Argument ``i`` of a call is the initial value of register ``i`` in every thread (the reference
runtime's convention). A numpy array becomes a buffer: the arrays of a call are copied into
device memory one after another from address 0 (each at the next multiple of its element
size), the register gets the array's device address, and after the launch every writeable
array gets the device's bytes back (read-only arrays are inputs only). A Python ``int``
becomes a ``u32`` (or an ``i32`` when negative), a ``float`` an ``f32``; numpy scalars likewise.
Launches are synchronous. Failures raise :class:`WaveError` subclasses whose message says what
and where (file:line of an assembly error; kernel, workgroup, wave, lane and pc of a failed
launch).
"""

import ctypes
import os
import struct

import numpy as np

from . import _ffi
from ._ffi import lib as _lib
from ._ffi import library_path

__all__ = [
    "Device",
    "Module",
    "Kernel",
    "assemble",
    "library_path",
    "WaveError",
    "InvalidArgument",
    "OutOfDeviceMemory",
    "LoadError",
    "MemoryAccessError",
    "LaunchError",
    "KernelNotFound",
    "InternalError",
]


class WaveError(RuntimeError):
    """A failed call into wave-jit. ``status`` is the C ABI's status code."""

    status = None

    def __init__(self, message, status=None):
        super().__init__(message)
        if status is not None:
            self.status = status


class InvalidArgument(WaveError, ValueError):
    """A bad argument (WAVE_ERROR_ARGUMENT)."""

    status = _ffi.ERROR_ARGUMENT


class OutOfDeviceMemory(WaveError, MemoryError):
    """Device memory is exhausted (WAVE_ERROR_OUT_OF_MEMORY): make the Device larger."""

    status = _ffi.ERROR_OUT_OF_MEMORY


class LoadError(WaveError):
    """A binary or source that does not load (WAVE_ERROR_LOAD)."""

    status = _ffi.ERROR_LOAD


class MemoryAccessError(WaveError):
    """Device memory that cannot be written or read (WAVE_ERROR_WRITE / WAVE_ERROR_READ)."""


class LaunchError(WaveError):
    """A launch that was rejected or stopped by an error (WAVE_ERROR_RUN)."""

    status = _ffi.ERROR_RUN


class KernelNotFound(WaveError, LookupError):
    """No kernel with that name or index (WAVE_ERROR_NOT_FOUND)."""

    status = _ffi.ERROR_NOT_FOUND


class InternalError(WaveError):
    """A bug in wave-jit (WAVE_ERROR_INTERNAL); please report the message."""

    status = _ffi.ERROR_INTERNAL


_ERRORS = {
    _ffi.ERROR_ARGUMENT: InvalidArgument,
    _ffi.ERROR_OUT_OF_MEMORY: OutOfDeviceMemory,
    _ffi.ERROR_LOAD: LoadError,
    _ffi.ERROR_WRITE: MemoryAccessError,
    _ffi.ERROR_RUN: LaunchError,
    _ffi.ERROR_READ: MemoryAccessError,
    _ffi.ERROR_NOT_FOUND: KernelNotFound,
    _ffi.ERROR_INTERNAL: InternalError,
}


def _check(status):
    if status != _ffi.OK:
        raise _ERRORS.get(status, WaveError)(_ffi.last_error(), status)


_ENGINES = {"jit": _ffi.ENGINE_JIT, "interp": _ffi.ENGINE_INTERPRETER, "interpreter": _ffi.ENGINE_INTERPRETER}


def assemble(source, name="<source>"):
    """Assemble ``.wave`` source (str) into ``.wbin`` bytes; errors name ``name:line:column``."""
    data = source.encode("utf-8")
    wbin = ctypes.c_void_p()
    length = ctypes.c_size_t(0)
    _check(_lib.wave_assemble(data, len(data), name.encode("utf-8"), ctypes.byref(wbin), ctypes.byref(length)))
    try:
        return ctypes.string_at(wbin.value, length.value)
    finally:
        _lib.wave_free(wbin.value, length.value)


class Device:
    """A WAVE device on the CPU: device memory and an engine.

    ``memory``: bytes of device memory (default 256 MiB; pages are backed only when touched;
    at most 4 GiB). ``threads``: JIT worker threads (0 = all cores). ``engine``: ``"jit"`` or
    ``"interp"`` (the reference interpreter: exact, slow, single-threaded).
    """

    def __init__(self, memory=None, threads=0, engine="jit"):
        if engine not in _ENGINES:
            raise ValueError("engine must be 'jit' or 'interp', not %r" % (engine,))
        handle = ctypes.c_void_p()
        _check(_lib.wave_device_new(int(memory or 0), int(threads), _ENGINES[engine], ctypes.byref(handle)))
        self._handle = handle.value
        self.engine = "interp" if engine == "interpreter" else engine

    @property
    def memory_size(self):
        """Bytes of device memory."""
        return _lib.wave_device_memory_size(self._handle)

    def load(self, source, name=None):
        """Load a module: ``source`` is a path (str or os.PathLike) of a ``.wbin`` or ``.wave``
        file, or the bytes of one (``.wbin`` recognised by its ``WAVE`` magic). ``name`` names
        bytes in assembly errors."""
        if isinstance(source, (str, os.PathLike)):
            path = os.fspath(source)
            with open(path, "rb") as f:
                data = f.read()
            return Module(self, _load_module(data, name or path))
        if isinstance(source, (bytes, bytearray, memoryview)):
            return Module(self, _load_module(bytes(source), name or "<source>"))
        raise TypeError("Device.load takes a path or bytes, not %s" % type(source).__name__)

    def close(self):
        """Release the device (also done when it is garbage-collected)."""
        handle, self._handle = getattr(self, "_handle", None), None
        if handle and _lib is not None:
            _lib.wave_device_free(handle)

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "wave_jit.Device(memory=%d, engine=%r)" % (self.memory_size, self.engine)


class _ModuleHandle:
    """Owns a C module handle."""

    def __init__(self, handle):
        self.handle = handle

    def _close(self):
        handle, self.handle = self.handle, None
        if handle and _lib is not None:
            _lib.wave_module_free(handle)

    def __del__(self):
        self._close()


def _load_module(data, name):
    handle = ctypes.c_void_p()
    _check(_lib.wave_module_load(data, len(data), name.encode("utf-8"), ctypes.byref(handle)))
    return _ModuleHandle(handle.value)


class Module:
    """The kernels of a loaded binary or source: ``len(mod)``, ``mod["name"]``, ``mod[0]``."""

    def __init__(self, device, module):
        self.device = device
        self._module = module

    def __len__(self):
        return _lib.wave_module_kernel_count(self._module.handle)

    def __getitem__(self, key):
        handle = ctypes.c_void_p()
        if isinstance(key, str):
            _check(_lib.wave_module_kernel(self._module.handle, key.encode("utf-8"), ctypes.byref(handle)))
        elif isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            index = int(key)
            if index < 0:
                index += len(self)
            if index < 0:
                raise KernelNotFound("no kernel at index %d; the module has %d" % (int(key), len(self)))
            _check(_lib.wave_module_kernel_at(self._module.handle, index, ctypes.byref(handle)))
        else:
            raise TypeError("kernels are found by name (str) or index (int), not %s" % type(key).__name__)
        return Kernel(self.device, handle.value)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    @property
    def names(self):
        """The kernels' names, in index order."""
        return [kernel.name for kernel in self]

    def __repr__(self):
        return "wave_jit.Module(%r)" % (self.names,)


_U32_MAX = (1 << 32) - 1
_F32 = struct.Struct("<f")
_U32 = struct.Struct("<I")


def _f32_bits(value):
    try:
        return _U32.unpack(_F32.pack(value))[0]
    except OverflowError:
        # Beyond the f32 range: infinity, as numpy converts.
        return 0xFF800000 if value < 0 else 0x7F800000


def _pack_arg(index, value):
    """One argument as WaveArg bytes."""
    pack = _ffi.ARG.pack
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject:
            raise TypeError("argument %d: an array of Python objects has no device representation" % index)
        if not value.flags.c_contiguous:
            raise ValueError(
                "argument %d: the array is not contiguous; pass np.ascontiguousarray(a) (and copy "
                "the result back)" % index
            )
        itemsize = value.itemsize
        align = itemsize if itemsize & (itemsize - 1) == 0 else 4
        address = value.__array_interface__["data"][0]
        return pack(_ffi.ARG_HOST, address, value.nbytes, align, 1 if value.flags.writeable else 0)
    if isinstance(value, (float, np.floating)):
        return pack(_ffi.ARG_F32, _f32_bits(float(value)), 0, 0, 0)
    if isinstance(value, (int, np.integer, np.bool_)):
        v = int(value)
        if 0 <= v <= _U32_MAX:
            return pack(_ffi.ARG_U32, v, 0, 0, 0)
        if -(1 << 31) <= v < 0:
            return pack(_ffi.ARG_I32, v & _U32_MAX, 0, 0, 0)
        raise OverflowError("argument %d: %d does not fit a 32-bit register" % (index, v))
    raise TypeError(
        "argument %d: a %s is neither a numpy array nor an int or float" % (index, type(value).__name__)
    )


def _dims(what, value):
    if isinstance(value, (int, np.integer)):
        return _ffi.DIMS.pack(int(value), 1, 1)
    dims = tuple(int(v) for v in value)
    if len(dims) != 3:
        raise ValueError("%s must be (x, y, z) or an int, not %r" % (what, value))
    return _ffi.DIMS.pack(*dims)


class Kernel:
    """A kernel, called like a function: ``k(a, b, out, n, grid=(gx, gy, gz),
    workgroup=(wx, wy, wz))``. Keyword options: ``wave_width`` (4, 8, 16, 32, 64),
    ``max_instructions`` (per workgroup; 0 = unlimited), ``unchecked`` (JIT without bounds
    checks)."""

    def __init__(self, device, handle):
        self.device = device
        self._handle = handle

    @property
    def name(self):
        length = ctypes.c_size_t(0)
        pointer = _lib.wave_kernel_name(self._handle, ctypes.byref(length))
        return ctypes.string_at(pointer, length.value).decode("utf-8")

    @property
    def registers(self):
        """Registers per thread: the most arguments it takes."""
        return _lib.wave_kernel_registers(self._handle)

    def __call__(
        self,
        *args,
        grid=(1, 1, 1),
        workgroup=(256, 1, 1),
        wave_width=None,
        max_instructions=None,
        unchecked=False,
    ):
        packed = b"".join([_pack_arg(i, a) for i, a in enumerate(args)])
        options = None
        if wave_width is not None or max_instructions is not None or unchecked:
            limit = 10_000_000 if max_instructions is None else int(max_instructions)
            options = _ffi.OPTIONS.pack(int(wave_width or 0), 1 if unchecked else 0, limit)
        _check(
            _lib.wave_launch(
                self.device._handle,
                self._handle,
                _dims("grid", grid),
                _dims("workgroup", workgroup),
                packed,
                len(args),
                options,
            )
        )

    def __del__(self):
        handle, self._handle = getattr(self, "_handle", None), None
        if handle and _lib is not None:
            _lib.wave_kernel_free(handle)

    def __repr__(self):
        return "wave_jit.Kernel(%r)" % (self.name,)

