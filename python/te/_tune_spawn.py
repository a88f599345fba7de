"""te.tune in a process where PyTorch is loaded: the tuning runs in a fresh Python process.

te_tune measures every candidate in a forked child (tune.h). A fork copies only the calling
thread, so in a process whose PyTorch has started its OpenMP (or intra-op) threads the child
can wait forever on a lock one of those threads held: te.tune would hang. So when torch is
imported, te.tune sends the computation (its workload text, te.workload_text) with the target
and options to a new Python process without PyTorch (subprocess: fork and exec at once, which
is safe with threads), which parses it (te.parse), tunes it into the same log and prints the
summary back. The log's records are keyed by the workload, so te.apply_best on the original
computation finds them. What cannot cross processes (a progress callback, a schedule template:
Python functions) is refused with TE_ERR_UNSUPPORTED instead. TE_TUNE_IN_PROCESS=1 forces the
in-process path (a process that knows its PyTorch has not started threads).
"""
import json
import os
import subprocess
import sys

from . import _lib
from . import errors

_CHILD = r"""
import json, sys
import te
req = json.load(sys.stdin)
outs = te.parse(req["workload"])
r = te.tune(outs, target=req["target"], log_path=req["log_path"],
            description=req["description"], **req["options"])
print("TE_TUNE_SUMMARY " + json.dumps(list(r)))
"""


def needed():
    """Whether te.tune must run its tuning in another process (see the module's doc)."""
    return "torch" in sys.modules and os.environ.get("TE_TUNE_IN_PROCESS", "0") in ("", "0")


def refuse_callbacks(progress, template):
    what = "a progress callback" if progress is not None else "a schedule template"
    raise errors.UnsupportedError(
        "te.tune: PyTorch is loaded in this process, where te_tune's forked measurement "
        "children can hang on PyTorch's threads, so te.tune tunes in a fresh process instead; "
        "%s (a Python function) cannot go there: tune from a process without torch, or set "
        "TE_TUNE_IN_PROCESS=1 if this process's PyTorch has not started threads" % what)


def tune(workload, target, log_path, description, options):
    """Runs te.tune on the parsed workload in a new Python process; returns the summary's
    fields (a list, in TuneSummary's order)."""
    from .parse import HAS_PARSE
    if not HAS_PARSE:
        raise errors.UnsupportedError("te.tune: PyTorch is loaded in this process and this "
                                      "libte (%s) has no te_parse to tune in another" % _lib.path)
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, TE_LIBRARY=_lib.path, TE_TUNE_IN_PROCESS="1",
               PYTHONPATH=os.pathsep.join([pkg_parent] + [p for p in [os.environ.get(
                   "PYTHONPATH")] if p]))
    req = {"workload": workload, "target": target, "log_path": os.fspath(log_path),
           "description": description, "options": options}
    r = subprocess.run([sys.executable, "-c", _CHILD], input=json.dumps(req), env=env,
                       capture_output=True, text=True)
    for line in r.stdout.splitlines():
        if line.startswith("TE_TUNE_SUMMARY "):
            return json.loads(line[len("TE_TUNE_SUMMARY "):])
    last = (r.stderr.strip().splitlines() or ["(no output)"])[-1]
    raise errors.KernelError("te.tune: the tuning process (PyTorch is loaded here, so te.tune "
                             "tunes in a fresh process) failed with exit status %d: %s"
                             % (r.returncode, last))
