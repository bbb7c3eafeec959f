"""``keras.losses``: loss classes and functions with Keras 3's names and numerics."""

from engine.training.losses import *  # noqa: F403
from engine.training.losses import __all__ as _engine_names

__all__ = [name for name in _engine_names if name != "LossFunctionWrapper"]  # private in Keras (keras.src)
