#!/usr/bin/env python3
# %% [markdown]
# # Working with operators using tensor expressions — in te, from Python
#
# This tutorial follows TVM's "Working with Operators Using Tensor Expression" and "How to
# optimize GEMM on CPU", with te: you describe *what* to compute once, as tensor expressions,
# and separately *how*, as a schedule; te lowers both to loop IR and compiles it with LLVM into
# a native kernel that runs on your numpy arrays without copying them.
#
# Run it as a script (`python3 apps/python_tutorial.py`) or cell by cell (the `# %%` markers
# are Jupyter / VS Code cells). It needs `libte.so`: set `TE_LIBRARY=build/libte.so`, install
# it, or run from the source tree after `make build`. `TE_TUTORIAL_N` sets the matrix size
# (default 512).

# %%
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import te  # noqa: E402

print("te", te.__version__, "from", te.library_path)
tgt = te.target("llvm -mcpu=native")    # this CPU, with all its vector instructions
print("target:", tgt.short)             # str(tgt) names every CPU feature


def timeit(f, *args, repeat=5):
    """Median time of a kernel call, in seconds."""
    f(*args)                            # warm up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f(*args)
        times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2]


# %% [markdown]
# ## 1. Vector addition
#
# `te.var` makes a symbolic size: one compiled kernel serves every length. A placeholder is an
# input; `te.compute` defines each element of a new tensor with a Python function of index
# variables (te names them after the function's parameters).

# %%
n = te.var("n")
A = te.placeholder((n,), name="A")                 # float32 unless a dtype is given
B = te.placeholder((n,), name="B")
C = te.compute(A.shape, lambda i: A[i] + B[i], name="C")
print(C, "=", C.dtype)

# %% [markdown]
# The default schedule is one serial loop. `te.lower` shows the loop IR te generates.

# %%
s = te.create_schedule(C)
print(te.lower(s, [A, B, C]))

# %% [markdown]
# `te.build` compiles it (LLVM, JIT, in-process) into a callable kernel. Arguments are numpy
# arrays, or anything with `__dlpack__`: the kernel reads and writes their memory directly.
# The output can be preallocated, or left out and returned.

# %%
fadd = te.build(s, [A, B, C], target=tgt, name="vector_add")
va = np.random.uniform(size=100_000).astype(np.float32)
vb = np.random.uniform(size=100_000).astype(np.float32)
vc = np.empty_like(va)
fadd(va, vb, vc)                                   # writes into vc
np.testing.assert_allclose(vc, va + vb)
np.testing.assert_allclose(fadd(va[:10], vb[:10]), va[:10] + vb[:10])   # n = 10, C allocated
print("vector_add: ok")

# %% [markdown]
# ### Parallel and vector code
#
# A schedule changes how the loops run, not what they compute. Split the loop in two, run the
# outer one on all cores, and make the inner one SIMD code of the target's vector width.

# %%
s = te.create_schedule(C)
lanes = tgt.lanes("float32") if te._lib.has("te_target_vector_bits") else 8
outer, inner = s[C].split(C.op.axis[0], factor=lanes * 64)
s[C].parallel(outer)
vo, vi = s[C].split(inner, factor=lanes)
s[C].vectorize(vi)
print(te.lower(s, [A, B, C]))
fadd_fast = te.build(s, [A, B, C], target=tgt, name="vector_add_fast")
big_a = np.random.uniform(size=2**22).astype(np.float32)
big_b = np.random.uniform(size=2**22).astype(np.float32)
big_c = np.empty_like(big_a)
fadd_fast(big_a, big_b, big_c)
np.testing.assert_allclose(big_c, big_a + big_b)
print("numpy  : %.3f ms" % (1e3 * timeit(np.add, big_a, big_b, big_c)))
print("serial : %.3f ms" % (1e3 * timeit(fadd, big_a, big_b, big_c)))
print("te fast: %.3f ms" % (1e3 * timeit(fadd_fast, big_a, big_b, big_c)))

# %% [markdown]
# Every primitive applied is one step of the schedule's *trace*: plain text that can be stored
# (te's tuning logs do) and replayed on a fresh schedule of the same computation.

