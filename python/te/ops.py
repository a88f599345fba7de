"""The operator library (te/ops.h): common operators as tensor expressions.

Each function builds the compute stages of one operator and returns its output tensor; nothing
is scheduled. Intermediate stages have predictable names ("<name>_pad", "<name>_max", ...) and
are found with ``te.ops.stage(out, "pad")``. Errors are te's (ShapeError, DTypeError, ...).
"""
from . import _lib
from . import errors
from .dtype import dtype as _dtype
from .tensor import Tensor

L = _lib.lib


def _t(x, what):
    if not isinstance(x, Tensor):
        raise errors.InvalidArgError("%s: expected a te.Tensor, got %s" % (what, type(x).__name__))
    return x


def _out(ctx, p, what, nreduce=None):
    return Tensor(ctx, errors.check_ptr(ctx, p, what), "compute", nreduce)


def _pair(v, what):
    if isinstance(v, (list, tuple)):
        if len(v) != 2:
            raise errors.InvalidArgError("%s must be an int or a pair (got %r)" % (what, v))
        return int(v[0]), int(v[1])
    return int(v), int(v)


def matmul(A, B, trans_a=False, trans_b=False, name=None, out_dtype=None):
    """C = op(A) x op(B) (2-D); reduce axis "k". out_dtype: the accumulator and output dtype
    (te_op_matmul_acc), e.g. "int32" for uint8 x int8 inputs."""
    _t(A, "te_op_matmul"), _t(B, "te_op_matmul")
    if out_dtype is not None:
        return _out(A.ctx, L.te_op_matmul_acc(A.ctx._ptr, A._p, B._p, int(bool(trans_a)),
                                              int(bool(trans_b)), _dtype(out_dtype).c,
                                              _lib.encode(name)), "te_op_matmul_acc", 1)
    return _out(A.ctx, L.te_op_matmul(A.ctx._ptr, A._p, B._p, int(bool(trans_a)),
                                      int(bool(trans_b)), _lib.encode(name)), "te_op_matmul", 1)


def batch_matmul(A, B, trans_a=False, trans_b=False, name=None, out_dtype=None):
    """C[b] = op(A[b]) x op(B[b]) (3-D); out_dtype as matmul's."""
    _t(A, "te_op_batch_matmul"), _t(B, "te_op_batch_matmul")
    if out_dtype is not None:
        return _out(A.ctx, L.te_op_batch_matmul_acc(A.ctx._ptr, A._p, B._p, int(bool(trans_a)),
                                                    int(bool(trans_b)), _dtype(out_dtype).c,
                                                    _lib.encode(name)),
                    "te_op_batch_matmul_acc", 1)
    return _out(A.ctx, L.te_op_batch_matmul(A.ctx._ptr, A._p, B._p, int(bool(trans_a)),
                                            int(bool(trans_b)), _lib.encode(name)),
                "te_op_batch_matmul", 1)


def _conv_params(stride, padding, dilation):
    sh, sw = _pair(stride, "stride")
    ph, pw = _pair(padding, "padding")
    dh, dw = _pair(dilation, "dilation")
    return _lib.te_conv2d_params(sh, sw, ph, pw, dh, dw)


def conv2d_nchw(data, kernel, stride=1, padding=0, dilation=1, name=None, out_dtype=None):
    """2-D convolution, data [N, C, H, W], kernel [O, C, KH, KW] -> [N, O, OH, OW]. Stages:
    "<name>_pad" when padding, then the output (reduce axes rc, ry, rx)."""
    _t(data, "te_op_conv2d_nchw"), _t(kernel, "te_op_conv2d_nchw")
    p = _conv_params(stride, padding, dilation)
    if out_dtype is not None:  # the accumulator and output dtype (te_op_conv2d_nchw_acc)
        return _out(data.ctx, L.te_op_conv2d_nchw_acc(data.ctx._ptr, data._p, kernel._p, p,
                                              _dtype(out_dtype).c, _lib.encode(name)),
                    "te_op_conv2d_nchw_acc", 3)
    return _out(data.ctx, L.te_op_conv2d_nchw(data.ctx._ptr, data._p, kernel._p, p,
                                              _lib.encode(name)), "te_op_conv2d_nchw", 3)


def conv2d_nhwc(data, kernel, stride=1, padding=0, dilation=1, name=None, out_dtype=None):
    """2-D convolution, data [N, H, W, C], kernel [KH, KW, C, O] -> [N, OH, OW, O]."""
    _t(data, "te_op_conv2d_nhwc"), _t(kernel, "te_op_conv2d_nhwc")
    p = _conv_params(stride, padding, dilation)
    if out_dtype is not None:  # the accumulator and output dtype (te_op_conv2d_nhwc_acc)
        return _out(data.ctx, L.te_op_conv2d_nhwc_acc(data.ctx._ptr, data._p, kernel._p, p,
                                              _dtype(out_dtype).c, _lib.encode(name)),
                    "te_op_conv2d_nhwc_acc", 3)
    return _out(data.ctx, L.te_op_conv2d_nhwc(data.ctx._ptr, data._p, kernel._p, p,
                                              _lib.encode(name)), "te_op_conv2d_nhwc", 3)


