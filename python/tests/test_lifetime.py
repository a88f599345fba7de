"""Lifetime: a Python object keeps its context alive, so kernels, expressions, tensors and
schedules stay valid after the Context variable is gone; the context is freed when the last
object made in it is collected (no leak of contexts through reference cycles)."""
import gc
import weakref

import numpy as np

import te
from _util import assert_close, assert_equal


def make_kernel():
    ctx = te.Context()
    with ctx:
        A = te.placeholder((8,), name="A")
        B = te.compute((8,), lambda i: A[i] * 3 + 1, name="B")
        s = te.create_schedule(B)
        o, i = s[B].split(B.op.axis[0], factor=4)
        s[B].vectorize(i)
        f = te.build(s, [A, B])
    return f, weakref.ref(ctx)


def test_kernel_outlives_context_variable():
    f, wctx = make_kernel()
    gc.collect()
    assert wctx() is not None              # the module keeps its context alive
    a = np.arange(8, dtype=np.float32)
    assert_close(f(a), a * 3 + 1)
    del f
    gc.collect()
    assert wctx() is None                  # ... and only the module did


def test_expressions_and_tensors_outlive_context_variable():
    ctx = te.Context()
    wctx = weakref.ref(ctx)
    with ctx:
        n = te.var("n")
        A = te.placeholder((n,), name="A")
        e = A[n - 1] * 2
    del ctx
    gc.collect()
    assert wctx() is not None
    assert str(e) == "A[n - 1]*2.0f" and e.dtype == "float32"
    # keep building from them: the context comes from the operands
    B = te.compute((n,), lambda i: A[i] + e, name="B")
    assert B.ctx is wctx()
    f = te.build(te.create_schedule(B), [A, B])
    a = np.arange(5, dtype=np.float32)
    assert_close(f(a), a + 8)
    del n, A, e, B, f
    gc.collect()
    assert wctx() is None


def test_schedule_stage_iter_keep_context():
    ctx = te.Context()
    wctx = weakref.ref(ctx)
    A = te.placeholder((6, 6), name="A", ctx=ctx)
    B = te.compute((6, 6), lambda i, j: A[i, j] + 1, name="B", ctx=ctx)
    s = te.create_schedule(B)
    st = s[B]
    xo, xi = st.split(st.axis[0], factor=2)
    del ctx, A, s
    gc.collect()
    assert wctx() is not None
    assert xi.name == "i.i" and st.leaf_iters[0].name == "i.o"
    st.vectorize(xi)                       # the stage's schedule is alive through st
    assert "vectorize B i.i" in st.schedule.trace()
    del st, xo, xi, B
    gc.collect()
    assert wctx() is None


def test_default_context_reset_keeps_old_objects_valid():
    te.reset_default_context()
    A = te.placeholder((3,), name="A")     # in the default context
    old = A.ctx
    wold = weakref.ref(old)
    te.reset_default_context()
    B = te.placeholder((3,), name="B")
    assert B.ctx is not old
    del old
    gc.collect()
    assert wold() is not None and str(A[0]) == "A[0]"
    del A
    gc.collect()
    assert wold() is None
    te.reset_default_context()


def test_many_contexts_built_and_dropped():
    # contexts freed one by one while other contexts' kernels are still in use
    kernels = [make_kernel() for _ in range(6)]
    a = np.ones(8, np.float32)
    for k in range(0, 6, 2):
        kernels[k] = None
    gc.collect()
    for entry in kernels:
        if entry is not None:
            assert_close(entry[0](a), a * 3 + 1)
    refs = [e[1] for e in kernels if e is not None]
    del kernels, entry
    gc.collect()
    assert all(r() is None for r in refs)


def test_reference_cycle_through_user_objects_is_collected():
    ctx = te.Context()
    wctx = weakref.ref(ctx)

    class Holder:
        pass
    h = Holder()
    h.self = h                             # a cycle holding te objects
    h.t = te.placeholder((2,), name="A", ctx=ctx)
    h.e = h.t[0] + 1
    del ctx, h
    gc.collect()
    assert wctx() is None


def test_custom_reducer_cache_does_not_keep_contexts():
    argmin = te.comm_reducer(lambda x, y: te.min(x, y), lambda t: float("inf"), name="mymin")
    ctx = te.Context()
    wctx = weakref.ref(ctx)
    with ctx:
        A = te.placeholder((4, 5), name="A")
        k = te.reduce_axis((0, 5), name="k")
        B = te.compute((4,), lambda i: argmin(A[i, k], axis=k), name="B")
        f = te.build(te.create_schedule(B), [A, B])
    a = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    assert_close(f(a), a.min(axis=1))
    del ctx, A, k, B, f
    gc.collect()
    assert wctx() is None
    # a new context with a reused address must not pick up the stale reducer
    with te.Context():
        A = te.placeholder((2, 3), name="A")
        k = te.reduce_axis((0, 3), name="k")
        B = te.compute((2,), lambda i: argmin(A[i, k], axis=k), name="B")
        a = np.array([[3, 1, 2], [-1, 5, 0]], np.float32)
        assert_close(te.build(te.create_schedule(B), [A, B])(a), [1, -1])


def test_threads_with_their_own_contexts():
    # te: different contexts may be used in parallel; each thread has its own default context
    import threading
    results, errors_ = {}, []

    def work(t):
        try:
            with te.Context():
                A = te.placeholder((64,), name="A")
                B = te.compute((64,), lambda i: A[i] * t, name="B")
                s = te.create_schedule(B)
                s[B].vectorize(s[B].split(B.op.axis[0], factor=8)[1])
                f = te.build(s, [A, B])
                results[t] = f(np.ones(64, np.float32))
            default = te.current_context()       # this thread's own default context
            results[("ctx", t)] = default
        except Exception as e:                   # pragma: no cover (reported below)
            errors_.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(1, 5)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors_, errors_
    for t in range(1, 5):
        assert_equal(results[t], np.full(64, t, np.float32))
    assert len({id(results[("ctx", t)]) for t in range(1, 5)}) == 4