# %%
print(s.trace())
s2 = te.create_schedule(C)
s2.replay(s.trace())
assert te.lower(s2, [A, B, C]) == te.lower(s, [A, B, C])

# %% [markdown]
# ## 2. Matrix multiplication, step by step
#
# `te.reduce_axis` makes a reduction axis and `te.sum` reduces over it:
# C[i, j] = sum_k A[i, k] * B[k, j].

# %%
N = int(os.environ.get("TE_TUTORIAL_N", "512"))
M = K = N
k = te.reduce_axis((0, K), name="k")
A = te.placeholder((M, K), name="A")
B = te.placeholder((K, N), name="B")
C = te.compute((M, N), lambda x, y: te.sum(A[x, k] * B[k, y], axis=k), name="C")

a = np.random.rand(M, K).astype(np.float32)
b = np.random.rand(K, N).astype(np.float32)
answer = a @ b
gflop = 2.0 * M * N * K / 1e9
results = {}


def evaluate(label, s, args=(A, B, C)):
    f = te.build(s, list(args), target=tgt, name="mmult")
    c = np.zeros((M, N), np.float32)
    f(a, b, c)
    np.testing.assert_allclose(c, answer, rtol=1e-4 * K ** 0.5)
    t = timeit(f, a, b, c, repeat=3)
    results[label] = t
    print("%-22s %8.2f ms  %7.2f GFLOP/s" % (label, t * 1e3, gflop / t))
    return f


print("numpy (BLAS)           %8.2f ms" % (1e3 * timeit(np.matmul, a, b)))
evaluate("default", te.create_schedule(C))

# %% [markdown]
# **Blocking**: tile i and j so that a block of C stays in cache, split k, and put the
# reduction between the tile loops.

# %%
bn = 32
kfactor = 4
s = te.create_schedule(C)
mo, no, mi, ni = s[C].tile(C.op.axis[0], C.op.axis[1], bn, bn)
ko, ki = s[C].split(C.op.reduce_axis[0], factor=kfactor)
s[C].reorder(mo, no, ko, ki, mi, ni)
evaluate("blocking", s)

# %% [markdown]
# **Vectorization and loop permutation**: make the innermost loop (contiguous in B and C) SIMD
# code, with k outside it so a row of B is streamed.

# %%
s = te.create_schedule(C)
mo, no, mi, ni = s[C].tile(C.op.axis[0], C.op.axis[1], bn, bn)
ko, ki = s[C].split(C.op.reduce_axis[0], factor=kfactor)
s[C].reorder(mo, no, ko, mi, ki, ni)
s[C].vectorize(ni)
evaluate("vectorize+permute", s)

# %% [markdown]
# **Array packing**: repack B as [N/bn, K, bn] so the inner loop reads it contiguously.

