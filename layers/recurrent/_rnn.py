"""What SimpleRNN, LSTM and GRU share: their arguments and weights, the time
loop with masking and dropout, and backpropagation through time.

The input projection ``inputs @ kernel (+ input bias)`` of every time step is
one matmul before the loop (and its gradients one matmul each after the
backward loop); the loop over time does only the recurrent part. A subclass
describes one step of its cell:

- ``_step(xw, h_in, states) -> (new_states, cache)``: ``xw`` is the step's
  slice of the input projection, ``h_in`` the previous output after recurrent
  dropout (what multiplies the recurrent kernel), ``states`` the previous states;
  ``cache`` is a tuple of ``(batch, k)`` arrays, which the loop copies into one
  array for the whole sequence and hands back to ``_step_backward`` as views.
- ``_step_backward(cache, grad_new_states, grads) -> (grad_xw, grad_h_in, grad_states)``:
  the gradients of ``xw``, of ``h_in`` and of the previous states through
  paths other than ``h_in`` (None where there is none); the step adds its
  share of the recurrent kernel's gradient (and of a recurrent bias's) into
  ``grads``, the ``{variable: gradient}`` dict being accumulated.
"""

import math
import numbers

import numpy as np

from engine import ArgumentGradients, Layer, constraints, initializers, regularizers
from layers import activations
from layers._masks import checked_mask
from layers.core.seed_generator import SeedGenerator


def split_shapes(input_shape):
    """``(sequence shape, [state shapes])`` of ``x`` or of the list form ``[x, *states]``."""
    if input_shape and isinstance(input_shape[0], (list, tuple)):
        return tuple(input_shape[0]), [tuple(s) for s in input_shape[1:]]
    return tuple(input_shape), []


def as_state_list(initial_state):
    """``initial_state`` as a list (a single array or tensor is one state)."""
    if initial_state is None:
        return []
    return list(initial_state) if isinstance(initial_state, (list, tuple)) else [initial_state]


def states_form(inputs, initial_state):
    """How initial states were given: "list" (``[x, *states]``), "initial_state" (``initial_state=``) or None."""
    if isinstance(inputs, (list, tuple)) and len(inputs) > 1:
        return "list"
    return None if initial_state is None else "initial_state"


def gradients_as_called(form, grad_sequences, grad_states):
    """``backward``'s input gradients in the form the states were given in (see ``states_form``)."""
    if form == "list":
        return [grad_sequences, *grad_states]
    if form == "initial_state":
        return ArgumentGradients(inputs=grad_sequences, initial_state=grad_states)
    return grad_sequences


def split_inputs(layer, inputs, initial_state):
    """``(sequences, states)`` from ``x`` or ``[x, *states]`` and ``initial_state``."""
    if isinstance(inputs, (list, tuple)):
        if initial_state is not None:
            raise ValueError(
                f"Layer {layer.name!r} ({type(layer).__name__}) received initial states both in its inputs "
                "list and as initial_state=. Pass them one way: layer([x, *states]) or "
                "layer(x, initial_state=states)."
            )
        return inputs[0], list(inputs[1:])
    return inputs, as_state_list(initial_state)


def first_mask(mask):
    """The mask of the sequence when the inputs are ``[x, *states]``."""
    return mask[0] if isinstance(mask, (list, tuple)) else mask


