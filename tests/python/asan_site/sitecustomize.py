"""The ASan + UBSan run of the Python suites (python/CMakeLists.txt puts this directory on
PYTHONPATH): every Python process of the run, pytest's and the ones the tests start, runs this
at start-up.

- libasan is preloaded into the interpreter (PDEXT_ASAN_PRELOAD), which an ASan-built _pdext
  needs first in the process. Children must not inherit it: the compilers the JIT runs would
  be run under ASan. Python children, which import pdext, get it back through sys.executable,
  the script beside this file.
- Leaks are checked once the program is done and before the interpreter finalizes (atexit):
  then what Python still holds is reachable (PYTHONMALLOC=malloc makes its objects visible to
  LeakSanitizer), where a check after finalization would report what CPython leaves
  allocated at exit. lsan.supp lets the interpreter and numpy keep what they allocate
  themselves; memory pdext's code allocates and loses is reported, and the process then
  exits with status 23.
"""
import atexit
import ctypes
import os
import sys

_PRELOAD = os.environ.get("PDEXT_ASAN_PRELOAD")


def _check_leaks():
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        check = ctypes.CDLL(None).__lsan_do_recoverable_leak_check
    except AttributeError:
        return
    if check() != 0:
        os._exit(23)


if _PRELOAD:
    os.environ.pop("LD_PRELOAD", None)
    os.environ.setdefault("PDEXT_ASAN_PYTHON", sys.executable)
    sys.executable = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python")
    atexit.register(_check_leaks)
