import numpy as np
import pytest

from engine.training.metrics import Mean, MeanMetricWrapper, Sum
from tests.engine.metrics.oracle import assert_matches_keras, keras

RNG = np.random.default_rng(0)
VALUES_AND_WEIGHTS = {
    "vector": (RNG.normal(size=4), None),
    "vector, per sample": (RNG.normal(size=4), np.array([0.5, 0.0, 2.0, 1.0])),
    "matrix, per sample": (RNG.normal(size=(4, 3)), np.array([0.5, 0.0, 2.0, 1.0])),
    "matrix, per sample, trailing axis": (RNG.normal(size=(4, 3)), np.array([[0.5], [0.0], [2.0], [1.0]])),
    "matrix, per element": (RNG.normal(size=(4, 3)), RNG.uniform(size=(4, 3))),
    "sequence, per step": (RNG.normal(size=(4, 3, 2)), RNG.uniform(size=(4, 3))),
    "matrix, scalar weight": (RNG.normal(size=(4, 3)), 3.0),
    "scalar": (np.float32(2.5), None),
}


@pytest.mark.parametrize("cls", [Mean, Sum])
@pytest.mark.parametrize("case", VALUES_AND_WEIGHTS)
def test_mean_and_sum_match_keras_over_several_updates(case, cls):
    values, weights = VALUES_AND_WEIGHTS[case]
    ours, theirs = cls(), getattr(keras.metrics, cls.__name__)()
    for scale in (1.0, -2.0, 0.5):
        ours.update_state(values * scale, sample_weight=weights)
        theirs.update_state(values * scale, sample_weight=weights)
        received = ours.result()
        assert isinstance(received, float)
        np.testing.assert_allclose(received, theirs.result(), rtol=1e-6)
    ours.reset_state()
    assert ours.result() == 0.0


def test_wrapper_averages_any_per_sample_function_like_keras():
    def squared_log_ratio(y_true, y_pred):
        return np.square(np.log(np.asarray(y_pred) / np.asarray(y_true))).mean(axis=-1)

    y_true, y_pred = RNG.uniform(0.5, 2.0, size=(2, 4, 3)).astype("float32")
    batches = [(y_true, y_pred, None), (y_pred, y_true, np.array([1.0, 0.0, 3.0, 0.5], "float32"))]
    assert_matches_keras(MeanMetricWrapper(squared_log_ratio, name="slr"),
                         keras.metrics.MeanMetricWrapper(squared_log_ratio, name="slr"), batches)


def test_weights_that_do_not_broadcast_raise_naming_the_metric():
    with pytest.raises(ValueError, match=r"Metric 'mean': sample_weight of shape \(3,\) cannot be broadcast to the "
                                         r"values of shape \(4,\)"):
        Mean().update_state(np.ones(4), sample_weight=np.ones(3))


def test_float64_state_on_request_and_float32_by_default():
    assert Mean().total.dtype == np.float32
    mean = Mean(dtype="float64")
    mean.update_state(np.array([1.0, 1e-12]))
    assert mean.total.dtype == np.float64 and mean.result() == pytest.approx(0.5 + 5e-13, rel=1e-15)
    with pytest.raises(ValueError, match="Mean accumulates in a floating dtype, received dtype='int32'"):
        Mean(dtype="int32")
