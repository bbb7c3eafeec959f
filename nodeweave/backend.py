"""``keras.backend``: what computes (NumPy, in float32, channels-last) and the session's names."""

from engine.utils import clear_session
from engine.utils.backend import backend, epsilon, floatx, image_data_format, is_keras_tensor

__all__ = ["backend", "clear_session", "epsilon", "floatx", "image_data_format", "is_keras_tensor"]
