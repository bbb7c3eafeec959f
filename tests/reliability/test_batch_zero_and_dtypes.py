"""Every registered layer on an empty batch (inference and one training step),
and odd input dtypes (complex, strings, objects, bools) fed to one-layer models.

The layers and their sample inputs come from the suite's catalog
(``tests/engine/test_saving_catalog.py``, which also checks that it covers
every registered layer). Keras 3 is the oracle for output shapes and dtypes on
batch 0, and for which dtypes are cast rather than refused.
"""

import re

import numpy as np
import pytest

from engine import Input, Model, tree
from tests.engine.test_saving_catalog import EXAMPLES
from tests.layers.oracle import keras

NAMES = sorted(EXAMPLES)
# ours only (OpLayer: a keras.ops call, which Keras records as an operation, not a layer), or wrapping a Python function
NO_KERAS_TWIN = {"BinaryOp", "GetItem", "MaskOf", "Negative", "Lambda", "OpLayer", "ReshapeOp", "Round", "SqueezeOp", "UnaryOp"}
KERAS_LAYERS = {name: getattr(keras.layers, name) for name in dir(keras.layers) if name[0].isupper()}
# The layers keras.applications define in their own modules (ours in layers/applications.py).
KERAS_LAYERS["LayerScale"] = keras.src.applications.convnext.LayerScale
KERAS_LAYERS["CustomScaleLayer"] = keras.src.applications.inception_resnet_v2.CustomScaleLayer

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


def _data(name, batch):
    _, shapes, dtype = EXAMPLES[name]
    rng = np.random.default_rng(0)
    if dtype == "int32":
        arrays = [rng.integers(0, 10, size=(batch,) + s).astype(dtype) for s in shapes]
    else:
        arrays = [rng.normal(size=(batch,) + s).astype(dtype) for s in shapes]
    return arrays if len(arrays) > 1 else arrays[0]


def _model(name):
    factory, shapes, dtype = EXAMPLES[name]
    inputs = [Input(shape=s, dtype=dtype, name=f"in_{i}") for i, s in enumerate(shapes)]
    layer = factory()
    return Model(inputs, layer(inputs if len(inputs) > 1 else inputs[0]), name=f"one_{name.lower()}"), layer


def _flat(outputs):
    return [np.asarray(o) for o in tree.flatten(outputs)]


def _assert_empty_like(outputs, reference):
    """``outputs`` are empty arrays shaped like ``reference`` (a batch of 3) but with batch 0, of its dtypes."""
    outputs, reference = _flat(outputs), _flat(reference)
    assert len(outputs) == len(reference)
    for got, want in zip(outputs, reference):
        assert got.shape == (0,) + want.shape[1:], (got.shape, want.shape)
        assert got.dtype == want.dtype, (got.dtype, want.dtype)


def _keras_twin(layer):
    config = {k: v for k, v in layer.get_config().items() if k != "trainable"}  # Keras' SpatialDropout refuses it
    with keras.saving.CustomObjectScope(KERAS_LAYERS):
        return KERAS_LAYERS[type(layer).__name__].from_config(config)


@pytest.mark.parametrize("name", NAMES)
def test_inference_on_batch_zero_gives_empty_outputs_of_the_right_shape_and_dtype(name):
    model, layer = _model(name)
    reference = model(_data(name, 3))
    empty = _data(name, 0)
    _assert_empty_like(layer(empty), reference)
    _assert_empty_like(model(empty), reference)
    _assert_empty_like(model.predict(empty, verbose=0), reference)
    _assert_empty_like(model.predict_on_batch(empty), reference)
    if name not in NO_KERAS_TWIN:
        twin = _keras_twin(layer)
        theirs = twin(*empty) if name == "MultiHeadAttention" else twin(empty)
        _assert_empty_like(theirs, reference)


