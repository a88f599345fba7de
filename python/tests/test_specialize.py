"""Schedule.specialize (te_specialize): one kernel, a branch per runtime condition over sizes;
each branch computes the same numbers, and the branch learns its condition (no tail)."""
import numpy as np
import pytest

import te
from _util import poisoned


def test_branches_match_numpy(ctx, rng):
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    C = te.compute((n,), lambda i: A[i] * 2 + 1, name="C")
    s = te.create_schedule(C)
    _, ji = s[C].split(C.op.axis[0], 8)
    s[C].vectorize(ji)
    b = s.specialize(n % 16 == 0)
    assert "specialize n%16 == 0 {" in s.trace()
    text = te.lower(s, [A, C])
    then = text[text.index("if (n%16 == 0)"):text.index("} else {")]
    assert "vector_mask" not in then and "vector_mask" in text[text.index("} else {"):]
    f = te.build(s, [A, C], name="f")
    for size in (32, 16, 21, 5):
        a = rng.standard_normal(size).astype(np.float32)
        c = poisoned((size,), np.float32)
        f(a, c)
        np.testing.assert_allclose(c, a * 2 + 1, rtol=1e-6)


def test_loop_variable_refused(ctx):
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    i = te.var("i")
    C = te.compute((n,), lambda j: A[j] * 2, name="C")
    s = te.create_schedule(C)
    with pytest.raises(te.ScheduleError, match="the condition uses 'i'"):
        s.specialize(i < 4)
