"""DLPack with PyTorch tensors (CPU): kernels read and write torch memory in place, outputs left
out come back as torch tensors, and torch tensors of every te dtype map. Skipped without
torch."""
import pytest

torch = pytest.importorskip("torch")
import te  # noqa: E402


@pytest.fixture
def scale(ctx):
    n = te.var("n")
    A = te.placeholder((n, 5), name="A")
    B = te.compute((n, 5), lambda i, j: A[i, j] * 3 + 1, name="B")
    return te.build(te.create_schedule(B), [A, B], name="scale")


def test_torch_in_torch_out_without_copies(scale):
    a = torch.randn(7, 5)
    out = torch.full((7, 5), float("nan"))
    address = out.data_ptr()
    r = scale(a, out)
    assert r is out and out.data_ptr() == address
    torch.testing.assert_close(out, a * 3 + 1)


def test_allocated_output_is_a_torch_tensor(scale):
    a = torch.randn(4, 5)
    r = scale(a)
    assert isinstance(r, torch.Tensor) and r.dtype == torch.float32 and r.shape == (4, 5)
    torch.testing.assert_close(r, a * 3 + 1)


def test_numpy_inputs_still_give_numpy(scale):
    np = pytest.importorskip("numpy")
    r = scale(np.ones((2, 5), np.float32))
    assert isinstance(r, np.ndarray)


def test_input_is_read_in_place(ctx):
    A = te.placeholder((6,), name="A")
    B = te.compute((6,), lambda i: A[5 - i], name="B")
    f = te.build(te.create_schedule(B), [A, B], name="rev")
    a = torch.arange(6, dtype=torch.float32)
    view = a[:]            # same storage
    a[0] = 42.0
    torch.testing.assert_close(f(view), torch.tensor([5, 4, 3, 2, 1, 42], dtype=torch.float32))


@pytest.mark.parametrize("dt", ["float64", "int32", "int64", "uint8"])
def test_dtypes(ctx, dt):
    A = te.placeholder((3, 4), dtype=dt, name="A")
    B = te.compute((3, 4), lambda i, j: A[i, j] + A[i, j], name="B")
    f = te.build(te.create_schedule(B), [A, B], name="twice")
    a = (torch.arange(12).reshape(3, 4) % 7).to(getattr(torch, dt))
    r = f(a)
    assert r.dtype == a.dtype
    assert torch.equal(r, a + a)


def test_non_compact_tensor_is_refused(scale):
    a = torch.randn(5, 7).t()          # strides (1, 5)
    with pytest.raises(te.ShapeError):
        scale(a)
