"""te.tune(template=...): schedule templates written in Python (te/knobs.py over te_knob_*).

A 64x64x64 matmul whose template splits i by a factor knob {4, 8, 16}, picks one of two loop
orders and whether to vectorize: the log's records are of sketch "user" with every knob value
among its candidates, te.apply_best's kernel matches numpy; a template that raises on its first
run makes te.tune raise te's error chained to the template's exception; knob misuse raises with
te's message; nothing raised in a template crosses into C.
"""
import json

import pytest

import te
from _util import assert_close, rand


@pytest.fixture(autouse=True)
def _tune_in_process(monkeypatch):
    # This process may have imported torch (test_strided.py's views) without starting its
    # threads; a template can only run in-process (te/_tune_spawn.py), so say it is safe.
    monkeypatch.setenv("TE_TUNE_IN_PROCESS", "1")

pytestmark = pytest.mark.skipif(not getattr(te, "HAS_TEMPLATES", False),
                                reason="libte without schedule templates")

TI = (4, 8, 16)
# threads=1: see test_build.test_tune_and_apply_best (forked children and OpenMP's pool)
# timeout_s=60: only a hang reaches it, however loaded the machine, so "no errors" cannot fail
# because the machine is slow
QUICK = dict(target="llvm", batch=4, population=16, generations=1, min_repeats=1, max_repeats=2,
             min_repeat_s=0.001, threads=1, confirm=-1, timeout_s=60)   # one record per trial


def matmul(n=64):
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return A, B, C


def records(log):
    with open(log) as f:
        return [json.loads(line) for line in f if line.strip()]


def params(rec):
    return dict(kv.split("=") for kv in rec["tuner"]["params"].split())


def mm_template(seen=None):
    """i split by the knob "ti", j by 16, the order ("order") and vectorization ("vec")."""
    def template(s, knobs):
        st = s["C"]
        io, ii = knobs.split(st, st.axis[0], "ti", TI)
        jo, ji = st.split(st.axis[1], factor=16)
        k = st.reduce_axis[0]
        order = knobs.reorder(st, "order", [(io, jo, k, ii, ji), (io, jo, ii, k, ji)])
        vec = knobs.choice("vec", 2)
        if vec:
            st.vectorize(ji)
        if seen is not None:
            seen.append((order, vec, [x.name for x in st.leaf_iters]))
    return template


def test_template_tunes_its_knobs_and_apply_best_runs(ctx, rng, tmp_path):
    A, B, C = matmul()
    log = tmp_path / "mm.jsonl"
    seen = []
    summary = te.tune(C, log_path=log, trials=8, seed=3, template=mm_template(seen), **QUICK)
    assert summary.measured == 8 and summary.errors == 0 and summary.best_gflops > 0
    # the first run takes the first candidate of every knob; reorder says which order it applied
    assert seen[0] == (0, 0, ["i.o", "j.o", "k", "i.i", "j.i"])
    orders = [["i.o", "j.o", "k", "i.i", "j.i"], ["i.o", "j.o", "i.i", "k", "j.i"]]
    assert all(leaves == orders[order] for order, _vec, leaves in seen)

    recs = records(log)
    assert len(recs) == 8
    for r in recs:
        assert r["tuner"]["sketch"] == "user" and r["result"]["error"] == 0
        p = params(r)
        assert list(p) == ["ti", "order", "vec"], p      # the template's knob order
        assert int(p["ti"]) in TI and p["order"] in ("0", "1") and p["vec"] in ("0", "1")
        trace = r["trace"]                               # the knob values are what was applied
        assert "split C i %s\n" % p["ti"] in trace, trace
        assert "reorder C i.o j.o %s j.i\n" % ("k i.i" if p["order"] == "0" else "i.i k") in trace
        assert ("vectorize C j.i" in trace) == (p["vec"] == "1"), trace
    assert len({r["tuner"]["params"] for r in recs}) == 8   # no point measured twice

    s = te.create_schedule(C)
    te.apply_best(s, log, target="llvm")
    trace = s.trace()
    assert "split C i " in trace and "reorder C " in trace, trace
    f = te.build(s, [A, B, C])
    a, b = rand(rng, (64, 64)), rand(rng, (64, 64))
    assert_close(f(a, b), a @ b)


