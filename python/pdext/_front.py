"""What every framework front (pdext.torch, pdext.jax, pdext.paddle, pdext.mindspore) shares:
reading the ops a register() call is given, binding a grad op's arguments, and the cache folder
a front builds into."""

import os

from . import _pdext


def ops_of(ops, front):
    """(title, {name: Op}) of what `front`'s register() takes: a module of ops (pdext.load,
    load_inline, load_library, a bundle), one Op, or a pdext.aot callable loaded at creation."""
    if isinstance(ops, _pdext.Op):
        return ops.__name__, {ops.__name__: ops}
    op = getattr(ops, "op", None)
    if isinstance(op, _pdext.Op):  # pdext.aot(..., n_inputs=...)
        return op.__name__, {op.__name__: op}
    if hasattr(ops, "func") and hasattr(ops, "_load"):
        raise TypeError(
            "%s: %r has no op yet: pass n_inputs= (or input_names=) to pdext.aot so that it "
            "loads at creation" % (front, ops)
        )
    found = {}
    for name in dir(ops):
        op = getattr(ops, name, None)
        if isinstance(op, _pdext.Op):
            found[op.__name__] = op
    if not found:
        raise TypeError(
            "%s: %r holds no pdext ops (expected the module of pdext.load, load_inline, "
            "load_library or aot)" % (front, ops)
        )
    return getattr(ops, "__name__", "ops"), found


def grad_args(grad, inputs, outputs, output_grads):
    """The arguments of grad op `grad`, in its declared order, from the forward call: per
    input, as grad.grad_inputs says (the binding libpdext computed when the grad op was
    registered, the one the tape and gradcheck use), the forward input, the forward output or
    the gradient of a forward output of that index; None for one bound to nothing. `inputs`,
    `outputs` and `output_grads` are indexable in the forward op's declared order."""
    src = {"input": inputs, "output": outputs, "output_grad": output_grads}
    return [None if b is None else src[b[0]][b[1]] for b in grad.grad_inputs]


def input_grads(grad, results, n_inputs):
    """Per forward input (n_inputs of them), the result of grad op `grad` that is its gradient
    (grad.grad_outputs), or None. `results` are the grad op's outputs in declared order."""
    res = [None] * n_inputs
    for r, p in zip(results, grad.grad_outputs):
        if p is not None:
            res[p] = r
    return res


def cache_dir(sub):
    """`sub` in pdext's cache: $PDEXT_CACHE_DIR, else ${XDG_CACHE_HOME:-~/.cache}/pdext, as the
    JIT's own cache."""
    d = os.environ.get("PDEXT_CACHE_DIR")
    if not d:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        d = os.path.join(base, "pdext")
    return os.path.join(d, sub)


def built_bridge(sub, prefix, src, command, versions):
    """The path of a front's C++ bridge (`src`, shipped beside this file) built into the cache
    folder `sub` by command(src, out) (a list for subprocess), building it on first use. The
    name holds a hash of the source, the command and `versions` (the framework's and pdext's),
    so that a new release of either builds anew. One build however many processes start at
    once (DDP ranks on one machine, or on a shared file system): the first takes a file lock
    beside it and builds, the others wait for it and find the library. A build is written to a
    file of its own and renamed into place, so a reader never sees half a library.
    RuntimeError, with the compiler's message, when the build fails."""
    import fcntl
    import hashlib
    import subprocess
    import tempfile

    with open(src, "rb") as fh:
        text = fh.read()
    key = hashlib.sha256(text + repr((command(src, "OUT"), versions)).encode()).hexdigest()[:16]
    d = cache_dir(sub)
    path = os.path.join(d, "%s_%s.so" % (prefix, key))
    if os.path.exists(path):
        return path
    os.makedirs(d, exist_ok=True)
    with open(path + ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if os.path.exists(path):
                return path
            fd, tmp = tempfile.mkstemp(suffix=".so", dir=d)
            os.close(fd)
            try:
                run = subprocess.run(command(src, tmp), capture_output=True, text=True)
                if run.returncode != 0:
                    raise RuntimeError("building %s failed:\n%s" % (src, run.stderr[-4000:]))
                os.replace(tmp, path)
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return path
