"""``keras.metrics``: stateful metrics and metric functions with Keras 3's names and numerics."""

from engine.training.metrics import *  # noqa: F403
from engine.training.metrics import __all__  # noqa: F401
