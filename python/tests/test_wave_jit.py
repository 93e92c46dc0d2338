"""The Python package: numpy arrays in and out, scalar arguments, modules and kernels, errors.

Run from a checkout by `cargo test --workspace` (tests/python.rs, against the library cargo
built) and by .ci/run against an installed wheel.
"""

import os
import pathlib

import numpy as np
import pytest

import wave_jit

ROOT = pathlib.Path(__file__).resolve().parents[2]
AXPY = ROOT / "examples" / "axpy.wave"

# Thread 0 stores registers r0..r5 at the address in `r6` (the 7th argument).
REGISTERS_SOURCE = """
.kernel registers
.registers 12
    mov r9, sr_thread_id_x
    mov r10, sr_workgroup_id_x
    or r9, r9, r10
    mov_imm r8, 0
    icmp_eq p0, r9, r8
    if p0
        mov_imm r7, 4
        device_store_u32 r6, r0
        iadd r6, r6, r7
        device_store_u32 r6, r1
        iadd r6, r6, r7
        device_store_u32 r6, r2
        iadd r6, r6, r7
        device_store_u32 r6, r3
        iadd r6, r6, r7
        device_store_u32 r6, r4
        iadd r6, r6, r7
        device_store_u32 r6, r5
    endif
    halt
.end
"""

OOB_SOURCE = """
.kernel oob
    mov_imm r1, 0xfffffff0
    device_store_u32 r1, r1
    halt
.end
"""


@pytest.fixture(scope="module", params=["jit", "interp"])
def dev(request):
    with wave_jit.Device(memory=16 << 20, engine=request.param) as device:
        yield device


def registers_of(dev, *args):
    """The values registers r0..r5 start with for these six arguments."""
    kernel = dev.load(wave_jit.assemble(REGISTERS_SOURCE, "registers.wave"))["registers"]
    out = np.zeros(6, dtype=np.uint32)
    kernel(*args, out, grid=(1, 1, 1), workgroup=(32, 1, 1))
    return out


