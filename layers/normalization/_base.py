"""What the normalization layers share: the ``axis`` argument, standardization
over some axes with its backward, and the learned scale (gamma) and offset (beta)."""

import math

import numpy as np

from engine import Layer
from engine.training import constraints, regularizers
from engine.network import initializers


def check_axis(axis):
    """Returns ``axis`` (an int, or a non-empty list/tuple of ints, returned as a list)."""
    if _is_int(axis):
        return int(axis)
    if isinstance(axis, (list, tuple)) and axis and all(_is_int(a) for a in axis):
        return [int(a) for a in axis]
    raise TypeError(
        f"Expected an int or a non-empty list/tuple of ints for the argument 'axis', but received: {axis!r}"
    )


def resolve_axes(axis, input_shape, layer_name):
    """The axes named by ``axis`` for inputs of ``input_shape``, non-negative and sorted."""
    rank = len(input_shape)
    axes = [axis] if isinstance(axis, int) else axis
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError(
                f"Axis {a} is out of bounds for input shape {tuple(input_shape)} of layer "
                f"{layer_name!r}. Received: axis={axis}"
            )
    resolved = sorted(a % rank for a in axes)
    if len(set(resolved)) != len(resolved):
        raise ValueError(
            f"Layer {layer_name!r} received axis={axis}, which names the same axis twice for "
            f"input shape {tuple(input_shape)}."
        )
    return tuple(resolved)


def standardize(x, axes, epsilon):
    """``(x - mean) / sqrt(variance + epsilon)`` with the (biased) moments over ``axes``.

    Returns ``(normalized, inv_std, mean, variance)``, the last three with kept dims.
    """
    mean = np.mean(x, axis=axes, keepdims=True)
    variance = np.var(x, axis=axes, keepdims=True)
    inv_std = 1.0 / np.sqrt(variance + epsilon)
    return (x - mean) * inv_std, inv_std, mean, variance


def standardize_backward(grad_normalized, normalized, inv_std, axes):
    """Gradient of ``standardize``'s input, through the mean and the variance."""
    mean_grad = np.mean(grad_normalized, axis=axes, keepdims=True)
    mean_grad_dot = np.mean(grad_normalized * normalized, axis=axes, keepdims=True)
    return inv_std * (grad_normalized - mean_grad - normalized * mean_grad_dot)


class _AffineNormalization(Layer):
    """Base of the normalizations that end with ``normalized * gamma + beta``.

    Subclasses set ``self._param_axes`` (the input axes that gamma and beta
    span, non-negative and sorted) in ``build`` and create the weights with
    ``_add_scale_and_offset``.
    """

    supports_masking = True

    def __init__(self, axis, epsilon, center, scale, beta_initializer, gamma_initializer,
                 beta_regularizer, gamma_regularizer, beta_constraint, gamma_constraint, **kwargs):
        super().__init__(**kwargs)
        self.axis = check_axis(axis)
        if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or epsilon < 0:
            raise ValueError(
                "Received an invalid value for `epsilon`, expected a non-negative number. "
                f"Received: epsilon={epsilon!r}"
            )
        for name, value in (("center", center), ("scale", scale)):
            if not isinstance(value, bool):
                raise ValueError(
                    f"Received an invalid value for `{name}`, expected a bool. Received: {name}={value!r}"
                )
        self.epsilon = float(epsilon)
        self.center = center
        self.scale = scale
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.beta_constraint = constraints.get(beta_constraint)
        self.gamma_constraint = constraints.get(gamma_constraint)

    def _param_shape(self, input_shape):
        shape = tuple(input_shape[a] for a in self._param_axes)
        if None in shape:
            raise ValueError(
                f"Layer {self.name!r} ({type(self).__name__}) needs known sizes on axis={self.axis} "
                f"to create its weights, received input shape {tuple(input_shape)}."
            )
        return shape

    def _add_scale_and_offset(self, shape, scale, center):
        self.gamma = self.beta = None
        if scale:
            self.gamma = self.add_weight(shape=shape, initializer=self.gamma_initializer, name="gamma",
                                         regularizer=self.gamma_regularizer, constraint=self.gamma_constraint)
        if center:
            self.beta = self.add_weight(shape=shape, initializer=self.beta_initializer, name="beta",
                                        regularizer=self.beta_regularizer, constraint=self.beta_constraint)

    def _broadcast(self, variable, ndim):
        """The value of a weight spanning ``_param_axes``, shaped to broadcast against the inputs."""
        shape = [1] * ndim
        for axis, size in zip(self._param_axes, variable.shape):
            shape[axis] = size
        return variable.value.reshape(shape)

    def _scale_and_offset(self, normalized):
        outputs = normalized
        if self.gamma is not None:
            outputs = outputs * self._broadcast(self.gamma, normalized.ndim)
        if self.beta is not None:
            outputs = outputs + self._broadcast(self.beta, normalized.ndim)
        return outputs

    def _scale_and_offset_backward(self, normalized, grad_outputs):
        """Returns (gradient of ``normalized``, {gamma: ..., beta: ...})."""
        other_axes = tuple(a for a in range(normalized.ndim) if a not in self._param_axes)
        grads = {}
        grad_normalized = grad_outputs
        if self.gamma is not None:
            grads[self.gamma] = np.sum(grad_outputs * normalized, axis=other_axes).reshape(self.gamma.shape)
            grad_normalized = grad_outputs * self._broadcast(self.gamma, normalized.ndim)
        if self.beta is not None:
            grads[self.beta] = np.sum(grad_outputs, axis=other_axes).reshape(self.beta.shape)
        return grad_normalized, grads

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def call(self, inputs, training=False):
        return self.forward(inputs, training=training)[0]

    def flops(self, input_shapes, output_shapes):
        """Per element, 5 to standardize (the mean's sum, the subtraction, the square, the variance's
        sum, the multiply by 1 / std; per-group scalars such as the square root are not counted),
        then 1 for the scale and 1 for the offset when the layer has them."""
        return math.prod(input_shapes[0]) * (5 + (self.gamma is not None) + (self.beta is not None))

    def get_config(self):
        config = super().get_config()
        config.update(
            axis=self.axis,
            epsilon=self.epsilon,
            center=self.center,
            scale=self.scale,
            beta_initializer=initializers.serialize(self.beta_initializer),
            gamma_initializer=initializers.serialize(self.gamma_initializer),
            beta_regularizer=regularizers.serialize(self.beta_regularizer),
            gamma_regularizer=regularizers.serialize(self.gamma_regularizer),
            beta_constraint=constraints.serialize(self.beta_constraint),
            gamma_constraint=constraints.serialize(self.gamma_constraint),
        )
        return config


def _is_int(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)
