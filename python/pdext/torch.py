"""PyTorch autograd for pdext ops: pdext.torch.wrap(ops) gives a module whose functions are
torch.autograd.Functions built from each forward op and its registered grad op, so that

    ops = pdext.torch.wrap(pdext.load("relu", ["relu.c"]))
    y = ops.custom_relu(x)          # x: a torch tensor with requires_grad=True
    y.sum().backward()              # x.grad filled by custom_relu_grad

Tensors cross into pdext through DLPack without copying (CPU tensors). The grad op's inputs
are bound as libpdext bound them when the grad op was registered (op.grad_inputs): the forward
inputs ("X"), the forward outputs ("Out") and the output gradients ("Out@GRAD"); its outputs
(op.grad_outputs, "X@GRAD") become the gradients of the forward inputs (None for an input it
has none for). Where the grad op has a grad op of its own (a
double grad op), the backward is itself an autograd function over it, so that
torch.autograd.grad(..., create_graph=True) and gradgradcheck work. Vector inputs are lists
of tensors, as for the op. Ops without a grad op, or with a vector output, are passed through
unchanged.
"""

import types

import torch as _torch

from . import _front, _pdext


def _nest(flat, layout):
    """The op's inputs from the flat tensors an autograd function takes: layout holds None for
    a single tensor, k for a vector input of k tensors."""
    out, i = [], 0
    for k in layout:
        if k is None:
            out.append(flat[i])
            i += 1
        else:
            out.append(list(flat[i : i + k]))
            i += k
    return out


def _plain(x):
    if isinstance(x, list):
        return [_plain(v) for v in x]
    return x.detach() if x is not None else None


def _function(op, grad, grad_fn=None):
    """An autograd function of `op` whose backward is `grad`. grad_fn, when given, is the
    grad op as an autograd function itself (built from the double grad op): the backward then
    records history, and a second backward (create_graph=True, gradgradcheck) runs the double
    grad op. Without it, the backward is once-differentiable. Vector inputs (lists of tensors)
    travel flattened through the autograd function."""
    in_names = op.inputs
    grad_attrs = set(grad.attrs)

    def run_backward(ctx, gouts):
        saved = ctx.saved_tensors
        n_flat = sum(1 if k is None else k for k in ctx.layout)
        ograds = [g.contiguous() if g is not None else None for g in gouts]
        args = _front.grad_args(grad, _nest(saved[:n_flat], ctx.layout), saved[n_flat:], ograds)
        if grad_fn is not None:
            res = grad_fn(*args, **ctx.attrs)
        else:
            res = grad(*_plain(args), **ctx.attrs)
        res = res if isinstance(res, tuple) else (res,)
        flat = []
        for g, k in zip(_front.input_grads(grad, res, len(in_names)), ctx.layout):
            if k is None:
                flat.append(g)
            else:
                flat.extend(g if g is not None else [None] * k)
        return (None, None) + tuple(flat)

    class _Fn(_torch.autograd.Function):
        @staticmethod
        def forward(ctx, attrs, layout, *flat):
            # DLPack refuses tensors that require grad; the op sees plain views of them.
            outs = op(*_plain(_nest(flat, layout)), **attrs)
            single = not isinstance(outs, tuple)
            outs_t = (outs,) if single else tuple(outs)
            ctx.save_for_backward(*flat, *outs_t)
            ctx.layout = layout
            ctx.attrs = {k: v for k, v in attrs.items() if k in grad_attrs}
            return outs if single else outs_t

        if grad_fn is None:

            @staticmethod
            @_torch.autograd.function.once_differentiable
            def backward(ctx, *gouts):
                return run_backward(ctx, gouts)

        else:

            @staticmethod
            def backward(ctx, *gouts):
                return run_backward(ctx, gouts)

    def call(*args, **kwargs):
        n_in = len(in_names)
        xs = list(args[:n_in]) + [None] * max(0, n_in - len(args))
        attrs = dict(kwargs)
        for i, name in enumerate(in_names):
            if name in attrs:
                xs[i] = attrs.pop(name)
        for value, name in zip(args[n_in:], op.attrs):
            attrs[name] = value
        layout, flat = [], []
        for x, vec in zip(xs, op.vector_inputs):
            if vec and isinstance(x, (list, tuple)):
                layout.append(len(x))
                flat.extend(x)
            else:
                layout.append(None)
                flat.append(x)
        return _Fn.apply(attrs, tuple(layout), *flat)

    call.__name__ = op.__name__
    call.__qualname__ = op.__name__
    call.__doc__ = op.__doc__
    call.op = op
    call.grad_op = grad
    return call


def _vector_outputs(op):
    """Whether op returns a list (an autograd function returns tensors only)."""
    return any(op.vector_outputs)


def wrap(ops):
    """A module like `ops` whose forward ops with a grad op record autograd history (twice
    differentiable where the grad op has a grad op of its own)."""
    mod = types.ModuleType(ops.__name__ + ".torch", "autograd functions over " + ops.__name__)
    for name in dir(ops):
        op = getattr(ops, name)
        if not isinstance(op, _pdext.Op):
            continue
        grad = getattr(ops, op.grad_op, None) if op.grad_op else None
        if grad is None or op.kind != "forward" or _vector_outputs(op):
            setattr(mod, name, op)
            continue
        double = getattr(ops, grad.grad_op, None) if grad.grad_op else None
        twice = double is not None and not _vector_outputs(grad)
        grad_fn = _function(grad, double) if twice else None
        setattr(mod, name, _function(op, grad, grad_fn))
    return mod


# torch.library registration (pdext.torch.register) lives in its own file.
from .torch_library import Registered, native_kernels, register  # noqa: E402,F401
