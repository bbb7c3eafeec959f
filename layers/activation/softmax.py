"""Softmax: normalized exponentials along one or several axes, with an optional mask."""

import math

import numpy as np

from engine import Layer
from layers import activations

# What masked inputs are replaced by before the softmax, as in Keras.
_LARGE_NEGATIVE = -1e9


class Softmax(Layer):
    """``exp(x) / sum(exp(x))`` along ``axis``.

    Args:
        axis: an axis or a list of axes to normalize over.

    Call arguments:
        inputs: the logits.
        mask: optional, broadcastable to ``inputs`` (each axis 1 or the input's
            size); positions where it is False (or <= 0.5) take no part in the
            normalization and output 0.

    Example:
        >>> import numpy as np
        >>> Softmax()(np.array([[1.0, 1.0]]), mask=np.array([[True, False]]))
        array([[1., 0.]], dtype=float32)
    """

    supports_masking = True

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        axes = axis if isinstance(axis, (list, tuple)) else [axis]
        if not axes or not all(isinstance(a, int) and not isinstance(a, bool) for a in axes):
            raise ValueError(f"Softmax expects `axis` to be an integer or a list of integers. Received: axis={axis!r}")
        self.axis = axis
        self._axes = tuple(axes)

    def build(self, input_shape):
        rank = len(input_shape)
        if any(not -rank <= a < rank for a in self._axes):
            raise ValueError(
                f"Layer {self.name!r} (Softmax) has axis={self.axis}, out of range for its input of "
                f"rank {rank} (shape {tuple(input_shape)}): axes must be in [-{rank}, {rank})."
            )

    def compute_output_shape(self, input_shape):
        return input_shape

    def compute_output_spec(self, inputs, mask=None):
        if mask is not None:
            _check_mask(mask.shape, inputs.shape)
        return super().compute_output_spec(inputs)

    def call(self, inputs, mask=None):
        return self.forward(inputs, mask=mask)[0]

    def forward(self, inputs, mask=None, training=True):
        if mask is None:
            outputs = activations.softmax(inputs, axis=self._axes)
            return outputs, (outputs, None)
        mask = np.asarray(mask)
        _check_mask(mask.shape, inputs.shape)
        keep = mask if mask.dtype == bool else mask > 0.5
        probabilities = activations.softmax(np.where(keep, inputs, _LARGE_NEGATIVE), axis=self._axes)
        # Masked positions output 0, also when a whole slice is masked (a uniform softmax).
        return np.where(keep, probabilities, 0), (probabilities, keep)

    def backward(self, cache, grad_outputs):
        probabilities, keep = cache
        if keep is None:
            return activations.softmax.gradient(None, probabilities, grad_outputs, axis=self._axes), {}
        grad = activations.softmax.gradient(None, probabilities, np.where(keep, grad_outputs, 0), axis=self._axes)
        return np.where(keep, grad, 0), {}

    def flops(self, input_shapes, output_shapes):
        """3 per element: the exp, its add into the sum, the divide (masking selects, it is not counted)."""
        return activations.softmax.flops(math.prod(output_shapes[0]))

    def get_config(self):
        config = super().get_config()
        config["axis"] = self.axis
        return config


def _check_mask(mask_shape, input_shape):
    if len(mask_shape) > len(input_shape) or any(
        m is not None and i is not None and m not in (1, i)
        for m, i in zip(reversed(mask_shape), reversed(input_shape))
    ):
        raise ValueError(
            "The `mask` must be broadcastable to `inputs`: it must not have more dimensions, and each "
            f"mask dimension must be 1 or match the corresponding input dimension. Received: "
            f"inputs.shape={tuple(input_shape)}, mask.shape={tuple(mask_shape)}"
        )
