"""``keras.random``: seeded random draws (``SeedGenerator``, ``normal``, ``uniform``, ``dropout``...)."""

from engine.keras_random import *  # noqa: F403
from engine.keras_random import __all__  # noqa: F401
