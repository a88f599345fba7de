"""Every schedule primitive from Python: what it does to the loop nest (lower text, leaf
loops), that the kernel it gives is still correct, and the trace / replay round trip."""
import pytest

import te
from _util import assert_close, rand


def scale2(M=10, N=12):
    A = te.placeholder((M, N), name="A")
    C = te.compute((M, N), lambda i, j: A[i, j] * 2, name="C")
    return A, C


def check_scale2(s, A, C, rng, M=10, N=12):
    f = te.build(s, [A, C])
    a = rand(rng, (M, N))
    assert_close(f(a), a * 2)


def names(st):
    return [it.name for it in st.leaf_iters]


def test_stage_axes_and_leaves(ctx):
    A = te.placeholder((4, 5), name="A")
    k = te.reduce_axis((0, 5), name="k")
    C = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="C")
    s = te.create_schedule(C)
    st = s[C]
    assert [a.name for a in st.axis] == ["i"]
    assert [a.name for a in st.reduce_axis] == ["k"]
    assert names(st) == ["i", "k"]
    assert len(C.op.axis) == 1 and len(C.op.reduce_axis) == 1
    assert s[C] == st and st.tensor == C
    assert "i k" in repr(st)


def test_split_and_split_nparts(ctx, rng):
    A, C = scale2()
    s = te.create_schedule(C)
    o, i = s[C].split(C.op.axis[0], factor=4)
    assert (o.name, i.name) == ("i.o", "i.i")
    jo, ji = s[C].split(C.op.axis[1], nparts=5)
    assert names(s[C]) == ["i.o", "i.i", "j.o", "j.i"]
    text = te.lower(s, [A, C])
    # i: 10 = 2*4 + a peeled tail of 2; j: 5 parts of ceil(12/5) = 3, 4 of them needed
    assert "for (i.o, 0, 2)" in text and "for (j.i, 0, 3)" in text
    check_scale2(s, A, C, rng)
    with pytest.raises(te.InvalidArgError, match="exactly one"):
        s[C].split(o, factor=2, nparts=2)


def test_tile_fuse_reorder(ctx, rng):
    A, C = scale2()
    s = te.create_schedule(C)
    xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], 4, 5)
    assert names(s[C]) == ["i.o", "j.o", "i.i", "j.i"]
    s[C].reorder(xi, yo)              # i.i and j.o swap places
    assert names(s[C]) == ["i.o", "i.i", "j.o", "j.i"]
    f = s[C].fuse(xo, xi)
    assert f.name == "i.o.i.i.f"
    f3 = s[C].fuse(f, yo, yi)         # three loops at once, outermost first
    assert names(s[C]) == [f3.name]
    check_scale2(s, A, C, rng)


def test_reorder_storage(ctx, rng):
    """An intermediate stored transposed computes the same; outputs keep their layout."""
    A = te.placeholder((6, 10), name="A")
    P = te.compute((6, 10), lambda i, j: A[i, j] * 3.0, name="P")
    C = te.compute((6, 10), lambda i, j: P[i, j] + 1.0, name="C")
    s = te.create_schedule(C)
    s[P].reorder_storage(P.op.axis[1], P.op.axis[0])
    assert "reorder_storage P j i" in s.trace()
    assert "P[j*6 + i] = " in te.lower(s, [A, C])
    a = rand(rng, (6, 10))
    assert_close(te.build(s, [A, C])(a), a * 3.0 + 1.0)
    with pytest.raises(te.ScheduleError, match="an output"):
        s[C].reorder_storage(C.op.axis[1], C.op.axis[0])


def test_annotations(ctx, rng):
    A, C = scale2(16, 32)
    s = te.create_schedule(C)
    io, ii = s[C].split(C.op.axis[0], factor=4)
    jo, ji = s[C].split(C.op.axis[1], factor=8)
    s[C].reorder(io, jo, ii, ji)
    s[C].parallel(io)
    s[C].unroll(ii)
    s[C].vectorize(ji)
    text = te.lower(s, [A, C])
    assert "parallel" in text and "ramp(" in text
    check_scale2(s, A, C, rng, 16, 32)
    trace = s.trace()
    for step in ("parallel C i.o", "unroll C i.i", "vectorize C j.i"):
        assert step in trace


def test_bind_needs_gpu_target(ctx):
    A, C = scale2()
    s = te.create_schedule(C)
    s[C].bind(C.op.axis[0], "blockIdx.x")
    s[C].bind(C.op.axis[1], te.thread_axis("threadIdx.x"))
    assert "bind C i blockIdx.x" in s.trace()
    with pytest.raises(te.TargetError, match="GPU"):
        te.build(s, [A, C], target="llvm")
    with pytest.raises(te.InvalidArgError, match="thread"):
        s[C].bind(C.op.axis[0], "warp.x")


def test_enum_words_come_from_the_library():
    # read through te_scope_name / te_thread_tag_name / te_tail_name, in the enums' order
    assert te.schedule.SCOPES == {"global": 0, "local": 1, "shared": 2}
    assert te.schedule.THREAD_TAGS == {"blockIdx.x": 0, "blockIdx.y": 1, "blockIdx.z": 2,
                                       "threadIdx.x": 3, "threadIdx.y": 4, "threadIdx.z": 5}
    assert te.schedule.TAILS == {"guard": 0, "shift_inwards": 1, "round_up": 2}


