"""``keras.ops``: Keras 3's operations on NumPy arrays, traced values and KerasTensors."""

from engine.keras_ops import *  # noqa: F403
from engine.keras_ops import __all__  # noqa: F401
