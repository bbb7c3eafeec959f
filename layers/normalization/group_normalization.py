"""GroupNormalization: normalize each sample over groups of channels."""

import numpy as np

from engine import InputSpec
from layers.normalization._base import _AffineNormalization, resolve_axes, standardize, standardize_backward


class GroupNormalization(_AffineNormalization):
    """Splits the channels into ``groups`` and normalizes each sample within each group.

    The mean and (biased) variance are taken, per sample and per group, over
    the group's channels and every non-batch axis; ``gamma`` and ``beta`` are
    per channel. ``groups=-1`` gives instance normalization (one channel per
    group); ``groups=1`` is a layer normalization over all non-batch axes.

    Args:
        groups: number of groups, dividing the number of channels; -1 for one per channel.
        axis: the channel axis (an int other than the batch axis 0).
        epsilon: added to the variance before its square root.
        center, scale: whether to learn the offset ``beta`` and the scale ``gamma``.
        beta_initializer, gamma_initializer: initializers of the weights.
        beta_regularizer, gamma_regularizer: penalties on the weights.
        beta_constraint, gamma_constraint: projections applied after each update.

    Weights, in order: ``gamma`` and ``beta`` of shape ``(channels,)``, as in Keras 3.

    Example:
        >>> import numpy as np
        >>> GroupNormalization(groups=2)(np.ones((3, 5, 4))).shape
        (3, 5, 4)
    """

    def __init__(self, groups=32, axis=-1, epsilon=1e-3, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", beta_regularizer=None, gamma_regularizer=None,
                 beta_constraint=None, gamma_constraint=None, **kwargs):
        if not isinstance(groups, (int, np.integer)) or isinstance(groups, bool) or (groups <= 0 and groups != -1):
            raise ValueError(
                "Received an invalid value for argument `groups`, expected a positive integer "
                f"(or `-1` for instance normalization). Received: groups={groups!r}"
            )
        super().__init__(axis, epsilon, center, scale, beta_initializer, gamma_initializer, beta_regularizer,
                         gamma_regularizer, beta_constraint, gamma_constraint, **kwargs)
        if not isinstance(self.axis, int):
            raise ValueError(f"Received an invalid value for `axis`, expected an int. Received: axis={axis!r}")
        self.groups = int(groups)

    def build(self, input_shape):
        self._param_axes = resolve_axes(self.axis, input_shape, self.name)
        (channel_axis,) = self._param_axes
        if channel_axis == 0:
            raise ValueError(
                f"Layer {self.name!r} (GroupNormalization) received axis={self.axis}, the batch axis of "
                f"input shape {tuple(input_shape)}. Pass the channel axis (-1 for channels last, 1 for "
                "channels first)."
            )
        (channels,) = self._param_shape(input_shape)
        self._group_count = channels if self.groups == -1 else self.groups
        if channels < self._group_count:
            raise ValueError(
                f"Number of groups ({self._group_count}) cannot be more than the number of channels ({channels})."
            )
        if channels % self._group_count:
            raise ValueError(
                f"Number of channels ({channels}) must be a multiple of the number of groups "
                f"({self._group_count}), for input shape {tuple(input_shape)} of layer {self.name!r}."
            )
        self._add_scale_and_offset((channels,), self.scale, self.center)
        self.input_spec = InputSpec(ndim=len(input_shape), axes={channel_axis: channels})

    def _grouped(self, array):
        """``array`` with its channel axis split into (groups, channels per group), and the
        axes of that view to take the moments over (all but the batch and the group axes)."""
        axis, groups = self._param_axes[0], self._group_count
        shape = array.shape
        grouped = array.reshape(shape[:axis] + (groups, shape[axis] // groups) + shape[axis + 1:])
        return grouped, tuple(a for a in range(1, grouped.ndim) if a != axis)

    def forward(self, inputs, training=True):
        grouped, axes = self._grouped(inputs)
        normalized, inv_std, _, _ = standardize(grouped, axes, self.epsilon)
        normalized = normalized.reshape(inputs.shape)
        return self._scale_and_offset(normalized), (normalized, inv_std)

    def backward(self, cache, grad_outputs):
        normalized, inv_std = cache
        grad_normalized, grads = self._scale_and_offset_backward(normalized, grad_outputs)
        grouped_grad, axes = self._grouped(grad_normalized)
        grad_inputs = standardize_backward(grouped_grad, self._grouped(normalized)[0], inv_std, axes)
        return grad_inputs.reshape(grad_outputs.shape), grads

    def get_config(self):
        config = super().get_config()
        config["groups"] = self.groups
        return config
