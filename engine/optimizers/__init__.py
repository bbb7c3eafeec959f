"""Optimizers that update layer weights from their gradients, and learning-rate schedules."""

from engine.optimizers import schedules
from engine.optimizers.adagrad import Adagrad
from engine.optimizers.adam import Adam
from engine.optimizers.adamax import Adamax
from engine.optimizers.adamw import AdamW
from engine.optimizers.base import Optimizer
from engine.optimizers.nadam import Nadam
from engine.optimizers.rmsprop import RMSprop
from engine.optimizers.sgd import SGD
from engine.serialization import deserialize, serialize

_CLASSES = {cls.__name__: cls for cls in (SGD, Adam, AdamW, RMSprop, Adagrad, Adamax, Nadam)}
_ALIASES = {name.lower(): name for name in _CLASSES}


def get(identifier):
    """Returns an optimizer from a name (``"adam"``), a config dict or an optimizer.

    Args:
        identifier: a name (any case: ``"adam"``, ``"Adam"``), a
            ``{"class_name": ..., "config": ...}`` dict, or an Optimizer
            (returned as it is).

    Returns:
        The optimizer.

    Raises:
        ValueError: an unknown name, with the closest known one.

    Example:
        >>> get("adam").learning_rate
        0.001
    """
    if isinstance(identifier, Optimizer):
        return identifier
    return deserialize("optimizer", identifier, _CLASSES, _ALIASES)


__all__ = ["SGD", "Adagrad", "Adam", "AdamW", "Adamax", "Nadam", "Optimizer", "RMSprop", "get", "schedules",
           "serialize"]
