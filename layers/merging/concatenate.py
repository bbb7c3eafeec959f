"""Concatenate: joins its inputs along one axis."""

import numpy as np

from engine import Layer
from layers._masks import merge_masks


class Concatenate(Layer):
    """Concatenates a list of inputs along ``axis``; all other axes must match.

    Args:
        axis: the concatenation axis (negative counts from the end).

    Example:
        >>> import numpy as np
        >>> Concatenate()([np.ones((2, 3)), np.zeros((2, 1))]).shape
        (2, 4)
    """

    _combines_masks_only = True

    min_inputs = 2
    supports_masking = True

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
            raise ValueError(
                f"Received an invalid value for `axis`, expected an integer. Received: axis={axis!r}"
            )
        self.axis = int(axis)

    def build(self, input_shape):
        self.compute_output_shape(input_shape)

    def compute_output_shape(self, input_shape):
        shapes = [tuple(s) for s in input_shape]
        mismatch = (
            "A `Concatenate` layer requires inputs with matching shapes except for the "
            f"concatenation axis. Received: input_shape={shapes}"
        )
        ranks = {len(s) for s in shapes}
        if len(ranks) != 1:
            raise ValueError(mismatch)
        rank = ranks.pop()
        if not -rank <= self.axis < rank:
            raise ValueError(
                f"Layer {self.name!r} (Concatenate) received axis={self.axis}, which is out of range "
                f"for inputs of rank {rank}. Received: input_shape={shapes}"
            )
        axis = self.axis % rank
        output_shape = []
        for index, sizes in enumerate(zip(*shapes)):
            if index == axis:
                output_shape.append(None if None in sizes else sum(sizes))
                continue
            known = set(sizes) - {None}
            if len(known) > 1:
                raise ValueError(mismatch)
            output_shape.append(known.pop() if known else None)
        return tuple(output_shape)

    def compute_mask(self, inputs, mask=None):
        """The inputs' masks joined along ``axis`` (all True for an input
        without one), then reduced over the last axis with a logical or, as
        in Keras 3: ``(batch, steps)`` masks of sequences joined on features
        give their or, joined on steps give their concatenation."""
        masks = merge_masks(self, inputs, mask)
        if masks is None or all(m is None for m in masks):
            return None
        full = []
        for x, m in zip(inputs, masks):
            if m is None:
                m = np.ones(np.shape(x), bool)
            elif np.ndim(m) < np.ndim(x):
                try:
                    m = np.broadcast_to(np.expand_dims(np.asarray(m, bool), -1), np.shape(x))
                except ValueError:
                    raise ValueError(
                        f"Layer {self.name!r} (Concatenate) received a mask of shape {np.shape(m)} for an input of "
                        f"shape {np.shape(x)}: a mask covers the input's leading axes, such as (batch, timesteps)."
                    ) from None
            full.append(np.asarray(m, bool))
        return np.any(np.concatenate(full, axis=self.axis), axis=-1)

    def call(self, inputs, training=False):
        return np.concatenate(inputs, axis=self.axis)

    def backward(self, cache, grad_outputs):
        ends = np.cumsum([x.shape[self.axis] for x in cache])
        return np.split(grad_outputs, ends[:-1], axis=self.axis), {}

    def flops(self, input_shapes, output_shapes):
        """0: concatenating moves values, it computes nothing."""
        return 0

    def get_config(self):
        config = super().get_config()
        config["axis"] = self.axis
        return config


def concatenate(inputs, axis=-1, **kwargs):
    """Functional interface to ``Concatenate``: ``Concatenate(axis, **kwargs)(inputs)``.

    Args:
        inputs: a list of tensors whose shapes match except along ``axis``.
        axis: the concatenation axis (negative counts from the end).
        **kwargs: standard layer arguments (``name``...).

    Returns:
        The concatenated tensor.

    Example:
        >>> from engine import Input
        >>> concatenate([Input(shape=(2,)), Input(shape=(3,))]).shape
        (None, 5)
    """
    return Concatenate(axis=axis, **kwargs)(inputs)
