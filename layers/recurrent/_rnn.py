"""What SimpleRNN, LSTM and GRU share: their arguments and weights, the time
loop with masking and dropout, and backpropagation through time.

The input projection ``inputs @ kernel + bias`` of every time step is one
matmul before the loop, and the gradients of both kernels (and biases) are one
matmul each after the backward loop (the steps' inputs stacked over time times
the gradients of all steps); the loops do only the recurrent part, in place in
arrays allocated once per call. Inside the loops a step's arrays are
``(units or gate columns, batch)``, so that every gate's block is contiguous
rows (NumPy's elementwise passes over a column block of a ``(batch, columns)``
array pay a call per row); the gate columns are in the cell's order
(``_gate_order``). A subclass describes one step of its cell:

- ``_new_tape(xw, recurrent_kernel) -> tape``: a tuple for the whole sequence,
  whose first entry is ``xw`` ``(steps, gate columns, batch)``, the input
  projection, which the steps may overwrite; ``recurrent_kernel`` is
  ``(units, gate columns)`` in the cell's column order.
- ``_step(tape, t, h_in, previous, new)``: writes the states after step ``t``
  into ``new`` ``(num_states, units, batch)`` and what its backward needs into
  the tape. ``h_in`` is the previous output after recurrent dropout (what
  multiplies the recurrent kernel), ``previous`` the states before the step.
- ``_step_backward(tape, gradient_tape, t, h_in, previous, new, grad_new, grad_previous) -> grad_h_in``:
  given the gradients ``grad_new`` of the new states, writes the gradient of
  the step's slice of ``xw`` (and of what the recurrent product adds to) into
  ``gradient_tape`` (see ``_new_gradient_tape``), overwrites ``grad_previous``
  with the gradients of the previous states through paths other than ``h_in``
  (zeros where there is none) and returns the gradient of ``h_in``.
"""

import math
import numbers

import numpy as np

