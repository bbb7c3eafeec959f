import numpy as np
import pytest
from keras.src.losses.loss import squeeze_or_expand_to_same_rank as keras_squeeze_or_expand

from engine.training.losses import Loss, MeanSquaredError, SparseCategoricalCrossentropy
from engine.training.losses.loss import squeeze_or_expand_to_same_rank
from tests.engine.losses.oracle import assert_gradient_matches_finite_differences, assert_matches_keras, keras


class Absolute(Loss):
    def call(self, y_true, y_pred):
        return np.abs(y_pred - y_true).sum(axis=-1)

    def backward(self, y_true, y_pred, grad):
        return grad[..., None] * np.sign(y_pred - y_true)


def data(shape=(4, 3), seed=0, dtype="float32"):
    rng = np.random.default_rng(seed)
    return rng.normal(size=shape).astype(dtype), rng.normal(size=shape).astype(dtype)


def test_a_subclass_gets_keras_weighting_reduction_and_gradient():
    y_true, y_pred = data()
    weights = np.array([1.0, 0.0, 2.0, 0.5], "float32")
    loss = Absolute(reduction="mean_with_sample_weight")
    expected = (np.abs(y_pred - y_true).sum(-1) * weights).sum() / weights.sum()
    np.testing.assert_allclose(loss(y_true, y_pred, weights), expected, rtol=1e-6)
    assert_gradient_matches_finite_differences(loss, y_true, y_pred, weights)
    assert [loss.name, Absolute().name] == ["absolute", "absolute_1"]


def test_without_backward_the_call_is_traced_and_a_missing_call_is_explained():
    class NoBackward(Absolute):
        backward = Loss.backward

    y_true, y_pred = data()
    weights = np.array([1.0, 0.0, 2.0, 0.5], "float32")
    np.testing.assert_allclose(NoBackward().gradient(y_true, y_pred, weights),
                               Absolute().gradient(y_true, y_pred, weights), rtol=1e-6)
    assert NoBackward().gradient(y_true, y_pred).dtype == np.float32
    with pytest.raises(NotImplementedError, match=r"Loss must implement call\(y_true, y_pred\)"):
        Loss()(y_true, y_pred)


@pytest.mark.parametrize("reduction", ["sum_over_batch_size", "mean_with_sample_weight", "sum"])
def test_zero_weights_give_a_zero_loss_and_gradient(reduction):
    y_true, y_pred = data()
    weights = np.zeros(4, "float32")
    assert_matches_keras(MeanSquaredError(reduction=reduction), keras.losses.MeanSquaredError(reduction=reduction),
                         y_true, y_pred, weights)
    assert not MeanSquaredError(reduction=reduction).gradient(y_true, y_pred, weights).any()


def test_all_labels_ignored_gives_a_zero_loss_and_gradient():
    _, y_pred = data((4, 3))
    labels = np.full(4, 2)
    ours = SparseCategoricalCrossentropy(from_logits=True, ignore_class=2)
    assert_matches_keras(ours, keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=2),
                         labels, y_pred)
    assert not ours.gradient(labels, y_pred).any()


def test_weights_that_do_not_broadcast_raise_a_clear_error():
    y_true, y_pred = data((4, 3, 2))
    with pytest.raises(ValueError, match=r"Loss 'mean_squared_error': sample_weight of shape \(4,\) cannot be "
                                         r"broadcast to the per-sample losses of shape \(4, 3\)"):
        MeanSquaredError()(y_true, y_pred, np.ones(4))


def test_float32_in_float32_out_and_float64_in_float64_out():
    for dtype in ("float32", "float64"):
        y_true, y_pred = data(dtype=dtype)
        loss = MeanSquaredError()
        assert loss(y_true, y_pred, np.ones(4)).dtype == dtype
        assert loss.gradient(y_true, y_pred, np.ones(4)).dtype == dtype


def test_dtype_argument_sets_the_computation_not_the_gradient_dtype():
    y_true, y_pred = data()
    loss = MeanSquaredError(dtype="float64")
    assert loss(y_true, y_pred).dtype == np.float64
    assert loss.gradient(y_true, y_pred).dtype == np.float32


