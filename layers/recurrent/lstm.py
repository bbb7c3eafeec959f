"""LSTM: the long short-term memory layer (Hochreiter & Schmidhuber, 1997)."""

import numpy as np

from layers import activations
from layers.recurrent._rnn import GateActivations, _Recurrent, activate_into, activation_gradient_into


class LSTM(_Recurrent):
    """Long short-term memory, with the gates of Keras 3 in the order (i, f, c, o)::

        z = x_t @ kernel + h_{t-1} @ recurrent_kernel + bias
        i, f, o = recurrent_activation(z_i, z_f, z_o);  g = activation(z_c)
        c_t = f * c_{t-1} + i * g;  h_t = o * activation(c_t)

    Args:
        units: positive integer, size of the output and of each state.
        activation: activation of the candidate and of the carry (``"tanh"``).
        recurrent_activation: activation of the gates (``"sigmoid"``).
        use_bias: whether to add a bias vector.
        kernel_initializer, recurrent_initializer, bias_initializer: initializers.
        unit_forget_bias: initialize the forget gate's bias to ones.
        kernel_regularizer, recurrent_regularizer, bias_regularizer: weight penalties.
        kernel_constraint, recurrent_constraint, bias_constraint: weight projections.
        dropout: fraction of the input features dropped in training (one mask per call).
        recurrent_dropout: fraction of ``h`` units dropped before the recurrent matmul.
        seed: seed of the dropout masks.
        return_sequences, return_state, go_backwards, stateful, unroll,
            zero_output_for_mask: as for SimpleRNN; the states are ``[h, c]``.

    Call arguments: ``inputs`` ``(batch, timesteps, features)`` or ``[inputs, h0, c0]``;
    ``initial_state=[h0, c0]`` (gradients reach the states either way, so an
    encoder-decoder trains its encoder); ``mask``; ``training``.

    Weights, in order: ``kernel`` ``(features, 4 * units)``, ``recurrent_kernel``
    ``(units, 4 * units)``, ``bias`` ``(4 * units,)``, as in Keras 3.

    Example:
        >>> import numpy as np
        >>> out, h, c = LSTM(4, return_sequences=True, return_state=True)(np.ones((2, 5, 3), "float32"))
        >>> out.shape, h.shape, c.shape
        ((2, 5, 4), (2, 4), (2, 4))
    """

    _gates = 4
    _num_states = 2

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 kernel_constraint=None, recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, seed=None, return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, unroll=False, zero_output_for_mask=False, **kwargs):
        super().__init__(
            units, activation, use_bias, kernel_initializer, recurrent_initializer, bias_initializer,
            kernel_regularizer, recurrent_regularizer, bias_regularizer, kernel_constraint, recurrent_constraint,
            bias_constraint, dropout, recurrent_dropout, return_sequences, return_state, go_backwards, stateful,
            unroll, zero_output_for_mask, seed, **kwargs,
        )
        self.recurrent_activation = activations.get(recurrent_activation)
        self.unit_forget_bias = unit_forget_bias

    def _bias_initializer(self):
        if not self.unit_forget_bias:
            return self.bias_initializer
        units, initializer = self.units, self.bias_initializer

        def forget_gate_ones(shape, dtype="float32"):
            return np.concatenate([initializer((units,), dtype=dtype), np.ones(units, dtype),
                                   initializer((2 * units,), dtype=dtype)])

        return forget_gate_ones

    _gate_order = (0, 1, 3, 2)  # i, f, o, g: the sigmoid gates first

    def _new_tape(self, xw, recurrent_kernel):
        """``(z, gates, activated c, scratch, gate activations, recurrent kernel.T, recurrent kernel)``:
        ``z`` the pre-activations (``xw`` plus the recurrent product, in place; see GateActivations),
        ``gates`` the activated i, f, o, g."""
        steps, width, batch = xw.shape
        u = self.units
        gate_activations = GateActivations((self.recurrent_activation, 3 * u), (self.activation, u))
        return (xw, np.empty_like(xw), np.empty((steps, u, batch), xw.dtype), np.empty((width, batch), xw.dtype),
                gate_activations, np.ascontiguousarray(recurrent_kernel.T), recurrent_kernel)

    def _step(self, tape, t, h_in, previous, new):
        z, gates, activated_c, scratch, gate_activations, kernel_t, _ = tape
        u = self.units
        z, gates = z[t], gates[t]
        np.matmul(kernel_t, h_in, out=scratch)
        z += scratch
        gate_activations(z, gates)
        i, f, o, g = gates[:u], gates[u:2 * u], gates[2 * u:3 * u], gates[3 * u:]
        c = new[1]
        np.multiply(f, previous[1], out=c)
        np.multiply(i, g, out=scratch[:u])
        c += scratch[:u]
        activate_into(self.activation, c, activated_c[t])
        np.multiply(o, activated_c[t], out=new[0])

    def _step_backward(self, tape, gradient_tape, t, h_in, previous, new, grad_new, grad_previous):
        z, gates, activated_c, _, gate_activations, _, kernel = tape
        grad_z, _, scratch = gradient_tape
        u = self.units
        z, gates, grad_z, activated_c = z[t], gates[t], grad_z[t], activated_c[t]
        i, f, o, g = gates[:u], gates[u:2 * u], gates[2 * u:3 * u], gates[3 * u:]
        grad_h, grad_c = grad_new
        grad_c_total = grad_previous[1]  # becomes the previous c's gradient at the end
        np.multiply(grad_h, o, out=grad_c_total)
        activation_gradient_into(self.activation, new[1], activated_c, grad_c_total, grad_c_total)
        grad_c_total += grad_c
        np.multiply(grad_c_total, g, out=grad_z[:u])
        np.multiply(grad_c_total, previous[1], out=grad_z[u:2 * u])
        np.multiply(grad_h, activated_c, out=grad_z[2 * u:3 * u])
        np.multiply(grad_c_total, i, out=grad_z[3 * u:])
        gate_activations.gradient(z, gates, grad_z, grad_z)
        grad_c_total *= f
        grad_previous[0] = 0
        return np.matmul(kernel, grad_z, out=scratch)

    def _cell_flops(self):
        """Per sample and step: the add of the two projections (4 gates), the gate and candidate
        activations, ``c = f * c_prev + i * g`` (3), ``tanh(c)`` and ``h = o * tanh(c)``."""
        u = self.units
        return 4 * u + self.recurrent_activation.flops(3 * u) + 2 * self.activation.flops(u) + 3 * u + u

    def get_config(self):
        config = super().get_config()
        config.update(
            recurrent_activation=activations.serialize(self.recurrent_activation),
            unit_forget_bias=self.unit_forget_bias,
        )
        return config

