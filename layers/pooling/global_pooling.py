"""Global pooling: the mean or the max over all the spatial axes at once."""

import math

import numpy as np

from engine import InputSpec, Layer
from layers.convolutional._base import from_channels_last, to_channels_last
from layers._arguments import standardize_data_format
from layers._masks import checked_mask


class _GlobalPooling(Layer):
    """Reduces the spatial axes of ``(batch, *spatial, channels)`` inputs (or
    ``(batch, channels, *spatial)``), keeping them with size 1 if ``keepdims``."""

    _combines_masks_only = True

    def __init__(self, rank, data_format, keepdims, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(keepdims, bool):
            raise ValueError(
                f"Received an invalid value for `keepdims`, expected a bool. Received: keepdims={keepdims!r}"
            )
        self.rank = rank
        self.data_format = standardize_data_format(data_format)
        self.keepdims = keepdims
        self.input_spec = InputSpec(ndim=rank + 2)

    @property
    def _axes(self):
        first = 2 if self.data_format == "channels_first" else 1
        return tuple(range(first, first + self.rank))

    def _expand(self, grad_outputs):
        """The output gradient with the reduced axes back (size 1)."""
        return grad_outputs if self.keepdims else np.expand_dims(grad_outputs, self._axes)

    def compute_output_shape(self, input_shape):
        kept = [1 if axis in self._axes else size for axis, size in enumerate(input_shape)]
        return tuple(kept) if self.keepdims else tuple(s for a, s in enumerate(input_shape) if a not in self._axes)

    def flops(self, input_shapes, output_shapes):
        """One per input element: the comparisons of a max, or the adds and the divide of a mean."""
        return math.prod(input_shapes[0])

    def get_config(self):
        config = super().get_config()
        config.update(data_format=self.data_format, keepdims=self.keepdims)
        return config


class _GlobalAveragePooling(_GlobalPooling):
    """The mean over the spatial axes; with a mask (1D only), over the unmasked steps."""

    def forward(self, inputs, mask=None, training=True):
        if mask is None:
            size = math.prod(inputs.shape[a] for a in self._axes)
            return np.mean(inputs, axis=self._axes, keepdims=self.keepdims), (inputs.shape, 1.0 / size)
        steps_axis = 1 if self.data_format == "channels_last" else 2
        mask = checked_mask(self, mask, (inputs.shape[0], inputs.shape[steps_axis]), inputs.shape)
        weights = np.expand_dims(mask, 2 if self.data_format == "channels_last" else 1)
        counts = np.sum(weights, axis=self._axes, keepdims=True).astype(inputs.dtype)
        pooled = np.sum(np.where(weights, inputs, 0), axis=self._axes, keepdims=True) / counts
        return (pooled if self.keepdims else np.squeeze(pooled, self._axes)), (inputs.shape, weights / counts)

    def backward(self, cache, grad_outputs):
        shape, share = cache
        return np.broadcast_to(self._expand(grad_outputs) * share, shape).copy(), {}


class _GlobalMaxPooling(_GlobalPooling):
    """The max over the spatial axes; the gradient goes to the (first) maximum."""

    def call(self, inputs, training=False):
        return np.max(inputs, axis=self._axes, keepdims=self.keepdims)

    def forward(self, inputs, training=True):
        x = to_channels_last(inputs, self.data_format)
        flat = x.reshape(x.shape[0], math.prod(x.shape[1:-1]), x.shape[-1])
        index = flat.argmax(axis=1)[:, None]
        pooled = np.take_along_axis(flat, index, axis=1).reshape((x.shape[0],) + (1,) * self.rank + (x.shape[-1],))
        pooled = from_channels_last(pooled, self.data_format)
        return (pooled if self.keepdims else np.squeeze(pooled, self._axes)), (x.shape, index)

    def backward(self, cache, grad_outputs):
        shape, index = cache
        grad = to_channels_last(self._expand(grad_outputs), self.data_format)
        grad_flat = np.zeros((shape[0], math.prod(shape[1:-1]), shape[-1]), grad.dtype)
        np.put_along_axis(grad_flat, index, grad.reshape(shape[0], 1, shape[-1]), axis=1)
        return from_channels_last(grad_flat.reshape(shape), self.data_format), {}


class GlobalAveragePooling1D(_GlobalAveragePooling):
    """The mean over the steps of ``(batch, steps, features)`` sequences.

    Called with ``mask`` (``(batch, steps)`` booleans, e.g. from an Embedding
    with ``mask_zero=True``), averages the unmasked steps only.

    Args:
        data_format: ``"channels_last"`` (default) or ``"channels_first"``.
        keepdims: whether to keep the reduced spatial axes, with size 1.

    Example:
        >>> import numpy as np
        >>> GlobalAveragePooling1D()(np.ones((2, 4, 3))).shape
        (2, 3)
    """

    supports_masking = True

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(1, data_format, keepdims, **kwargs)

    def compute_mask(self, inputs, mask=None):
        """None: the steps the mask was over are averaged away."""
        return None

    def call(self, inputs, mask=None):
        return self.forward(inputs, mask)[0]


class GlobalAveragePooling2D(_GlobalAveragePooling):
    """The mean over the rows and columns of images.

    Args:
        data_format: ``"channels_last"`` (default) or ``"channels_first"``.
        keepdims: whether to keep the reduced spatial axes, with size 1.

    Example:
        >>> import numpy as np
        >>> GlobalAveragePooling2D(keepdims=True)(np.ones((2, 4, 5, 3))).shape
        (2, 1, 1, 3)
    """

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(2, data_format, keepdims, **kwargs)

    def call(self, inputs, training=False):
        return self.forward(inputs, training=training)[0]

    def forward(self, inputs, training=True):
        return super().forward(inputs, training=training)


class GlobalMaxPooling1D(_GlobalMaxPooling):
    """The max over the steps of ``(batch, steps, features)`` sequences.

    Args:
        data_format: ``"channels_last"`` (default) or ``"channels_first"``.
        keepdims: whether to keep the reduced spatial axes, with size 1.

    Example:
        >>> import numpy as np
        >>> GlobalMaxPooling1D()(np.arange(6.0).reshape(1, 3, 2))
        array([[4., 5.]], dtype=float32)
    """

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(1, data_format, keepdims, **kwargs)


class GlobalMaxPooling2D(_GlobalMaxPooling):
    """The max over the rows and columns of images.

    Args:
        data_format: ``"channels_last"`` (default) or ``"channels_first"``.
        keepdims: whether to keep the reduced spatial axes, with size 1.

    Example:
        >>> import numpy as np
        >>> GlobalMaxPooling2D()(np.ones((2, 4, 5, 3))).shape
        (2, 3)
    """

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(2, data_format, keepdims, **kwargs)
