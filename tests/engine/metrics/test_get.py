import re

import numpy as np
import pytest

from engine.training import metrics
from tests.engine.metrics.oracle import keras

NAMES = {
    "accuracy": metrics.Accuracy, "binary_accuracy": metrics.BinaryAccuracy,
    "categorical_accuracy": metrics.CategoricalAccuracy,
    "sparse_categorical_accuracy": metrics.SparseCategoricalAccuracy,
    "top_k_categorical_accuracy": metrics.TopKCategoricalAccuracy,
    "sparse_top_k_categorical_accuracy": metrics.SparseTopKCategoricalAccuracy,
    "mse": metrics.MeanSquaredError, "mean_squared_error": metrics.MeanSquaredError,
    "mae": metrics.MeanAbsoluteError, "mean_absolute_error": metrics.MeanAbsoluteError,
    "precision": metrics.Precision, "recall": metrics.Recall, "auc": metrics.AUC, "mean": metrics.Mean,
    "true_positives": metrics.TruePositives, "FalseNegatives": metrics.FalseNegatives, "f1_score": metrics.F1Score,
    "f_beta_score": metrics.FBetaScore, "r2_score": metrics.R2Score, "sum": metrics.Sum, "hinge": metrics.Hinge,
    "categorical_hinge": metrics.CategoricalHinge, "poisson": metrics.Poisson, "log_cosh_error": metrics.LogCoshError,
    "pearson_correlation": metrics.PearsonCorrelation, "concordance_correlation": metrics.ConcordanceCorrelation,
}
CONFIGURED = [
    metrics.Mean(name="loss"), metrics.Accuracy(dtype="float64"), metrics.BinaryAccuracy(threshold=0.7),
    metrics.CategoricalAccuracy(), metrics.SparseCategoricalAccuracy(), metrics.TopKCategoricalAccuracy(k=3),
    metrics.SparseTopKCategoricalAccuracy(k=2), metrics.MeanSquaredError(), metrics.MeanAbsoluteError(),
    metrics.Precision(thresholds=[0.2, 0.4], class_id=1), metrics.Recall(top_k=2),
    metrics.AUC(num_thresholds=20, curve="PR", from_logits=True),
    metrics.AUC(thresholds=[0.3, 0.6], multi_label=True, num_labels=2, label_weights=[0.5, 2.0]),
    metrics.TrueNegatives(thresholds=[0.2, 0.7]), metrics.PrecisionAtRecall(0.7, num_thresholds=50, class_id=1),
    metrics.FBetaScore(average="weighted", beta=2.0, threshold=0.4), metrics.F1Score(average="micro"),
    metrics.IoU(4, [0, 2], ignore_class=1), metrics.BinaryIoU([1], threshold=0.3), metrics.MeanIoU(3, axis=1),
    metrics.OneHotIoU(3, [1], sparse_y_pred=True), metrics.OneHotMeanIoU(5), metrics.R2Score(None, 2),
    metrics.PearsonCorrelation(axis=0), metrics.Sum(), metrics.SquaredHinge(),
    metrics.SparseTopKCategoricalAccuracy(k=2, from_sorted_ids=True),
]


@pytest.mark.parametrize("name", NAMES)
def test_names_give_the_keras_class_with_keras_default_names(name):
    metric = metrics.get(name)
    assert type(metric) is NAMES[name]
    keras_name = getattr(keras.metrics, type(metric).__name__)().name
    assert metric.name == re.sub(r"_\d+$", "", keras_name)


@pytest.mark.parametrize("metric", CONFIGURED, ids=lambda metric: type(metric).__name__)
def test_config_and_serialize_round_trip(metric):
    assert type(metric).from_config(metric.get_config()).get_config() == metric.get_config()
    assert metrics.get(metrics.serialize(metric)).get_config() == metric.get_config()


def test_objects_classes_functions_and_none():
    auc = metrics.AUC()
    assert metrics.get(auc) is auc
    assert type(metrics.get(metrics.Recall)) is metrics.Recall
    assert metrics.get(None) is None and metrics.serialize(None) is None

    def absolute_error(y_true, y_pred):
        return np.abs(np.asarray(y_true) - np.asarray(y_pred))

    wrapped = metrics.get(absolute_error)
    assert isinstance(wrapped, metrics.MeanMetricWrapper) and wrapped.name == "absolute_error"
    assert wrapped([1.0, 2.0], [2.0, 2.0]) == 0.5


def test_unknown_names_suggest_the_closest():
    with pytest.raises(ValueError, match=r"Unknown metric: 'acuracy' \(known: .*\). Did you mean 'accuracy'\?"):
        metrics.get("acuracy")
