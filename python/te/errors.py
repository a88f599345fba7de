"""Exceptions: one class per te_status, all subclasses of te.Error.

A C call that fails leaves its status and message on the context; ``raise_last`` turns them
into the matching exception (carrying the C message unchanged) and clears the context's error,
so the next call starts clean (except on the context of a schedule template, which keeps it
for te_tune: context.BorrowedContext). Where a Python builtin exception has the same meaning the
class inherits from it too (``te.ShapeError`` is a ``ValueError``), so generic ``except`` clauses
work.
"""
from . import _lib


class Error(Exception):
    """Base class of every error te raises. ``status`` is the C te_status code,
    ``status_name`` its name ("TE_ERR_SHAPE"), ``message`` the C message."""

    status = -1
    status_name = "TE_ERR"

    def __init__(self, message):
        super().__init__(message)
        self.message = message

    def __str__(self):
        return self.message


class InvalidArgError(Error, ValueError):
    """TE_ERR_INVALID_ARG: NULL or out-of-range argument, wrong arity, object of another
    context (also raised for misuse the Python layer catches before calling C)."""
    status = 1


class DTypeError(Error, TypeError):
    """TE_ERR_TYPE: dtype mismatch, or an operation that makes no sense for a dtype."""
    status = 2


class ShapeError(Error, ValueError):
    """TE_ERR_SHAPE: wrong rank or extent, of a tensor or of an array given at call time."""
    status = 3


class ScheduleError(Error):
    """TE_ERR_SCHEDULE: a schedule primitive that breaks a rule."""
    status = 4


class BoundsError(Error):
    """TE_ERR_BOUNDS: bound inference could not prove an access in range."""
    status = 5


class TargetError(Error):
    """TE_ERR_TARGET: unknown or unusable target, or a schedule the target cannot run."""
    status = 6


class CodegenError(Error):
    """TE_ERR_CODEGEN: the back end refused the code (a bug in te)."""
    status = 7


class KernelError(Error, RuntimeError):
    """TE_ERR_RUNTIME: a kernel returned an error when called."""
    status = 8


class FileError(Error, OSError):
    """TE_ERR_IO: a file could not be read or written."""
    status = 9


class ParseError(Error, ValueError):
    """TE_ERR_PARSE: malformed text (target string, trace, workload)."""
    status = 10


class OutOfMemoryError(Error, MemoryError):
    """TE_ERR_NOMEM: allocation failed."""
    status = 11


class UnsupportedError(Error, NotImplementedError):
    """TE_ERR_UNSUPPORTED: a valid request that this version of te does not implement."""
    status = 12


class NotFoundError(Error, LookupError):
    """TE_ERR_NOT_FOUND: a name or record that does not exist."""
    status = 13


class InternalError(Error):
    """TE_ERR_INTERNAL: an internal invariant failed: a bug in te, please report it."""
    status = 14


_CLASSES = (InvalidArgError, DTypeError, ShapeError, ScheduleError, BoundsError, TargetError,
            CodegenError, KernelError, FileError, ParseError, OutOfMemoryError, UnsupportedError,
            NotFoundError, InternalError)

STATUS_NAMES = {0: "TE_OK"}
ERRORS = {}
for _cls in _CLASSES:
    _cls.__module__ = "te"
    _cls.status_name = _lib.lib.te_status_str(_cls.status).decode()   # "TE_ERR_SHAPE"
    STATUS_NAMES[_cls.status] = _cls.status_name
    ERRORS[_cls.status] = _cls

# Aliases, for readers who look for these names.
TypeMismatchError = DTypeError
RuntimeError_ = KernelError
IOError_ = FileError

__all__ = ["Error"] + [c.__name__ for c in _CLASSES] + [
    "TypeMismatchError", "RuntimeError_", "IOError_"]


def error_for(status, message):
    """The exception object for a te_status and a message."""
    cls = ERRORS.get(status, InternalError)
    return cls(message)


def raise_last(ctx, what):
    """Raises the context's pending error (and clears it, unless the context keeps its errors:
    the context of a schedule template, where te_tune must see them). ``what`` names the C
    function, for the rare failure that left no message (which would be a bug in te)."""
    p = ctx._ptr
    status = _lib.lib.te_last_status(p)
    msg = (_lib.lib.te_last_error(p) or b"").decode("utf-8", "replace")
    if not getattr(ctx, "_keep_errors", False):
        _lib.lib.te_clear_error(p)
    if status == 0:
        raise InternalError("%s: failed without an error message" % what)
    raise error_for(status, msg or "%s failed (%s)" % (what, STATUS_NAMES.get(status)))


def check(ctx, status, what):
    """Raises for a non-OK status returned by a C call."""
    if status != 0:
        raise_last(ctx, what)


def check_ptr(ctx, p, what):
    """Raises when a C constructor returned NULL; returns the pointer otherwise."""
    if not p:
        raise_last(ctx, what)
    return p