from engine import Layer
from engine.training import constraints, regularizers
from engine.network import initializers
from engine.network.bound_arguments import gradients_as_given
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
        return self._run(inputs, initial_state, mask, training)[0]

    def forward(self, inputs, initial_state=None, mask=None, training=True):
        return self._run(inputs, initial_state, mask, training)

    def _dropout_mask(self, training, rate, shape, dtype):
        """An inverted-dropout mask drawn once per call (the same for every time step), or None."""
        if not training or rate == 0:
            return None
        keep = 1.0 - rate
        return (self.seed_generator.generator.random(shape) < keep).astype(dtype) / keep

    def _run(self, inputs, initial_state, mask, training):
        sequences, states = split_inputs(self, inputs, initial_state)
        sequences = np.asarray(sequences)
        self._check_shapes(sequences.shape, [np.shape(s) for s in states])
        batch, steps, features = sequences.shape
        given = {"inputs": inputs, "initial_state": initial_state}
        dtype = np.result_type(sequences.dtype, self.kernel.value.dtype)
        input_mask = self._dropout_mask(training, self.dropout, (batch, features), dtype)
        recurrent_mask = self._dropout_mask(training, self.recurrent_dropout, (batch, self.units), dtype)

        # Time-major, in processing order.
        x = sequences.transpose(1, 0, 2)
        mask = first_mask(mask)
        keep = None if mask is None else checked_mask(self, mask, (batch, steps), sequences.shape).T[:, None, :]
        if self.go_backwards:
            x = x[::-1]
            keep = None if keep is None else keep[::-1]
        x = np.ascontiguousarray(x if input_mask is None else x * input_mask, dtype)
        # Each step's arrays are (units or gate columns, batch), so that every gate's block is contiguous
        # rows; the gates' columns in the cell's order (_gate_order), the bias as a last row of ones.
        order = self._column_order()
        x_ones = np.empty((steps, features + 1, batch), dtype)
        x_ones[:, :features] = x.transpose(0, 2, 1)
        x_ones[:, features] = 1
        kernel = np.zeros((features + 1, order.size), dtype)
        kernel[:features] = self.kernel.value[:, order]
        if self.bias is not None:
            kernel[features] = self._input_bias(self.bias.value)[order]
        xw = np.matmul(kernel.T, x_ones)

        # history[:, t]: the states before step t (after masking); new[:, t]: what step t computed (before masking).
        history = np.empty((self._num_states, steps + 1, self.units, batch), dtype)
        history[:, 0] = [np.asarray(s).T for s in states] if states else 0
        new = history[:, 1:] if keep is None else np.empty((self._num_states, steps, self.units, batch), dtype)
        h_in = history[0, :-1] if recurrent_mask is None else np.empty((steps, self.units, batch), dtype)
        recurrent_mask = None if recurrent_mask is None else np.ascontiguousarray(recurrent_mask.T)
        tape = self._new_tape(xw, np.ascontiguousarray(self.recurrent_kernel.value[:, order], dtype))
        for t in range(steps):
            if recurrent_mask is not None:
                np.multiply(history[0, t], recurrent_mask, out=h_in[t])
            self._step(tape, t, h_in[t], history[:, t], new[:, t])
            if keep is not None:  # masked steps keep the previous states
                history[:, t + 1] = history[:, t]
                np.copyto(history[:, t + 1], new[:, t], where=keep[t])

        # Keras 3 returns the outputs in processing order (reversed for go_backwards).
        outputs = history[0, 1:]
        if keep is not None and self.zero_output_for_mask:
            outputs = np.where(keep, new[0], 0).astype(dtype, copy=False)
        result = np.ascontiguousarray(outputs.transpose(2, 0, 1)) if self.return_sequences else outputs[-1].T.copy()
        if self.return_state:
            result = [result, *(state.T.copy() for state in history[:, -1])]
        cache = (x, x_ones, input_mask, recurrent_mask, keep, history, new, h_in, tape, order, given)
        return result, cache

    def backward(self, cache, grad_outputs):
        x, x_ones, input_mask, recurrent_mask, keep, history, new, h_in, tape, order, given = cache
        steps, batch, features = x.shape
        dtype = history.dtype
        grad_states = np.zeros(history[:, 0].shape, dtype)
        if self.return_state:
            grad_output, *grad_final = grad_outputs
            grad_states[:] = [np.asarray(g).T for g in grad_final]
        else:
            grad_output = grad_outputs
        grad_output = np.asarray(grad_output, dtype)
        grad_output = grad_output.transpose(1, 2, 0) if self.return_sequences else grad_output.T
        keep = None if keep is None else keep.astype(dtype)
        grad_previous = np.empty_like(grad_states)
        gradient_tape = self._new_gradient_tape(tape)
        for t in range(steps - 1, -1, -1):
            if self.return_sequences:
                grad_out = grad_output[t]
            else:
                grad_out = grad_output if t == steps - 1 else None
            if keep is None:
                if grad_out is not None:
                    grad_states[0] += grad_out
                grad_new = grad_states
            else:
                if grad_out is not None and not self.zero_output_for_mask:
                    grad_states[0] += grad_out
                grad_new = grad_states * keep[t]
                grad_states -= grad_new  # what reaches the previous states through masked steps
                if grad_out is not None and self.zero_output_for_mask:
                    grad_new[0] += grad_out * keep[t]
            grad_h_in = self._step_backward(tape, gradient_tape, t, h_in[t], history[:, t], new[:, t], grad_new,
                                            grad_previous)
            if recurrent_mask is not None:
                grad_h_in *= recurrent_mask
            grad_previous[0] += grad_h_in
            if keep is None:
                grad_states, grad_previous = grad_previous, grad_states
            else:
                grad_states += grad_previous

        # Over all steps at once: rows (gate column), columns (step, sample).
        grad_xw = _steps_as_columns(gradient_tape[0])
        restore = np.argsort(order)
        grad_kernel = (_steps_as_columns(x_ones) @ grad_xw.T)[:, restore]
        grad_recurrent, grad_recurrent_bias = self._recurrent_kernel_gradient(h_in, tape, gradient_tape)
        grads = {self.kernel: grad_kernel[:features], self.recurrent_kernel: grad_recurrent[:, restore]}
        if self.bias is not None:
            grads[self.bias] = self._bias_gradient(grad_kernel[features], grad_recurrent_bias)
        grad_x = (grad_xw.T @ self.kernel.value[:, order].T).reshape(steps, batch, features)
        if input_mask is not None:
            grad_x *= input_mask
        if self.go_backwards:
            grad_x = grad_x[::-1]
        grad_sequences = np.ascontiguousarray(grad_x.transpose(1, 0, 2))
        return gradients_as_given(given, [grad_sequences, *(g.T.copy() for g in grad_states)]), grads

    # ------------------------------------------------- the cell's defaults
    _gate_order = None

    def _column_order(self):
        """The kernels' columns in the order the cell keeps its gates (``_gate_order``, in blocks of ``units``)."""
        columns = np.arange(self._gates * self.units).reshape(self._gates, self.units)
        return columns.ravel() if self._gate_order is None else columns[list(self._gate_order)].ravel()

    def _new_gradient_tape(self, tape):
        """``(grad_xw, grad_recurrent, scratch)``: the gradients of the input projection and of what
        the recurrent product adds to (the same array by default), and a ``(units, batch)`` scratch."""
        grad_xw = steps_inside(tape[0].shape, tape[0].dtype)
        return grad_xw, grad_xw, np.empty((self.units, tape[0].shape[2]), tape[0].dtype)

    def _recurrent_kernel_gradient(self, h_in, tape, gradient_tape):
        """``(recurrent kernel's gradient, recurrent bias's)``: one matmul over all steps, ``h_in`` and a row
        of ones (the bias) stacked over time times the gradients of what the recurrent product adds to."""
        h_ones = _with_ones(h_in)
        grad = h_ones @ _steps_as_columns(gradient_tape[1]).T
        return grad[:-1], grad[-1]

    def _bias_gradient(self, grad_input_bias, grad_recurrent_bias):
        """The bias's gradient from the input bias's (in the kernel's column order) and the recurrent
        product's bias row (in the cell's column order; GRU's recurrent bias)."""
        return grad_input_bias

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


