"""ONNX converters of the recurrent layers: SimpleRNN, LSTM, GRU, Bidirectional and TimeDistributed.

SimpleRNN, LSTM and GRU become ONNX's RNN, LSTM and GRU operators, whose
maths are Keras' once the weights are laid out ONNX's way: kernels transposed
to ``(directions, gates * units, features)``, the LSTM gate blocks reordered
from Keras' (i, f, c, o) to ONNX's (i, o, f, c), GRU's (z, r, h) kept, and
GRU's ``reset_after`` given as ``linear_before_reset`` (its input and
recurrent biases are ONNX's ``Wb`` and ``Rb``). ONNX Runtime runs these
operators only time-major (``layout=0``), so the sequence is transposed in and
out. A layer whose activation is none of the operators' (gelu, silu, selu...)
is unrolled over its time steps into MatMul and elementwise nodes, which
needs a sequence length fixed by the model's input.

Bidirectional with twin layers (its default) is one operator with
``direction="bidirectional"``; TimeDistributed folds time into the batch
around its layer's own converter. Masks are not exported.
"""

import copy

import numpy as np

from layers import activations
from layers._onnx import converter_for, onnx_converter
from layers._onnx.activation import activation
from layers.recurrent import GRU, LSTM, Bidirectional, SimpleRNN, TimeDistributed
from layers.recurrent._rnn import as_state_list

# Keras activations that ONNX's recurrent operators apply themselves: (ONNX name, alpha, beta). Not softplus:
# ONNX Runtime's operators compute it as log(1 + exp(x)), infinite above x = 88.
_OPERATOR_ACTIVATIONS = {
    "tanh": ("Tanh",),
    "sigmoid": ("Sigmoid",),
    "relu": ("Relu",),
    "hard_sigmoid": ("HardSigmoid", 1.0 / 6.0, 0.5),
    "linear": ("Affine", 1.0, 0.0),
    "elu": ("Elu", 1.0),
    "leaky_relu": ("LeakyRelu", 0.2),
    "softsign": ("Softsign",),
}

# Per class: the ONNX operator and the Keras gate blocks in ONNX's order.
_OPERATORS = {SimpleRNN: ("RNN", [0]), LSTM: ("LSTM", [0, 3, 1, 2]), GRU: ("GRU", [0, 1, 2])}


@onnx_converter(SimpleRNN, LSTM, GRU)
def recurrent(layer, call):
    """ONNX's RNN, LSTM or GRU operator (or the unrolled cell); returns the output, then the states."""
    sequences, states = _sequences_and_states(call)
    output, final_states = _run(call, layer, sequences, states)
    return [output, *final_states] if layer.return_state else output


@onnx_converter(Bidirectional)
def bidirectional(layer, call):
    """One bidirectional operator for twin layers (else one per direction), then the merge."""
    sequences, states = _sequences_and_states(call)
    half = len(states) // 2
    forward, backward = layer.forward_layer, layer.backward_layer
    forward_states, backward_states = states[:half], states[half:]
    spec = _operator_spec(forward)
    if spec is not None and spec == _operator_spec(backward) and not forward.go_backwards:
        (y, forward_final), (y_rev, backward_final) = _operator(
            call, [forward, backward], sequences, [forward_states, backward_states])
    else:
        y, forward_final = _run(call, forward, sequences, forward_states)
        y_rev, backward_final = _run(call, backward, sequences, backward_states)
        if layer.return_sequences:
            y_rev = _reverse_time(call, y_rev, axis=1)
    outputs = _merge(call, layer.merge_mode, y, y_rev)
    return [*outputs, *forward_final, *backward_final] if layer.return_state else outputs


@onnx_converter(TimeDistributed)
def time_distributed(layer, call):
    """Reshape ``(batch, time, ...)`` to ``(batch * time, ...)``, the inner layer's converter, and back."""
    inner = layer.layer
    converter = converter_for(inner)
    if converter is None:
        call.unsupported(f"its layer {inner.name!r} ({type(inner).__name__}) has no ONNX converter; register one "
                         "with graph.register_onnx_converter")
    x = call.input
    folded = call.op("Reshape", [x, call.op("Concat", [call.constant([-1]), call.op("Shape", [x], start=2)], axis=0)])
    (batch, steps, *sample), (_, _, *sample_out) = call.input_shapes[0], call.output_shapes[0]
    merged = None if batch is None or steps is None else batch * steps
    y = converter(inner, _inner_call(call, inner, folded, (merged, *sample), (merged, *sample_out)))
    unfolded = call.op("Concat", [call.op("Shape", [x], end=2), call.op("Shape", [y], start=1)], axis=0)
    return call.op("Reshape", [y, unfolded])


def _inner_call(call, layer, x, input_shape, output_shape):
    """``call`` as the converter of a wrapped ``layer`` applied to ``x`` sees it, named under the wrapper."""
    inner = copy.copy(call)
    inner._layer, inner._first, inner.inputs = layer, x, [x]
    inner.extra_args, inner.kwargs = (), {}
    inner.input_shapes, inner.output_shapes = [input_shape], [output_shape]
    inner.input_dtypes, inner.output_dtypes = call.input_dtypes[:1], call.output_dtypes[:1]
    inner.layer_path = f"{call.layer_path}/{layer.name}"
    return inner