@pytest.mark.parametrize("name", NAMES)
def test_a_training_step_on_batch_zero_gives_zero_weight_gradients_and_changes_nothing(name):
    model, layer = _model(name)
    model(_data(name, 3))
    before = layer.get_weights()
    empty = _data(name, 0)
    outputs, cache = layer.forward(empty, training=True)
    _assert_empty_like(outputs, layer(_data(name, 3)))
    grad_inputs, grad_weights = layer.backward(cache, tree.map_structure(np.zeros_like, outputs))
    for grad, x in zip(tree.flatten(grad_inputs), tree.flatten(empty)):
        assert grad is None or grad.shape == x.shape
    assert set(grad_weights) == set(layer.trainable_weights)
    for variable, grad in grad_weights.items():
        assert grad.shape == variable.shape, variable.path
        assert np.all(grad == 0) and np.all(np.isfinite(grad)), variable.path
    for old, new in zip(before, layer.get_weights()):  # BatchNormalization's moving statistics included
        np.testing.assert_array_equal(old, new)


# ------------------------------------------------------------------- dtypes
ODD_INPUTS = {
    "complex": (lambda x: x.astype(np.complex64), r"Complex values are never cast silently"),
    "str": (lambda x: x.astype(str), r"Convert the strings to numbers first"),
    "bytes": (lambda x: x.astype(bytes), r"Convert the strings to numbers first"),
    "object": (lambda x: x.astype(object), r"Convert it to a numeric array first"),
}


@pytest.mark.filterwarnings("error")  # no ComplexWarning: nothing is cast before the check
@pytest.mark.parametrize("kind", sorted(ODD_INPUTS))
@pytest.mark.parametrize("name", NAMES)
def test_complex_string_and_object_inputs_are_refused_naming_the_model_the_input_and_the_dtype(name, kind):
    model, _ = _model(name)
    data = _data(name, 3)
    first = data[0] if isinstance(data, list) else data
    convert, advice = ODD_INPUTS[kind]
    odd = convert(first)
    bad = [odd, *data[1:]] if isinstance(data, list) else odd
    message = (rf"Input 0 \('in_0'\) of model '{model.name}' expects {first.dtype} values \(arrays of bool, int or "
               rf"float are cast to it\), but received an array of dtype {re.escape(str(odd.dtype))}\. {advice}")
    with pytest.raises(ValueError, match=message):
        model(bad)
    with pytest.raises(ValueError, match=message):
        model.predict(bad, verbose=0)


@pytest.mark.parametrize("name", NAMES)
def test_bool_inputs_are_cast_to_the_input_dtype_as_keras_does(name):
    model, _ = _model(name)
    data = _data(name, 3)
    bools = [x > 0.5 for x in data] if isinstance(data, list) else data > 0.5
    cast = tree.map_structure(lambda b: b.astype(EXAMPLES[name][2]), bools)
    for got, want in zip(_flat(model(bools)), _flat(model(cast))):
        np.testing.assert_array_equal(got, want)


def test_keras_casts_bools_and_ints_but_refuses_strings_and_objects_in_predict():
    x = keras.Input(shape=(2,))
    twin = keras.Model(x, keras.layers.Dense(1)(x))
    for castable in (np.ones((3, 2), bool), np.ones((3, 2), "int64")):
        assert twin.predict(castable, verbose=0).shape == (3, 1)
    for refused in (np.ones((3, 2)).astype(str), np.ones((3, 2)).astype(object)):
        with pytest.raises(ValueError, match="Invalid dtype"):
            twin.predict(refused, verbose=0)


@pytest.mark.parametrize("method", ["fit", "evaluate"])
def test_fit_and_evaluate_refuse_odd_inputs_and_targets_with_the_same_messages(method):
    model, _ = _model("Dense")
    model.compile(optimizer="sgd", loss="mse")
    x, y = _data("Dense", 3), np.zeros((3, 3), "float32")
    with pytest.raises(ValueError, match=r"Input 0 \('in_0'\) of model 'one_dense' expects float32 values .* "
                                         r"dtype complex128\. Complex values are never cast silently"):
        getattr(model, method)(x.astype(complex), y, verbose=0)
    with pytest.raises(ValueError, match=r"Targets for output 'dense' of model 'one_dense' must be numbers \(bool, "
                                         r"int or float\), but received an array of dtype <U\d+\. Convert the strings"):
        getattr(model, method)(x, y.astype(str), verbose=0)
    getattr(model, method)(x > 0, y.astype(bool), verbose=0)  # bools cast, as in Keras
