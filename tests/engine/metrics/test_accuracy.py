import numpy as np
import pytest
from keras.src.metrics import accuracy_metrics

from engine.training import metrics
from engine.training.metrics import accuracy
from tests.engine.metrics.oracle import assert_matches_keras, keras

RNG = np.random.default_rng(0)
WEIGHTS = [None, np.array([0.5, 0.0, 2.0, 1.0, 1.0, 3.0], "float32")]


def batches(y_true, y_pred):
    """Two updates with and without weights, the second on shuffled rows."""
    order = RNG.permutation(len(y_pred))
    return [(y_true, y_pred, WEIGHTS[0]), (y_true[order], y_pred, WEIGHTS[1]), (y_true, y_pred[order], WEIGHTS[1])]


def probabilities(shape):
    p = RNG.uniform(size=shape).astype("float32")
    return p / p.sum(-1, keepdims=True)


LABELS = RNG.integers(0, 5, size=6)
CASES = {
    "Accuracy": (metrics.Accuracy(), keras.metrics.Accuracy(), RNG.integers(0, 3, (6, 2)), RNG.integers(0, 3, (6, 2))),
    "BinaryAccuracy": (metrics.BinaryAccuracy(), keras.metrics.BinaryAccuracy(),
                       RNG.integers(0, 2, (6, 3)).astype("float32"), RNG.uniform(size=(6, 3)).astype("float32")),
    "BinaryAccuracy threshold": (metrics.BinaryAccuracy(threshold=0.8), keras.metrics.BinaryAccuracy(threshold=0.8),
                                 RNG.integers(0, 2, (6, 1)), RNG.uniform(size=(6,)).astype("float32")),
    "CategoricalAccuracy": (metrics.CategoricalAccuracy(), keras.metrics.CategoricalAccuracy(),
                            np.eye(5, dtype="float32")[LABELS], probabilities((6, 5))),
    "SparseCategoricalAccuracy": (metrics.SparseCategoricalAccuracy(), keras.metrics.SparseCategoricalAccuracy(),
                                  LABELS, probabilities((6, 5))),
    "SparseCategoricalAccuracy trailing axis": (metrics.SparseCategoricalAccuracy(),
                                                keras.metrics.SparseCategoricalAccuracy(),
                                                LABELS[:, None].astype("float32"), probabilities((6, 5))),
    "TopKCategoricalAccuracy": (metrics.TopKCategoricalAccuracy(k=2), keras.metrics.TopKCategoricalAccuracy(k=2),
                                np.eye(5, dtype="float32")[LABELS], probabilities((6, 5))),
    "SparseTopKCategoricalAccuracy": (metrics.SparseTopKCategoricalAccuracy(k=3),
                                      keras.metrics.SparseTopKCategoricalAccuracy(k=3), LABELS, probabilities((6, 5))),
    "SparseTopKCategoricalAccuracy default k": (metrics.SparseTopKCategoricalAccuracy(),
                                                keras.metrics.SparseTopKCategoricalAccuracy(),
                                                LABELS[:, None], probabilities((6, 7))),
    "SparseTopKCategoricalAccuracy from_sorted_ids": (
        metrics.SparseTopKCategoricalAccuracy(k=2, from_sorted_ids=True),
        keras.metrics.SparseTopKCategoricalAccuracy(k=2, from_sorted_ids=True),
        LABELS, np.argsort(-probabilities((6, 5)), axis=-1)[:, :4]),
}


@pytest.mark.parametrize("case", CASES)
def test_result_after_weighted_updates_matches_keras(case):
    ours, theirs, y_true, y_pred = CASES[case]
    assert_matches_keras(ours, theirs, batches(y_true, y_pred))
    assert ours.get_config() == theirs.get_config()


def test_sequences_weighted_per_step():
    labels = RNG.integers(0, 4, size=(3, 5))
    y_pred = probabilities((3, 5, 4))
    weights = RNG.uniform(size=(3, 5)).astype("float32")
    assert_matches_keras(metrics.SparseCategoricalAccuracy(), keras.metrics.SparseCategoricalAccuracy(),
                         [(labels, y_pred, weights), (labels, y_pred[::-1], None)])


def test_top_k_counts_ties_and_never_nan_as_hits_like_keras():
    y_pred = np.array([[0.2, 0.2, 0.2, 0.4], [np.nan, 0.1, 0.2, 0.3], [0.5, 0.5, 0.0, 0.0]], "float32")
    labels = np.array([0, 0, 1])
    for k in (1, 2):
        expected = np.asarray(keras.metrics.sparse_top_k_categorical_accuracy(labels, y_pred, k=k))
        np.testing.assert_array_equal(metrics.sparse_top_k_categorical_accuracy(labels, y_pred, k=k), expected)
        expected = np.asarray(keras.metrics.top_k_categorical_accuracy(np.eye(4)[labels], y_pred, k=k))
        np.testing.assert_array_equal(metrics.top_k_categorical_accuracy(np.eye(4)[labels], y_pred, k=k), expected)


@pytest.mark.parametrize("name", ["accuracy", "binary_accuracy", "categorical_accuracy", "sparse_categorical_accuracy"])
def test_functions_return_keras_per_sample_values(name):
    y_true, y_pred = CASES[{"accuracy": "Accuracy", "binary_accuracy": "BinaryAccuracy",
                            "categorical_accuracy": "CategoricalAccuracy",
                            "sparse_categorical_accuracy": "SparseCategoricalAccuracy trailing axis"}[name]][2:]
    received = getattr(accuracy, name)(y_true, y_pred)
    expected = np.asarray(getattr(accuracy_metrics, name)(y_true, y_pred))
    assert received.dtype == np.float32 and received.shape == expected.shape
    np.testing.assert_array_equal(received, expected)
