"""What Keras' ``keras.backend`` reports, answered for nodeweave: NumPy computes in
float32, with Keras' fuzz factor 1e-7 and channels-last images."""

from engine.network.keras_tensor import is_keras_tensor  # noqa: F401  (keras.backend.is_keras_tensor)
from engine.training.losses.loss import EPSILON


def floatx() -> str:
    """The default float dtype of weights and inputs: ``"float32"``.

    Example:
        >>> floatx()
        'float32'
    """
    return "float32"


def epsilon() -> float:
    """The fuzz factor losses and constraints add to avoid dividing by zero (1e-7).

    Example:
        >>> epsilon()
        1e-07
    """
    return EPSILON


def image_data_format() -> str:
    """The layout of image tensors: ``"channels_last"`` (batch, height, width, channels).

    Example:
        >>> image_data_format()
        'channels_last'
    """
    return "channels_last"


def backend() -> str:
    """The name of the backend that computes: ``"numpy"``.

    Example:
        >>> backend()
        'numpy'
    """
    return "numpy"
