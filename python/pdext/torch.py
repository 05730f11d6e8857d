"""PyTorch autograd for pdext ops: pdext.torch.wrap(ops) gives a module whose functions are
torch.autograd.Functions built from each forward op and its registered grad op, so that

    ops = pdext.torch.wrap(pdext.load("relu", ["relu.c"]))
    y = ops.custom_relu(x)          # x: a torch tensor with requires_grad=True
    y.sum().backward()              # x.grad filled by custom_relu_grad

Tensors cross into pdext through DLPack without copying (CPU tensors). The grad op's inputs
are bound by their declared names: the forward inputs ("X"), the forward outputs ("Out") and
the output gradients ("Out@GRAD"); its outputs "X@GRAD" become the gradients of the forward
inputs (None for an input it has none for). Ops without a grad op, or with vector inputs, are
passed through unchanged.
"""

import types

import torch as _torch

from . import _pdext


def _grad_key(name):
    return name + "@GRAD"


def _function(op, grad):
    in_names = op.inputs
    out_names = op.outputs
    grad_attrs = set(grad.attrs)

    class _Fn(_torch.autograd.Function):
        @staticmethod
        def forward(ctx, attrs, *xs):
            # DLPack refuses tensors that require grad; the op sees plain views of them.
            outs = op(*[x.detach() if x is not None else None for x in xs], **attrs)
            single = not isinstance(outs, tuple)
            outs_t = (outs,) if single else tuple(outs)
            ctx.save_for_backward(*xs, *outs_t)
            ctx.n_in = len(xs)
            ctx.attrs = {k: v for k, v in attrs.items() if k in grad_attrs}
            return outs if single else outs_t

        @staticmethod
        @_torch.autograd.function.once_differentiable
        def backward(ctx, *gouts):
            saved = ctx.saved_tensors
            env = dict(zip(in_names, saved[: ctx.n_in]))
            env.update(zip(out_names, saved[ctx.n_in :]))
            for name, g in zip(out_names, gouts):
                env[_grad_key(name)] = g.contiguous() if g is not None else None
            args = [env.get(n) for n in grad.inputs]
            res = grad(*[a.detach() if a is not None else None for a in args], **ctx.attrs)
            res = res if isinstance(res, tuple) else (res,)
            by_name = dict(zip(grad.outputs, res))
            return (None,) + tuple(by_name.get(_grad_key(n)) for n in in_names)

    def call(*args, **kwargs):
        n_in = len(in_names)
        xs = list(args[:n_in]) + [None] * max(0, n_in - len(args))
        attrs = dict(kwargs)
        for i, name in enumerate(in_names):
            if name in attrs:
                xs[i] = attrs.pop(name)
        for value, name in zip(args[n_in:], op.attrs):
            attrs[name] = value
        return _Fn.apply(attrs, *xs)

    call.__name__ = op.__name__
    call.__qualname__ = op.__name__
    call.__doc__ = op.__doc__
    call.op = op
    call.grad_op = grad
    return call


def wrap(ops):
    """A module like `ops` whose forward ops with a grad op record autograd history."""
    mod = types.ModuleType(ops.__name__ + ".torch", "autograd functions over " + ops.__name__)
    for name in dir(ops):
        op = getattr(ops, name)
        if not isinstance(op, _pdext.Op):
            continue
        grad = getattr(ops, name + "_grad", None)
        if grad is None or name.endswith("_grad") or any(op.vector_inputs):
            setattr(mod, name, op)
        else:
            setattr(mod, name, _function(op, grad))
    return mod
