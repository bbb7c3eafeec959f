"""SimpleRNN: ``h_t = activation(x_t @ kernel + h_{t-1} @ recurrent_kernel + bias)``."""

import numpy as np

from layers.recurrent._rnn import GateActivations, _Recurrent


class SimpleRNN(_Recurrent):
    """A fully connected recurrent layer whose output is fed back as the next step's state.

    Args:
        units: positive integer, size of the output and of the state.
        activation: activation of the new state (``"tanh"``).
        use_bias: whether to add a bias vector.
        kernel_initializer, recurrent_initializer, bias_initializer: initializers.
        kernel_regularizer, recurrent_regularizer, bias_regularizer: weight penalties.
        kernel_constraint, recurrent_constraint, bias_constraint: weight projections.
        dropout: fraction of the input features dropped in training (one mask per call,
            shared by all time steps).
        recurrent_dropout: fraction of the state units dropped before the recurrent matmul.
        return_sequences: return the output of every step ``(batch, timesteps, units)``
            instead of the last one ``(batch, units)``.
        return_state: also return the final state: ``[output, state]``.
        go_backwards: process the sequence from its end; as in Keras 3, the returned
            sequence is in processing order (reversed).
        stateful: only False is supported.
        unroll: accepted for compatibility; it has no effect.
        seed: seed of the dropout masks.
        zero_output_for_mask: output zeros (instead of the previous output) at masked steps.

    Call arguments: ``inputs`` of shape ``(batch, timesteps, features)``, or the list
    ``[inputs, initial_state]``; ``initial_state`` (gradients reach the initial state
    either way); ``mask`` ``(batch, timesteps)``:
    masked steps keep the previous state; ``training``.

    Weights, in order: ``kernel`` ``(features, units)``, ``recurrent_kernel``
    ``(units, units)``, ``bias`` ``(units,)``, as in Keras 3.

    Example:
        >>> import numpy as np
        >>> SimpleRNN(4)(np.ones((2, 5, 3), "float32")).shape
        (2, 4)
    """

    def __init__(self, units, activation="tanh", use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros", kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0, recurrent_dropout=0.0,
                 return_sequences=False, return_state=False, go_backwards=False, stateful=False, unroll=False,
                 seed=None, zero_output_for_mask=False, **kwargs):
        super().__init__(
            units, activation, use_bias, kernel_initializer, recurrent_initializer, bias_initializer,
            kernel_regularizer, recurrent_regularizer, bias_regularizer, kernel_constraint, recurrent_constraint,
            bias_constraint, dropout, recurrent_dropout, return_sequences, return_state, go_backwards, stateful,
            unroll, zero_output_for_mask, seed, **kwargs,
        )

    def _new_tape(self, xw, recurrent_kernel):
        """``(z, scratch, activation, recurrent kernel.T, recurrent kernel)``: ``z`` the pre-activations,
        ``xw`` plus the recurrent product in place (see GateActivations)."""
        return (xw, np.empty(xw.shape[1:], xw.dtype), GateActivations((self.activation, self.units)),
                np.ascontiguousarray(recurrent_kernel.T), recurrent_kernel)

    def _step(self, tape, t, h_in, previous, new):
        z, scratch, activation, kernel_t, _ = tape
        np.matmul(kernel_t, h_in, out=scratch)
        z[t] += scratch
        activation(z[t], new[0])

    def _step_backward(self, tape, gradient_tape, t, h_in, previous, new, grad_new, grad_previous):
        grad_z, _, scratch = gradient_tape
        tape[2].gradient(tape[0][t], new[0], grad_new[0], grad_z[t])
        grad_previous[0] = 0
        return np.matmul(tape[4], grad_z[t], out=scratch)

    def _cell_flops(self):
        """Per sample and step: the add of the two projections and the activation."""
        return self.units + self.activation.flops(self.units)
