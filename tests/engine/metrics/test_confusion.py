import numpy as np
import pytest

from engine.training import metrics
from engine.training.metrics import Precision, Recall
from tests.engine.metrics.oracle import assert_matches_keras, keras

RNG = np.random.default_rng(0)
BINARY = (RNG.integers(0, 2, size=(8, 1)), RNG.uniform(size=(8, 1)).astype("float32"))
MULTI = (RNG.integers(0, 2, size=(8, 4)).astype("float32"), RNG.uniform(-0.2, 1.2, size=(8, 4)).astype("float32"))
WEIGHTS = {
    "per sample": RNG.uniform(size=8).astype("float32"),
    "per element": RNG.uniform(size=(8, 4)).astype("float32"),
}
OPTIONS = {
    "default": {},
    "one threshold": {"thresholds": 0.3},
    "uneven thresholds": {"thresholds": [0.7, 0.1, 0.5]},
    "even thresholds": {"thresholds": [0.0, 0.25, 0.5, 0.75, 1.0]},
    "top_k": {"top_k": 2},
    "class_id": {"class_id": 2},
    "top_k and class_id": {"top_k": 1, "class_id": 2, "thresholds": [0.2, 0.6]},
}


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("cls", [Precision, Recall])
def test_result_after_weighted_updates_matches_keras(cls, options):
    kwargs = OPTIONS[options]
    y_true, y_pred = MULTI
    last_weights = WEIGHTS["per sample" if "class_id" in kwargs else "per element"]
    batches = [(y_true, y_pred, None), (y_true[::-1], y_pred, WEIGHTS["per sample"]),
               (y_true, y_pred[::-1], last_weights)]
    ours, theirs = cls(**kwargs, name="m"), getattr(keras.metrics, cls.__name__)(**kwargs, name="m")
    assert_matches_keras(ours, theirs, batches)
    assert ours.get_config() == theirs.get_config()


@pytest.mark.parametrize("cls", [Precision, Recall])
def test_binary_predictions_of_any_rank(cls):
    y_true, y_pred = BINARY
    batches = [(y_true, y_pred, WEIGHTS["per sample"]), (y_true[:, 0], y_pred[::-1], None),
               (y_true, y_pred[:, 0], WEIGHTS["per sample"][:, None])]
    assert_matches_keras(cls(), getattr(keras.metrics, cls.__name__)(), batches)


def test_several_thresholds_give_an_array():
    precision = Precision(thresholds=[0.2, 0.8])
    precision.update_state([1, 0, 1], [0.9, 0.5, 0.1])
    np.testing.assert_allclose(precision.result(), [0.5, 1.0])


def test_bad_arguments_raise_naming_the_metric():
    with pytest.raises(ValueError, match=r"Precision thresholds must be in \[0, 1\], received \[1.5\]"):
        Precision(thresholds=[0.5, 1.5])
    with pytest.raises(ValueError, match=r"Metric 'recall' with class_id=1 needs y_pred of shape \(num_samples, "
                                         r"num_classes\), received y_pred.shape=\(3,\)"):
        Recall(class_id=1).update_state([1, 0, 1], [0.9, 0.5, 0.1])
    with pytest.raises(ValueError, match=r"Metric 'precision_1' expects one label per prediction, received "
                                         r"y_true.shape=\(2,\) and y_pred.shape=\(3,\)"):
        Precision().update_state([1, 0], [0.9, 0.5, 0.1])


COUNTS = [metrics.TruePositives, metrics.FalsePositives, metrics.TrueNegatives, metrics.FalseNegatives]
COUNT_THRESHOLDS = {"default": None, "one": 0.3, "uneven": [0.7, 0.1, 0.5], "even": [0.0, 0.25, 0.5, 0.75, 1.0]}


@pytest.mark.parametrize("thresholds", COUNT_THRESHOLDS)
@pytest.mark.parametrize("cls", COUNTS, ids=lambda cls: cls.__name__)
def test_confusion_counts_match_keras(cls, thresholds):
    kwargs = {"thresholds": COUNT_THRESHOLDS[thresholds], "name": "m"}
    y_true, y_pred = MULTI
    batches = [(y_true, y_pred, None), (y_true[::-1], y_pred, WEIGHTS["per sample"]),
               (y_true, y_pred[::-1], WEIGHTS["per element"]), (*BINARY, WEIGHTS["per sample"])]
    ours, theirs = cls(**kwargs), getattr(keras.metrics, cls.__name__)(**kwargs)
    assert_matches_keras(ours, theirs, batches)
    assert ours.get_config() == theirs.get_config()
    assert ours.accumulator.shape == tuple(np.shape(theirs.accumulator))


AT_POINT = [(metrics.SensitivityAtSpecificity, "specificity"), (metrics.SpecificityAtSensitivity, "sensitivity"),
            (metrics.PrecisionAtRecall, "recall"), (metrics.RecallAtPrecision, "precision")]


@pytest.mark.parametrize("options", [{}, {"num_thresholds": 1}, {"num_thresholds": 7, "class_id": 2}],
                         ids=["default", "one threshold", "class_id"])
@pytest.mark.parametrize("value", [0.4, 0.8])
@pytest.mark.parametrize("cls, argument", AT_POINT, ids=[cls.__name__ for cls, _ in AT_POINT])
def test_operating_point_metrics_match_keras(cls, argument, value, options):
    kwargs = {argument: value, "name": "m", **options}
    y_true, y_pred = MULTI
    batches = [(y_true, y_pred, None), (y_true[::-1], y_pred, WEIGHTS["per sample"]),
               (y_true, y_pred[::-1], WEIGHTS["per sample"] if "class_id" in options else WEIGHTS["per element"])]
    ours, theirs = cls(**kwargs), getattr(keras.metrics, cls.__name__)(**kwargs)
    assert_matches_keras(ours, theirs, batches)
    assert ours.get_config() == theirs.get_config()
    assert cls.from_config(ours.get_config()).get_config() == ours.get_config()


def test_operating_point_arguments_are_checked():
    with pytest.raises(ValueError, match=r"Argument `recall` of PrecisionAtRecall must be in the range \[0, 1\]. "
                                         r"Received: recall=1.5"):
        metrics.PrecisionAtRecall(1.5)
    with pytest.raises(ValueError, match=r"`num_thresholds` of RecallAtPrecision must be an integer > 0. "
                                         r"Received: num_thresholds=0"):
        metrics.RecallAtPrecision(0.5, num_thresholds=0)
