"""Building: targets, lower text, module sources and entry points, saving kernels for programs
that run without te, threads, and (when libte has it) autotuning."""
import ctypes
import time

import numpy as np
import pytest

import te
from _util import assert_close, poisoned, rand


def scale(n=16, name="C"):
    A = te.placeholder((n,), name="A")
    C = te.compute((n,), lambda i: A[i] * 3, name=name)
    return A, C


def test_targets(ctx):
    t = te.target("llvm")
    assert str(t).startswith("llvm -mtriple=") and "-mcpu=" in str(t)
    assert "native" not in str(te.target("llvm -mcpu=native"))
    if te._lib.has("te_target_short_str"):
        assert t.short.startswith("llvm -mcpu=") and "-mattr" not in t.short
    if te._lib.has("te_target_vector_bits"):
        assert t.vector_bits in (128, 256, 512)
        assert t.lanes("float32") == t.vector_bits // 32 and t.lanes("float64") == t.vector_bits // 64
    arm = te.Target("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v2")
    A, C = scale()
    f = te.build(te.create_schedule(C), [A, C], target=arm)
    assert "ret" in f.get_source("asm")             # cross-compiled: assembly, not run


def test_lower_text_and_module_info(ctx, rng):
    A, C = scale()
    s = te.create_schedule(C)
    text = te.lower(s, [A, C])
    assert text.startswith("func main(A: f32[16], C: f32[16])") and "produce C" in text
    t0 = time.monotonic()
    f = te.build(s, [A, C], name="triple")
    build_s = time.monotonic() - t0
    assert f.name == "triple" and f["triple"] is f
    with pytest.raises(te.NotFoundError):
        f["other"]
    assert "define" in f.get_source("ll") and "triple" in f.source("asm")
    times = f.build_times
    assert set(times) == {"lower_s", "llvm_s", "jit_s"} and min(times.values()) > 0
    assert sum(times.values()) <= build_s       # the phases, within the whole te.build call
    # the raw C entry point: int32_t triple(DLTensor *, DLTensor *)
    from te.dlpack import as_dltensor
    entry = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p)(f.entry)
    a = rand(rng, (16,))
    c = poisoned(16)
    ha, hc = as_dltensor(a), as_dltensor(c)
    assert entry(ctypes.addressof(ha.dl), ctypes.addressof(hc.dl)) == 0
    assert_close(c, a * 3)
    assert "triple(A, C)" in repr(f)


def test_save_object_library_header(ctx, tmp_path):
    A, C = scale(name="C")
    f = te.build(te.create_schedule(C), [A, C], name="scale3")
    f.save(str(tmp_path / "scale3"), ["object", "static_lib", "header", "llvm_ir", "asm"])
    for fn in ("scale3.o", "libscale3.a", "scale3.h", "scale3.ll", "scale3.s"):
        assert (tmp_path / fn).stat().st_size > 0, fn
    header = (tmp_path / "scale3.h").read_text()
    assert "scale3(" in header and "DLTensor" in header
    with open(tmp_path / "scale3.o", "rb") as fh:
        assert fh.read(4) == b"\x7fELF"
    with pytest.raises(te.InvalidArgError, match="unknown output"):
        f.save(str(tmp_path / "x"), ["pdf"])


def test_save_several_modules_in_one_library(ctx, tmp_path):
    A, C = scale(name="C")
    B = te.compute((16,), lambda i: A[i] + 1, name="B")
    f1 = te.build(te.create_schedule(C), [A, C], name="k_scale")
    f2 = te.build(te.create_schedule(B), [A, B], name="k_add")
    te.save_modules([f1, f2], tmp_path / "both", ("static_lib", "header"))
    header = (tmp_path / "both.h").read_text()
    assert "k_scale(" in header and "k_add(" in header
    with pytest.raises(te.InvalidArgError):
        te.save_modules([], tmp_path / "none")


def test_threads(ctx, rng):
    A = te.placeholder((64, 32), name="A")
    C = te.compute((64, 32), lambda i, j: A[i, j] + 1, name="C")
    s = te.create_schedule(C)
    s[C].parallel(C.op.axis[0])
    f = te.build(s, [A, C])
    a = rand(rng, (64, 32))
    before = te.num_threads()
    try:
        for n in (1, 3):
            te.set_num_threads(n)
            assert te.num_threads() == n
            assert_close(f(a), a + 1)
    finally:
        te.set_num_threads(0)
    assert te.num_threads() == before


@pytest.mark.skipif(not getattr(te, "HAS_TUNE", False), reason="libte built without autotuning")
def test_tune_and_apply_best(ctx, rng, tmp_path):
    A = te.placeholder((32, 32), name="A")
    B = te.placeholder((32, 32), name="B")
    C = te.ops.matmul(A, B, name="mm")
    log = tmp_path / "mm.jsonl"
    seen = []
    # threads=1: once this process has run parallel kernels (OpenMP's pool exists), te_tune's
    # forked children hang on parallel candidates until their timeout (reported to autotune)
    summary = te.tune(C, target="llvm", log_path=log, trials=4, batch=4, seed=1,
                      min_repeats=1, max_repeats=2, min_repeat_s=0.001, threads=1,
                      confirm=2, confirm_rounds=2, timeout_s=60,   # only a hang reaches it
                      progress=seen.append, description="matmul 32x32x32 from pytest")
    assert summary.measured == 4 and summary.errors == 0 and len(summary.key) == 16
    assert summary.confirmed == 2                      # the best 2 measured again: 2 more records
    assert len(log.read_text().splitlines()) == 6
    assert summary.best_gflops > 0 and log.exists()
    assert seen and seen[-1].trials_total == 4
    text, key = te.tune_workload(C)
    assert key == summary.key and "mm" in text
    s = te.create_schedule(C)
    te.apply_best(s, log, target="llvm")
    assert s.trace()                                   # the best record's steps, replayed
    f = te.build(s, [A, B, C])
    a, b = rand(rng, (32, 32)), rand(rng, (32, 32))
    assert_close(f(a, b), a @ b)
    D = te.compute((4,), lambda i: A[i, i] * 2, name="other")
    with pytest.raises(te.NotFoundError):
        te.apply_best(te.create_schedule(D), log, target="llvm")


