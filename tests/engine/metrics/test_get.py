import re

import numpy as np
import pytest

from engine import metrics
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
}
CONFIGURED = [
    metrics.Mean(name="loss"), metrics.Accuracy(dtype="float64"), metrics.BinaryAccuracy(threshold=0.7),
    metrics.CategoricalAccuracy(), metrics.SparseCategoricalAccuracy(), metrics.TopKCategoricalAccuracy(k=3),
    metrics.SparseTopKCategoricalAccuracy(k=2), metrics.MeanSquaredError(), metrics.MeanAbsoluteError(),
    metrics.Precision(thresholds=[0.2, 0.4], class_id=1), metrics.Recall(top_k=2),
    metrics.AUC(num_thresholds=20, curve="PR", from_logits=True),
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
