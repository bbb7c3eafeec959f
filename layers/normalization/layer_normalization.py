"""LayerNormalization: normalize each sample over its feature axes."""

import numpy as np

from engine import InputSpec
from layers.normalization._base import _AffineNormalization, resolve_axes, standardize, standardize_backward


class LayerNormalization(_AffineNormalization):
    """Normalizes each sample with the mean and (biased) variance over ``axis``.

    Computes ``(x - mean) / sqrt(variance + epsilon) * gamma + beta`` with
    moments over ``axis``, independently for every position of the other axes.

    Args:
        axis: the axis (an int) or axes (a list of ints) to normalize over.
        epsilon: added to the variance before its square root.
        center, scale: whether to learn the offset ``beta`` and the scale ``gamma``.
        rms_scaling: Keras 3's deprecated option: ``x / sqrt(variance + epsilon) * gamma``,
            without centering ``x`` and without ``beta`` (``center`` is ignored,
            ``gamma`` is always created).
        beta_initializer, gamma_initializer: initializers of the weights.
        beta_regularizer, gamma_regularizer: penalties on the weights.
        beta_constraint, gamma_constraint: projections applied after each update.

    Weights, in order: ``gamma`` and ``beta``, of the sizes of the ``axis``
    axes (in increasing axis order), as in Keras 3.

    Example:
        >>> import numpy as np
        >>> LayerNormalization(epsilon=0.0)(np.array([[1.0, 3.0], [0.0, 4.0]]))
        array([[-1.,  1.],
               [-1.,  1.]], dtype=float32)
    """

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True, rms_scaling=False,
                 beta_initializer="zeros", gamma_initializer="ones", beta_regularizer=None,
                 gamma_regularizer=None, beta_constraint=None, gamma_constraint=None, **kwargs):
        super().__init__(axis, epsilon, center, scale, beta_initializer, gamma_initializer, beta_regularizer,
                         gamma_regularizer, beta_constraint, gamma_constraint, **kwargs)
        if not isinstance(rms_scaling, bool):
            raise ValueError(
                "Received an invalid value for `rms_scaling`, expected a bool. "
                f"Received: rms_scaling={rms_scaling!r}"
            )
        self.rms_scaling = rms_scaling

    def build(self, input_shape):
        self._param_axes = resolve_axes(self.axis, input_shape, self.name)
        shape = self._param_shape(input_shape)
        self._add_scale_and_offset(shape, self.scale or self.rms_scaling, self.center and not self.rms_scaling)
        self.input_spec = InputSpec(ndim=len(input_shape), axes={a: input_shape[a] for a in self._param_axes})

    def forward(self, inputs, training=True):
        axes = self._param_axes
        if self.rms_scaling:
            inv_std = 1.0 / np.sqrt(np.var(inputs, axis=axes, keepdims=True) + self.epsilon)
            normalized = inputs * inv_std
        else:
            normalized, inv_std, _, _ = standardize(inputs, axes, self.epsilon)
        return self._scale_and_offset(normalized), (normalized, inv_std)

    def backward(self, cache, grad_outputs):
        normalized, inv_std = cache
        axes = self._param_axes
        grad_normalized, grads = self._scale_and_offset_backward(normalized, grad_outputs)
        if self.rms_scaling:
            # d(x * inv_std) = inv_std * (dx - centered * mean(normalized * dx)), centered = (x - mean) * inv_std.
            centered = normalized - np.mean(normalized, axis=axes, keepdims=True)
            dot = np.mean(grad_normalized * normalized, axis=axes, keepdims=True)
            return inv_std * (grad_normalized - centered * dot), grads
        return standardize_backward(grad_normalized, normalized, inv_std, axes), grads

    def get_config(self):
        config = super().get_config()
        config["rms_scaling"] = self.rms_scaling
        return config
