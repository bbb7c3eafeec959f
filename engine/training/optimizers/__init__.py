"""Optimizers that update layer weights from their gradients, and learning-rate schedules."""

from engine.training.optimizers import schedules
from engine.training.optimizers.adadelta import Adadelta
from engine.training.optimizers.adafactor import Adafactor
from engine.training.optimizers.adagrad import Adagrad
from engine.training.optimizers.adam import Adam
from engine.training.optimizers.adamax import Adamax
from engine.training.optimizers.adamw import AdamW
from engine.training.optimizers.base import Optimizer
from engine.training.optimizers.ftrl import Ftrl
from engine.training.optimizers.lamb import Lamb
from engine.training.optimizers.lion import Lion
from engine.training.optimizers.nadam import Nadam
from engine.training.optimizers.rmsprop import RMSprop
from engine.training.optimizers.sgd import SGD
from engine.files.serialization import deserialize, serialize

_CLASSES = {cls.__name__: cls for cls in (SGD, Adam, AdamW, RMSprop, Adagrad, Adamax, Nadam, Adadelta, Adafactor, Ftrl,
                                           Lamb, Lion)}
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


__all__ = ["SGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "Ftrl", "Lamb", "Lion", "Nadam",
           "Optimizer", "RMSprop", "get", "schedules", "serialize"]
