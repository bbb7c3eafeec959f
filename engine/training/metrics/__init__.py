"""Stateful metrics with Keras 3 names and numerics."""

from engine.training.metrics.accuracy import (Accuracy, BinaryAccuracy, CategoricalAccuracy, SparseCategoricalAccuracy,
                                              SparseTopKCategoricalAccuracy, TopKCategoricalAccuracy, binary_accuracy,
                                              categorical_accuracy, sparse_categorical_accuracy,
                                              sparse_top_k_categorical_accuracy, top_k_categorical_accuracy)
from engine.training.metrics.auc import AUC
from engine.training.metrics.confusion import (FalseNegatives, FalsePositives, Precision, Recall, TrueNegatives,
                                               TruePositives)
from engine.training.metrics.correlation import (ConcordanceCorrelation, PearsonCorrelation, concordance_correlation,
                                                 pearson_correlation)
from engine.training.metrics.f_score import F1Score, FBetaScore
from engine.training.metrics.hinge import CategoricalHinge, Hinge, SquaredHinge
from engine.training.metrics.iou import BinaryIoU, IoU, MeanIoU, OneHotIoU, OneHotMeanIoU
from engine.training.metrics.metric import Metric
from engine.training.metrics.operating_point import (PrecisionAtRecall, RecallAtPrecision, SensitivityAtSpecificity,
                                                     SpecificityAtSensitivity)
from engine.training.metrics.probabilistic import (BinaryCrossentropy, CategoricalCrossentropy, KLDivergence, Poisson,
                                                   SparseCategoricalCrossentropy)
from engine.training.metrics.reduction import Mean, MeanMetricWrapper, Sum
from engine.training.metrics.regression import (CosineSimilarity, LogCoshError, MeanAbsoluteError,
                                                MeanAbsolutePercentageError, MeanSquaredError,
                                                MeanSquaredLogarithmicError, R2Score, RootMeanSquaredError)
from engine.network.naming import to_snake_case
from engine.files.serialization import deserialize
from engine.files.serialization import serialize as _serialize

_CLASSES = {cls.__name__: cls for cls in (
    Mean, MeanMetricWrapper, Accuracy, BinaryAccuracy, CategoricalAccuracy, SparseCategoricalAccuracy, TopKCategoricalAccuracy,
    SparseTopKCategoricalAccuracy, MeanSquaredError, MeanAbsoluteError, MeanAbsolutePercentageError,
    MeanSquaredLogarithmicError, RootMeanSquaredError, CosineSimilarity, BinaryCrossentropy, CategoricalCrossentropy,
    SparseCategoricalCrossentropy, KLDivergence, Precision, Recall, AUC, TruePositives, FalsePositives,
    TrueNegatives, FalseNegatives, PrecisionAtRecall, RecallAtPrecision, SensitivityAtSpecificity,
    SpecificityAtSensitivity, F1Score, FBetaScore, IoU, BinaryIoU, MeanIoU, OneHotIoU, OneHotMeanIoU, Sum,
    LogCoshError, R2Score, PearsonCorrelation, ConcordanceCorrelation, Hinge, SquaredHinge, CategoricalHinge, Poisson,
)}
# Keras' names: each class's name in snake case, and the short names in lower and upper case.
# ("acc" and "accuracy" in compile() pick binary, categorical or sparse accuracy: see engine.training.compile_utils.)
_ALIASES = {
    **{to_snake_case(name): name for name in _CLASSES if name != "MeanMetricWrapper"},
    "mse": "MeanSquaredError", "MSE": "MeanSquaredError",
    "mae": "MeanAbsoluteError", "MAE": "MeanAbsoluteError",
    "mape": "MeanAbsolutePercentageError", "MAPE": "MeanAbsolutePercentageError",
    "msle": "MeanSquaredLogarithmicError", "MSLE": "MeanSquaredLogarithmicError",
    "bce": "BinaryCrossentropy", "BCE": "BinaryCrossentropy",
}


def get(identifier):
    """Returns a Metric from a name (``"auc"``), a config dict, a Metric (or
    Metric class), a per-sample function ``fn(y_true, y_pred)`` (wrapped in a
    MeanMetricWrapper named after it) or None.

    Args:
        identifier: what to turn into a Metric (see above).

    Returns:
        The Metric (a class is instantiated, a function wrapped), or None.

    Raises:
        ValueError: an unknown name, with the closest known one.

    Example:
        >>> get("sparse_categorical_accuracy").name
        'sparse_categorical_accuracy'
    """
    if identifier is None or isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, type) and issubclass(identifier, Metric):
        return identifier()
    if callable(identifier) and not isinstance(identifier, type):
        return MeanMetricWrapper(identifier, name=getattr(identifier, "__name__", None))
    return deserialize("metric", identifier, _CLASSES, _ALIASES)


def serialize(metric):
    """``{"class_name": ..., "config": ...}`` for a Metric (None for None).

    Args:
        metric: a Metric, or None.

    Returns:
        The dict, which ``get`` turns back into an equal Metric.

    Example:
        >>> serialize(get("auc"))["class_name"]
        'AUC'
    """
    return None if metric is None else _serialize(metric)


__all__ = [
    "Metric", "Mean", "MeanMetricWrapper", "Accuracy", "BinaryAccuracy", "CategoricalAccuracy",
    "SparseCategoricalAccuracy", "TopKCategoricalAccuracy", "SparseTopKCategoricalAccuracy", "MeanSquaredError",
    "MeanAbsoluteError", "MeanAbsolutePercentageError", "MeanSquaredLogarithmicError", "RootMeanSquaredError",
    "CosineSimilarity", "BinaryCrossentropy", "CategoricalCrossentropy", "SparseCategoricalCrossentropy",
    "KLDivergence", "Precision", "Recall", "AUC", "TruePositives", "FalsePositives", "TrueNegatives",
    "FalseNegatives", "PrecisionAtRecall", "RecallAtPrecision", "SensitivityAtSpecificity",
    "SpecificityAtSensitivity", "F1Score", "FBetaScore", "IoU", "BinaryIoU", "MeanIoU", "OneHotIoU",
    "OneHotMeanIoU", "Sum", "LogCoshError", "R2Score", "PearsonCorrelation", "ConcordanceCorrelation", "Hinge",
    "SquaredHinge", "CategoricalHinge", "Poisson", "pearson_correlation", "concordance_correlation", "binary_accuracy", "categorical_accuracy",
    "sparse_categorical_accuracy", "top_k_categorical_accuracy", "sparse_top_k_categorical_accuracy", "get",
    "serialize",
]
