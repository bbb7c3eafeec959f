"""Losses with Keras 3 names and numerics, each with the gradient training needs."""

from engine.training.losses.focal import (BinaryFocalCrossentropy, CategoricalFocalCrossentropy,
                                          CategoricalGeneralizedCrossEntropy, binary_focal_crossentropy,
                                          categorical_focal_crossentropy, categorical_generalized_cross_entropy)
from engine.training.losses.hinge import CategoricalHinge, Hinge, SquaredHinge, categorical_hinge, hinge, squared_hinge
from engine.training.losses.loss import Loss, LossFunctionWrapper
from engine.training.losses.overlap import Dice, Tversky, dice, tversky
from engine.training.losses.probabilistic import (BinaryCrossentropy, CategoricalCrossentropy, KLDivergence, Poisson,
                                                  SparseCategoricalCrossentropy, binary_crossentropy,
                                                  categorical_crossentropy, kl_divergence, poisson,
                                                  sparse_categorical_crossentropy)
from engine.training.losses.regression import (CosineSimilarity, Huber, LogCosh, MeanAbsoluteError,
                                               MeanAbsolutePercentageError, MeanSquaredError,
                                               MeanSquaredLogarithmicError, cosine_similarity, huber, log_cosh,
                                               mean_absolute_error, mean_absolute_percentage_error, mean_squared_error,
                                               mean_squared_logarithmic_error)
from engine.files.serialization import deserialize
from engine.files.serialization import serialize as _serialize

_CLASSES = {cls.__name__: cls for cls in (
    MeanSquaredError, MeanAbsoluteError, MeanAbsolutePercentageError, MeanSquaredLogarithmicError, Huber,
    CosineSimilarity, BinaryCrossentropy,
    CategoricalCrossentropy, SparseCategoricalCrossentropy, KLDivergence, LossFunctionWrapper, Hinge, SquaredHinge,
    CategoricalHinge, LogCosh, Poisson, BinaryFocalCrossentropy, CategoricalFocalCrossentropy,
    CategoricalGeneralizedCrossEntropy, Dice, Tversky,
)}
# Keras' names: each function's name, and its short names in lower and upper case.
_ALIASES = {
    "mean_squared_error": "MeanSquaredError", "mse": "MeanSquaredError", "MSE": "MeanSquaredError",
    "mean_absolute_error": "MeanAbsoluteError", "mae": "MeanAbsoluteError", "MAE": "MeanAbsoluteError",
    "mean_absolute_percentage_error": "MeanAbsolutePercentageError", "mape": "MeanAbsolutePercentageError",
    "MAPE": "MeanAbsolutePercentageError",
    "mean_squared_logarithmic_error": "MeanSquaredLogarithmicError", "msle": "MeanSquaredLogarithmicError",
    "MSLE": "MeanSquaredLogarithmicError",
    "huber": "Huber",
    "cosine_similarity": "CosineSimilarity",
    "binary_crossentropy": "BinaryCrossentropy", "bce": "BinaryCrossentropy", "BCE": "BinaryCrossentropy",
    "categorical_crossentropy": "CategoricalCrossentropy",
    "sparse_categorical_crossentropy": "SparseCategoricalCrossentropy",
    "kl_divergence": "KLDivergence", "kld": "KLDivergence", "KLD": "KLDivergence",
    "hinge": "Hinge", "squared_hinge": "SquaredHinge", "categorical_hinge": "CategoricalHinge",
    "log_cosh": "LogCosh", "poisson": "Poisson",
    "binary_focal_crossentropy": "BinaryFocalCrossentropy",
    "categorical_focal_crossentropy": "CategoricalFocalCrossentropy",
    "categorical_generalized_cross_entropy": "CategoricalGeneralizedCrossEntropy",
    "dice": "Dice", "tversky": "Tversky",
}


def get(identifier):
    """Returns a Loss from a name (``"mse"``), a config dict, a Loss (or Loss class), a
    function ``fn(y_true, y_pred)`` returning per-sample losses (its gradient traced) or None.

    Args:
        identifier: what to turn into a Loss (see above).

    Returns:
        The Loss (a class is instantiated, a function wrapped), or None.

    Raises:
        ValueError: an unknown name, with the closest known one.

    Example:
        >>> get("sparse_categorical_crossentropy").name
        'sparse_categorical_crossentropy'
    """
    if identifier is None or isinstance(identifier, Loss):
        return identifier
    if isinstance(identifier, type) and issubclass(identifier, Loss):
        return identifier()
    if callable(identifier) and not isinstance(identifier, type):
        return LossFunctionWrapper(identifier)
    return deserialize("loss", identifier, _CLASSES, _ALIASES)


def serialize(loss):
    """``{"class_name": ..., "config": ...}`` for a Loss (None for None).

    Args:
        loss: a Loss, or None.

    Returns:
        The dict, which ``get`` turns back into an equal Loss.

    Example:
        >>> serialize(get("mse"))["class_name"]
        'MeanSquaredError'
    """
    return None if loss is None else _serialize(loss)


__all__ = [
    "Loss", "LossFunctionWrapper", "MeanSquaredError", "MeanAbsoluteError", "MeanAbsolutePercentageError",
    "MeanSquaredLogarithmicError", "Huber", "CosineSimilarity", "BinaryCrossentropy", "CategoricalCrossentropy",
    "SparseCategoricalCrossentropy", "KLDivergence", "mean_squared_error", "mean_absolute_error",
    "mean_absolute_percentage_error", "mean_squared_logarithmic_error", "huber", "cosine_similarity",
    "binary_crossentropy", "categorical_crossentropy", "sparse_categorical_crossentropy", "kl_divergence",
    "Hinge", "SquaredHinge", "CategoricalHinge", "LogCosh", "Poisson", "BinaryFocalCrossentropy",
    "CategoricalFocalCrossentropy", "CategoricalGeneralizedCrossEntropy", "Dice", "Tversky", "hinge",
    "squared_hinge", "categorical_hinge", "log_cosh", "poisson", "binary_focal_crossentropy",
    "categorical_focal_crossentropy", "categorical_generalized_cross_entropy", "dice", "tversky", "get",
    "serialize",
]
