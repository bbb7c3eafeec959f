"""What Keras' ``keras.backend`` reports, answered for nodeweave: NumPy computes in
float32, with Keras' fuzz factor 1e-7 and channels-last images."""

from engine.keras_tensor import KerasTensor
from engine.losses.loss import EPSILON


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


def is_keras_tensor(x) -> bool:
    """Whether ``x`` is a symbolic tensor (a KerasTensor from ``Input`` or a layer call).

    Example:
        >>> from engine import Input
        >>> is_keras_tensor(Input(shape=(2,))), is_keras_tensor(1.0)
        (True, False)
    """
    return isinstance(x, KerasTensor)