# %%
packedB = te.compute((N // bn, K, bn), lambda bigN, kk, littleN: B[kk, bigN * bn + littleN],
                     name="packedB")
C2 = te.compute((M, N), lambda x, y: te.sum(A[x, k] * packedB[y // bn, k, y % bn], axis=k),
                name="C")
s = te.create_schedule(C2)
mo, no, mi, ni = s[C2].tile(C2.op.axis[0], C2.op.axis[1], bn, bn)
ko, ki = s[C2].split(C2.op.reduce_axis[0], factor=kfactor)
s[C2].reorder(mo, no, ko, mi, ki, ni)
s[C2].vectorize(ni)
bigN, _, littleN = s[packedB].op.axis
s[packedB].vectorize(littleN)
s[packedB].parallel(bigN)
evaluate("packing", s, (A, B, C2))

# %% [markdown]
# **Write cache and parallel**: accumulate each tile in a local buffer (`cache_write`), compute
# it inside the tile loop (`compute_at`), and run the outer loop on all cores.

# %%
s = te.create_schedule(C2)
CC = s.cache_write(C2, "local")
mo, no, mi, ni = s[C2].tile(C2.op.axis[0], C2.op.axis[1], bn, bn)
s[CC].compute_at(s[C2], no)
mc, nc = s[CC].op.axis
ko, ki = s[CC].split(s[CC].op.reduce_axis[0], factor=kfactor)
s[CC].reorder(ko, mc, ki, nc)
s[CC].vectorize(nc)
s[CC].unroll(ki)
s[C2].parallel(mo)
bigN, _, littleN = s[packedB].op.axis
s[packedB].vectorize(littleN)
s[packedB].parallel(bigN)
fbest = evaluate("cache+parallel", s, (A, B, C2))
print(te.lower(s, [A, B, C2])[:1500], "...")

# %% [markdown]
# ## 3. The operator library
#
# `te.ops` builds common operators as tensor expressions, ready to schedule. A 2-D convolution
# with padding has a padding stage, `<name>_pad`, to inline or compute where it is needed.

# %%
data = te.placeholder((1, 16, 28, 28), name="data")
weight = te.placeholder((32, 16, 3, 3), name="weight")
conv = te.ops.conv2d_nchw(data, weight, stride=1, padding=1, name="conv")
out = te.ops.relu(conv, name="relu")
s = te.create_schedule(out)
s[te.ops.stage(conv, "pad")].compute_inline()
s[conv].compute_at(s[out], out.op.axis[1])          # one output channel at a time
s[out].parallel(out.op.axis[1])
fconv = te.build(s, [data, weight, out], target=tgt, name="conv_relu")
d = np.random.randn(1, 16, 28, 28).astype(np.float32)
w = np.random.randn(32, 16, 3, 3).astype(np.float32)
got = fconv(d, w)
dp = np.pad(d, ((0, 0), (0, 0), (1, 1), (1, 1)))
ref = sum(np.einsum("nchw,oc->nohw", dp[:, :, ry:ry + 28, rx:rx + 28], w[:, :, ry, rx])
          for ry in range(3) for rx in range(3))
np.testing.assert_allclose(got, np.maximum(ref, 0), rtol=1e-4, atol=1e-4)
print("conv2d + relu: ok,", got.shape)

# %% [markdown]
# ## 4. Custom reductions
#
# A commutative reducer from two Python functions: argmax carries (index, value) pairs.

# %%
argmax = te.comm_reducer(
    lambda x, y: (te.select(y[1] > x[1], y[0], x[0]), te.max(x[1], y[1])),
    lambda t0, t1: (-1, float("-inf")), name="argmax")
X = te.placeholder((8, 100), name="X")
r = te.reduce_axis((0, 100), name="r")
idx, val = te.compute((8,), lambda i: argmax((r, X[i, r]), axis=r), name="am")
fam = te.build(te.create_schedule([idx, val]), [X, idx, val], target=tgt, name="argmax")
x = np.random.randn(8, 100).astype(np.float32)
i_out, v_out = fam(x)
assert (i_out == x.argmax(1)).all() and (v_out == x.max(1)).all()
print("argmax: ok")

# %% [markdown]
# ## 5. Errors
#
# Every failure is a `te.Error` subclass carrying te's message: `te.ScheduleError`,
# `te.ShapeError`, `te.DTypeError`, ... Kernels check the arrays they are given.

# %%
try:
    s = te.create_schedule(C)
    s[C].split(C.op.axis[0], factor=0)
except te.ScheduleError as e:
    print("ScheduleError:", e)
try:
    fadd(va, vb[:-1])
except te.ShapeError as e:
    print("ShapeError:", e)
try:
    fadd(va.astype(np.float64), vb)
except te.DTypeError as e:
    print("DTypeError:", e)

# %% [markdown]
# ## 6. Saving kernels
#
# `Module.save` writes an object file, a static library and a header, for C programs that
# link only te's small runtime (no LLVM, no Python).

# %%
import tempfile  # noqa: E402

with tempfile.TemporaryDirectory() as tmp:
    fbest.save(os.path.join(tmp, "mmult"), ["object", "static_lib", "header"])
    print("saved:", sorted(os.listdir(tmp)))

print("\nsummary (GFLOP/s):", ", ".join("%s %.1f" % (k, gflop / t) for k, t in results.items()))
