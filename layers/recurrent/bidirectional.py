"""Bidirectional: runs a recurrent layer forwards and a copy of it backwards, and merges the two."""

import math

import numpy as np

from engine import Layer
from engine.network.functional_config import deserialize_layer, serialize_layer
from engine.network.bound_arguments import gradients_as_given
from layers.recurrent._rnn import _Recurrent, first_mask, split_inputs, split_shapes

_MERGE_MODES = ("concat", "sum", "mul", "ave", None)


class Bidirectional(Layer):
    """Bidirectional wrapper for a recurrent layer.

    The forward layer is a copy of ``layer`` (named ``forward_<name>``); the
    backward layer is ``backward_layer`` or a copy of ``layer`` with
    ``go_backwards=True`` (named ``backward_<name>``). With
    ``return_sequences``, the backward layer's sequence is flipped back to
    input order before merging, and, as in Keras 3, both layers output zeros
    at masked steps.

    Args:
        layer: a SimpleRNN, LSTM or GRU.
        merge_mode: ``"concat"``, ``"sum"``, ``"mul"``, ``"ave"``, or None for
            the list ``[forward output, backward output]``.
        backward_layer: the layer to run backwards (``go_backwards=True``), when
            it should differ from a copy of ``layer``.

    Call arguments: ``inputs``, or ``[inputs, *forward_states, *backward_states]``;
    ``initial_state`` (forward states then backward states; gradients reach the
    states either way); ``mask``; ``training``. With
    ``return_state``, the outputs are followed by the forward then the backward
    final states.

    Weights: the forward layer's, then the backward layer's, as in Keras 3.

    Example:
        >>> import numpy as np
        >>> from layers.recurrent import LSTM
        >>> Bidirectional(LSTM(4, return_sequences=True))(np.ones((2, 5, 3), "float32")).shape
        (2, 5, 8)
    """

    _combines_masks_only = True

    supports_masking = True

    def __init__(self, layer, merge_mode="concat", backward_layer=None, **kwargs):
        for name, value in (("layer", layer), ("backward_layer", backward_layer)):
            if value is not None and not isinstance(value, _Recurrent):
                raise ValueError(
                    f"Bidirectional expects `{name}` to be a recurrent layer (SimpleRNN, LSTM or GRU). "
                    f"Received: {name}={value!r}"
                )
        if merge_mode not in _MERGE_MODES:
            raise ValueError(
                f"Invalid merge mode. Received: {merge_mode!r}. Merge mode should be one of "
                '{"sum", "mul", "ave", "concat", None}'
            )
        super().__init__(**kwargs)
        self.forward_layer = _copy(layer, f"forward_{layer.name.removeprefix('forward_')}")
        if backward_layer is None:
            backward_layer = _copy(layer, f"backward_{layer.name.removeprefix('backward_')}", go_backwards=True)
        self.backward_layer = backward_layer
        if self.forward_layer.go_backwards == self.backward_layer.go_backwards:
            raise ValueError(
                "Forward layer and backward layer should have different `go_backwards` value. Received: "
                f"forward_layer.go_backwards={self.forward_layer.go_backwards}, "
                f"backward_layer.go_backwards={self.backward_layer.go_backwards}"
            )
        for attribute in ("return_sequences", "return_state"):
            forward_value = getattr(self.forward_layer, attribute)
            backward_value = getattr(self.backward_layer, attribute)
            if forward_value != backward_value:
                raise ValueError(
                    "Forward layer and backward layer are expected to have the same value for attribute "
                    f'"{attribute}", got "{forward_value}" for forward layer and "{backward_value}" for backward layer'
                )
        self.merge_mode = merge_mode
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state
        for sublayer in (self.forward_layer, self.backward_layer):
            sublayer.zero_output_for_mask = self.return_sequences

    def build(self, input_shape):
        sequence_shape, _ = split_shapes(input_shape)
        for sublayer in (self.forward_layer, self.backward_layer):
            if not sublayer.built:
                sublayer.build(sequence_shape)

    def compute_output_shape(self, input_shape):
        sequence_shape, _ = split_shapes(input_shape)
        shapes = [self._as_list(layer.compute_output_shape(sequence_shape))
                  for layer in (self.forward_layer, self.backward_layer)]
        (forward_output, *forward_states), (backward_output, *backward_states) = shapes
        if self.merge_mode == "concat":
            sizes = (forward_output[-1], backward_output[-1])
            outputs = [forward_output[:-1] + (None if None in sizes else sum(sizes),)]
        elif self.merge_mode is None:
            outputs = [forward_output, backward_output]
        else:
            outputs = [forward_output]
        return self._unlist(outputs + forward_states + backward_states)

    def compute_mask(self, inputs, mask=None):
        """The sequence's mask for returned sequences; None for last outputs and states."""
        output_mask = first_mask(mask) if self.return_sequences else None
        masks = [output_mask] * (2 if self.merge_mode is None else 1)
        if self.return_state:
            masks += [None] * (self.forward_layer._num_states + self.backward_layer._num_states)
        return self._unlist(masks)

    def _split(self, inputs, initial_state):
        """The forward and backward layers' inputs: ``x`` or ``[x, *their states]``."""
        sequences, states = split_inputs(self, inputs, initial_state)
        if len(states) % 2:
            raise ValueError(
                f"Layer {self.name!r} (Bidirectional) expects an even number of initial states (those of the "
                f"forward layer, then those of the backward layer), received {len(states)}."
            )
        half = len(states) // 2
        if not states:
            return sequences, sequences
        return [sequences, *states[:half]], [sequences, *states[half:]]

    def call(self, inputs, initial_state=None, mask=None, training=False):
        forward_inputs, backward_inputs = self._split(inputs, initial_state)
        y = self.forward_layer.call(forward_inputs, mask=mask, training=training)
        y_rev = self.backward_layer.call(backward_inputs, mask=mask, training=training)
        return self._merge(y, y_rev)

    def forward(self, inputs, initial_state=None, mask=None, training=True):
        forward_inputs, backward_inputs = self._split(inputs, initial_state)
        y, forward_cache = self.forward_layer.forward(forward_inputs, training=training, mask=mask)
        y_rev, backward_cache = self.backward_layer.forward(backward_inputs, training=training, mask=mask)
        given = {"inputs": inputs, "initial_state": initial_state}
        return self._merge(y, y_rev), (forward_cache, backward_cache, y, y_rev, given)

    def _merge(self, y, y_rev):
        """``[merged output(s), *forward states, *backward states]`` (one array when alone)."""
        (y, *forward_states), (y_rev, *backward_states) = self._as_list(y), self._as_list(y_rev)
        if self.return_sequences:
            y_rev = y_rev[:, ::-1]
        if self.merge_mode == "concat":
            outputs = [np.concatenate([y, y_rev], axis=-1)]
        elif self.merge_mode == "sum":
            outputs = [y + y_rev]
        elif self.merge_mode == "ave":
            outputs = [(y + y_rev) * 0.5]
        elif self.merge_mode == "mul":
            outputs = [y * y_rev]
        else:
            outputs = [y, np.ascontiguousarray(y_rev)]
        return self._unlist(outputs + forward_states + backward_states)

    def backward(self, cache, grad_outputs):
        forward_cache, backward_cache, y, y_rev, given = cache
        grads = self._as_list(grad_outputs)
        y, y_rev = self._as_list(y)[0], self._as_list(y_rev)[0]
        if self.return_sequences:
            y_rev = y_rev[:, ::-1]
        if self.merge_mode is None:
            (grad_y, grad_y_rev), grad_states = grads[:2], grads[2:]
        else:
            grad, grad_states = grads[0], grads[1:]
            if self.merge_mode == "concat":
                grad_y, grad_y_rev = grad[..., :y.shape[-1]], grad[..., y.shape[-1]:]
            elif self.merge_mode == "sum":
                grad_y = grad_y_rev = grad
            elif self.merge_mode == "ave":
                grad_y = grad_y_rev = grad * 0.5
            else:
                grad_y, grad_y_rev = grad * y_rev, grad * y
        if self.return_sequences:
            grad_y_rev = grad_y_rev[:, ::-1]
        split = len(grad_states) - self.backward_layer._num_states
        forward_grads, forward_weights = self.forward_layer.backward(
            forward_cache, [grad_y, *grad_states[:split]] if self.return_state else grad_y)
        backward_grads, backward_weights = self.backward_layer.backward(
            backward_cache, [grad_y_rev, *grad_states[split:]] if self.return_state else grad_y_rev)
        forward_grads, backward_grads = self._as_list(forward_grads), self._as_list(backward_grads)
        grad_sequences = forward_grads[0] + backward_grads[0]
        grad_states = [*forward_grads[1:], *backward_grads[1:]]
        return gradients_as_given(given, [grad_sequences, *grad_states]), {**forward_weights, **backward_weights}

    def flops(self, input_shapes, output_shapes):
        """Both directions' counts on the sequence, and the merge: 1 per merged element for
        ``"sum"`` and ``"mul"``, 2 for ``"ave"``, 0 for ``"concat"`` and None (no merge)."""
        sequence = input_shapes[:1]
        passes = [layer.flops(sequence, [tuple(s) for s in self._as_list(layer.compute_output_shape(sequence[0]))])
                  for layer in (self.forward_layer, self.backward_layer)]
        merge = {"sum": 1, "mul": 1, "ave": 2}.get(self.merge_mode, 0)
        return sum(passes) + merge * math.prod(output_shapes[0])

    @staticmethod
    def _as_list(value):
        return list(value) if isinstance(value, list) else [value]

    @staticmethod
    def _unlist(values):
        return values[0] if len(values) == 1 else values

    def get_config(self):
        config = super().get_config()
        config.update(
            merge_mode=self.merge_mode,
            layer=serialize_layer(self.forward_layer),
            backward_layer=serialize_layer(self.backward_layer),
        )
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        layer = deserialize_layer(config.pop("layer"))
        backward = config.pop("backward_layer", None)
        return cls(layer, backward_layer=None if backward is None else deserialize_layer(backward), **config)


def _copy(layer, name, **changes):
    """A new layer with ``layer``'s config (not its weights), renamed and with ``changes``."""
    entry = serialize_layer(layer)
    entry["config"] = {**entry["config"], "name": name, **changes}
    return deserialize_layer(entry)