def test_set_tail_and_pragma(ctx, rng):
    A, C = scale2(10, 12)
    for tail in ("guard", "shift_inwards"):
        s = te.create_schedule(C)
        o, i = s[C].split(C.op.axis[1], factor=5)   # 5 does not divide 12
        s[C].set_tail(i, tail)
        s[C].pragma(o, "unroll_max_step", 16)
        assert "set_tail C j.i %s" % tail in s.trace()
        assert "pragma C j.o unroll_max_step 16" in s.trace()
        check_scale2(s, A, C, rng)
    with pytest.raises(te.ScheduleError, match="is an output"):
        s[C].set_tail(i, "round_up")  # an output's rounded loops would write past its buffer
    with pytest.raises(te.InvalidArgError):
        s[C].set_tail(i, "wrap")
    with pytest.raises(te.Error, match="unknown pragma"):
        s[C].pragma(o, "nonsense", 1)


def two_stage():
    A = te.placeholder((16, 24), name="A")
    B = te.compute((16, 24), lambda i, j: A[i, j] + 1, name="B")
    C = te.compute((16, 24), lambda i, j: B[i, j] * 3, name="C")
    return A, B, C


def test_compute_at_inline_root(ctx, rng):
    a = rand(rng, (16, 24))
    for place in ("root", "inline", "at"):
        A, B, C = two_stage()
        s = te.create_schedule(C)
        if place == "inline":
            s[B].compute_inline()
        elif place == "at":
            xo, xi = s[C].split(C.op.axis[0], factor=4)
            s[B].compute_at(s[C], xo)
        else:
            s[B].compute_root()
        text = te.lower(s, [A, C])
        assert ("produce B" in text) == (place != "inline")
        f = te.build(s, [A, C])
        assert_close(f(a), (a + 1) * 3)


def test_cache_read_and_write(ctx, rng):
    A = te.placeholder((32, 16), name="A")
    B = te.placeholder((16, 24), name="B")
    k = te.reduce_axis((0, 16), name="k")
    C = te.compute((32, 24), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    s = te.create_schedule(C)
    AA = s.cache_read(A, "local", [C])
    CC = s.cache_write(C, "local")
    assert AA.name == "A_local" and CC.name == "C_local"
    xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], 8, 8)
    s[CC].compute_at(s[C], yo)
    s[AA].compute_at(s[CC], s[CC].op.reduce_axis[0])
    assert "cache_read A local C" in s.trace() and "cache_write C local" in s.trace()
    f = te.build(s, [A, B, C])
    a, b = rand(rng, (32, 16)), rand(rng, (16, 24))
    assert_close(f(a, b), a @ b)


def test_rfactor(ctx, rng):
    A = te.placeholder((8, 64), name="A")
    k = te.reduce_axis((0, 64), name="k")
    C = te.compute((8,), lambda i: te.sum(A[i, k], axis=k), name="C")
    s = te.create_schedule(C)
    ko, ki = s[C].split(C.op.reduce_axis[0], factor=16)
    CF = s.rfactor(C, ki, factor_axis=1)
    assert CF.name == "C_rf" and CF.ndim == 2
    s[CF].vectorize(s[CF].op.axis[1])
    f = te.build(s, [A, C])
    a = rand(rng, (8, 64))
    assert_close(f(a), a.sum(axis=1))
    assert "rfactor C k.i 1" in s.trace()


def test_trace_and_replay(ctx, rng):
    A, C = scale2()
    s = te.create_schedule(C)
    o, i = s[C].split(C.op.axis[1], factor=5)
    s[C].reorder(i, s[C].axis[0])
    trace = s.trace()
    assert trace == "split C j 5\nreorder C j.i i\n"
    s2 = te.create_schedule(C)
    s2.replay(trace)
    assert names(s2[C]) == names(s[C])
    assert te.lower(s2, [A, C]) == te.lower(s, [A, C])
    check_scale2(s2, A, C, rng)


def test_primitive_errors_carry_messages(ctx):
    A, B, C = two_stage()
    s = te.create_schedule(C)
    with pytest.raises(te.ScheduleError, match=r"te_split: stage 'C': .*factor must be > 0"):
        s[C].split(C.op.axis[0], factor=0)
    with pytest.raises(te.ScheduleError, match="outputs cannot be inlined"):
        s[C].compute_inline()
    with pytest.raises(te.InvalidArgError, match="not of this stage"):
        s[C].split(B.op.axis[0], factor=2)   # another tensor's axis
    iB = s[B].axis[0]
    with pytest.raises(te.Error):
        s[C].vectorize(iB)                   # an iter of another stage
    with pytest.raises(te.ParseError, match="line 1"):
        s.replay("split C\n")
    with pytest.raises(te.NotFoundError, match="no iter 'zz'"):
        s.replay("split C zz 4\n")
    with pytest.raises(te.NotFoundError, match="placeholder"):
        s[A]
    with pytest.raises(te.InvalidArgError):
        s.cache_read(A, "texture", [B])
