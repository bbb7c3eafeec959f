"""``assert_exports_match``: a model exported to ONNX is valid and computes what ``predict`` does.

Tests of the ONNX converters (tests/graph/test_onnx_*.py) import this after
``pytest.importorskip("onnxruntime", ...)``.
"""

import numpy as np

from engine import tree
from graph.onnx_export import to_onnx


def run_onnx(model_proto, inputs):
    """The outputs of ONNX Runtime on ``inputs`` (flat, in the graph's input order), a list of arrays."""
    import onnxruntime

    session = onnxruntime.InferenceSession(model_proto.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = {i.name: np.asarray(value) for i, value in zip(session.get_inputs(), inputs)}
    return session.run(None, feeds)


def assert_exports_match(model, inputs, atol=1e-4, opset=None):
    """Exports ``model``, checks the ONNX model (``full_check=True``) and compares
    ONNX Runtime's outputs with ``model.predict`` on ``inputs`` and on ``inputs``
    with one more sample (the first again), so that a batch size other than
    the first one runs.

    Args:
        model: a functional or Sequential model.
        inputs: its input arrays, in the model's input structure.
        atol: the largest absolute difference allowed.
        opset: the opset to export with (default: the exporter's).

    Returns:
        The exported ModelProto, for tests to look into.
    """
    import onnx

    proto = to_onnx(model, opset=opset)
    onnx.checker.check_model(proto, full_check=True)
    flat = [np.asarray(a) for a in tree.flatten(inputs)]
    other = [np.concatenate([a, a[:1]]) for a in flat]
    for batch in (flat, other):
        expected = [np.asarray(e) for e in tree.flatten(model.predict(tree.pack_as(inputs, batch), verbose=0))]
        got = run_onnx(proto, [batch[i] for i in _input_order(model, inputs)])
        assert len(got) == len(expected), f"ONNX gave {len(got)} outputs, predict {len(expected)}"
        for index, (g, e) in enumerate(zip(got, expected)):
            assert g.shape == e.shape, f"output {index}: ONNX shape {g.shape}, predict {e.shape}"
            difference = float(np.max(np.abs(g.astype(np.float64) - e))) if e.size else 0.0
            assert difference <= atol, f"output {index} (batch {len(batch[0])}): max |ONNX - predict| = {difference}"
    return proto


def _input_order(model, inputs):
    """For each model input, the index of its array among ``tree.flatten(inputs)``."""
    return model._input_positions(inputs, warn=False)