class _Recurrent(Layer):
    """Base of the recurrent layers; see the module docstring for the cell contract.

    Subclasses set ``_gates`` (column blocks of the kernels) and ``_num_states``.
    """

    _combines_masks_only = True

    _gates = 1
    _num_states = 1
    supports_masking = True

    def __init__(self, units, activation, use_bias, kernel_initializer, recurrent_initializer, bias_initializer,
                 kernel_regularizer, recurrent_regularizer, bias_regularizer, kernel_constraint,
                 recurrent_constraint, bias_constraint, dropout, recurrent_dropout, return_sequences,
                 return_state, go_backwards, stateful, unroll, zero_output_for_mask, seed, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(units, (int, np.integer)) or isinstance(units, bool) or units <= 0:
            raise ValueError(
                f"Received an invalid value for argument `units`, expected a positive integer, got {units!r}."
            )
        for name, rate in (("dropout", dropout), ("recurrent_dropout", recurrent_dropout)):
            if not isinstance(rate, numbers.Real) or isinstance(rate, bool) or not 0 <= rate < 1:
                raise ValueError(
                    f"Received an invalid value for argument `{name}`, expected a float in [0, 1). "
                    f"Received: {name}={rate!r}"
                )
        if stateful:
            raise ValueError(
                f"{type(self).__name__} {self.name!r}: stateful=True is not supported; every call starts "
                "from initial_state (zeros by default). To carry states across batches, use "
                "return_state=True and pass the returned states back as initial_state."
            )
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.recurrent_constraint = constraints.get(recurrent_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.dropout = float(dropout)
        self.recurrent_dropout = float(recurrent_dropout)
        self.return_sequences = return_sequences
        self.return_state = return_state
        self.go_backwards = go_backwards
        self.stateful = False
        self.unroll = unroll
        self.zero_output_for_mask = zero_output_for_mask
        self.seed = seed
        self.seed_generator = SeedGenerator(seed)

    # ------------------------------------------------------------------ weights
    def build(self, input_shape):
        sequence_shape, state_shapes = split_shapes(input_shape)
        self._check_shapes(sequence_shape, state_shapes)
        if sequence_shape[-1] is None:
            raise ValueError(
                f"Layer {self.name!r} ({type(self).__name__}) needs a known last axis to create its kernel, "
                f"received input shape {sequence_shape}."
            )
        width = self._gates * self.units
        self.kernel = self.add_weight(
            shape=(sequence_shape[-1], width), initializer=self.kernel_initializer, name="kernel",
            regularizer=self.kernel_regularizer, constraint=self.kernel_constraint,
        )
        self.recurrent_kernel = self.add_weight(
            shape=(self.units, width), initializer=self.recurrent_initializer, name="recurrent_kernel",
            regularizer=self.recurrent_regularizer, constraint=self.recurrent_constraint,
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                shape=self._bias_shape(), initializer=self._bias_initializer(), name="bias",
                regularizer=self.bias_regularizer, constraint=self.bias_constraint,
            )

    def _bias_shape(self):
        return (self._gates * self.units,)

    def _bias_initializer(self):
        return self.bias_initializer

    def _input_bias(self, bias):
        """The part of ``bias`` (the bias or its gradient) added to the input projection, as a view."""
        return bias

    # ------------------------------------------------------------------- shapes
    def _check_shapes(self, sequence_shape, state_shapes):
        if len(sequence_shape) != 3:
            raise ValueError(
                f"Input 0 of layer {self.name!r} ({type(self).__name__}) is incompatible with the layer: "
                f"expected ndim=3 (batch, timesteps, features), found ndim={len(sequence_shape)}. "
                f"Full shape received: {sequence_shape}"
            )
        if self.built and sequence_shape[-1] not in (None, self.kernel.shape[0]):
            raise ValueError(
                f"Input 0 of layer {self.name!r} ({type(self).__name__}) is incompatible with the layer: "
                f"expected axis -1 of input shape to have value {self.kernel.shape[0]} but received input "
                f"with shape {sequence_shape}"
            )
        if not state_shapes:
            return
        expected = [(sequence_shape[0], self.units)] * self._num_states
        if len(state_shapes) != len(expected) or not all(map(_compatible, state_shapes, expected)):
            raise ValueError(
                f"Layer {self.name!r} ({type(self).__name__}) expects initial_state to be "
                f"{self._num_states} tensor(s) of shape (batch_size, units): expected shapes {expected}, "
                f"received shapes {state_shapes}."
            )

    def compute_output_shape(self, input_shape):
        sequence_shape, state_shapes = split_shapes(input_shape)
        self._check_shapes(sequence_shape, state_shapes)
        batch, steps = sequence_shape[:2]
        output_shape = (batch, steps, self.units) if self.return_sequences else (batch, self.units)
        if self.return_state:
            return [output_shape] + [(batch, self.units)] * self._num_states
        return output_shape

    def compute_output_spec(self, inputs, initial_state=None, mask=None, training=False):
        _, states = split_inputs(self, inputs, initial_state)
        if initial_state is not None:
            self._check_shapes(tuple(inputs.shape), [tuple(s.shape) for s in states])
        return super().compute_output_spec(inputs)

    def compute_mask(self, inputs, mask=None):
        """The sequence's mask for a returned sequence (None for a last output and for states)."""
        output_mask = first_mask(mask) if self.return_sequences else None
        if self.return_state:
            return [output_mask] + [None] * self._num_states
        return output_mask

    # ------------------------------------------------------------ time loop
    def call(self, inputs, initial_state=None, mask=None, training=False):
        return self._run(inputs, initial_state, mask, training, record=False)[0]

    def forward(self, inputs, initial_state=None, mask=None, training=True):
        return self._run(inputs, initial_state, mask, training, record=True)

    def _dropout_mask(self, training, rate, shape, dtype):
        """An inverted-dropout mask drawn once per call (the same for every time step), or None."""
        if not training or rate == 0:
            return None
        keep = 1.0 - rate
        return (self.seed_generator.generator.random(shape) < keep).astype(dtype) / keep

    def _run(self, inputs, initial_state, mask, training, record):
        sequences, states = split_inputs(self, inputs, initial_state)
        sequences = np.asarray(sequences)
        dtype = sequences.dtype
        states = [np.asarray(s, dtype=dtype) for s in states]
        self._check_shapes(sequences.shape, [s.shape for s in states])
        batch, steps, features = sequences.shape
        form = states_form(inputs, initial_state)
        if not states:
            states = [np.zeros((batch, self.units), dtype) for _ in range(self._num_states)]
        input_mask = self._dropout_mask(training, self.dropout, (batch, features), dtype)
        recurrent_mask = self._dropout_mask(training, self.recurrent_dropout, (batch, self.units), dtype)

        # Time-major, in processing order, so that step t reads contiguous rows.
        x = sequences.transpose(1, 0, 2)
        mask = first_mask(mask)
        keep = None if mask is None else checked_mask(self, mask, (batch, steps), sequences.shape).T[:, :, None]
        if self.go_backwards:
            x = x[::-1]
            keep = None if keep is None else keep[::-1]
        x = np.ascontiguousarray(x if input_mask is None else x * input_mask)
        xw = (x.reshape(-1, features) @ self.kernel.value).reshape(steps, batch, self.kernel.shape[-1])
        if self.bias is not None:
            xw += self._input_bias(self.bias.value)

        # Keras 3 returns the outputs in processing order (reversed for go_backwards).
        outputs = np.empty((batch, steps, self.units), dtype) if self.return_sequences else None
        tape = columns = None
        output = None
        for t in range(steps):
            h_in = states[0] if recurrent_mask is None else states[0] * recurrent_mask
            new_states, step_cache = self._step(xw[t], h_in, states)
            if record:
                # One array for the whole sequence (many small ones kept alive cost page faults).
                if tape is None:
                    tape, columns = _tape_for(step_cache, steps)
                np.concatenate(step_cache, axis=1, out=tape[t])
            if keep is None:
                states = new_states
                output = states[0]
            else:
                # Masked steps keep the previous states and output (or output zeros).
                states = [np.where(keep[t], new, old) for new, old in zip(new_states, states)]
                output = np.where(keep[t], new_states[0], 0) if self.zero_output_for_mask else states[0]
            if outputs is not None:
                outputs[:, t] = output
        result = outputs if outputs is not None else output
        if self.return_state:
            result = [result, *states]
        cache = (x, input_mask, recurrent_mask, keep, tape, columns, form, len(states))
        return result, cache

    def backward(self, cache, grad_outputs):
        x, input_mask, recurrent_mask, keep, tape, columns, form, num_states = cache
        steps, batch, features = x.shape
        if self.return_state:
            grad_output, *grad_states = grad_outputs
        else:
            grad_output, grad_states = grad_outputs, [np.zeros((batch, self.units), x.dtype)] * num_states
        keep = None if keep is None else keep.astype(x.dtype)
        # C-ordered accumulators (a weight's value may be Fortran-ordered).
        grads = {self.recurrent_kernel: np.zeros(self.recurrent_kernel.shape, x.dtype)}
        if self.bias is not None:
            grads[self.bias] = np.zeros(self.bias.shape, x.dtype)
        grad_xw = np.empty((steps, batch, self._gates * self.units), x.dtype)
        for t in range(steps - 1, -1, -1):
            if self.return_sequences:
                grad_out = grad_output[:, t]
            else:
                grad_out = grad_output if t == steps - 1 else None
            if keep is None:
                grad_new = grad_states
                if grad_out is not None:
                    grad_new = [grad_new[0] + grad_out, *grad_new[1:]]
                carried = [None] * num_states
            else:
                if grad_out is not None and not self.zero_output_for_mask:
                    grad_states = [grad_states[0] + grad_out, *grad_states[1:]]
                grad_new = [g * keep[t] for g in grad_states]
                carried = [g - k for g, k in zip(grad_states, grad_new)]
                if grad_out is not None and self.zero_output_for_mask:
                    grad_new[0] = grad_new[0] + grad_out * keep[t]
            step_cache = [tape[t, :, c] for c in columns]
            grad_xw[t], grad_h_in, grad_previous = self._step_backward(step_cache, grad_new, grads)
            if recurrent_mask is not None:
                grad_h_in = grad_h_in * recurrent_mask
            grad_previous = list(grad_previous)
            grad_previous[0] = grad_h_in if grad_previous[0] is None else grad_previous[0] + grad_h_in
            grad_states = [g if c is None else g + c for g, c in zip(grad_previous, carried)]

        flat_grad = grad_xw.reshape(-1, grad_xw.shape[-1])
        grads[self.kernel] = x.reshape(-1, features).T @ flat_grad
        if self.bias is not None:
            self._input_bias(grads[self.bias])[...] += flat_grad.sum(axis=0)
        grad_x = (flat_grad @ self.kernel.value.T).reshape(steps, batch, features)
        if input_mask is not None:
            grad_x *= input_mask
        if self.go_backwards:
            grad_x = grad_x[::-1]
        grad_sequences = np.ascontiguousarray(grad_x.transpose(1, 0, 2))
        return gradients_as_called(form, grad_sequences, grad_states), grads

    # ------------------------------------------------------------------ config
    def flops(self, input_shapes, output_shapes):
        """Per sample and step: the input and recurrent matmuls (2 per multiply-add), the bias
        adds and the cell's elementwise work (``_cell_flops``); masks select, uncounted."""
        batch, steps, features = input_shapes[0]
        matmuls = 2 * (features + self.units) * self._gates * self.units
        biases = 0 if self.bias is None else math.prod(self.bias.shape)
        return batch * steps * (matmuls + biases + self._cell_flops())

    def get_config(self):
        config = super().get_config()
        config.update(
            units=self.units,
            activation=activations.serialize(self.activation),
            use_bias=self.use_bias,
            kernel_initializer=initializers.serialize(self.kernel_initializer),
            recurrent_initializer=initializers.serialize(self.recurrent_initializer),
            bias_initializer=initializers.serialize(self.bias_initializer),
            kernel_regularizer=regularizers.serialize(self.kernel_regularizer),
            recurrent_regularizer=regularizers.serialize(self.recurrent_regularizer),
            bias_regularizer=regularizers.serialize(self.bias_regularizer),
            kernel_constraint=constraints.serialize(self.kernel_constraint),
            recurrent_constraint=constraints.serialize(self.recurrent_constraint),
            bias_constraint=constraints.serialize(self.bias_constraint),
            dropout=self.dropout,
            recurrent_dropout=self.recurrent_dropout,
            seed=self.seed,
            return_sequences=self.return_sequences,
            return_state=self.return_state,
            go_backwards=self.go_backwards,
            stateful=self.stateful,
            unroll=self.unroll,
            zero_output_for_mask=self.zero_output_for_mask,
        )
        return config


def _tape_for(step_cache, steps):
    """An empty ``(steps, batch, total width)`` array for the steps' caches, and each entry's columns."""
    ends = np.cumsum([a.shape[1] for a in step_cache])
    columns = [slice(end - a.shape[1], end) for a, end in zip(step_cache, ends)]
    return np.empty((steps, step_cache[0].shape[0], ends[-1]), step_cache[0].dtype), columns


def _compatible(shape, expected):
    return len(shape) == len(expected) and all(a is None or b is None or a == b for a, b in zip(shape, expected))
