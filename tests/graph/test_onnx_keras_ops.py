"""keras.ops calls recorded on KerasTensors (OpLayer) export to ONNX and compute what predict does."""

import numpy as np
import pytest

pytest.importorskip("onnxruntime", reason="the ONNX tests need onnx and onnxruntime (the test extra)")

from engine import Input, Model
from engine import keras_ops as ops
from graph.onnx_export import OnnxExportError, to_onnx
from tests.graph.onnx_check import assert_exports_match

CALLS = {
    "unary": lambda x: ops.sqrt(ops.abs(x)) + ops.exp(-ops.square(x)) - ops.sign(x),
    "binary": lambda x: ops.maximum(ops.multiply(x, 2.0), ops.subtract(1.0, x)) / ops.add(ops.power(x, 2.0), 1.0),
    "activations": lambda x: ops.concatenate([ops.softmax(x, axis=-1), ops.gelu(x, approximate=False),
                                              ops.leaky_relu(x, negative_slope=0.1), ops.relu6(x * 4.0),
                                              ops.log_softmax(x), ops.elu(x, alpha=0.5)], axis=-1),
    "reductions": lambda x: ops.concatenate(
        [ops.sum(x, axis=-1, keepdims=True), ops.mean(x, axis=1, keepdims=True), ops.max(x, axis=-1, keepdims=True),
         ops.min(x, axis=[1], keepdims=True)], axis=1),
    "shapes": lambda x: ops.squeeze(ops.expand_dims(ops.transpose(ops.reshape(x, (-1, 2, 3)), (0, 2, 1)), 1), 1),
    "matmul, where, clip, cast": lambda x: ops.cast(ops.where(x > 0.5, ops.clip(ops.matmul(x, np.ones((6, 6), "float32")),
                                                                              0.0, 2.0), x), "float32"),
}


@pytest.mark.parametrize("build", list(CALLS.values()), ids=list(CALLS))
def test_keras_ops_export_and_match_predict(build):
    x = Input(shape=(6,), name="x")
    model = Model(x, build(x))
    proto = assert_exports_match(model, np.random.default_rng(0).normal(size=(3, 6)).astype("float32"))
    assert {node.op_type for node in proto.graph.node}  # every call became ONNX nodes


def test_a_keras_op_without_a_mapping_names_itself():
    x = Input(shape=(6,), name="x")
    model = Model(x, ops.top_k(x, 2)[0])
    with pytest.raises(OnnxExportError, match=r"ops\.top_k has no ONNX mapping"):
        to_onnx(model)