def raised_inside(fn):
    """A template that calls fn(s, knobs) and keeps what it raised (then raises it again)."""
    def template(s, knobs):
        try:
            fn(s, knobs)
        except Exception as e:
            template.raised.append(e)
            raise
    template.raised = []
    return template


def test_a_template_that_raises_on_its_first_run_makes_tune_raise(ctx, tmp_path):
    A, B, C = matmul(16)
    log = tmp_path / "log.jsonl"

    def boom(s, knobs):
        knobs.choice("c", 2)
        raise ValueError("boom")

    with pytest.raises(te.InvalidArgError, match="failed on its first run") as ei:
        te.tune(C, log_path=log, trials=4, template=boom, **QUICK)
    assert "ValueError: boom" in str(ei.value)
    assert isinstance(ei.value.__cause__, ValueError) and str(ei.value.__cause__) == "boom"

    # a te error in the template: te_tune's status and te's message, chained to that error
    def bad_vectorize(s, knobs):
        s["C"].vectorize(s["C"].reduce_axis[0])

    with pytest.raises(te.ScheduleError, match="first run.*te_vectorize: stage 'C'") as ei:
        te.tune(C, log_path=log, trials=4, template=bad_vectorize, **QUICK)
    assert isinstance(ei.value.__cause__, te.ScheduleError)
    assert ei.value.__cause__.message in ei.value.message
    assert not log.exists() or not records(log)          # nothing was measured
    te.tune_workload(C)                                  # the context was left clean


@pytest.mark.parametrize("misuse, message", [
    (lambda s, k: (k.int("t", (1, 2)), k.int("t", (1, 3))),
     "te_knob_int: knob 't' is named twice in one run"),
    (lambda s, k: k.int("t", []), "te_knob_int: knob 't': ncand must be in [1, 64] (got 0)"),
    (lambda s, k: k.choice("c", 0), "te_knob_choice: knob 'c': nchoices must be in [1, 64]"),
    (lambda s, k: k.reorder("C", "o", []), "te_knob_reorder: knob 'o': n must be >= 1"),
    (lambda s, k: k.split(s["C"], s["C"].axis[0], "f", (4, 0)),
     "te_knob_split: knob 'f': factor 1 must be > 0 (got 0)"),
    (lambda s, k: k.int("t", (2, 2)), "te_knob_int: knob 't': candidates must be distinct"),
    (lambda s, k: k.choice("a b", 2), "te_knob_choice: knob 'a b': a name is 1 to 31"),
    (lambda s, k: k.reorder(s["C"], "o", [s["C"].axis, s["C"].axis[:1] * 2]),
     "te_knob_reorder: knob 'o': order 1 is not a permutation of order 0's loops"),
], ids=["duplicate", "no-ints", "no-choices", "no-orders", "factor-0", "repeated",
        "bad-name", "not-a-permutation"])
def test_knob_misuse_raises_with_tes_message(ctx, tmp_path, misuse, message):
    A, B, C = matmul(16)
    template = raised_inside(misuse)
    with pytest.raises(te.InvalidArgError) as ei:
        te.tune(C, log_path=tmp_path / "log.jsonl", trials=4, template=template, **QUICK)
    inside, = template.raised
    assert isinstance(inside, te.InvalidArgError) and message in inside.message, inside
    assert message in ei.value.message and ei.value.__cause__ is inside


def test_a_knob_error_the_template_catches_still_fails_the_run(ctx, tmp_path):
    A, B, C = matmul(16)
    caught = []

    def template(s, knobs):
        try:
            knobs.int("t", [])
        except te.InvalidArgError as e:
            caught.append(e)

    with pytest.raises(te.InvalidArgError, match="ncand must be in") as ei:
        te.tune(C, log_path=tmp_path / "log.jsonl", trials=4, template=template, **QUICK)
    assert caught and ei.value.__cause__ is None


