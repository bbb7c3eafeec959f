"""TimeDistributed: applies one layer to every time slice of its input."""

import inspect

import numpy as np

from engine import Layer
from engine.network.functional_config import deserialize_layer, serialize_layer
from layers._masks import checked_mask


class TimeDistributed(Layer):
    """Applies ``layer`` to every slice ``inputs[:, t]``, with the same weights.

    The time axis is folded into the batch (``(batch, time, ...)`` becomes
    ``(batch * time, ...)``), so the wrapped layer runs once, forwards and
    backwards. This equals Keras' slice-by-slice loop for layers that treat
    samples independently (Dense, LayerNormalization, Flatten, ...); a layer
    computing batch statistics in training (BatchNormalization) sees all the
    slices at once.

    Args:
        layer: the layer to apply to each time slice.

    A mask ``(batch, time, ...)`` passes through unchanged, and is folded the
    same way for a wrapped layer whose ``call`` takes one. The weights are the
    wrapped layer's.

    Example:
        >>> import numpy as np
        >>> from layers import Dense
        >>> TimeDistributed(Dense(4))(np.ones((2, 5, 3), "float32")).shape
        (2, 5, 4)
    """

    supports_masking = True

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(
                f"Please initialize `TimeDistributed` layer with a `Layer` instance. Received: {layer!r}"
            )
        super().__init__(**kwargs)
        self.layer = layer
        self._layer_takes_mask = "mask" in inspect.signature(type(layer).call).parameters

    def _slice_shape(self, input_shape):
        input_shape = tuple(input_shape)
        if len(input_shape) < 3:
            raise ValueError(
                f"Layer {self.name!r} (TimeDistributed) expects inputs with at least 3 dimensions "
                f"(batch, time, ...), received input shape {input_shape}."
            )
        return (input_shape[0], *input_shape[2:])

    def build(self, input_shape):
        if not self.layer.built:
            self.layer.build(self._slice_shape(input_shape))

    def compute_output_shape(self, input_shape):
        slice_output = self.layer.compute_output_shape(self._slice_shape(input_shape))
        return (slice_output[0], input_shape[1], *slice_output[1:])

    def _fold(self, inputs, mask):
        """The inputs with time folded into the batch, and the wrapped layer's mask argument."""
        self._slice_shape(inputs.shape)
        folded = inputs.reshape((-1, *inputs.shape[2:]))
        if mask is None:
            return folded, {}
        mask = np.asarray(mask)
        mask = checked_mask(self, mask, inputs.shape[:2] + mask.shape[2:], inputs.shape)  # (batch, time, ...)
        if not self._layer_takes_mask:
            return folded, {}
        return folded, {"mask": mask.reshape((-1, *mask.shape[2:]))}

    def call(self, inputs, training=False, mask=None):
        folded, kwargs = self._fold(inputs, mask)
        outputs = self.layer(folded, training=training, **kwargs)
        return outputs.reshape(inputs.shape[:2] + outputs.shape[1:])

    def forward(self, inputs, training=True, mask=None):
        folded, kwargs = self._fold(inputs, mask)
        outputs, cache = self.layer.forward(folded, training=training, **kwargs)
        return outputs.reshape(inputs.shape[:2] + outputs.shape[1:]), (cache, inputs.shape)

    def backward(self, cache, grad_outputs):
        layer_cache, input_shape = cache
        grad_inputs, grad_weights = self.layer.backward(
            layer_cache, grad_outputs.reshape((-1, *grad_outputs.shape[2:])))
        return (None if grad_inputs is None else grad_inputs.reshape(input_shape)), grad_weights

    def flops(self, input_shapes, output_shapes):
        """The wrapped layer's count on the slices, time folded into the batch (its count x steps)."""
        (batch, steps, *sample_in), (_, _, *sample_out) = input_shapes[0], output_shapes[0]
        return self.layer.flops([(batch * steps, *sample_in)], [(batch * steps, *sample_out)])

    def get_config(self):
        config = super().get_config()
        config["layer"] = serialize_layer(self.layer)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        return cls(deserialize_layer(config.pop("layer")), **config)
