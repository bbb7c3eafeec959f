"""``keras.ops``: Keras 3's operations on NumPy arrays, traced values and KerasTensors.

``ops.random`` is ``keras.random`` (``nodeweave.random``), as Keras' ``ops`` module
exposes its backend's random functions under that name.
"""

from engine import keras_random as random  # noqa: F401
from engine.keras_ops import *  # noqa: F403
from engine.keras_ops import __all__  # noqa: F401