def test_axpy_arrays_in_and_out(dev):
    axpy = dev.load(AXPY)["axpy"]
    n = 1000
    x = np.arange(n, dtype=np.float32)
    y = 0.5 * np.arange(n, dtype=np.float32)
    out = np.full(n, -1.0, dtype=np.float32)
    axpy(x, y, out, n, 2.0, grid=((n + 255) // 256, 1, 1), workgroup=(256, 1, 1))
    np.testing.assert_array_equal(out, np.float32(2.0) * x + y)
    np.testing.assert_array_equal(x, np.arange(n, dtype=np.float32))
    # Again, other values: nothing stale is kept between calls.
    axpy(y, x, out, n, -1.0, grid=4, workgroup=256)
    np.testing.assert_array_equal(out, x - y)


def test_scalar_arguments_become_registers(dev):
    regs = registers_of(dev, 7, -3, 1.5, np.float32(-0.25), np.uint32(0xFFFFFFFF), np.int64(-(1 << 31)))
    assert regs.tolist() == [
        7,
        (1 << 32) - 3,
        np.float32(1.5).view(np.uint32),
        np.float32(-0.25).view(np.uint32),
        0xFFFFFFFF,
        1 << 31,
    ]
    regs = registers_of(dev, np.bool_(True), np.int32(-1), np.float64(0.1), 1e40, -1e40, np.float16(2.0))
    assert regs.tolist() == [
        1,
        0xFFFFFFFF,
        np.float32(0.1).view(np.uint32),
        0x7F800000,
        0xFF800000,
        np.float32(2.0).view(np.uint32),
    ]


def test_arrays_lie_one_after_another_from_address_zero(dev):
    a = np.zeros(3, dtype=np.float32)  # 12 bytes at 0
    b = np.zeros(5, dtype=np.uint8)  # 5 bytes at 12
    c = np.zeros(2, dtype=np.float64)  # at 24, the next multiple of 8
    regs = registers_of(dev, a, b, c, 0, 0, 0)
    # The output array itself goes after them: at 40.
    assert regs[:3].tolist() == [0, 12, 24]


def test_read_only_arrays_are_inputs(dev):
    kernel = dev.load(AXPY)["axpy"]
    x = np.arange(8, dtype=np.float32)
    x.flags.writeable = False
    out = np.zeros(8, dtype=np.float32)
    # The kernel writes `out`; with x read-only as the output, nothing is copied back to it.
    kernel(out, out, x, 8, 1.0, grid=1, workgroup=32)
    np.testing.assert_array_equal(x, np.arange(8, dtype=np.float32))


def test_load_paths_and_bytes_and_index_access(dev):
    source = AXPY.read_text()
    wbin = wave_jit.assemble(source)
    assert wbin[:4] == b"WAVE"
    for module in [dev.load(AXPY), dev.load(str(AXPY)), dev.load(wbin), dev.load(source.encode())]:
        assert len(module) == 1 and module.names == ["axpy"]
        assert module[0].name == module[-1].name == module["0"].name == "axpy"
        assert module["axpy"].registers == 10
    two = dev.load(b".kernel first\n halt\n.end\n.kernel second\n halt\n.end\n")
    assert [k.name for k in two] == ["first", "second"]
    assert two[1].name == "second"


def test_errors_say_what_and_where(dev):
    with pytest.raises(wave_jit.LoadError, match=r"bad\.wave:2:"):
        wave_jit.assemble(".kernel k\n    hlt\n.end\n", "bad.wave")
    with pytest.raises(wave_jit.LoadError, match=r"broken\.wave:1:"):
        dev.load(b"not assembly\n", name="broken.wave")
    with pytest.raises(wave_jit.LoadError, match="beyond the end"):
        dev.load(wave_jit.assemble(AXPY.read_text())[:64])
    with pytest.raises(FileNotFoundError):
        dev.load("/nonexistent/kernel.wave")
    module = dev.load(AXPY)
    with pytest.raises(wave_jit.KernelNotFound, match="available kernels"):
        module["nope"]
    with pytest.raises(wave_jit.KernelNotFound):
        module[1]
    with pytest.raises(wave_jit.KernelNotFound):
        module[-2]
    with pytest.raises(TypeError):
        module[1.0]

    axpy = module["axpy"]
    x = np.zeros(4, dtype=np.float32)
    with pytest.raises(wave_jit.InvalidArgument, match="11 arguments, but its threads have only 10 registers"):
        axpy(*([0] * 11), grid=1, workgroup=32)
    with pytest.raises(TypeError, match="argument 1: a str"):
        axpy(x, "y", x, 4, 1.0)
    with pytest.raises(TypeError, match="argument 0: an array of Python objects"):
        axpy(np.array([1, "a"], dtype=object), x, x, 4, 1.0)
    with pytest.raises(OverflowError, match="argument 3"):
        axpy(x, x, x, 1 << 32, 1.0)
    with pytest.raises(ValueError, match="not contiguous"):
        axpy(np.zeros(8, dtype=np.float32)[::2], x, x, 4, 1.0)
    with pytest.raises(wave_jit.LaunchError, match="has no workgroups"):
        axpy(x, x, x, 4, 1.0, grid=(0, 1, 1))
    with pytest.raises(wave_jit.LaunchError, match="wave width 5"):
        axpy(x, x, x, 4, 1.0, wave_width=5)
    with pytest.raises(ValueError, match=r"\(x, y, z\)"):
        axpy(x, x, x, 4, 1.0, grid=(1, 1))

    oob = dev.load(OOB_SOURCE.encode(), name="oob.wave")["oob"]
    with pytest.raises(wave_jit.LaunchError) as failure:
        oob(grid=1, workgroup=1)
    message = str(failure.value)
    assert "kernel `oob`, workgroup (0,0,0), wave 0" in message
    assert "out of bounds: address 0xfffffff0" in message
    assert failure.value.status == 5
    with pytest.raises(wave_jit.OutOfDeviceMemory, match="out of device memory"):
        axpy(np.zeros(5 << 20, dtype=np.float32), x, x, 4, 1.0)


def test_launch_options(dev):
    spin = dev.load(b".kernel spin\n loop\n  mov r0, r0\n endloop\n halt\n.end\n")["spin"]
    with pytest.raises(wave_jit.LaunchError, match="instruction limit of 1000"):
        spin(grid=1, workgroup=32, max_instructions=1000)
    axpy = dev.load(AXPY)["axpy"]
    x = np.arange(64, dtype=np.float32)
    for width in [4, 8, 16, 32, 64]:
        out = np.zeros(64, dtype=np.float32)
        axpy(x, x, out, 64, 3.0, grid=1, workgroup=64, wave_width=width)
        np.testing.assert_array_equal(out, 4 * x)


def test_engines_agree():
    n = 3000
    rng = np.random.default_rng(17)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    results = []
    for engine in ["jit", "interp"]:
        with wave_jit.Device(engine=engine, threads=2) as dev:
            out = np.empty(n, dtype=np.float32)
            dev.load(AXPY)["axpy"](x, y, out, n, 0.75, grid=(n + 127) // 128, workgroup=128)
            results.append(out)
    assert results[0].tobytes() == results[1].tobytes()


def test_device_settings():
    with pytest.raises(ValueError):
        wave_jit.Device(engine="gpu")
    with pytest.raises(wave_jit.InvalidArgument, match="between 1 and"):
        wave_jit.Device(memory=1 << 40)
    dev = wave_jit.Device(memory=1 << 20)
    assert dev.memory_size == 1 << 20
    assert "1048576" in repr(dev)
    dev.close()
    dev.close()


def test_library_is_the_one_expected():
    """In CI the package is an installed wheel with the library inside it; from a checkout
    (cargo test), WAVE_JIT_LIBRARY names the library cargo built."""
    path = wave_jit.library_path()
    assert os.path.isfile(path)
    if os.environ.get("WAVE_JIT_EXPECT_WHEEL") == "1":
        package = pathlib.Path(wave_jit.__file__).resolve().parent
        assert "site-packages" in package.parts, package
        assert pathlib.Path(path).resolve().parent == package / "_native", path
    elif "WAVE_JIT_LIBRARY" in os.environ:
        assert path == os.environ["WAVE_JIT_LIBRARY"]
