"""MaskOf: the mask a tensor carries, as a tensor of the graph.

A layer call records the spec of the mask its output will carry
(``output._keras_mask``, Keras' attribute). The spec is not itself in the
graph; a model that lists it among its outputs (as Keras allows) gets it
through this layer, called on the tensor that carries the mask, which
returns that mask when the graph runs.
"""

import numpy as np

from engine.network.keras_tensor import KerasTensor
from engine.network.layer import Layer


class MaskOf(Layer):
    """Outputs the mask its input carries (bool, the input's first ``rank`` axes); no gradient.

    Args:
        rank: the mask's rank: 2 for the ``(batch, steps)`` mask of a sequence.
        **kwargs: standard layer arguments (``name``).

    Example:
        >>> import numpy as np
        >>> from engine import Input, Model
        >>> from layers import Masking
        >>> x = Input(shape=(3, 2))
        >>> masked = Masking()(x)
        >>> model = Model(x, masked._keras_mask)
        >>> model(np.array([[[0.0, 0.0], [1.0, 2.0], [0.0, 0.0]]]))
        array([[False,  True, False]])
    """

    supports_masking = True

    def __init__(self, rank, **kwargs):
        super().__init__(**kwargs)
        self.rank = int(rank)

    def compute_output_spec(self, inputs, mask=None):
        return KerasTensor(inputs.shape[: self.rank], "bool")

    def compute_mask(self, inputs, mask=None):
        return None

    def call(self, inputs, mask=None):
        if mask is None:  # no mask reached the input when it ran: every step counts
            return np.ones(np.shape(inputs)[: self.rank], bool)
        return np.asarray(mask, bool)

    def forward(self, inputs, mask=None, training=True):
        return self.call(inputs, mask=mask), None

    def backward(self, cache, grad_outputs):
        return None, {}

    def flops(self, input_shapes, output_shapes):
        return 0

    def get_config(self):
        return {**super().get_config(), "rank": self.rank}


def as_graph_tensor(tensor: KerasTensor) -> KerasTensor:
    """``tensor`` itself, or, for the mask spec of a tensor (``t._keras_mask``), ``MaskOf`` called on ``t``.

    Example:
        >>> from engine import Input
        >>> from layers import Masking
        >>> masked = Masking()(Input(shape=(3, 2)))
        >>> type(as_graph_tensor(masked._keras_mask)._keras_history.layer).__name__
        'MaskOf'
    """
    owner = tensor._mask_of
    if tensor._keras_history is not None or owner is None:
        return tensor
    return MaskOf(len(tensor.shape))(owner)
