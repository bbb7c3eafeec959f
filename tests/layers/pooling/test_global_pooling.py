import numpy as np
import pytest

from engine import Input
from layers.pooling import GlobalAveragePooling1D, GlobalAveragePooling2D, GlobalMaxPooling1D, GlobalMaxPooling2D
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)

CASES = [
    (GlobalAveragePooling1D, (2, 5, 3)),
    (GlobalAveragePooling2D, (2, 4, 5, 3)),
    (GlobalMaxPooling1D, (2, 5, 3)),
    (GlobalMaxPooling2D, (2, 4, 5, 3)),
]
OPTIONS = [dict(), dict(keepdims=True), dict(data_format="channels_first"),
           dict(data_format="channels_first", keepdims=True)]


@pytest.mark.parametrize("cls, shape", CASES)
@pytest.mark.parametrize("kwargs", OPTIONS)
def test_forward_matches_keras(cls, shape, kwargs, distinct_inputs):
    theirs = getattr(keras.layers, cls.__name__)(**kwargs)
    out = assert_matches_keras(cls(**kwargs), theirs, distinct_inputs(shape))
    assert out[0].dtype == np.float32


@pytest.mark.parametrize("cls, shape", CASES)
@pytest.mark.parametrize("kwargs", OPTIONS)
def test_gradients(cls, shape, kwargs, distinct_inputs):
    layer = cls(**kwargs)
    assert_gradients(layer, distinct_inputs(shape, "float64"), training=True)
    x = distinct_inputs(shape)
    np.testing.assert_array_equal(layer.forward(x)[0], layer(x))


@pytest.mark.parametrize("kwargs", OPTIONS)
def test_masked_average_matches_keras(kwargs, distinct_inputs):
    x = distinct_inputs((3, 3, 5) if kwargs.get("data_format") else (3, 5, 3))
    mask = np.array([[1, 1, 0, 1, 0], [1, 0, 0, 0, 0], [1, 1, 1, 1, 1]], bool)
    theirs = keras.layers.GlobalAveragePooling1D(**kwargs)
    assert_matches_keras(GlobalAveragePooling1D(**kwargs), theirs, x, call_kwargs={"mask": mask})


def test_masked_average_gradients(distinct_inputs):
    layer = GlobalAveragePooling1D()
    x = distinct_inputs((2, 4, 3), "float64")
    mask = np.array([[1, 0, 1, 1], [0, 1, 0, 0]], bool)
    outputs, cache = layer.forward(x, mask=mask)
    grad, _ = layer.backward(cache, np.ones_like(outputs))
    np.testing.assert_allclose(grad[:, :, 0], [[1 / 3, 0, 1 / 3, 1 / 3], [0, 1, 0, 0]])


def test_config_round_trip_and_symbolic_shape(distinct_inputs):
    clone = assert_config_round_trip(GlobalMaxPooling2D(data_format="channels_first", keepdims=True))
    assert clone.keepdims and clone.data_format == "channels_first"
    assert_config_round_trip(GlobalAveragePooling1D())
    for cls, shape in CASES:
        assert_symbolic_shape_matches_eager(cls(keepdims=True), distinct_inputs(shape))
        assert_symbolic_shape_matches_eager(cls(data_format="channels_first"), distinct_inputs(shape))
    assert GlobalAveragePooling2D()(Input(shape=(None, None, 4))).shape == (None, 4)


def test_bad_arguments_and_inputs():
    with pytest.raises(ValueError, match=r"expected ndim=4, found ndim=3"):
        GlobalMaxPooling2D()(np.ones((2, 3, 4), "float32"))
    with pytest.raises(ValueError, match=r"expected ndim=3, found ndim=2"):
        GlobalAveragePooling1D()(np.ones((2, 3), "float32"))
    with pytest.raises(ValueError, match=r"Received: keepdims='yes'"):
        GlobalAveragePooling1D(keepdims="yes")
    with pytest.raises(ValueError, match=r"must be one of {'channels_first', 'channels_last'}"):
        GlobalMaxPooling1D(data_format="NWC")
