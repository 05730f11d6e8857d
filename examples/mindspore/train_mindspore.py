"""A MindSpore training loop through pdext ops: the two-layer classifier of examples/train
(train_linear, custom_relu, train_linear, train_softmax_xent), each layer a pdext op run as a
MindSpore ops.Custom AOT primitive, its gradient from the op's grad op, in a mindspore.jit
step (a MindSpore graph), on three Gaussian blobs; the loss goes down. Run it in a Python
with mindspore and pdext (the framework venv of ./setup.sh test):

    python examples/mindspore/train_mindspore.py
"""

import pathlib

import mindspore as ms
import numpy as np

import pdext
import pdext.mindspore

HERE = pathlib.Path(__file__).resolve().parent
train = pdext.mindspore.register(
    pdext.load("train_ops", [str(HERE.parent / "train" / "train_ops.c")]))
relu = pdext.mindspore.register(pdext.load("relu", [str(HERE.parent / "relu" / "relu.c")]))

rng = np.random.default_rng(0)
centers = np.array([[0.0, 2.0], [-2.0, -1.0], [2.0, -1.0]])
labels = np.repeat(np.arange(3), 32)
x = ms.Tensor((centers[labels] + 0.6 * rng.standard_normal((96, 2))).astype(np.float32))
label = ms.Tensor(labels.astype(np.int64))
params = [
    ms.Tensor((0.5 * rng.standard_normal((2, 16))).astype(np.float32)),
    ms.Tensor(np.zeros(16, np.float32)),
    ms.Tensor((0.5 * rng.standard_normal((16, 3))).astype(np.float32)),
    ms.Tensor(np.zeros(3, np.float32)),
]


def loss_fn(w1, b1, w2, b2):
    h = relu.custom_relu(train.train_linear(x, w1, b1))
    return train.train_softmax_xent(train.train_linear(h, w2, b2), label).sum()


@ms.jit
def step(w1, b1, w2, b2):
    loss, grads = ms.value_and_grad(loss_fn, grad_position=(0, 1, 2, 3))(w1, b1, w2, b2)
    return loss, w1 - 0.5 * grads[0], b1 - 0.5 * grads[1], w2 - 0.5 * grads[2], b2 - 0.5 * grads[3]


first = None
for i in range(200):
    loss, *params = step(*params)
    first = float(loss.asnumpy()) if first is None else first
print("loss %.4f -> %.4f" % (first, float(loss.asnumpy())))
assert float(loss.asnumpy()) < 0.5 * first, "the loss did not go down"
# PyNative, no gradient: the op runs at once through pdext on the tensor's memory
probs = relu.custom_relu(train.train_linear(x, params[0], params[1]))
print("PyNative call: %s %s" % (type(probs).__name__, probs.shape))
