"""Resizing and CenterCrop against Keras 3 on jax (every interpolation, antialiasing, cropping
or padding to the aspect ratio, both data formats), finite differences and the traced
gradient of their own call."""

import numpy as np
import pytest

from engine import Input, Model, load_model
from layers import CenterCrop, Resizing
from layers._interpolation import INTERPOLATIONS, interpolation_matrix
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)
from tests.layers.preprocessing_checks import assert_traced_gradients_match

OPTIONS = [{}, {"antialias": True}, {"crop_to_aspect_ratio": True}, {"pad_to_aspect_ratio": True, "fill_value": 0.5}]
SIZES = [(3, 4), (14, 18), (10, 4)]  # down, up, and up one axis while down the other


def _x(shape=(2, 7, 9, 3), seed=0, dtype="float32"):
    return np.random.default_rng(seed).normal(size=shape).astype(dtype)


@pytest.mark.parametrize("interpolation", INTERPOLATIONS)
@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: "-".join(o) or "plain")
def test_resizing_matches_keras(interpolation, options):
    for height, width in SIZES:
        kwargs = dict(interpolation=interpolation, **options)
        out = assert_matches_keras(Resizing(height, width, **kwargs), keras.layers.Resizing(height, width, **kwargs),
                                   _x(), atol=1e-5, rtol=1e-5)
        assert out[0].dtype == np.float32


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: "-".join(o) or "plain")
def test_resizing_channels_first_and_to_one_pixel_match_keras(options):
    for size, data_format in (((7, 5), "channels_first"), ((1, 1), "channels_last")):
        x = _x() if data_format == "channels_last" else _x().transpose(0, 3, 1, 2)
        assert_matches_keras(Resizing(*size, data_format=data_format, **options),
                             keras.layers.Resizing(*size, data_format=data_format, **options), x, atol=1e-5, rtol=1e-5)


def test_single_images_and_integer_pixels():
    image = np.random.default_rng(1).integers(0, 256, size=(5, 6, 3)).astype("uint8")
    out = Resizing(3, 4)(image)
    assert out.shape == (3, 4, 3) and out.dtype == np.float32
    np.testing.assert_allclose(out, np.asarray(keras.layers.Resizing(3, 4)(image.astype("float32"))), atol=1e-4)
    np.testing.assert_allclose(CenterCrop(4, 4)(image), np.asarray(keras.layers.CenterCrop(4, 4)(image)))


@pytest.mark.parametrize("size", [(3, 4), (7, 9), (8, 4), (2, 12), (10, 10), (6, 8)])
@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_center_crop_matches_keras(size, data_format):
    x = _x() if data_format == "channels_last" else _x().transpose(0, 3, 1, 2)
    assert_matches_keras(CenterCrop(*size, data_format=data_format),
                         keras.layers.CenterCrop(*size, data_format=data_format), x, atol=2e-6)


@pytest.mark.parametrize("interpolation", INTERPOLATIONS)
def test_resizing_gradients(interpolation):
    x = _x((2, 5, 6, 2), 2, "float64")
    for options in OPTIONS:
        assert_gradients(Resizing(3, 8, interpolation=interpolation, **options), x)
    assert_gradients(Resizing(4, 3, interpolation=interpolation, data_format="channels_first"), x)
    assert_traced_gradients_match(Resizing(3, 8, interpolation=interpolation, crop_to_aspect_ratio=True), x)
    assert_traced_gradients_match(Resizing(3, 8, interpolation=interpolation, pad_to_aspect_ratio=True,
                                           fill_value=2.0), x)


@pytest.mark.parametrize("size", [(3, 4), (8, 4)])
def test_center_crop_gradients(size):
    x = _x((2, 5, 6, 2), 3, "float64")
    assert_gradients(CenterCrop(*size), x)
    assert_gradients(CenterCrop(*size, data_format="channels_first"), x.transpose(0, 3, 1, 2))
    assert_traced_gradients_match(CenterCrop(*size), x)


def test_symbolic_shapes_configs_and_saving(tmp_path):
    assert_symbolic_shape_matches_eager(Resizing(3, 4, crop_to_aspect_ratio=True), _x())
    assert_symbolic_shape_matches_eager(CenterCrop(3, 4, data_format="channels_first"), _x())
    assert Resizing(3, 4)(Input(shape=(None, None, 3))).shape == (None, 3, 4, 3)
    for ours, theirs in ((Resizing(3, 4, interpolation="nearest", pad_to_aspect_ratio=True),
                          keras.layers.Resizing(3, 4, interpolation="nearest", pad_to_aspect_ratio=True)),
                         (CenterCrop(3, 4), keras.layers.CenterCrop(3, 4))):
        config = assert_config_round_trip(ours).get_config()
        keras_config = theirs.get_config()
        assert set(config) == set(keras_config)
        assert {k: v for k, v in config.items() if k not in ("name", "dtype")} == {
            k: v for k, v in keras_config.items() if k not in ("name", "dtype")}
    x = Input(shape=(7, 9, 3))
    model = Model(x, CenterCrop(4, 4)(Resizing(8, 8, antialias=True)(x)))
    model.save(tmp_path / "m.nw")
    np.testing.assert_array_equal(load_model(tmp_path / "m.nw")(_x()), model(_x()))


def test_errors():
    with pytest.raises(ValueError, match=r"Expected one of \('bilinear', 'nearest', 'bicubic', 'lanczos3', "
                                         r"'lanczos5'\). Received: interpolation='area'"):
        Resizing(3, 4, interpolation="area")
    with pytest.raises(ValueError, match="Only `'constant'` is supported. Received: fill_mode='reflect'"):
        Resizing(3, 4, fill_mode="reflect")
    with pytest.raises(ValueError, match="Only one of `pad_to_aspect_ratio` & `crop_to_aspect_ratio`"):
        Resizing(3, 4, crop_to_aspect_ratio=True, pad_to_aspect_ratio=True)
    with pytest.raises(ValueError, match=r"Layer 'r' \(Resizing\) expects `width` to be a positive integer. "
                                         r"Received: width=0"):
        Resizing(3, 0, name="r")
    with pytest.raises(ValueError, match=r"\(CenterCrop\) expects `height` to be a positive integer"):
        CenterCrop(2.5, 3)
    with pytest.raises(ValueError, match="expected max_ndim=4, found ndim=5"):
        Resizing(3, 4)(np.ones((1, 2, 3, 4, 5), "float32"))


def test_interpolation_matrices_by_hand():
    # Doubling 2 pixels: centers at -0.25, 0.25, 0.75, 1.25; the edges clamp to the end pixels.
    np.testing.assert_allclose(interpolation_matrix(2, 4, "bilinear"), [[1, 0.75, 0.25, 0], [0, 0.25, 0.75, 1]])
    np.testing.assert_array_equal(interpolation_matrix(3, 2, "nearest"), [[1, 0], [0, 0], [0, 1]])
    # Halving: centers at 0.5 and 2.5 sample between pixel pairs; antialiasing widens the triangle to
    # radius 2, so that each output takes weights 3, 3, 1 (normalized by 7) from three pixels.
    np.testing.assert_allclose(interpolation_matrix(4, 2, "bilinear"), [[0.5, 0], [0.5, 0], [0, 0.5], [0, 0.5]])
    np.testing.assert_allclose(interpolation_matrix(4, 2, "bilinear", antialias=True),
                               np.array([[3, 0], [3, 1], [1, 3], [0, 3]]) / 7)
