"""LSTM: the long short-term memory layer (Hochreiter & Schmidhuber, 1997)."""

import numpy as np

from layers import activations
from layers.recurrent._rnn import _Recurrent


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

    def _step(self, xw, h_in, states):
        c_prev = states[1]
        u = self.units
        z = xw + h_in @ self.recurrent_kernel.value
        input_forget = self.recurrent_activation(z[:, :2 * u])
        candidate = self.activation(z[:, 2 * u:3 * u])
        output_gate = self.recurrent_activation(z[:, 3 * u:])
        c = input_forget[:, u:] * c_prev + input_forget[:, :u] * candidate
        tanh_c = self.activation(c)
        h = output_gate * tanh_c
        return [h, c], (h_in, c_prev, z, input_forget, candidate, output_gate, c, tanh_c)

    def _step_backward(self, cache, grad_states, grads):
        h_in, c_prev, z, input_forget, candidate, output_gate, c, tanh_c = cache
        grad_h, grad_c = grad_states
        u = self.units
        grad_c = grad_c + self.activation.gradient(c, tanh_c, grad_h * output_gate)
        grad_input_forget = np.empty_like(input_forget)
        np.multiply(grad_c, candidate, out=grad_input_forget[:, :u])
        np.multiply(grad_c, c_prev, out=grad_input_forget[:, u:])
        grad_z = np.empty_like(z)
        grad_z[:, :2 * u] = self.recurrent_activation.gradient(z[:, :2 * u], input_forget, grad_input_forget)
        grad_z[:, 2 * u:3 * u] = self.activation.gradient(z[:, 2 * u:3 * u], candidate, grad_c * input_forget[:, :u])
        grad_z[:, 3 * u:] = self.recurrent_activation.gradient(z[:, 3 * u:], output_gate, grad_h * tanh_c)
        grads[self.recurrent_kernel] += h_in.T @ grad_z
        return grad_z, grad_z @ self.recurrent_kernel.value.T, [None, grad_c * input_forget[:, u:]]

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

