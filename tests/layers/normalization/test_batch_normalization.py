import numpy as np
import pytest

from engine import Input
from layers.convolutional import _runs
from layers.normalization import BatchNormalization, batch_normalization
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)

CASES = [((6, 3), -1, {}), ((4, 3, 5), 1, {}), ((3, 2, 2, 4), -1, {}), ((5, 4), -1, {"center": False}),
         ((5, 4), -1, {"scale": False, "epsilon": 0.1})]


def inputs(shape, seed=0):
    return np.random.default_rng(seed).normal(2.0, 3.0, size=shape).astype("float32")


@pytest.mark.parametrize("shape, axis, kwargs", CASES)
def test_inference_matches_keras(shape, axis, kwargs, random_weights):
    theirs = random_weights(keras.layers.BatchNormalization(axis=axis, **kwargs), shape)
    assert_matches_keras(BatchNormalization(axis=axis, **kwargs), theirs, inputs(shape))


@pytest.mark.parametrize("shape, axis, kwargs", CASES)
def test_training_output_and_moving_statistics_match_keras(shape, axis, kwargs, random_weights):
    x = inputs(shape)
    theirs = random_weights(keras.layers.BatchNormalization(axis=axis, momentum=0.8, **kwargs), shape)
    ours = BatchNormalization(axis=axis, momentum=0.8, **kwargs)
    ours.build(shape)
    ours.set_weights(theirs.get_weights())
    np.testing.assert_allclose(ours(x, training=True), theirs(x, training=True), atol=1e-5, rtol=1e-5)
    for got, want in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(got, want, atol=1e-5, rtol=1e-5)
    assert ours(x, training=True).dtype == np.float32


def test_frozen_layer_uses_moving_statistics_in_training_like_keras(random_weights):
    x = inputs((6, 3))
    theirs = random_weights(keras.layers.BatchNormalization(), x.shape)
    ours = BatchNormalization()
    ours.build(x.shape)
    ours.set_weights(theirs.get_weights())
    before = ours.get_weights()
    ours.trainable = theirs.trainable = False
    np.testing.assert_allclose(ours(x, training=True), theirs(x, training=True), atol=1e-5)
    np.testing.assert_allclose(ours(x, training=True), ours(x, training=False))
    for got, want in zip(ours.get_weights(), before):
        np.testing.assert_array_equal(got, want)


def test_list_axis_matches_keras_on_flattened_features(random_weights):
    # Normalizing (N, 3, 4) over axes [1, 2] is normalizing (N, 12) over its last axis.
    x = inputs((5, 3, 4))
    theirs = random_weights(keras.layers.BatchNormalization(), (5, 12))
    ours = BatchNormalization(axis=[2, 1])
    ours.build(x.shape)
    ours.set_weights([w.reshape(3, 4) for w in theirs.get_weights()])
    for training in (False, True):
        want = np.asarray(theirs(x.reshape(5, 12), training=training)).reshape(x.shape)
        np.testing.assert_allclose(ours(x, training=training), want, atol=1e-5, rtol=1e-5)
    for got, want in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(got.reshape(-1), want, atol=1e-6)


def test_training_output_does_not_depend_on_moving_statistics(random_weights):
    x = inputs((6, 3))
    layer = random_weights(BatchNormalization(), x.shape)
    first = layer(x, training=True)
    layer.moving_mean.assign(np.full(3, 100.0))
    np.testing.assert_array_equal(layer(x, training=True), first)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("axis, kwargs", [(-1, {}), (1, {}), ([1, 3], {}), (-1, {"center": False}),
                                          (-1, {"scale": False})])
def test_gradients(training, axis, kwargs, random_weights):
    x = inputs((4, 3, 2, 2), seed=1).astype("float64")
    layer = random_weights(BatchNormalization(axis=axis, **kwargs), x.shape)
    before = layer.get_weights()
    assert_gradients(layer, x, training=training)
    for got, want in zip(layer.get_weights(), before):
        np.testing.assert_array_equal(got, want)


def test_gradients_of_frozen_layer_in_training(random_weights):
    layer = random_weights(BatchNormalization(), (5, 3))
    layer.trainable = False
    report = assert_gradients(layer, inputs((5, 3), seed=2).astype("float64"), training=True)
    assert list(report.errors) == ["input 0"]