def _sequences_and_states(call):
    """The sequence's name and the initial states' names (``[x, *states]``, positional or ``initial_state=``)."""
    if len(call.inputs) > 1:
        return call.inputs[0], call.inputs[1:]
    initial_state = call.extra_args[0] if call.extra_args else call.kwargs.get("initial_state")
    return call.inputs[0], as_state_list(initial_state)


def _run(call, layer, sequences, states):
    """``(output, final states)`` of one recurrent layer on the batch-major ``sequences``."""
    if _operator_spec(layer) is not None:
        return _operator(call, [layer], sequences, [states])[0]
    return _unrolled(call, layer, sequences, states)


def _operator_spec(layer):
    """What ONNX's operator needs to compute ``layer``, or None when an activation is none of its."""
    functions = _functions(layer)
    names = [getattr(f, "__name__", None) for f in functions]
    if any(name not in _OPERATOR_ACTIVATIONS or activations.get(name) is not f for name, f in zip(names, functions)):
        return None
    return type(layer), layer.units, layer.use_bias, getattr(layer, "reset_after", None), tuple(names)


def _operator(call, layers, sequences, states):
    """ONNX's operator running ``layers`` (one, or the forward and backward ones of a Bidirectional).

    Returns one ``(output, final states)`` per layer, the output a sequence ``(batch, time, units)``
    in input order for the backward layer of two, in processing order for one layer alone.
    """
    layer = layers[0]
    op_type, order = _OPERATORS[type(layer)]
    units = layer.units
    x = call.op("Transpose", [sequences], perm=[1, 0, 2])  # time-major: ONNX Runtime has no layout=1
    if len(layers) == 1 and layer.go_backwards:
        x = _reverse_time(call, x, axis=0)
    specs = [_OPERATOR_ACTIVATIONS[f.__name__] for lay in layers for f in _functions(lay)]
    inputs = [
        x,
        _stacked(call, [call.weight(lay.kernel, lambda k: _blocks(k, order, units).T[None], key="onnx_W")
                        for lay in layers]),
        _stacked(call, [call.weight(lay.recurrent_kernel, lambda k: _blocks(k, order, units).T[None], key="onnx_R")
                        for lay in layers]),
        _stacked(call, [call.weight(lay.bias, lambda b: _onnx_bias(b, order, units), key="onnx_B")
                        for lay in layers]) if layer.use_bias else "",
        "",  # sequence_lens: every sequence is whole (masks are not exported)
    ]
    for index in range(layer._num_states):
        given = [lay_states[index] for lay_states in states if lay_states]
        inputs.append(_stacked(call, [call.op("Unsqueeze", [s, call.constant([0])]) for s in given]) if given else "")
    while inputs[-1] == "":
        inputs.pop()
    outputs = call.op(
        op_type, inputs, outputs=1 + layer._num_states, hidden_size=units,
        direction="bidirectional" if len(layers) == 2 else "forward",
        activations=[spec[0] for spec in specs],
        activation_alpha=[spec[1] for spec in specs if len(spec) > 1] or None,
        activation_beta=[spec[2] for spec in specs if len(spec) > 2] or None,
        linear_before_reset=int(layer.reset_after) if isinstance(layer, GRU) else None,
    )
    sequence, *final_states = outputs
    if layer.return_sequences:
        sequence = call.op("Transpose", [sequence], perm=[1, 2, 0, 3])  # (directions, batch, time, units)
    results = _unstack(call, sequence if layer.return_sequences else final_states[0], len(layers), axis=0)
    states = zip(*(_unstack(call, state, len(layers), axis=0) for state in final_states))
    return [(result, list(state)) for result, state in zip(results, states)]


def _functions(layer):
    """The activations in the order of ONNX's ``activations`` attribute (f, g, h)."""
    if isinstance(layer, SimpleRNN):
        return [layer.activation]
    if isinstance(layer, GRU):
        return [layer.recurrent_activation, layer.activation]
    return [layer.recurrent_activation, layer.activation, layer.activation]


def _blocks(array, order, units):
    """``array``'s last axis, made of gate blocks of ``units``, with the blocks in ``order``."""
    return np.concatenate([array[..., g * units:(g + 1) * units] for g in order], axis=-1)


def _onnx_bias(bias, order, units):
    """ONNX's ``B`` ``(1, 2 * gates * units)``: input bias then recurrent bias (zeros unless GRU's reset_after)."""
    if bias.ndim == 2:  # GRU with reset_after: (input bias, recurrent bias)
        return bias.reshape(1, -1)
    return np.concatenate([_blocks(bias, order, units), np.zeros_like(bias)])[None]


def _stacked(call, names):
    """One name, or the Concat of several along axis 0 (the directions)."""
    return names[0] if len(names) == 1 else call.op("Concat", names, axis=0)


