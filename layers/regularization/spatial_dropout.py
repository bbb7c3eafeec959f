"""SpatialDropout1D and SpatialDropout2D: Dropout of whole feature maps."""

from engine import InputSpec
from layers.core.dropout import Dropout


class SpatialDropout1D(Dropout):
    """Drops whole channels of ``(batch, timesteps, channels)`` inputs: one mask
    entry per sample and channel, shared by all timesteps.

    Args:
        rate: fraction of the channels to drop, in [0, 1).
        seed: integer seed of the layer's own generator.

    Example:
        >>> import numpy as np
        >>> SpatialDropout1D(0.5, seed=0)(np.ones((2, 4, 3)), training=True).shape
        (2, 4, 3)
    """

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(rate, seed=seed, **kwargs)
        self.input_spec = InputSpec(ndim=3)

    def _mask_shape(self, input_shape):
        return (input_shape[0], 1, input_shape[2])

    def get_config(self):
        config = super().get_config()
        del config["noise_shape"]
        return config


class SpatialDropout2D(Dropout):
    """Drops whole channels of images: one mask entry per sample and channel,
    shared by all pixels.

    Args:
        rate: fraction of the channels to drop, in [0, 1).
        data_format: ``"channels_last"`` (``(batch, rows, cols, channels)``, the
            default) or ``"channels_first"`` (``(batch, channels, rows, cols)``).
        seed: integer seed of the layer's own generator.

    Example:
        >>> import numpy as np
        >>> SpatialDropout2D(0.5, seed=0)(np.ones((2, 4, 4, 3)), training=True).shape
        (2, 4, 4, 3)
    """

    def __init__(self, rate, data_format=None, seed=None, **kwargs):
        super().__init__(rate, seed=seed, **kwargs)
        data_format = "channels_last" if data_format is None else data_format
        if data_format not in ("channels_first", "channels_last"):
            raise ValueError(
                'The `data_format` argument must be one of {"channels_first", "channels_last"}. '
                f"Received: data_format={data_format!r}"
            )
        self.data_format = data_format
        self.input_spec = InputSpec(ndim=4)

    def _mask_shape(self, input_shape):
        if self.data_format == "channels_first":
            return (input_shape[0], input_shape[1], 1, 1)
        return (input_shape[0], 1, 1, input_shape[3])

    def get_config(self):
        config = super().get_config()
        del config["noise_shape"]
        config["data_format"] = self.data_format
        return config