def activate_into(activation, x, out):
    """Writes ``activation(x)`` into ``out``, keeping ``x`` (tanh without temporaries).

    Example:
        >>> out = np.empty(2, "float32")
        >>> activate_into(activations.tanh, np.array([0.0, 1.0], "float32"), out); out
        array([0.       , 0.7615942], dtype=float32)
    """
    if activation is activations.tanh:
        np.tanh(x, out=out)
    else:
        out[...] = activation(x)


def activation_gradient_into(activation, x, y, grad_y, out):
    """Writes ``activation.gradient(x, y, grad_y)`` into ``out`` (which may be ``grad_y``).

    Example:
        >>> grad = np.ones(1, "float32")
        >>> activation_gradient_into(activations.tanh, None, np.array([0.5], "float32"), grad, grad); grad
        array([0.75], dtype=float32)
    """
    if activation is activations.tanh:
        slope = y * y
        np.subtract(1.0, slope, out=slope)
        np.multiply(grad_y, slope, out=out)
    else:
        out[...] = activation.gradient(x, y, grad_y)


class GateActivations:
    """The activations of the row blocks of a cell's ``(gate columns, batch)`` pre-activations
    (LSTM's i, f, o, g: sigmoid, sigmoid, sigmoid, tanh), written into preallocated arrays.

    When every block is sigmoid or tanh, one tanh over all rows computes them all, since
    ``sigmoid(x) = (tanh(x / 2) + 1) / 2`` (as ``activations.sigmoid`` computes it): sigmoid
    rows are halved before and halved and shifted after. The tanh values replace the
    pre-activations in place and give both gradients, ``sigmoid'(x) = (1 - tanh(x / 2)^2) / 4``
    and ``tanh'(x) = 1 - tanh(x)^2``. Otherwise each block applies its own activation and the
    pre-activations are kept.

    Args:
        *blocks: ``(activation, rows)`` pairs, in row order.

    Example:
        >>> z = np.zeros((2, 1), "float32")
        >>> out = np.empty_like(z)
        >>> both = GateActivations((activations.sigmoid, 1), (activations.tanh, 1))
        >>> both(z, out); out.ravel()
        array([0.5, 0. ], dtype=float32)
        >>> grad = np.ones_like(z)
        >>> both.gradient(z, out, grad, grad); grad.ravel()
        array([0.25, 1.  ], dtype=float32)
    """

    def __init__(self, *blocks):
        ends = np.cumsum([rows for _, rows in blocks])
        self.blocks = [(slice(end - rows, end), activation) for (activation, rows), end in zip(blocks, ends)]
        self.fused = all(a is activations.sigmoid or a is activations.tanh for a, _ in blocks)
        self.sigmoid_rows = [rows for rows, a in self.blocks if a is activations.sigmoid]

    def __call__(self, z, out):
        """Writes the activations of ``z`` into ``out``; ``z`` becomes what ``gradient`` needs."""
        if not self.fused:
            for rows, activation in self.blocks:
                out[rows] = activation(z[rows])
            return
        for rows in self.sigmoid_rows:
            z[rows] *= 0.5
        np.tanh(z, out=z)
        for rows, activation in self.blocks:
            if activation is activations.sigmoid:
                np.multiply(z[rows], 0.5, out=out[rows])
                out[rows] += 0.5
            else:
                out[rows] = z[rows]

    def gradient(self, z, y, grad, out):
        """Writes the gradient of the pre-activations into ``out`` (which may be ``grad``), given
        ``z`` and ``y`` as ``__call__`` left them and the gradient of its output."""
        if not self.fused:
            for rows, activation in self.blocks:
                out[rows] = activation.gradient(z[rows], y[rows], grad[rows])
            return
        slope = z * z
        np.subtract(1.0, slope, out=slope)
        for rows in self.sigmoid_rows:
            slope[rows] *= 0.25
        np.multiply(grad, slope, out=out)


def steps_inside(shape, dtype):
    """An empty ``(steps, rows, batch)`` array laid out ``(rows, steps, batch)`` in memory:
    each step's ``(rows, batch)`` is a strided view, and ``_steps_as_columns`` needs no copy
    (on a 100-step LSTM(128) at batch 64, each copy of a 13 MB gradient took 2-4 ms)."""
    steps, rows, batch = shape
    return np.empty((rows, steps, batch), dtype).transpose(1, 0, 2)


def _steps_as_columns(a):
    """``(steps, rows, batch)`` as ``(rows, steps * batch)`` (a copy, unless laid out by ``steps_inside``),
    for the matmuls over all steps."""
    return np.ascontiguousarray(a.transpose(1, 0, 2)).reshape(a.shape[1], -1)


def _with_ones(a):
    """``(steps, rows, batch)`` as ``(rows + 1, steps * batch)`` with a last row of ones (for a bias)."""
    steps, rows, batch = a.shape
    out = np.empty((rows + 1, steps, batch), a.dtype)
    out[:rows] = a.transpose(1, 0, 2)
    out[rows] = 1
    return out.reshape(rows + 1, -1)


def _compatible(shape, expected):
    return len(shape) == len(expected) and all(a is None or b is None or a == b for a, b in zip(shape, expected))