def test_knobs_that_depend_on_knob_values_make_those_candidates_invalid(ctx, tmp_path, capfd):
    A, B, C = matmul(16)
    log = tmp_path / "log.jsonl"

    def template(s, knobs):
        st = s["C"]
        ti = knobs.int("ti", (4, 8))
        st.split(st.axis[0], factor=ti)
        tj = knobs.int("tj", (ti, 16))          # breaks the rule when ti is not its first value
        st.split(st.axis[1], factor=tj)

    template = raised_inside(template)
    te.tune(C, log_path=log, trials=4, template=template, **QUICK)
    recs = records(log)
    assert recs and all(params(r)["ti"] == "4" for r in recs)
    assert template.raised and all(isinstance(e, te.InvalidArgError) and
                                   "knob 'tj' differs from the template's first run" in e.message
                                   for e in template.raised)
    assert "differs from the template's first run" in capfd.readouterr().err   # te's warning


def test_a_python_error_in_a_later_run_skips_the_candidate_with_a_warning(ctx, tmp_path):
    A, B, C = matmul(16)
    log = tmp_path / "log.jsonl"

    def template(s, knobs):
        st = s["C"]
        ti = knobs.int("ti", (2, 4, 8))
        st.split(st.axis[0], factor=ti)
        if ti == 8:
            return 1 // 0

    with pytest.warns(RuntimeWarning, match="ZeroDivisionError"):
        summary = te.tune(C, log_path=log, trials=3, template=template, **QUICK)
    assert summary.measured == 2 and summary.errors == 0     # the two points that work
    assert sorted(params(r)["ti"] for r in records(log)) == ["2", "4"]


def test_keyboard_interrupt_in_a_template_stops_tune(ctx, tmp_path):
    A, B, C = matmul(16)
    runs = []

    def template(s, knobs):
        runs.append(knobs.choice("a", 8) + knobs.choice("b", 8))
        if len(runs) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        te.tune(C, log_path=tmp_path / "log.jsonl", trials=16, template=template, **QUICK)
    assert len(runs) == 3                                # later runs fail without calling it
    te.tune_workload(C)


def test_knobs_and_template_checks(ctx, tmp_path):
    A, B, C = matmul(16)
    kept = []

    def template(s, knobs):
        kept.append(knobs)
        assert s.outputs == [s.tensor("C")] and s.outputs[0] != C   # te_tune's context
        with pytest.raises(te.InvalidArgError, match="knob names are str"):
            knobs.choice(3, 2)
        with pytest.raises(te.InvalidArgError, match="candidates must be a sequence of ints"):
            knobs.int("x", [1.5])
        with pytest.raises(te.InvalidArgError, match="order 1 has 1 loops"):
            knobs.reorder(s["C"], "o", [s["C"].axis, s["C"].axis[:1]])
        knobs.choice("c", 2)

    te.tune(C, log_path=tmp_path / "log.jsonl", trials=1, template=template, **QUICK)
    with pytest.raises(te.InvalidArgError, match="run of the template that is over"):
        kept[0].choice("c", 2)
    with pytest.raises(te.InvalidArgError, match="template must be a function"):
        te.tune(C, log_path=tmp_path / "log.jsonl", template="C")


def test_schedule_stages_and_tensors_by_name(ctx):
    A = te.placeholder((8, 8), name="A")
    k = te.reduce_axis((0, 8), name="k")
    B = te.compute((8,), lambda i: te.sum(A[i, k], axis=k), name="B")
    C = te.compute((8,), lambda i: B[i] * 2, name="C")
    s = te.create_schedule(C)
    assert s.tensor("C") == C and s.tensor("B") == B and s["B"] == s[B] and s.stage("C") == s[C]
    assert len(s.tensor("B").op.reduce_axis) == 1 and s.tensor("C").op.reduce_axis == []
    BL = s.cache_write(B, "local")
    assert s[BL.name] == s[BL]                             # named as the trace names it
    with pytest.raises(te.NotFoundError, match="te_tune_stage: the schedule has no stage 'Z'"):
        s["Z"]
    with pytest.raises(te.NotFoundError, match="no tensor 'Z'"):
        s.tensor("Z")
    with pytest.raises(te.InvalidArgError):
        s.stage(None)
    s[C].split(C.op.axis[0], factor=4)                     # the context was left clean


def test_schedule_tensor_finds_placeholders(ctx):
    A = te.placeholder((8,), name="A")
    C = te.compute((8,), lambda i: A[i] * 2, name="C")
    t = te.create_schedule(C).tensor("A")
    assert t == A and t.kind == "placeholder"
