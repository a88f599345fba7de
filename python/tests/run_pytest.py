"""CTest's entry to the Python suite: runs pytest on python/tests, or exits 77 (CTest's skip
code for python.pytest) when numpy or pytest is not installed.

The PyTorch tests run in a pytest process of their own, after the others: te_tune measures in
forked children, and a fork from a process whose PyTorch has started its OpenMP threads can
hang or crash the child (test_tune_template.py would meet that after the backend tests)."""
import os
import subprocess
import sys

try:
    import numpy  # noqa: F401
    import pytest  # noqa: F401
except ImportError as e:
    print("python.pytest skipped: %s (install python3-numpy python3-pytest)" % e)
    sys.exit(77)

here = os.path.dirname(os.path.abspath(__file__))
TORCH_TESTS = ["test_torch_backend.py", "test_dlpack_torch.py"]
base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
rc = subprocess.call(base + [here] + ["--ignore=" + os.path.join(here, t) for t in TORCH_TESTS]
                     + sys.argv[1:])
if not os.environ.get("TE_TEST_NO_TORCH"):
    rc2 = subprocess.call(base + [os.path.join(here, t) for t in TORCH_TESTS] + sys.argv[1:])
    rc = rc or (0 if rc2 == 5 else rc2)      # 5: nothing collected
sys.exit(rc)
