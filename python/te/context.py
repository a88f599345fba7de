"""Contexts: the owner of everything te makes.

A C context (te_ctx) owns every expression, tensor, schedule and compiled kernel made in it,
and frees them all at once. In Python a ``Context`` frees its te_ctx only when nothing refers
to it any more: every wrapper (Expr, Tensor, Schedule, Stage, Iter, Module, ...) holds a
reference to its Context, so a kernel or an expression stays valid as long as it is reachable,
whatever happened to the variable that held the context.

Functions that make objects take their context from their operands; when nothing says which
(``te.var("n")``, ``te.placeholder((4,), name="A")``) they use the *current* context: the
innermost ``with ctx:`` block of this thread, or else this thread's default context.
A context must be used by one thread at a time (te's rule); default contexts are per thread.
"""
import threading

from . import _lib
from . import errors


class Context:
    """An owner of te objects (a te_ctx). ``with Context() as ctx:`` makes it current."""

    __slots__ = ("_ptr", "__weakref__")
    _keep_errors = False   # errors.raise_last clears the error it raises (see BorrowedContext)

    def __init__(self):
        p = _lib.lib.te_ctx_new()
        if not p:
            raise errors.OutOfMemoryError("te_ctx_new: out of memory")
        self._ptr = p

    # _free is bound at class creation so that it still works while the interpreter shuts down.
    def __del__(self, _free=_lib.lib.te_ctx_free):
        p = getattr(self, "_ptr", None)
        if p:
            self._ptr = None
            _free(p)

    def __enter__(self):
        _state().stack.append(self)
        return self

    def __exit__(self, *exc):
        _state().stack.pop()
        return False

    @property
    def handle(self):
        """The te_ctx pointer as an int (for interoperating with other C code)."""
        return self._ptr

    def __repr__(self):
        return "<te.Context at 0x%x>" % (self._ptr or 0)


class BorrowedContext(Context):
    """A te_ctx that te owns, seen from Python for a while: the context of the schedule a
    template is given (te/tune.h). It is never freed from Python, and it keeps its errors: an
    error te reports in it is raised as usual but stays on the context (the first one wins),
    so that te_tune sees the run failed and reports te's message."""

    __slots__ = ()
    _keep_errors = True

    def __init__(self, ptr):   # not Context's: nothing is made
        self._ptr = ptr

    def __del__(self):
        pass

    def __enter__(self):
        raise errors.InvalidArgError("a borrowed context (te_tune's) cannot be made current")

    def __repr__(self):
        return "<te.BorrowedContext at 0x%x>" % (self._ptr or 0)


class _State(threading.local):
    def __init__(self):
        self.stack = []
        self.default = None


_tls = _State()


def _state():
    return _tls


def current_context():
    """The context of the innermost ``with ctx:`` of this thread, else its default context."""
    st = _tls
    if st.stack:
        return st.stack[-1]
    if st.default is None:
        st.default = Context()
    return st.default


def reset_default_context():
    """Replaces this thread's default context by a new one. The old one is freed when the last
    object made in it is gone."""
    _tls.default = None


def pick(ctx=None, *objs):
    """The context to make something in: ctx if given, else the first operand's, else the
    current one."""
    if ctx is not None:
        if not isinstance(ctx, Context):
            raise errors.InvalidArgError("ctx must be a te.Context (got %s)" % type(ctx).__name__)
        return ctx
    for o in objs:
        c = getattr(o, "ctx", None)
        if isinstance(c, Context):
            return c
        if isinstance(o, (list, tuple)):
            for x in o:
                c = getattr(x, "ctx", None)
                if isinstance(c, Context):
                    return c
    return current_context()
