"""te.device: arrays in GPU memory and kernels called on them.

Vulkan runs for real wherever a Vulkan driver is (Mesa's lavapipe on CPU machines): copies both
ways, GPU-bound kernels on device arrays against numpy, outputs allocated on the device. CUDA
runs against the fake driver of the C tests (test/fake_cuda, TE_CUDA_DRIVER) in a child
interpreter, since the driver is chosen once per process: allocation, copies, DLPack export and
a launch on the arrays' memory (the fake launches nothing, so no numbers are checked there); a
child without any driver checks the refusal. On a machine with a CUDA GPU a cuda kernel runs on
device arrays against numpy (TE_REQUIRE_CUDA=1, as scripts/gpu-check.sh sets it, makes its skip a
failure), and where torch has CUDA too, torch CUDA tensors go through a te cuda kernel and are
compared with torch's own result.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import te

HERE = os.path.dirname(os.path.abspath(__file__))

needs_vulkan = pytest.mark.skipif(not te.device.available("vulkan"),
                                  reason="no Vulkan driver (lavapipe) here")


def _bound_matmul(M, N, K, dtype="float32"):
    A = te.placeholder((M, K), name="A", dtype=dtype)
    B = te.placeholder((K, N), name="B", dtype=dtype)
    k = te.reduce_axis((0, K), name="k")
    C = te.compute((M, N), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    s = te.create_schedule(C)
    bo, ti = s[C].split(s[C].fuse(*C.op.axis), factor=64)   # 40 * 24 is not a multiple of 64
    s[C].bind(bo, "blockIdx.x")
    s[C].bind(ti, "threadIdx.x")
    return s, [A, B, C]


def _random(rng, shape, dtype=np.float32):
    x = rng.uniform(0.1, 1.0, shape) * rng.choice([-1, 1], shape)
    return x.astype(dtype)


@needs_vulkan
def test_vulkan_copies_both_ways(ctx, rng):
    for dt in (np.float32, np.int32, np.float64):
        a = (rng.integers(-50, 50, (3, 5, 7)) + 0.5).astype(dt)
        d = te.device.array(a, "vulkan")
        assert d.shape == (3, 5, 7) and str(d.dtype) == np.dtype(dt).name
        assert d.__dlpack_device__() == (7, 0)
        np.testing.assert_array_equal(d.numpy(), a)
        b = a[::-1].copy()
        d.copyfrom(b)
        np.testing.assert_array_equal(d.numpy(), b)


@needs_vulkan
def test_vulkan_kernel_on_device_arrays_matches_numpy(ctx, rng):
    M, N, K = 40, 24, 36
    s, args = _bound_matmul(M, N, K)
    f = te.build(s, args, target="vulkan", name="mm")
    a, b = _random(rng, (M, K)), _random(rng, (K, N))
    da, db = te.device.array(a, "vulkan"), te.device.array(b, "vulkan")
    dc = f(da, db)                      # allocated on the device (poisoned first: conftest)
    assert isinstance(dc, te.DeviceArray) and dc.device == "vulkan" and dc.shape == (M, N)
    np.testing.assert_allclose(dc.numpy(), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-5)
    out = te.device.array(np.full((M, N), np.nan, np.float32), "vulkan")
    assert f(da, db, out) is out
    np.testing.assert_allclose(out.numpy(), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-5)


@needs_vulkan
def test_vulkan_array_refusals(ctx, rng):
    d = te.device.array(_random(rng, (4, 4)), "vulkan")
    with pytest.raises(BufferError):
        d.__dlpack__()
    with pytest.raises(te.InvalidArgError, match="cannot become a torch tensor"):
        d.torch()
    A = te.placeholder((4, 4), name="A")
    B = te.compute((4, 4), lambda i, j: A[i, j] + 1, name="B")
    cpu = te.build(te.create_schedule(B), [A, B], name="inc")
    with pytest.raises(te.InvalidArgError, match="vulkan array cannot be passed to a kernel "
                                                  "built for 'llvm'"):
        cpu(d)
    with pytest.raises(te.ShapeError):
        d.copyfrom(np.zeros((4, 5), np.float32))
    d.free()
    with pytest.raises(te.InvalidArgError, match="freed"):
        d.numpy()
    with pytest.raises(te.InvalidArgError, match="'cuda' or 'vulkan'"):
        te.device.empty((2,), device="metal")
    with pytest.raises(te.ShapeError):
        te.device.empty((2, -1), device="vulkan")


def _fake_cuda():
    path = os.environ.get("TE_FAKE_LIBCUDA")
    if not path and os.environ.get("TE_LIBRARY"):
        lib = os.environ["TE_LIBRARY"]
        base = lib if os.path.isdir(lib) else os.path.dirname(lib)
        path = os.path.join(base, "test", "libte_fake_cuda.so")
    return path if path and os.path.exists(path) else None


def _child(code, driver):
    env = dict(os.environ, TE_CUDA_DRIVER=driver, PYTHONPATH=os.path.dirname(HERE))
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


FAKE_CUDA_SCRIPT = """
    import ctypes, gc, os
    import numpy as np
    import te
    fake = ctypes.CDLL(os.environ["TE_CUDA_DRIVER"])
    assert te.device.available("cuda")
    a = (np.arange(12, dtype=np.float32).reshape(3, 4) + 1) * 0.5
    d = te.device.array(a, "cuda")
    assert d.__dlpack_device__() == (2, 0)
    np.testing.assert_array_equal(d.numpy(), a)          # through the fake's device memory
    h = te.dlpack.as_dltensor(d)                          # te reads its own capsule
    assert h.dl.device.device_type == 2 and h.dl.data == d._ptr and h.shape == (3, 4)
    del h
    gc.collect()
    assert not te.device._exported, "an unconsumed capsule released its tensor"
    # a consumer takes the capsule and calls the deleter, as torch.from_dlpack does
    cap = d.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    managed = te._lib.DLManagedTensor.from_address(get(cap, b"dltensor"))
    ctypes.pythonapi.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
    ctypes.pythonapi.PyCapsule_SetName(cap, b"used_dltensor")
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(managed.deleter)(ctypes.addressof(managed))
    del cap, managed
    gc.collect()
    assert not te.device._exported, "the deleter released the exported tensor"

    n = te.var("n")
    A = te.placeholder((n, 4), name="A")
    B = te.compute((n, 4), lambda i, j: A[i, j] * 2, name="B")
    s = te.create_schedule(B)
    bo, ti = s[B].split(s[B].fuse(*B.op.axis), factor=32)
    s[B].bind(bo, "blockIdx.x")
    s[B].bind(ti, "threadIdx.x")
    f = te.build(s, [A, B], target="cuda", name="dbl")
    out = f(d)                       # output allocated in device memory
    assert isinstance(out, te.DeviceArray) and out.device == "cuda" and out.shape == (3, 4)
    fake.fake_cuda_nlaunches.restype = ctypes.c_int
    assert fake.fake_cuda_nlaunches() == 1
    try:
        f(a)
        raise AssertionError("a host array went into a cuda kernel")
    except te.InvalidArgError as e:
        assert "device_type" in str(e), e
    try:
        d.torch()
    except te.UnsupportedError as e:        # torch without CUDA (or torch missing)
        assert "torch" in str(e)
    except te.Error as e:
        raise AssertionError(e)
    print("fake cuda ok")
