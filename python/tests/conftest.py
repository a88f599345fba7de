"""pytest configuration: import te from this source tree (unless TE_PYTHON_INSTALLED is set, to
test an installed copy), skip everything cleanly without numpy, poison every output te
allocates, and give each test a fresh context as the current one."""
import os
import sys

import pytest

# Outputs the bindings allocate start as NaN / 0x5A bytes (te/build.py), so a kernel that writes
# nothing fails instead of passing on a recycled block that still holds the previous answer.
os.environ["TE_DEBUG_POISON_OUTPUTS"] = "1"

if not os.environ.get("TE_PYTHON_INSTALLED"):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The PyTorch tests (backend, DLPack with torch) are left out of sanitizer runs (CTest sets
# TE_TEST_NO_TORCH there), and skip themselves where torch is not installed.
if os.environ.get("TE_TEST_NO_TORCH"):
    collect_ignore = ["test_torch_backend.py", "test_dlpack_torch.py"]

np = pytest.importorskip("numpy")
import te  # noqa: E402


@pytest.fixture
def ctx():
    """A fresh context, current for the duration of the test."""
    c = te.Context()
    with c:
        yield c


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
