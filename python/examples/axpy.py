"""Run a WAVE kernel from Python: examples/axpy.wave, out[i] = a * x[i] + y[i] on 1000 floats.

    pip install ./python
    python python/examples/axpy.py

(tests/python.rs runs it too.)
"""

import pathlib

import numpy as np

import wave_jit

kernel_file = pathlib.Path(__file__).resolve().parents[2] / "examples" / "axpy.wave"
dev = wave_jit.Device()
axpy = dev.load(kernel_file)["axpy"]

n = 1000
x = np.arange(n, dtype=np.float32)
y = 0.5 * np.arange(n, dtype=np.float32)
out = np.empty_like(x)
# Arguments go to registers 0, 1, ...: arrays become buffers (out is copied back), n a u32, 2.0 an f32.
axpy(x, y, out, n, 2.0, grid=((n + 255) // 256, 1, 1), workgroup=(256, 1, 1))

print("out[0..4] =", out[:4], "out[999] =", out[999])
assert out[999] == 2.0 * 999 + 0.5 * 999
