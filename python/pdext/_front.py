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
