"""ort_model.py - writes the ONNX model that ort_infer.c runs: standard ONNX ops and the pdext
ops of a library built by `pdext bundle --onnxruntime ../relu/relu.c ../concat/concat.c`
(domain "pdext"), checked by onnx.checker:

    y = custom_concat([custom_relu(x @ W) + b, x], axis=1)      x: float32 [n, 8], y: [n, 12]

W (8 x 4) and b (4) are initializers from a fixed seed.

    python ort_model.py model.onnx          (needs the onnx package; numpy)
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper


def build(path, domain="pdext"):
    rng = np.random.default_rng(7)
    w = rng.standard_normal((8, 4)).astype(np.float32)
    b = rng.standard_normal((4,)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["h"]),
        helper.make_node("custom_relu", ["h"], ["r"], domain=domain, name="relu"),
        helper.make_node("Add", ["r", "b"], ["s"]),
        helper.make_node("custom_concat", ["s", "x"], ["y"], domain=domain, name="concat",
                         axis=1),
    ]
    graph = helper.make_graph(
        nodes, "pdext_ort_example",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 12])],
        [helper.make_tensor("W", TensorProto.FLOAT, w.shape, w.ravel()),
         helper.make_tensor("b", TensorProto.FLOAT, b.shape, b.ravel())])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid(domain, 1)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python ort_model.py MODEL.onnx")
    build(sys.argv[1])
    print("%s: y = custom_concat([custom_relu(x @ W) + b, x], axis=1), x float32 [n, 8]"
          % sys.argv[1])
