"""The layers of keras.applications' own modules (ConvNeXt's LayerScale, InceptionResNetV2's
CustomScaleLayer) against Keras 3 and finite differences; their Keras files round-trip in
tests/keras_format/test_read_applications.py."""

import numpy as np
import pytest
from keras.src.applications.convnext import LayerScale as KerasLayerScale
from keras.src.applications.inception_resnet_v2 import CustomScaleLayer as KerasCustomScaleLayer

from engine import Input
from layers.applications import CustomScaleLayer, LayerScale
from tests.layers.oracle import assert_config_round_trip, assert_gradients, assert_matches_keras


def _x(*shape, seed=0, dtype="float32"):
    return np.random.default_rng(seed).normal(size=shape).astype(dtype)


def test_layer_scale_matches_keras():
    keras_layer = KerasLayerScale(0.2, 3)
    keras_layer.build((None, 3))
    keras_layer.gamma.assign(_x(3, seed=5))  # not the constant it starts at
    assert_matches_keras(LayerScale(0.2, 3), keras_layer, _x(2, 4, 4, 3), atol=0, rtol=0)


def test_custom_scale_layer_matches_keras():
    inputs = [_x(2, 5, 4), _x(2, 5, 4, seed=1)]
    assert_matches_keras(CustomScaleLayer(0.17), KerasCustomScaleLayer(0.17), inputs, atol=0, rtol=0)


def test_gradients():
    layer = LayerScale(0.4, 3)
    layer.build((None, 3))
    layer.gamma.assign(_x(3, seed=2, dtype="float64"))
    assert_gradients(layer, _x(2, 4, 3, dtype="float64"))
    assert_gradients(CustomScaleLayer(-0.3), [_x(2, 3, dtype="float64"), _x(2, 3, seed=1, dtype="float64")])


def test_configs_are_keras_and_round_trip():
    for ours, theirs in ((LayerScale(0.1, 4), KerasLayerScale(0.1, 4)), (CustomScaleLayer(0.2), KerasCustomScaleLayer(0.2))):
        config = assert_config_round_trip(ours).get_config()
        assert set(config) <= set(theirs.get_config())


def test_layer_scale_of_the_wrong_size_says_what_fits():
    with pytest.raises(ValueError, match=r"projection_dim=4.*Give it projection_dim=3"):
        LayerScale(0.1, 4)(Input(shape=(5, 3)))
