"""GRU: the gated recurrent unit (Cho et al., 2014)."""

import numpy as np

from layers import activations
from layers.recurrent._rnn import _Recurrent


class GRU(_Recurrent):
    """Gated recurrent unit, with the gates of Keras 3 in the order (z, r, h)::

        z, r = recurrent_activation(x_t @ kernel_zr + h_{t-1} @ recurrent_kernel_zr + biases)
        reset_after=True:  hh = activation(x_t @ kernel_h + b_h + r * (h_{t-1} @ recurrent_kernel_h + rb_h))
        reset_after=False: hh = activation(x_t @ kernel_h + b_h + (r * h_{t-1}) @ recurrent_kernel_h)
        h_t = z * h_{t-1} + (1 - z) * hh

    Args:
        units: positive integer, size of the output and of the state.
        activation: activation of the candidate (``"tanh"``).
        recurrent_activation: activation of the gates (``"sigmoid"``).
        use_bias: whether to add biases.
        kernel_initializer, recurrent_initializer, bias_initializer: initializers.
        kernel_regularizer, recurrent_regularizer, bias_regularizer: weight penalties.
        kernel_constraint, recurrent_constraint, bias_constraint: weight projections.
        dropout: fraction of the input features dropped in training (one mask per call).
        recurrent_dropout: fraction of ``h`` units dropped before the recurrent matmul.
        seed: seed of the dropout masks.
        return_sequences, return_state, go_backwards, stateful, unroll,
            zero_output_for_mask: as for SimpleRNN.
        reset_after: apply the reset gate after the recurrent matmul (Keras 3's
            default, with separate input and recurrent biases) or before it.

    Call arguments: ``inputs`` ``(batch, timesteps, features)`` or ``[inputs, h0]``;
    ``initial_state`` (gradients reach ``h0`` either way); ``mask``; ``training``.

    Weights, in order: ``kernel`` ``(features, 3 * units)``, ``recurrent_kernel``
    ``(units, 3 * units)``, ``bias`` ``(2, 3 * units)`` (input bias, recurrent bias)
    or ``(3 * units,)`` when ``reset_after=False``, as in Keras 3.

    Example:
        >>> import numpy as np
        >>> GRU(4, return_sequences=True)(np.ones((2, 5, 3), "float32")).shape
        (2, 5, 4)
    """

    _gates = 3

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, seed=None,
                 return_sequences=False, return_state=False, go_backwards=False, stateful=False, unroll=False,
                 reset_after=True, zero_output_for_mask=False, **kwargs):
        super().__init__(
            units, activation, use_bias, kernel_initializer, recurrent_initializer, bias_initializer,
            kernel_regularizer, recurrent_regularizer, bias_regularizer, kernel_constraint, recurrent_constraint,
            bias_constraint, dropout, recurrent_dropout, return_sequences, return_state, go_backwards, stateful,
            unroll, zero_output_for_mask, seed, **kwargs,
        )
        self.recurrent_activation = activations.get(recurrent_activation)
        self.reset_after = reset_after

    def _bias_shape(self):
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def _input_bias(self, bias):
        return bias[0] if self.reset_after else bias

    def _step(self, xw, h_in, states):
        h_prev = states[0]
        u = self.units
        kernel = self.recurrent_kernel.value
        if self.reset_after:
            recurrent = h_in @ kernel
            if self.bias is not None:
                recurrent += self.bias.value[1]
            recurrent_zr = recurrent[:, :2 * u]
        else:
            recurrent_zr = h_in @ kernel[:, :2 * u]
        zr_in = xw[:, :2 * u] + recurrent_zr
        zr = self.recurrent_activation(zr_in)
        z, r = zr[:, :u], zr[:, u:]
        if self.reset_after:
            # What r multiplies: the recurrent projection of the candidate block.
            reset_input = recurrent[:, 2 * u:]
            hh_in = xw[:, 2 * u:] + r * reset_input
        else:
            # What the recurrent kernel multiplies: the reset state.
            reset_input = r * h_in
            hh_in = xw[:, 2 * u:] + reset_input @ kernel[:, 2 * u:]
        hh = self.activation(hh_in)
        h = hh + z * (h_prev - hh)
        return [h], (h_in, h_prev, zr_in, zr, reset_input, hh_in, hh)

    def _step_backward(self, cache, grad_states, grads):
        h_in, h_prev, zr_in, zr, reset_input, hh_in, hh = cache
        (grad_h,) = grad_states
        u = self.units
        kernel = self.recurrent_kernel.value
        grad_kernel = grads[self.recurrent_kernel]
        z, r = zr[:, :u], zr[:, u:]
        grad_hh_in = self.activation.gradient(hh_in, hh, grad_h * (1 - z))
        grad_zr = np.empty_like(zr)
        np.multiply(grad_h, h_prev - hh, out=grad_zr[:, :u])
        if self.reset_after:
            np.multiply(grad_hh_in, reset_input, out=grad_zr[:, u:])
        else:
            grad_reset = grad_hh_in @ kernel[:, 2 * u:].T
            np.multiply(grad_reset, h_in, out=grad_zr[:, u:])
        grad_zr_in = self.recurrent_activation.gradient(zr_in, zr, grad_zr)
        if self.reset_after:
            grad_recurrent = np.concatenate([grad_zr_in, grad_hh_in * r], axis=1)
            grad_kernel += h_in.T @ grad_recurrent
            if self.bias is not None:
                grads[self.bias][1] += grad_recurrent.sum(axis=0)
            grad_h_in = grad_recurrent @ kernel.T
        else:
            grad_kernel[:, :2 * u] += h_in.T @ grad_zr_in
            grad_kernel[:, 2 * u:] += reset_input.T @ grad_hh_in
            grad_h_in = grad_zr_in @ kernel[:, :2 * u].T + grad_reset * r
        return np.concatenate([grad_zr_in, grad_hh_in], axis=1), grad_h_in, [grad_h * z]

    def _cell_flops(self):
        """Per sample and step: the adds into z, r and hh (3), the reset product, the activations
        and ``h = hh + z * (h_prev - hh)`` (3)."""
        u = self.units
        return 3 * u + u + self.recurrent_activation.flops(2 * u) + self.activation.flops(u) + 3 * u

    def get_config(self):
        config = super().get_config()
        config.update(
            recurrent_activation=activations.serialize(self.recurrent_activation),
            reset_after=self.reset_after,
        )
        return config
