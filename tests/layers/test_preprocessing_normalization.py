"""Normalization against Keras 3 (adapt, given statistics, invert, weights), finite differences
and the traced gradient of its own call."""

import numpy as np
import pytest

from engine import Input, Model, PyDataset, load_model
from layers import Normalization
from tests.layers.oracle import assert_config_round_trip, assert_gradients, keras
from tests.layers.preprocessing_checks import assert_traced_gradients_match


def _x(shape=(20, 4, 3), seed=0, dtype="float32"):
    return (np.random.default_rng(seed).normal(size=shape) * 3 + 1).astype(dtype)


@pytest.mark.parametrize("kwargs", [{}, {"axis": None}, {"axis": (1, 2)}, {"axis": 1}, {"axis": -2, "invert": True},
                                    {"invert": True}])
def test_adapt_matches_keras(kwargs):
    x = _x()
    ours, theirs = Normalization(**kwargs), keras.layers.Normalization(**kwargs)
    ours.adapt(x)
    theirs.adapt(x)
    assert [(v.name, v.shape, v.dtype, v.trainable) for v in ours.weights] == [
        (v.name, tuple(v.shape), v.dtype, v.trainable) for v in theirs.weights]
    for got, want in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    out = ours(x)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, np.asarray(theirs(x)), rtol=1e-5, atol=1e-5)


def test_adapt_on_batches_merges_them_as_the_whole_array():
    x = _x()
    whole, batched, pairs = Normalization(axis=(1, 2)), Normalization(axis=(1, 2)), Normalization(axis=(1, 2))
    whole.adapt(x)
    batched.adapt(x[i:i + 6] for i in range(0, len(x), 6))  # a generator, batches of unequal sizes
    pairs.adapt([(x[:5], None), (x[5:], None)])  # (x, y) batches count by x

    class Batches(PyDataset):
        def __len__(self):
            return 4

        def __getitem__(self, index):
            return x[5 * index:5 * index + 5], np.zeros(5)

    dataset = Normalization(axis=(1, 2))
    dataset.adapt(Batches())
    for layer in (batched, pairs, dataset):
        for got, want in zip(layer.get_weights(), whole.get_weights()):
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kwargs", [{"mean": 2.0, "variance": 4.0}, {"mean": [1.0, 2.0, 3.0], "variance": [1.0, 4.0, 9.0]},
                                    {"axis": (1, 2), "mean": [1.0, 2.0, 3.0], "variance": [1.0, 4.0, 0.0]},
                                    {"mean": [1.0, 2.0, 3.0], "variance": [1.0, 4.0, 9.0], "invert": True}])
def test_given_statistics_match_keras_and_make_no_weights(kwargs):
    x = _x()
    ours, theirs = Normalization(**kwargs), keras.layers.Normalization(**kwargs)
    np.testing.assert_allclose(ours(x), np.asarray(theirs(x)), rtol=1e-6, atol=1e-6)
    assert ours.weights == [] and theirs.weights == []


def test_keras_weights_load_into_ours():
    x = _x()
    theirs = keras.layers.Normalization(axis=(1, 2))
    theirs.adapt(x)
    ours = Normalization(axis=(1, 2))
    ours.build(x.shape)
    ours.set_weights(theirs.get_weights())
    np.testing.assert_allclose(ours(x), np.asarray(theirs(x)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kwargs", [{"axis": (1, 2)}, {"axis": None, "invert": True}])
def test_gradients(kwargs):
    x = _x((3, 4, 3), 1, "float64")
    layer = Normalization(**kwargs)
    layer.adapt(_x((10, 4, 3), 2))
    assert_gradients(layer, x)
    assert_traced_gradients_match(layer, x)
    assert_gradients(Normalization(mean=[1.0, 2.0, 3.0], variance=[1.0, 4.0, 9.0]), x)


def test_config_keys_are_keras_and_round_trip():
    config = assert_config_round_trip(Normalization(axis=(1, 2), mean=[1.0, 2.0], variance=[3.0, 4.0])).get_config()
    assert set(config) == set(keras.layers.Normalization().get_config())
    assert Normalization().get_config()["axis"] == keras.layers.Normalization().get_config()["axis"] == (-1,)
    assert Normalization(axis=None).get_config()["mean"] is None


def test_adapted_statistics_are_saved(tmp_path):
    x = Input(shape=(4, 3))
    layer = Normalization()
    model = Model(x, layer(x))
    layer.adapt(_x())
    model.save(tmp_path / "m.nw")
    np.testing.assert_array_equal(load_model(tmp_path / "m.nw")(_x()), model(_x()))
    assert model.count_params() == 3 + 3 + 1 and model.trainable_weights == []


def test_errors():
    with pytest.raises(ValueError, match="both `mean` and `variance` must be set"):
        Normalization(mean=1.0)
    with pytest.raises(ValueError, match="must have the same shape"):
        Normalization(mean=[1.0, 2.0], variance=1.0)
    with pytest.raises(ValueError, match=r"The rank of `mean` must be less than or equal to the number of axes \(1\)"):
        Normalization(mean=[[1.0]], variance=[[1.0]])
    with pytest.raises(ValueError, match=r"Layer 'n' \(Normalization\): all `axis` values must be in the range"):
        Normalization(axis=3, name="n")(np.ones((2, 3), "float32"))
    with pytest.raises(ValueError, match="all `axis` values to be kept must have a known shape"):
        Normalization(axis=1)(Input(shape=(None, 3)))
    layer = Normalization()
    layer.adapt(_x())
    with pytest.raises(ValueError, match=r"built with input_shape=\(20, 4, 3\).*incompatible shape, data.shape=\(2, 4, 5\)"):
        layer.adapt(np.ones((2, 4, 5)))
    with pytest.raises(TypeError, match=r"adapt\(\) expects a NumPy array or an iterable of batches, received float"):
        Normalization().adapt(3.0)
    with pytest.raises(ValueError, match="adapt\\(\\) received no data"):
        Normalization().adapt([])
    with pytest.raises(ValueError, match="was given `mean` and `variance`, so adapt\\(\\) has nothing to set"):
        Normalization(mean=0.0, variance=1.0).adapt(_x())


def test_flops_by_hand():
    assert Normalization().flops([(2, 4, 3)], [(2, 4, 3)]) == 2 * 24
