import numpy as np
import pytest

from engine.training.metrics import AUC
from tests.engine.metrics.oracle import assert_matches_keras, keras

RNG = np.random.default_rng(0)


def batches(from_logits=False):
    """Three updates: binary labels, noisy scores, per-sample and per-element weights."""
    result = []
    for weights in (None, RNG.uniform(size=16), RNG.uniform(size=(16, 2))):
        y_true = RNG.integers(0, 2, size=(16, 2))
        scores = y_true + RNG.normal(scale=0.8, size=(16, 2))
        y_pred = scores if from_logits else 1 / (1 + np.exp(-2 * scores))
        result.append((y_true, y_pred.astype("float32"), None if weights is None else weights.astype("float32")))
    return result


@pytest.mark.parametrize("summation_method", ["interpolation", "minoring", "majoring"])
@pytest.mark.parametrize("curve", ["ROC", "PR"])
@pytest.mark.parametrize("num_thresholds", [200, 7])
def test_result_after_weighted_updates_matches_keras(curve, summation_method, num_thresholds):
    kwargs = {"curve": curve, "summation_method": summation_method, "num_thresholds": num_thresholds, "name": "m"}
    ours, theirs = AUC(**kwargs), keras.metrics.AUC(**kwargs)
    assert_matches_keras(ours, theirs, batches())
    np.testing.assert_allclose(ours.thresholds, theirs.thresholds)
    assert set(ours.get_config().items()) <= set(theirs.get_config().items())


def test_logits_and_predictions_outside_0_1_match_keras():
    assert_matches_keras(AUC(from_logits=True), keras.metrics.AUC(from_logits=True), batches(from_logits=True))
    assert_matches_keras(AUC(curve="PR"), keras.metrics.AUC(curve="PR"), batches(from_logits=True))


AUC_OPTIONS = {
    "multi_label": {"multi_label": True},
    "multi_label, num_labels, label_weights": {"multi_label": True, "num_labels": 2, "label_weights": [0.3, 1.2]},
    "label_weights": {"label_weights": [0.3, 1.2]},
    "uneven thresholds": {"thresholds": [0.9, 0.2, 0.45, 0.5]},
    "even thresholds": {"thresholds": [0.25, 0.5, 0.75]},
}


@pytest.mark.parametrize("curve", ["ROC", "PR"])
@pytest.mark.parametrize("options", AUC_OPTIONS)
def test_multi_label_label_weights_and_thresholds_match_keras(options, curve):
    kwargs = {**AUC_OPTIONS[options], "curve": curve, "name": "m"}
    ours, theirs = AUC(**kwargs), keras.metrics.AUC(**kwargs)
    assert_matches_keras(ours, theirs, batches())
    received, expected = ours.get_config(), theirs.get_config()
    assert received.pop("label_weights") == pytest.approx(expected.pop("label_weights"))
    assert received == expected
    assert AUC.from_config(ours.get_config()).get_config() == ours.get_config()


def test_config_round_trip():
    auc = AUC(num_thresholds=50, curve="pr", summation_method="Majoring", from_logits=True, name="pr_auc")
    assert auc.get_config() == {"name": "pr_auc", "dtype": "float32", "num_thresholds": 50, "curve": "PR",
                                "summation_method": "majoring", "multi_label": False, "num_labels": None,
                                "label_weights": None, "from_logits": True}
    assert AUC.from_config(auc.get_config()).get_config() == auc.get_config()


def test_bad_arguments_raise_with_the_choices():
    with pytest.raises(ValueError, match=r"AUC expects curve to be one of \('ROC', 'PR'\). Received: curve='PRC'"):
        AUC(curve="PRC")
    with pytest.raises(ValueError, match=r"summation_method to be one of \('interpolation', 'minoring', "
                                         r"'majoring'\). Received: summation_method='trapezoid'"):
        AUC(summation_method="trapezoid")
    with pytest.raises(ValueError, match="num_thresholds to be an integer > 1. Received: num_thresholds=1"):
        AUC(num_thresholds=1)


def test_multi_label_needs_two_dimensional_predictions():
    with pytest.raises(ValueError, match=r"Metric 'auc(_\d+)?' with multi_label=True needs y_pred of shape "
                                         r"\(num_samples, num_labels\), received y_pred.shape=\(4,\)"):
        AUC(multi_label=True).update_state([0, 1, 1, 0], [0.1, 0.2, 0.3, 0.4])
    with pytest.raises(ValueError, match="AUC takes num_labels=3 only with multi_label=True"):
        AUC(num_labels=3)
