"""The checks layers make on masks: the ``mask`` a layer computes with, and the
list of masks a merge layer combines."""

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


def merge_masks(layer, inputs, mask):
    """The list of the inputs' masks (None where an input has none), or None
    when ``mask`` is None; raises ValueError, as Keras does, when ``mask`` is
    not a list with one entry per input."""
    if mask is None:
        return None
    if not isinstance(mask, (list, tuple)):
        raise ValueError(
            f"Layer {layer.name!r} ({type(layer).__name__}) merges a list of inputs, so `mask` should be a list "
            f"with one mask (or None) per input. Received: mask={mask!r}"
        )
    if not isinstance(inputs, (list, tuple)):
        raise ValueError(
            f"Layer {layer.name!r} ({type(layer).__name__}): `inputs` should be a list. Received: inputs={inputs!r}"
        )
    if len(mask) != len(inputs):
        raise ValueError(
            f"Layer {layer.name!r} ({type(layer).__name__}): the lists `inputs` and `mask` should have the same "
            f"length. Received: {len(inputs)} inputs and {len(mask)} masks."
        )
    return list(mask)