def test_bad_arguments_raise_naming_the_loss_and_the_choices():
    with pytest.raises(ValueError, match=r"reduction` of MeanSquaredError: expected one of 'sum_over_batch_size', "
                                         r"'sum', 'mean', 'mean_with_sample_weight', 'none', None. "
                                         r"Received: reduction='avg'"):
        MeanSquaredError(reduction="avg")
    with pytest.raises(ValueError, match="MeanSquaredError computes in a floating dtype, received dtype='int32'"):
        MeanSquaredError(dtype="int32")


@pytest.mark.parametrize("shapes, expected", [
    (((4, 1), (4,)), ((4, 1), (4, 1))),
    (((4,), (4, 1)), ((4, 1), (4, 1))),
    (((2, 3, 1), (2, 3)), ((2, 3), (2, 3))),
    (((2, 3), (2, 3, 1)), ((2, 3), (2, 3))),
    (((2, 3), (2,)), ((2, 3), (2,))),
])
def test_rank_alignment_follows_keras(shapes, expected):
    x1, x2 = np.zeros(shapes[0]), np.zeros(shapes[1])
    assert tuple(a.shape for a in squeeze_or_expand_to_same_rank(x1, x2)) == expected
    assert tuple(tuple(a.shape) for a in keras_squeeze_or_expand(x1, x2)) == expected


@pytest.mark.parametrize("reduction, same_as", [("mean", "sum_over_batch_size"), ("none", None)])
def test_keras_reduction_synonyms(reduction, same_as):
    y_true, y_pred = data()
    weights = np.array([1.0, 0.0, 2.0, 0.5], "float32")
    ours = MeanSquaredError(reduction=reduction)
    assert_matches_keras(ours, keras.losses.MeanSquaredError(reduction=reduction), y_true, y_pred, weights)
    np.testing.assert_array_equal(ours(y_true, y_pred, weights), MeanSquaredError(reduction=same_as)(y_true, y_pred,
                                                                                                      weights))
    np.testing.assert_array_equal(ours.gradient(y_true, y_pred, weights),
                                  MeanSquaredError(reduction=same_as).gradient(y_true, y_pred, weights))


def test_targets_that_broadcast_against_the_output_get_a_gradient_of_the_output_shape():
    rng = np.random.default_rng(3)
    y_true, y_pred = rng.normal(size=(5, 4)).astype("float32"), rng.normal(size=(5, 1)).astype("float32")
    assert_matches_keras(MeanSquaredError(), keras.losses.MeanSquaredError(), y_true, y_pred)
    assert MeanSquaredError().gradient(y_true, y_pred).shape == (5, 1)
    assert_gradient_matches_finite_differences(MeanSquaredError(), y_true.astype("float64"), y_pred)


@pytest.mark.parametrize("reduction", ["sum_over_batch_size", "sum", None])
def test_a_loss_called_inside_a_gradient_tape_is_differentiated(reduction):
    from engine import GradientTape

    y_true, y_pred = data()
    weights = np.array([0.5, 2.0, 0.0, 1.0], "float32")
    loss = MeanSquaredError(reduction=reduction)
    upstream = np.array([1.0, -2.0, 3.0, 0.5], "float32") if reduction is None else None
    with GradientTape() as tape:
        traced = tape.watch(y_pred)
        value = loss(y_true, traced, sample_weight=weights)
    np.testing.assert_allclose(np.asarray(value.value), loss(y_true, y_pred, weights))
    received = tape.gradient(value, traced, output_gradients=upstream)
    with GradientTape() as tape:  # the same loss written out in NumPy, traced op by op
        traced = tape.watch(y_pred)
        per_sample = np.mean(np.square(y_true - traced), axis=-1) * weights
        expected_value = per_sample if reduction is None else np.sum(per_sample) / {"sum": 1}.get(reduction, 4)
    np.testing.assert_allclose(received, tape.gradient(expected_value, traced, output_gradients=upstream), rtol=1e-6)