def test_weights_follow_keras_layout():
    ours, theirs = BatchNormalization(), keras.layers.BatchNormalization()
    ours.build((None, 4))
    theirs.build((None, 4))
    assert [w.path.split("/")[1] for w in ours.weights] == ["gamma", "beta", "moving_mean", "moving_variance"]
    assert [w.shape for w in ours.weights] == [tuple(w.shape) for w in theirs.weights]
    assert [w.path for w in ours.trainable_weights] == [f"{ours.name}/gamma", f"{ours.name}/beta"]
    assert ours.count_params() == theirs.count_params()


def test_config_round_trip_and_symbolic_shape():
    layer = BatchNormalization(axis=[1, 2], momentum=0.9, epsilon=1e-2, center=False,
                               gamma_regularizer="l2", gamma_constraint="non_neg",
                               moving_variance_initializer="zeros", name="bn")
    clone = assert_config_round_trip(layer)
    assert clone.axis == [1, 2] and clone.momentum == 0.9 and clone.gamma_regularizer.l2 == pytest.approx(0.01)
    assert_symbolic_shape_matches_eager(BatchNormalization(axis=1), inputs((2, 3, 4)))


def test_bad_config_and_input_errors():
    with pytest.raises(ValueError, match="expected a number between 0 and 1. Received: momentum=1.5"):
        BatchNormalization(momentum=1.5)
    with pytest.raises(ValueError, match="expected a non-negative number. Received: epsilon=-1"):
        BatchNormalization(epsilon=-1)
    with pytest.raises(TypeError, match="list/tuple of ints for the argument 'axis', but received: 'x'"):
        BatchNormalization(axis="x")
    with pytest.raises(ValueError, match=r"Axis 3 is out of bounds for input shape \(2, 3\).*Received: axis=3"):
        BatchNormalization(axis=3)(inputs((2, 3)))
    with pytest.raises(ValueError, match="names the same axis twice"):
        BatchNormalization(axis=[1, -1])(inputs((2, 3)))
    with pytest.raises(ValueError, match=r"needs known sizes on axis=-1"):
        BatchNormalization()(Input(shape=(None,)))
    layer = BatchNormalization()
    layer(inputs((2, 3)))
    with pytest.raises(ValueError, match=r"expected axis 1 of input shape to have value 3 but received .*\(2, 4\)"):
        layer(inputs((2, 4)))
    with pytest.raises(ValueError, match="expected ndim=2, found ndim=3"):
        layer(inputs((2, 2, 3)))


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("shape, axis", [((4, 5, 7, 6), -1), ((3, 4, 5, 7), 1), ((13, 3), -1)])
def test_many_blocks_and_narrow_rows_match_keras_and_finite_differences(shape, axis, threads, monkeypatch,
                                                                         random_weights):
    # Tiny blocks and rows make every array here span many blocks (the moments merged across
    # them) and, with 7 or 13 positions per feature, rows of one position each; with 3 threads
    # the blocks are shared out in runs of one block, merged across the threads too.
    monkeypatch.setattr(_runs, "num_threads", lambda: threads)
    monkeypatch.setattr(batch_normalization, "SHARE_BLOCKS", 1)
    monkeypatch.setattr(batch_normalization, "BLOCK_ELEMENTS", 16)
    monkeypatch.setattr(batch_normalization, "ROW_WIDTH", 8)
    batch_normalization._groups.cache_clear()
    x = inputs(shape, seed=3) + 100.0  # a mean far from zero, as after a biased convolution
    theirs = random_weights(keras.layers.BatchNormalization(axis=axis, momentum=0.5), shape)
    ours = BatchNormalization(axis=axis, momentum=0.5)
    ours.build(shape)
    ours.set_weights(theirs.get_weights())
    np.testing.assert_allclose(ours(x, training=True), theirs(x, training=True), atol=2e-4, rtol=1e-4)
    for got, want in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(got, want, rtol=1e-5)
    assert_gradients(ours, x.astype("float64"), training=True)
    batch_normalization._groups.cache_clear()


def test_feature_rows_widen_channels_last_without_copying():
    x = inputs((2, 4, 4, 8))
    rows, groups = batch_normalization.feature_rows(x, (3,))
    assert rows.shape == (1, 256) and groups == 32 and np.shares_memory(rows, x)
    np.testing.assert_array_equal(batch_normalization.unfeature_rows(rows, x.shape, (3,)), x)
    moments = batch_normalization.feature_moments(rows, groups)
    np.testing.assert_allclose(moments[0], x.reshape(-1, 8).mean(axis=0), rtol=1e-5)
    np.testing.assert_allclose(moments[1], x.reshape(-1, 8).astype("float64").var(axis=0), rtol=1e-5)
