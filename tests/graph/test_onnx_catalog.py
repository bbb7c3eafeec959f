"""Every registered layer, alone in a model, exports to ONNX and computes what ``predict`` does
(ONNX Runtime, two batch sizes); a layer without a converter fails here."""

import pytest

pytest.importorskip("onnxruntime", reason="the ONNX tests need onnx and onnxruntime (the test extra)")

from graph.onnx_export import OnnxExportError, to_onnx  # noqa: E402
from tests.engine.test_saving_catalog import EXAMPLES, _model_and_data  # noqa: E402
from tests.graph.onnx_check import assert_exports_match  # noqa: E402

# Layers that refuse export with a documented error, and what the error says.
REFUSED = {"Lambda": "a Lambda layer runs arbitrary Python code",
           "MaskOf": "a model output that is a mask .* has no ONNX form"}


@pytest.mark.parametrize("name", sorted(set(EXAMPLES) - set(REFUSED)))
def test_layer_exports_and_matches_predict(name):
    model, data = _model_and_data(name)
    assert_exports_match(model, data if len(data) > 1 else data[0])


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_layer_without_an_onnx_form_raises_a_documented_error(name):
    model, _ = _model_and_data(name)
    with pytest.raises(OnnxExportError, match=REFUSED[name]) as caught:
        to_onnx(model)
    assert type(model.layers[-1]).__name__ in str(caught.value)
