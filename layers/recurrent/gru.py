"""GRU: the gated recurrent unit (Cho et al., 2014)."""

import numpy as np

from layers import activations
from layers.recurrent._rnn import GateActivations, _Recurrent, _steps_as_columns, steps_inside


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
        if not self.reset_after:
            return bias
        # The recurrent bias of z and r adds to the input projection as well.
        folded = bias[0].copy()
        folded[:2 * self.units] += bias[1, :2 * self.units]
        return folded

    def _new_tape(self, xw, recurrent_kernel):
        """``(z, gates, reset input, scratch, gate activations, candidate activation, recurrent kernel.T,
        recurrent kernel, candidate's recurrent bias)``: ``z`` the pre-activations of z, r and hh (in
        place in ``xw``; see GateActivations), ``gates`` their activations, the reset input what r
        multiplies (the candidate's recurrent projection plus its bias), or ``r * h_in`` with
        ``reset_after=False``."""
        steps, width, batch = xw.shape
        u = self.units
        bias = None
        if self.reset_after and self.bias is not None:
            bias = np.ascontiguousarray(np.broadcast_to(self.bias.value[1, 2 * u:, None], (u, batch)), xw.dtype)
        return (xw, np.empty_like(xw), np.empty((steps, u, batch), xw.dtype), np.empty((width, batch), xw.dtype),
                GateActivations((self.recurrent_activation, 2 * u)), GateActivations((self.activation, u)),
                np.ascontiguousarray(recurrent_kernel.T), recurrent_kernel, bias)

    def _step(self, tape, t, h_in, previous, new):
        z, gates, reset_input, scratch, gate_activations, candidate_activation, kernel_t, _, bias = tape
        u = self.units
        z, gates, reset_input = z[t], gates[t], reset_input[t]
        if self.reset_after:
            np.matmul(kernel_t, h_in, out=scratch)
            if bias is None:
                reset_input[...] = scratch[2 * u:]
            else:
                np.add(scratch[2 * u:], bias, out=reset_input)
        else:
            np.matmul(kernel_t[:2 * u], h_in, out=scratch[:2 * u])
        z[:2 * u] += scratch[:2 * u]
        gate_activations(z[:2 * u], gates[:2 * u])
        update, reset = gates[:u], gates[u:2 * u]
        if self.reset_after:
            np.multiply(reset, reset_input, out=scratch[2 * u:])
        else:
            np.multiply(reset, h_in, out=reset_input)
            np.matmul(kernel_t[2 * u:], reset_input, out=scratch[2 * u:])
        z[2 * u:] += scratch[2 * u:]
        candidate = gates[2 * u:]
        candidate_activation(z[2 * u:], candidate)
        h = new[0]  # candidate + update * (h_prev - candidate)
        np.subtract(previous[0], candidate, out=h)
        h *= update
        h += candidate

    def _new_gradient_tape(self, tape):
        """As for every cell; with ``reset_after``, the recurrent product's gradient differs from
        ``xw``'s in the candidate block (r multiplies it)."""
        grad_xw, grad_recurrent, scratch = super()._new_gradient_tape(tape)
        if self.reset_after:
            grad_recurrent = steps_inside(grad_xw.shape, grad_xw.dtype)
        return grad_xw, grad_recurrent, scratch

    def _step_backward(self, tape, gradient_tape, t, h_in, previous, new, grad_new, grad_previous):
        z, gates, reset_input, _, gate_activations, candidate_activation, _, kernel, _ = tape
        grad_xw, grad_recurrent, scratch = gradient_tape
        u = self.units
        z, gates, reset_input, grad_xw = z[t], gates[t], reset_input[t], grad_xw[t]
        (grad_h,) = grad_new
        update, reset, candidate = gates[:u], gates[u:2 * u], gates[2 * u:]
        grad_candidate = grad_xw[2 * u:]
        np.subtract(1.0, update, out=grad_candidate)
        grad_candidate *= grad_h
        candidate_activation.gradient(z[2 * u:], candidate, grad_candidate, grad_candidate)
        np.subtract(previous[0], candidate, out=grad_xw[:u])
        grad_xw[:u] *= grad_h
        if self.reset_after:
            np.multiply(grad_candidate, reset_input, out=grad_xw[u:2 * u])
        else:
            grad_reset_input = kernel[:, 2 * u:] @ grad_candidate
            np.multiply(grad_reset_input, h_in, out=grad_xw[u:2 * u])
        gate_activations.gradient(z[:2 * u], gates[:2 * u], grad_xw[:2 * u], grad_xw[:2 * u])
        np.multiply(grad_h, update, out=grad_previous[0])
        if self.reset_after:
            grad_recurrent = grad_recurrent[t]
            grad_recurrent[:2 * u] = grad_xw[:2 * u]
            np.multiply(grad_candidate, reset, out=grad_recurrent[2 * u:])
            return np.matmul(kernel, grad_recurrent, out=scratch)
        np.matmul(kernel[:, :2 * u], grad_xw[:2 * u], out=scratch)
        grad_reset_input *= reset
        scratch += grad_reset_input
        return scratch

    def _recurrent_kernel_gradient(self, h_in, tape, gradient_tape):
        if self.reset_after:
            return super()._recurrent_kernel_gradient(h_in, tape, gradient_tape)
        u = self.units
        grad_xw = _steps_as_columns(gradient_tape[0])
        grad = np.concatenate([_steps_as_columns(h_in) @ grad_xw[:2 * u].T,
                               _steps_as_columns(tape[2]) @ grad_xw[2 * u:].T], axis=1)
        return grad, None

    def _bias_gradient(self, grad_input_bias, grad_recurrent_bias):
        return np.stack([grad_input_bias, grad_recurrent_bias]) if self.reset_after else grad_input_bias

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
