"""pytest configuration: import te from this source tree (unless TE_PYTHON_INSTALLED is set, to
test an installed copy), skip everything cleanly without numpy, and give each test a fresh
context as the current one."""
import os
import sys

import pytest

if not os.environ.get("TE_PYTHON_INSTALLED"):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

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
