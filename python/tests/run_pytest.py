"""CTest's entry to the Python suite: runs pytest on python/tests, or exits 77 (CTest's skip
code for python.pytest) when numpy or pytest is not installed."""
import os
import sys

try:
    import numpy  # noqa: F401
    import pytest
except ImportError as e:
    print("python.pytest skipped: %s (install python3-numpy python3-pytest)" % e)
    sys.exit(77)

here = os.path.dirname(os.path.abspath(__file__))
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", here] + sys.argv[1:]))