def _quick_matmul_tuning():
    """A 16 x 16 matmul and te.tune options that measure two candidates in moments."""
    A = te.placeholder((16, 16), name="A")
    B = te.placeholder((16, 16), name="B")
    quick = dict(trials=2, batch=2, seed=1, min_repeats=1, max_repeats=2, min_repeat_s=0.001,
                 threads=1, confirm=-1, timeout_s=60)
    return te.ops.matmul(A, B, name="mm"), quick


def test_tune_clock_option_reaches_the_log_and_a_bad_one_is_refused(ctx, tmp_path):
    if not getattr(te, "HAS_TUNE", False):
        pytest.skip("libte built without autotuning")
    import json
    C, quick = _quick_matmul_tuning()
    for clock in ("wall", "cpu"):
        log = tmp_path / ("%s.jsonl" % clock)
        te.tune(C, log_path=log, clock=clock, **quick)
        recs = [json.loads(line) for line in log.read_text().splitlines()]
        assert recs and all(r["tuner"]["measure"]["clock"] == clock for r in recs)
    with pytest.raises(te.InvalidArgError, match="clock"):
        te.tune(C, log_path=tmp_path / "bad.jsonl", clock="tsc", **quick)
    with pytest.raises(te.InvalidArgError, match="clock"):
        te.tune(C, log_path=tmp_path / "bad.jsonl", clock=7, **quick)


def test_tune_max_statements_reaches_te_tune(ctx, tmp_path):
    """te_tune_options.max_statements in the ctypes struct: a limit of 1 refuses every candidate
    (error records naming the limit), and a negative one is te_tune's InvalidArgError."""
    if not getattr(te, "HAS_TUNE", False):
        pytest.skip("libte built without autotuning")
    import json
    C, quick = _quick_matmul_tuning()
    log = tmp_path / "limit.jsonl"
    s = te.tune(C, log_path=log, max_statements=1, **quick)
    assert s.errors == s.measured == 2
    recs = [json.loads(line) for line in log.read_text().splitlines()]
    assert recs and all("over the tuner's limit 1" in r["result"]["message"] for r in recs)
    with pytest.raises(te.InvalidArgError, match="max_statements"):
        te.tune(C, log_path=tmp_path / "bad.jsonl", max_statements=-1, **quick)


@pytest.mark.skipif(getattr(te, "HAS_TUNE", False), reason="libte has autotuning")
def test_tune_absent_is_unsupported(ctx, tmp_path):
    A, C = scale()
    if not te._lib.has("te_tune"):
        with pytest.raises(te.UnsupportedError):
            te.tune(C, log_path=tmp_path / "log")
    if not te._lib.has("te_apply_best"):
        with pytest.raises(te.UnsupportedError):
            te.apply_best(te.create_schedule(C), tmp_path / "log")


def test_tune_option_checks(ctx, tmp_path):
    A, C = scale()
    with pytest.raises(te.InvalidArgError, match="log_path"):
        te.tune(C)
    with pytest.raises(te.InvalidArgError, match="unknown option"):
        te.tune(C, log_path=tmp_path / "log", trails=3)


@pytest.mark.skipif(not te.HAS_PARSE, reason="libte without te_parse")
def test_parse_and_workload_text(ctx, rng):
    outs = te.parse("C[i, j] = sum(A[i, k]*B[k, j], k) where A: f32[8, 4], B: f32[4, 6], "
                    "k: [0, 4)")
    assert len(outs) == 1 and outs[0].name == "C" and outs[0].shape == (8, 6)
    text = te.workload_text(outs)
    again = te.parse(text)
    assert te.workload_text(again) == text
    assert te.workload_key(text) == "%016x" % te.workload_hash(text)
    with pytest.raises(te.ParseError):
        te.parse("C[i, j = A[i]")


@pytest.mark.skipif(not te.HAS_PARSE, reason="libte without te_parse")
def test_workload_inputs_are_the_kernel_arguments(ctx, rng):
    # first-use order: W is read before X in the text, though declared after it
    outs = te.parse("Y[i, j] = sum(W[j, k]*X[i, k], k) + b[j] "
                    "where X: f32[5, 7], W: f32[3, 7], b: f32[3], k: [0, 7)")
    ins = te.workload_inputs(outs)
    assert [t.name for t in ins] == ["W", "X", "b"]
    assert [t.shape for t in ins] == [(3, 7), (5, 7), (3,)]
    f = te.build(te.create_schedule(outs), ins + outs)
    w, x, b = (rng.standard_normal(t.shape).astype(np.float32) for t in ins)
    y = np.full((5, 3), np.nan, np.float32)
    f(w, x, b, y)
    np.testing.assert_allclose(y, x @ w.T + b, rtol=1e-5, atol=1e-5)
    with pytest.raises(te.UnsupportedError, match="scalar parameter"):
        te.workload_inputs(te.parse("C[i] = A[i]*alpha where A: f32[4], alpha: f32"))


@pytest.mark.skipif(te.HAS_PARSE, reason="libte has te_parse")
def test_parse_absent_is_unsupported(ctx):
    with pytest.raises(te.UnsupportedError):
        te.parse("C[i] = A[i] where A: f32[4]")