def _unstack(call, x, count, axis):
    """The ``count`` slices of ``x`` along ``axis``, that axis removed."""
    parts = [x] if count == 1 else call.op("Split", [x], outputs=count, axis=axis, num_outputs=count)
    return [call.op("Squeeze", [part, call.constant([axis])]) for part in parts]


def _reverse_time(call, x, axis):
    """``x`` with its ``axis`` reversed."""
    return call.op("Slice", [x, call.constant([-1]), call.constant([np.iinfo(np.int64).min]), call.constant([axis]),
                             call.constant([-1])])


def _unrolled(call, layer, sequences, states):
    """``(output, final states)`` of the layer's cell written out once per time step."""
    steps = call.input_shapes[0][1]
    if steps is None:
        call.unsupported(
            f"its activations ({', '.join(sorted({f.__name__ for f in _functions(layer)}))}) are not among those of "
            f"ONNX's {_OPERATORS[type(layer)][0]} operator ({', '.join(_OPERATOR_ACTIVATIONS)}), so it is unrolled "
            "over time, which needs a fixed sequence length; give the model's Input one (shape=(timesteps, "
            "features)) or use one of those activations")
    xw = call.op("MatMul", [sequences, call.weight(layer.kernel)])
    if layer.use_bias:
        bias = call.weight(layer.bias, lambda b: b[0], key="input") if len(layer.bias.shape) == 2 else \
            call.weight(layer.bias)
        xw = call.op("Add", [xw, bias])
    if not states:
        batch_and_units = call.op("Concat", [call.op("Shape", [sequences], end=1), call.constant([layer.units])],
                                  axis=0)
        zeros = call.op("Expand", [call.constant(np.zeros((1, layer.units), np.float32)), batch_and_units])
        states = [zeros] * layer._num_states
    cell = {SimpleRNN: _simple_rnn_cell, LSTM: _lstm_cell, GRU: _gru_cell}[type(layer)]
    outputs = []
    xw_steps = _unstack(call, xw, steps, axis=1)
    for xw_t in (reversed(xw_steps) if layer.go_backwards else xw_steps):
        states = cell(call, layer, xw_t, states)
        outputs.append(states[0])
    if layer.return_sequences:
        return call.op("Concat", [call.op("Unsqueeze", [h, call.constant([1])]) for h in outputs], axis=1), states
    return states[0], states


def _simple_rnn_cell(call, layer, xw, states):
    z = call.op("Add", [xw, call.op("MatMul", [states[0], call.weight(layer.recurrent_kernel)])])
    return [activation(call, layer.activation, z)]


def _lstm_cell(call, layer, xw, states):
    h, c = states
    z = call.op("Add", [xw, call.op("MatMul", [h, call.weight(layer.recurrent_kernel)])])
    i, f, g, o = call.op("Split", [z], outputs=4, axis=1, num_outputs=4)
    i, f, o = (activation(call, layer.recurrent_activation, gate) for gate in (i, f, o))
    c = call.op("Add", [call.op("Mul", [f, c]), call.op("Mul", [i, activation(call, layer.activation, g)])])
    return [call.op("Mul", [o, activation(call, layer.activation, c)]), c]


def _gru_cell(call, layer, xw, states):
    (h,) = states
    u = layer.units
    kernel = layer.recurrent_kernel
    x_zr, x_h = call.op("Split", [xw, call.constant([2 * u, u])], outputs=2, axis=1)
    if layer.reset_after:
        recurrent = call.op("MatMul", [h, call.weight(kernel)])
        if layer.use_bias:
            recurrent = call.op("Add", [recurrent, call.weight(layer.bias, lambda b: b[1], key="recurrent")])
        recurrent_zr, recurrent_h = call.op("Split", [recurrent, call.constant([2 * u, u])], outputs=2, axis=1)
    else:
        recurrent_zr = call.op("MatMul", [h, call.weight(kernel, lambda k: k[:, :2 * u], key="zr")])
    zr = activation(call, layer.recurrent_activation, call.op("Add", [x_zr, recurrent_zr]))
    z, r = call.op("Split", [zr], outputs=2, axis=1, num_outputs=2)
    if layer.reset_after:
        candidate = call.op("Add", [x_h, call.op("Mul", [r, recurrent_h])])
    else:
        reset = call.op("Mul", [r, h])
        candidate = call.op("Add", [x_h, call.op("MatMul", [reset, call.weight(kernel, lambda k: k[:, 2 * u:],
                                                                                 key="h")])])
    hh = activation(call, layer.activation, candidate)
    return [call.op("Add", [hh, call.op("Mul", [z, call.op("Sub", [h, hh])])])]


def _merge(call, merge_mode, y, y_rev):
    """Bidirectional's merged output(s) of the forward and backward outputs."""
    if merge_mode == "concat":
        return [call.op("Concat", [y, y_rev], axis=-1)]
    if merge_mode == "sum":
        return [call.op("Add", [y, y_rev])]
    if merge_mode == "ave":
        return [call.op("Mul", [call.op("Add", [y, y_rev]), call.constant(np.float32(0.5))])]
    if merge_mode == "mul":
        return [call.op("Mul", [y, y_rev])]
    return [y, y_rev]
