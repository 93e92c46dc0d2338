"""What a kernel launch from Python costs beyond the C library's own launch.

    pip install ./python         # or: WAVE_JIT_LIBRARY=target/release/libwave_jit.so PYTHONPATH=python
    python python/bench/launch_overhead.py

examples/axpy.wave on 1024 f32 elements (4 workgroups of 256), after a first call that compiles
it (on the first device; the second finds the code in the JIT's cache); the median of many
calls each:
- `axpy(x, y, out, n, a, grid=..., workgroup=...)`: the package's call;
- the same launch through the C function wave_launch directly, its arguments packed once
  beforehand: the library's share (copies in and out, the kernel, its dispatch);
- the difference is what the Python layer adds (argument conversion, the ctypes call).
examples/launch_overhead.rs measures the same kernel through the Rust API and wave_emulate.
"""

import pathlib
import statistics
import time

import numpy as np

import wave_jit
from wave_jit import _ffi

ROOT = pathlib.Path(__file__).resolve().parents[2]
N = 1024
GRID, WORKGROUP = (N // 256, 1, 1), (256, 1, 1)


def median_us(f, calls=3000, warmup=200):
    for _ in range(warmup):
        f()
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


def measure(threads):
    dev = wave_jit.Device(threads=threads)
    axpy = dev.load(ROOT / "examples" / "axpy.wave")["axpy"]
    x = np.arange(N, dtype=np.float32)
    y = np.ones(N, dtype=np.float32)
    out = np.zeros(N, dtype=np.float32)

    started = time.perf_counter()
    axpy(x, y, out, N, 2.0, grid=GRID, workgroup=WORKGROUP)
    first = (time.perf_counter() - started) * 1e6
    assert out[N - 1] == 2.0 * (N - 1) + 1.0

    python_call = median_us(lambda: axpy(x, y, out, N, 2.0, grid=GRID, workgroup=WORKGROUP))

    packed = b"".join(wave_jit._pack_arg(i, a) for i, a in enumerate((x, y, out, N, 2.0)))
    grid, workgroup = _ffi.DIMS.pack(*GRID), _ffi.DIMS.pack(*WORKGROUP)
    launch = _ffi.lib.wave_launch
    device, kernel = dev._handle, axpy._handle
    c_call = median_us(lambda: launch(device, kernel, grid, workgroup, packed, 5, None))
    return first, python_call, c_call


def main():
    print("axpy, %d elements, %s workgroups of %d, median per call (library: %s)"
          % (N, GRID[0], WORKGROUP[0], wave_jit.library_path()))
    for threads in (0, 1):
        first, python_call, c_call = measure(threads)
        label = "all cores" if threads == 0 else "1 thread"
        print("  %-9s first call:            %8.1f us" % (label, first))
        print("  %-9s Python call:           %8.1f us" % (label, python_call))
        print("  %-9s C wave_launch alone:   %8.1f us" % (label, c_call))
        print("  %-9s Python layer adds:     %8.1f us" % (label, python_call - c_call))


if __name__ == "__main__":
    main()
