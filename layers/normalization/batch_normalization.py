"""BatchNormalization: normalize with the batch's moments in training, the moving ones in inference."""

import math

import numpy as np

from engine import InputSpec, initializers
from layers.normalization._base import _AffineNormalization, resolve_axes, standardize, standardize_backward


class BatchNormalization(_AffineNormalization):
    """Normalizes each feature with statistics taken over the batch (and every other axis).

    In training (``training=True``) the layer normalizes with the mean and
    biased variance of the current batch, over all axes but ``axis``, and
    updates ``moving = moving * momentum + batch_statistic * (1 - momentum)``.
    An empty batch has no statistics: it is normalized with the moving ones and
    leaves them unchanged (Keras 3 would fill them with NaN).
    In inference, and whenever the layer is frozen (``trainable = False``),
    it normalizes with the moving statistics, as Keras 3 does.

    Args:
        axis: the feature axis (an int) or axes (a list of ints).
        momentum: momentum of the moving averages.
        epsilon: added to the variance before its square root.
        center, scale: whether to learn the offset ``beta`` and the scale ``gamma``.
        beta_initializer, gamma_initializer, moving_mean_initializer,
            moving_variance_initializer: initializers of the weights.
        beta_regularizer, gamma_regularizer: penalties on the weights.
        beta_constraint, gamma_constraint: projections applied after each update.

    Weights, in order: ``gamma``, ``beta`` (trainable, when ``scale`` /
    ``center``), ``moving_mean``, ``moving_variance``, each of the shape of the
    ``axis`` sizes, as in Keras 3.

    Example:
        >>> import numpy as np
        >>> layer = BatchNormalization(momentum=0.9)
        >>> y = layer(np.array([[0.0, 1.0], [2.0, 3.0]]), training=True)
        >>> layer.moving_mean.value
        array([0.1, 0.2], dtype=float32)
    """

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", moving_mean_initializer="zeros",
                 moving_variance_initializer="ones", beta_regularizer=None, gamma_regularizer=None,
                 beta_constraint=None, gamma_constraint=None, **kwargs):
        super().__init__(axis, epsilon, center, scale, beta_initializer, gamma_initializer, beta_regularizer,
                         gamma_regularizer, beta_constraint, gamma_constraint, **kwargs)
        if isinstance(momentum, bool) or not isinstance(momentum, (int, float)) or not 0 <= momentum <= 1:
            raise ValueError(
                "Received an invalid value for `momentum`, expected a number between 0 and 1. "
                f"Received: momentum={momentum!r}"
            )
        self.momentum = float(momentum)
        self.moving_mean_initializer = initializers.get(moving_mean_initializer)
        self.moving_variance_initializer = initializers.get(moving_variance_initializer)

    def build(self, input_shape):
        self._param_axes = resolve_axes(self.axis, input_shape, self.name)
        self._reduction_axes = tuple(a for a in range(len(input_shape)) if a not in self._param_axes)
        shape = self._param_shape(input_shape)
        self._add_scale_and_offset(shape, self.scale, self.center)
        self.moving_mean = self.add_weight(shape=shape, initializer=self.moving_mean_initializer,
                                           name="moving_mean", trainable=False)
        self.moving_variance = self.add_weight(shape=shape, initializer=self.moving_variance_initializer,
                                               name="moving_variance", trainable=False)
        self.input_spec = InputSpec(ndim=len(input_shape), axes={a: input_shape[a] for a in self._param_axes})

    def forward(self, inputs, training=True):
        batch_statistics = bool(training) and self.trainable and inputs.size > 0
        if batch_statistics:
            normalized, inv_std, mean, variance = standardize(inputs, self._reduction_axes, self.epsilon)
            self._update_moving_statistics(mean, variance)
        else:
            inv_std = 1.0 / np.sqrt(self._broadcast(self.moving_variance, inputs.ndim) + self.epsilon)
            normalized = (inputs - self._broadcast(self.moving_mean, inputs.ndim)) * inv_std
        return self._scale_and_offset(normalized), (normalized, inv_std, batch_statistics)

    def call(self, inputs, training=False):
        if bool(training) and self.trainable and inputs.size > 0:
            return self.forward(inputs, training=training)[0]
        # Inference: the moving statistics, gamma and beta folded into one scale and one shift per
        # feature, two passes over the inputs instead of four (Keras on jax folds them the same way).
        scale = 1.0 / np.sqrt(self.moving_variance.value + self.epsilon)
        if self.gamma is not None:
            scale = scale * self.gamma.value
        shift = -self.moving_mean.value * scale
        if self.beta is not None:
            shift = shift + self.beta.value
        shape = [1] * inputs.ndim
        for axis in self._param_axes:
            shape[axis] = inputs.shape[axis]
        return inputs * scale.reshape(shape) + shift.reshape(shape)

    def backward(self, cache, grad_outputs):
        normalized, inv_std, batch_statistics = cache
        grad_normalized, grads = self._scale_and_offset_backward(normalized, grad_outputs)
        if batch_statistics:
            return standardize_backward(grad_normalized, normalized, inv_std, self._reduction_axes), grads
        return grad_normalized * inv_std, grads

    def flops(self, input_shapes, output_shapes):
        """At inference, 2 per element: the moving statistics, gamma and beta fold into one
        scale and one shift per channel."""
        return 2 * math.prod(input_shapes[0])

    def _update_moving_statistics(self, mean, variance):
        for moving, batch in ((self.moving_mean, mean), (self.moving_variance, variance)):
            moving.assign(moving.value * self.momentum + batch.reshape(moving.shape) * (1.0 - self.momentum))

    def get_config(self):
        config = super().get_config()
        config.update(
            momentum=self.momentum,
            moving_mean_initializer=initializers.serialize(self.moving_mean_initializer),
            moving_variance_initializer=initializers.serialize(self.moving_variance_initializer),
        )
        return config
