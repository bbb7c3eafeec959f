"""The 14 keras.applications architectures, built in nodeweave from Keras' own configs
(tests/graph/data/keras_applications.json.gz, written by make_keras_applications.py at the
smallest input each accepts), with every constant weight and BatchNormalization statistic
moved off its initial value: each exports, passes ``onnx.checker`` (full check) and
computes in ONNX Runtime what ``predict`` does, to 1e-4, at two batch sizes. Their
softmax outputs are near 1/1000 with random weights, so the logits (the same
architecture with a linear classifier) are compared too, to 1e-5 of the largest. And the
layers of keras.applications' own modules (ConvNeXt's LayerScale, InceptionResNetV2's
CustomScaleLayer) in one-layer models."""

import gc
import gzip
import json

import numpy as np
import pytest

pytest.importorskip("onnxruntime", reason="ONNX Runtime is not installed (pip install 'nodeweave[test]')")

from engine import Input, Model, model_from_json  # noqa: E402
from engine.utils import set_random_seed  # noqa: E402
from graph.onnx_export import to_onnx  # noqa: E402
from layers.applications import CustomScaleLayer, LayerScale  # noqa: E402
from tests.graph.data.make_keras_applications import PATH, SIZES  # noqa: E402
from tests.graph.onnx_check import assert_exports_match, run_onnx  # noqa: E402


@pytest.fixture(scope="module")
def configs():
    with gzip.open(PATH, "rt", encoding="utf-8") as file:
        return json.load(file)["configs"]


def application(configs, name, seed=0, logits=False):
    """The architecture built from Keras' config (with a linear classifier if ``logits``), its
    kernels drawn from ``seed``, every constant weight moved off its value and the moving
    variances spread over [0.5, 1.5]."""
    config = json.loads(json.dumps(configs[name]))
    if logits:
        config["config"]["layers"][-1]["config"]["activation"] = "linear"
    set_random_seed(seed)
    model = model_from_json(json.dumps(config))
    rng = np.random.default_rng(seed)
    for variable in model.weights:
        value = np.asarray(variable.value)
        if value.dtype.kind != "f" or not value.size:
            continue
        if variable.path.endswith("moving_variance"):
            variable.assign(rng.uniform(0.5, 1.5, value.shape).astype(value.dtype))
        elif np.all(value == value.flat[0]):
            variable.assign((value + rng.normal(0, 0.1, value.shape)).astype(value.dtype))
    return model


def images(name, batch=2, seed=0):
    size = SIZES[name]
    return np.random.default_rng(seed).uniform(0, 255, (batch, size, size, 3)).astype("float32")


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SIZES))
def test_application_exports_and_matches_onnx_runtime(configs, name):
    assert_exports_match(application(configs, name), images(name), atol=1e-4)
    gc.collect()  # the first model's layers refer to one another: free it before the second (InceptionResNetV2: 220 MB)
    model = application(configs, name, logits=True)
    expected = model.predict(images(name), verbose=0)
    got = run_onnx(to_onnx(model), [images(name)])[0]
    assert np.abs(got - expected).max() <= 1e-5 * np.abs(expected).max()


@pytest.mark.slow
def test_resnet50_keeps_few_transposes(configs):
    proto = to_onnx(application(configs, "ResNet50"))
    ops = [node.op_type for node in proto.graph.node]
    assert ops.count("Conv") == 53
    assert ops.count("Transpose") <= 2, f"{ops.count('Transpose')} Transpose nodes"


def test_layer_scale_matches():
    x = Input(shape=(4, 3, 2))
    model = Model(x, LayerScale(0.3, 2)(x))
    model.layers[-1].gamma.assign(np.array([0.5, -2.0], "float32"))
    assert_exports_match(model, np.random.default_rng(0).normal(size=(3, 4, 3, 2)).astype("float32"))


def test_custom_scale_layer_matches():
    a, b = Input(shape=(4,)), Input(shape=(4,))
    model = Model([a, b], CustomScaleLayer(0.17)([a, b]))
    rng = np.random.default_rng(0)
    assert_exports_match(model, [rng.normal(size=(3, 4)).astype("float32"), rng.normal(size=(3, 4)).astype("float32")])