def depthwise_conv2d_nchw(data, kernel, stride=1, padding=0, dilation=1, name=None, out_dtype=None):
    """Depthwise 2-D convolution, data [N, C, H, W], kernel [C, 1, KH, KW] -> [N, C, OH, OW]."""
    _t(data, "te_op_depthwise_conv2d_nchw"), _t(kernel, "te_op_depthwise_conv2d_nchw")
    p = _conv_params(stride, padding, dilation)
    if out_dtype is not None:  # the accumulator and output dtype (te_op_depthwise_conv2d_nchw_acc)
        return _out(data.ctx, L.te_op_depthwise_conv2d_nchw_acc(data.ctx._ptr, data._p, kernel._p, p,
                                              _dtype(out_dtype).c, _lib.encode(name)),
                    "te_op_depthwise_conv2d_nchw_acc", 2)
    return _out(data.ctx, L.te_op_depthwise_conv2d_nchw(data.ctx._ptr, data._p, kernel._p, p,
                                                        _lib.encode(name)),
                "te_op_depthwise_conv2d_nchw", 2)


def requantize(x, scale, zero_point, dtype, name=None):
    """An integer accumulator to dtype (int8/uint8): round(x * scale) + zero_point, saturated,
    in integer arithmetic (te_op_requantize)."""
    _t(x, "te_op_requantize")
    return _out(x.ctx, L.te_op_requantize(x.ctx._ptr, x._p, float(scale), int(zero_point),
                                          _dtype(dtype).c, _lib.encode(name)),
                "te_op_requantize", 0)


def _pool_params(kernel, stride, padding):
    kh, kw = _pair(kernel, "kernel")
    sh, sw = _pair(stride if stride is not None else kernel, "stride")
    ph, pw = _pair(padding, "padding")
    return _lib.te_pool2d_params(kh, kw, sh, sw, ph, pw)


def max_pool2d(data, kernel, stride=None, padding=0, name=None):
    """Max pooling, NCHW (stride defaults to the window)."""
    _t(data, "te_op_max_pool2d")
    return _out(data.ctx, L.te_op_max_pool2d(data.ctx._ptr, data._p,
                                             _pool_params(kernel, stride, padding),
                                             _lib.encode(name)), "te_op_max_pool2d", 2)


def avg_pool2d(data, kernel, stride=None, padding=0, name=None):
    """Average pooling, NCHW, the divisor always the full window (padding counted)."""
    _t(data, "te_op_avg_pool2d")
    return _out(data.ctx, L.te_op_avg_pool2d(data.ctx._ptr, data._p,
                                             _pool_params(kernel, stride, padding),
                                             _lib.encode(name)), "te_op_avg_pool2d", 0)


def softmax(x, name=None):
    """Softmax over the last axis. Stages "<name>_max", "<name>_exp", "<name>_sum", output."""
    _t(x, "te_op_softmax")
    return _out(x.ctx, L.te_op_softmax(x.ctx._ptr, x._p, _lib.encode(name)), "te_op_softmax", 0)


def layer_norm(x, gamma, beta, eps=1e-5, name=None):
    """Layer normalization over the last axis. Stages "<name>_mean", "<name>_var", output."""
    _t(x, "te_op_layer_norm"), _t(gamma, "te_op_layer_norm"), _t(beta, "te_op_layer_norm")
    return _out(x.ctx, L.te_op_layer_norm(x.ctx._ptr, x._p, gamma._p, beta._p, float(eps),
                                          _lib.encode(name)), "te_op_layer_norm", 0)


def _binary(cname):
    fn = getattr(L, cname)

    def op(a, b, name=None):
        _t(a, cname), _t(b, cname)
        return _out(a.ctx, fn(a.ctx._ptr, a._p, b._p, _lib.encode(name)), cname, 0)
    op.__name__ = cname[6:]
    op.__doc__ = "Element-wise %s with NumPy broadcasting (%s)." % (cname[6:], cname)
    return op


add = _binary("te_op_add")
subtract = _binary("te_op_sub")
multiply = _binary("te_op_mul")
divide = _binary("te_op_div")
maximum = _binary("te_op_maximum")
minimum = _binary("te_op_minimum")
sub, mul, div = subtract, multiply, divide


def relu(x, name=None):
    """max(x, 0)."""
    _t(x, "te_op_relu")
    return _out(x.ctx, L.te_op_relu(x.ctx._ptr, x._p, _lib.encode(name)), "te_op_relu", 0)


def bias_add(x, bias, axis=1, name=None):
    """x + bias broadcast along axis (negative counts from the end)."""
    _t(x, "te_op_bias_add"), _t(bias, "te_op_bias_add")
    return _out(x.ctx, L.te_op_bias_add(x.ctx._ptr, x._p, bias._p, int(axis), _lib.encode(name)),
                "te_op_bias_add", 0)


def unary(x, fn, name=None):
    """fn(x) element-wise: exp, log, sqrt, tanh, sigmoid, ..., abs, neg."""
    _t(x, "te_op_unary")
    return _out(x.ctx, L.te_op_unary(x.ctx._ptr, x._p, _lib.encode(fn), _lib.encode(name)),
                "te_op_unary", 0)


def cast(x, dtype, name=None):
    """x converted element-wise to dtype."""
    _t(x, "te_op_cast")
    return _out(x.ctx, L.te_op_cast(x.ctx._ptr, x._p, _dtype(dtype).c, _lib.encode(name)),
                "te_op_cast", 0)


def stage(out, suffix):
    """The intermediate tensor "<out.name>_<suffix>" of an operator (e.g. stage(conv, "pad"))."""
    _t(out, "te_op_stage")
    return _out(out.ctx, L.te_op_stage(out._p, _lib.encode(suffix)), "te_op_stage")
