"""The check a layer makes on the ``mask`` argument it computes with."""

import numpy as np


def checked_mask(layer, mask, expected_shape, input_shape):
    """``mask`` as a boolean array, after checking that it holds booleans or
    numbers (True, or nonzero, where a step is kept, as Keras casts them) and
    has ``expected_shape``: the axes of the input it masks, such as
    ``(batch, timesteps)``."""
    mask = np.asarray(mask)
    if mask.dtype.kind not in "biuf":
        raise TypeError(
            f"Layer {layer.name!r} ({type(layer).__name__}) expects a boolean mask (True where a step is kept). "
            f"Received a mask of dtype {mask.dtype}."
        )
    if mask.shape != tuple(expected_shape):
        raise ValueError(
            f"Layer {layer.name!r} ({type(layer).__name__}) received a mask of shape {mask.shape}, which does not "
            f"fit its input of shape {tuple(input_shape)}: the mask must have shape {tuple(expected_shape)}, one "
            "entry per step of each sample."
        )
    return mask.astype(bool, copy=False)