"""


def test_cuda_device_arrays_on_the_fake_driver():
    fake = _fake_cuda()
    if not fake:
        pytest.skip("the fake CUDA driver (build/test/libte_fake_cuda.so) is not built")
    assert "fake cuda ok" in _child(FAKE_CUDA_SCRIPT, fake)


def test_cuda_without_driver_is_a_clear_error():
    out = _child("""
        import numpy as np, te
        assert not te.device.available("cuda")
        try:
            te.device.array(np.ones(3, np.float32), "cuda")
            raise AssertionError("allocated without a driver")
        except te.KernelError as e:
            assert "no cuda device" in str(e) and "no CUDA driver" in str(e), e
        print("refused")
    """, "/nonexistent/libcuda.so.1")
    assert "refused" in out


def _need_real_cuda():
    if te.device.available("cuda"):
        return
    if os.environ.get("TE_REQUIRE_CUDA"):      # scripts/gpu-check.sh: a skip is a failure
        pytest.fail("TE_REQUIRE_CUDA is set but te finds no CUDA device")
    pytest.skip("no CUDA device here")


def test_cuda_kernel_on_device_arrays_matches_numpy(ctx, rng):
    _need_real_cuda()
    M, N, K = 40, 24, 36
    s, args = _bound_matmul(M, N, K)
    f = te.build(s, args, target="cuda", name="mm")
    a, b = _random(rng, (M, K)), _random(rng, (K, N))
    dc = f(te.device.array(a, "cuda"), te.device.array(b, "cuda"))
    assert isinstance(dc, te.DeviceArray) and dc.device == "cuda"
    np.testing.assert_allclose(dc.numpy(), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-5)


def test_torch_cuda_tensors_through_a_cuda_kernel(ctx):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available() or not te.device.available("cuda"):
        pytest.skip("no CUDA GPU for torch and te here")
    M, N, K = 40, 24, 36
    s, args = _bound_matmul(M, N, K)
    f = te.build(s, args, target="cuda", name="mm")
    a = torch.randn(M, K, device="cuda")
    b = torch.randn(K, N, device="cuda")
    c = torch.full((M, N), float("nan"), device="cuda")
    f(a, b, c)
    torch.cuda.synchronize()
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)
    d = f(te.device.array(a.cpu().numpy(), "cuda"), te.device.array(b.cpu().numpy(), "cuda"))
    torch.testing.assert_close(d.torch(), a @ b, rtol=1e-4, atol=1e-4)


@needs_vulkan
def test_tune_for_vulkan_then_run_on_device_arrays(ctx, rng, tmp_path):
    M, N, K = 32, 24, 20
    _, (A, B, C) = _bound_matmul(M, N, K)
    log = str(tmp_path / "vk.jsonl")
    summary = te.tune(C, target="vulkan", log_path=log, trials=4, batch=2, min_repeat_s=0.001,
                      max_repeats=3, check=100)
    assert summary.measured == 4 and summary.errors == 0
    s = te.create_schedule(C)
    te.apply_best(s, log, target="vulkan")
    f = te.build(s, [A, B, C], target="vulkan", name="tuned")
    a, b = _random(rng, (M, K)), _random(rng, (K, N))
    c = f(te.device.array(a, "vulkan"), te.device.array(b, "vulkan")).numpy()
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-5)


def test_tune_for_cuda_without_device_is_refused(tmp_path):
    out = _child("""
        import te
        A = te.placeholder((8, 8), name="A")
        B = te.compute((8, 8), lambda i, j: A[i, j] + 1, name="B")
        try:
            te.tune(B, target="cuda", log_path=%r, trials=2)
            raise AssertionError("tuned without a device")
        except te.KernelError as e:
            assert "no CUDA device to measure" in str(e), e
        print("refused")
    """ % str(tmp_path / "c.jsonl"), "/nonexistent/libcuda.so.1")
    assert "refused" in out and not (tmp_path / "c.jsonl").exists()
