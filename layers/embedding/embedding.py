"""Embedding: integer indices to rows of a learned table."""

import numpy as np

from engine import Layer
from engine.training import constraints, regularizers
from engine.network import initializers


class Embedding(Layer):
    """Maps each integer index in ``[0, input_dim)`` to a learned vector of size ``output_dim``.

    Args:
        input_dim: positive integer, the number of rows (vocabulary size).
        output_dim: positive integer, the size of each vector.
        embeddings_initializer: initializer of the table (``"uniform"`` is
            ``RandomUniform(-0.05, 0.05)``, as in Keras).
        embeddings_regularizer: penalty on the table.
        embeddings_constraint: projection applied after each update.
        mask_zero: whether index 0 is padding; ``compute_mask`` then returns ``inputs != 0``.
        weights: the initial table, an ``(input_dim, output_dim)`` array (or a
            list holding it), as Keras takes it; the layer is then built.

    Inputs are integer arrays of any shape (floats holding integers are cast,
    as in Keras); the output appends an axis of size ``output_dim``. Indices
    outside ``[0, input_dim)`` raise a ValueError. The only weight is
    ``embeddings`` of shape ``(input_dim, output_dim)``.

    Example:
        >>> import numpy as np
        >>> Embedding(10, 4)(np.array([[1, 2, 3]])).shape
        (1, 3, 4)
    """

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform", embeddings_regularizer=None,
                 embeddings_constraint=None, mask_zero=False, weights=None, **kwargs):
        for name, value in (("input_dim", input_dim), ("output_dim", output_dim)):
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value <= 0:
                raise ValueError(
                    f"`{name}` must be a positive integer. "
                    f"Received: {name}={value!r} (of type {type(value).__name__})."
                )
        super().__init__(**kwargs)
        self.input_dim = int(input_dim)
        self.output_dim = int(output_dim)
        self.embeddings_initializer = initializers.get(embeddings_initializer)
        self.embeddings_regularizer = regularizers.get(embeddings_regularizer)
        self.embeddings_constraint = constraints.get(embeddings_constraint)
        self.mask_zero = bool(mask_zero)
        self.supports_masking = self.mask_zero
        if weights is not None:
            self.build(None)
            self.set_weights(weights if isinstance(weights, list) and len(weights) == 1 else [weights])

    def build(self, input_shape):
        self.embeddings = self.add_weight(
            shape=(self.input_dim, self.output_dim), initializer=self.embeddings_initializer, name="embeddings",
            regularizer=self.embeddings_regularizer, constraint=self.embeddings_constraint,
        )

    def compute_output_shape(self, input_shape):
        return tuple(input_shape) + (self.output_dim,)

    def call(self, inputs, training=False):
        return self.embeddings.value[self._indices(inputs)]

    def forward(self, inputs, training=True):
        indices = self._indices(inputs)
        return self.embeddings.value[indices], indices

    def backward(self, cache, grad_outputs):
        grad = np.zeros_like(self.embeddings.value)
        np.add.at(grad, cache.reshape(-1), grad_outputs.reshape(-1, self.output_dim))
        return None, {self.embeddings: grad}

    def flops(self, input_shapes, output_shapes):
        """0: a lookup is a gather, no multiply-adds."""
        return 0

    def _may_make_masks(self):
        return self.mask_zero

    def compute_mask(self, inputs, mask=None):
        """``inputs != 0`` when ``mask_zero``, else None."""
        return np.not_equal(inputs, 0) if self.mask_zero else None

    def _indices(self, inputs):
        indices = np.asarray(inputs)
        if indices.dtype.kind not in "iu":
            if indices.dtype.kind not in "fb":
                raise TypeError(
                    f"Layer {self.name!r} (Embedding) expects integer indices, received an array of dtype "
                    f"{indices.dtype.name}."
                )
            indices = indices.astype(np.int64)
        if indices.size:
            low, high = indices.min(), indices.max()
            if low < 0 or high >= self.input_dim:
                bad = low if low < 0 else high
                raise ValueError(
                    f"Layer {self.name!r} (Embedding) received index {bad}, outside its valid range "
                    f"[0, {self.input_dim - 1}] (input_dim={self.input_dim}). Check the vocabulary size or "
                    "the preprocessing of the indices."
                )
        return indices

    def get_config(self):
        config = super().get_config()
        config.update(
            input_dim=self.input_dim,
            output_dim=self.output_dim,
            embeddings_initializer=initializers.serialize(self.embeddings_initializer),
            embeddings_regularizer=regularizers.serialize(self.embeddings_regularizer),
            embeddings_constraint=constraints.serialize(self.embeddings_constraint),
            mask_zero=self.mask_zero,
        )
        return config
