"""A jitted JAX training step through pdext ops: the two-layer classifier of examples/train
(train_linear, custom_relu, train_linear, train_softmax_xent), each layer a pdext op run as
an XLA FFI custom call, its gradient from the op's grad op, on three Gaussian blobs; the loss
goes down. Run it in a Python with jax and pdext (the framework venv of ./setup.sh test):

    python examples/jax/train_jax.py
"""

import pathlib

import jax
import jax.numpy as jnp
import numpy as np

import pdext
import pdext.jax

jax.config.update("jax_enable_x64", True)  # the labels are int64, as train_softmax_xent takes

HERE = pathlib.Path(__file__).resolve().parent
train = pdext.jax.register(pdext.load("train_ops", [str(HERE.parent / "train" / "train_ops.c")]))
relu = pdext.jax.register(pdext.load("relu", [str(HERE.parent / "relu" / "relu.c")]))

rng = np.random.default_rng(0)
centers = np.array([[0.0, 2.0], [-2.0, -1.0], [2.0, -1.0]])
label = np.repeat(np.arange(3), 32)
x = jnp.asarray((centers[label] + 0.6 * rng.standard_normal((96, 2))).astype(np.float32))
label = jnp.asarray(label, dtype=jnp.int64)
params = [
    jnp.asarray(0.5 * rng.standard_normal((2, 16)), dtype=jnp.float32),
    jnp.zeros(16, jnp.float32),
    jnp.asarray(0.5 * rng.standard_normal((16, 3)), dtype=jnp.float32),
    jnp.zeros(3, jnp.float32),
]


def loss_fn(p):
    h = relu.custom_relu(train.train_linear(x, p[0], p[1]))
    return train.train_softmax_xent(train.train_linear(h, p[2], p[3]), label)[0]


@jax.jit
def step(p):
    loss, grads = jax.value_and_grad(loss_fn)(p)
    return loss, [w - 0.5 * g for w, g in zip(p, grads)]


first = None
for i in range(200):
    loss, params = step(params)
    first = float(loss) if first is None else first
print("loss %.4f -> %.4f" % (first, float(loss)))
assert float(loss) < 0.5 * first, "the loss did not go down"
print("the jitted step is one XLA computation with %d pdext custom calls"
      % step.lower(params).as_text().count("custom_call"))
