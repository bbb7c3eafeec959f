"""Attention: Luong-style dot-product (or concat) attention of a query over a value."""

import numpy as np

from engine import KerasTensor, Layer
from layers import activations
from layers.attention._common import causal_mask, check_dropout, dropout_mask, shapes_agree
from layers.core.seed_generator import SeedGenerator

# Subtracted from the scores of masked positions, as in Keras.
_MASK_PENALTY = 1e9


class Attention(Layer):
    """Dot-product attention (Luong-style), as Keras 3's ``Attention``.

    With ``query`` ``(B, Tq, dim)``, ``value`` ``(B, Tv, dv)`` and ``key``
    ``(B, Tv, dim)`` (``value`` when not given): scores ``query @ key^T``
    (times ``scale``), or for ``score_mode="concat"``
    ``concat_score_weight * sum(tanh(scale * (query_i + key_j)))``; then
    ``softmax(scores) @ value``, of shape ``(B, Tq, dv)``.

    Args:
        use_scale: whether to learn a scalar ``scale`` of the scores.
        score_mode: ``"dot"`` or ``"concat"``.
        dropout: fraction of the attention probabilities dropped in training.
        seed: integer seed of the dropout masks.

    Call arguments:
        inputs: ``[query, value]`` or ``[query, value, key]``; backward returns
            their gradients in that order.
        mask: ``[query_mask, value_mask]`` booleans of shapes ``(B, Tq)`` and
            ``(B, Tv)`` (either may be None): values where ``value_mask`` is
            False are not attended to, outputs where ``query_mask`` is False
            are 0. Masks made upstream (``Embedding(mask_zero=True)``) arrive here.
        return_attention_scores: also return the attention probabilities
            ``(B, Tq, Tv)`` (after dropout, as Keras).
        use_causal_mask: position i attends only to the positions j <= i.

    Weights, in order: ``scale`` (with ``use_scale``) and
    ``concat_score_weight`` (with ``score_mode="concat"``), scalars, as in Keras 3.

    Example:
        >>> import numpy as np
        >>> query, value = np.ones((2, 3, 4)), np.ones((2, 5, 4))
        >>> Attention()([query, value]).shape
        (2, 3, 4)
    """

    _combines_masks_only = True

    min_inputs = 2
    max_inputs = 3
    supports_masking = True

    def __init__(self, use_scale=False, score_mode="dot", dropout=0.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(use_scale, bool):
            raise ValueError(
                f"Received an invalid value for `use_scale`, expected a bool. Received: use_scale={use_scale!r}"
            )
        if score_mode not in ("dot", "concat"):
            raise ValueError(
                "Invalid value for argument score_mode. Expected one of {'dot', 'concat'}. "
                f"Received: score_mode={score_mode!r}"
            )
        self.use_scale = use_scale
        self.score_mode = score_mode
        self.dropout = check_dropout(dropout)
        self.seed = seed
        self.seed_generator = SeedGenerator(seed)

    def build(self, input_shape):
        self._check_shapes(input_shape)
        self.scale = self.concat_score_weight = None
        if self.use_scale:
            self.scale = self.add_weight(shape=(), initializer="ones", name="scale")
        if self.score_mode == "concat":
            self.concat_score_weight = self.add_weight(shape=(), initializer="ones", name="concat_score_weight")

    def _check_shapes(self, shapes):
        """Raises unless query, value and key shapes fit together; returns (query, value, key)."""
        query, value, key = shapes[0], shapes[1], shapes[-1]
        if any(len(s) != 3 for s in shapes):
            raise ValueError(
                f"Layer {self.name!r} (Attention) expects query, value and key of rank 3, "
                f"(batch, time, features). Received shapes: {[tuple(s) for s in shapes]}"
            )
        if not shapes_agree(query[-1:], key[-1:]):
            raise ValueError(
                f"Layer {self.name!r} (Attention) needs query and key with the same last dimension, "
                f"to compare them. Received: query_shape={tuple(query)}, key_shape={tuple(key)}"
            )
        if not shapes_agree(value[:-1], key[:-1]) or not shapes_agree(query[:1], value[:1]):
            raise ValueError(
                f"Layer {self.name!r} (Attention) needs value and key with the same batch size and time "
                f"steps, and a query with the same batch size. Received: query_shape={tuple(query)}, "
                f"value_shape={tuple(value)}, key_shape={tuple(key)}"
            )
        return query, value, key

    def _check_mask(self, mask, query_shape, value_shape):
        """Returns (query_mask, value_mask), booleans or None, from ``mask``."""
        if mask is None:
            return None, None
        if not isinstance(mask, (list, tuple)) or not 2 <= len(mask) <= 3:
            raise ValueError(
                f"Layer {self.name!r} (Attention) expects mask=[query_mask, value_mask] (a list of "
                f"2 or 3 masks). Received: mask={mask!r}"
            )
        masks = []
        for name, m, shape in (("query_mask", mask[0], query_shape), ("value_mask", mask[1], value_shape)):
            if m is not None and not shapes_agree(m.shape, shape[:-1]):
                raise ValueError(
                    f"Layer {self.name!r} (Attention): {name} must have shape {tuple(shape[:-1])} (batch, "
                    f"time) to match its input of shape {tuple(shape)}. Received: {name}.shape={tuple(m.shape)}"
                )
            masks.append(m if m is None or isinstance(m, KerasTensor) else np.asarray(m).astype(bool))
        return masks

    def compute_output_shape(self, input_shape):
        query, value, _ = self._check_shapes(input_shape)
        return tuple(query[:-1]) + (value[-1],)

    def compute_output_spec(self, inputs, mask=None, return_attention_scores=False, use_causal_mask=False):
        query, value, key = self._check_shapes([x.shape for x in inputs])
        self._check_mask(mask, query, value)
        output = KerasTensor(tuple(query[:-1]) + (value[-1],), self.dtype)
        if return_attention_scores:
            return [output, KerasTensor(tuple(query[:-1]) + (key[1],), self.dtype)]
        return output

    def compute_mask(self, inputs, mask=None):
        """The query mask, for the output (none for the scores)."""
        return None if mask is None else [mask[0], None]

    def call(self, inputs, mask=None, training=False, return_attention_scores=False, use_causal_mask=False):
        return self.forward(inputs, mask, training, return_attention_scores, use_causal_mask)[0]

    def forward(self, inputs, mask=None, training=True, return_attention_scores=False, use_causal_mask=False):
        query, value = inputs[0], inputs[1]
        key = inputs[2] if len(inputs) == 3 else value
        self._check_shapes([query.shape, value.shape, key.shape])
        query_mask, value_mask = self._check_mask(mask, query.shape, value.shape)
        scores, score_cache = self._scores(query, key)
        scores_mask = None if value_mask is None else value_mask[:, None, :]
        if use_causal_mask:
            causal = causal_mask(query.shape[1], key.shape[1])
            scores_mask = causal if scores_mask is None else scores_mask & causal
        if scores_mask is not None:
            scores = np.where(scores_mask, scores, scores - _MASK_PENALTY)
        probabilities = activations.softmax(scores)
        drop = None
        if training and self.dropout > 0:
            drop = dropout_mask(self.seed_generator, self.dropout, probabilities.shape, probabilities.dtype)
        weights = probabilities if drop is None else probabilities * drop
        outputs = weights @ value
        if query_mask is not None:
            outputs = np.where(query_mask[..., None], outputs, 0)
        cache = (len(inputs), value, score_cache, probabilities, drop, query_mask, return_attention_scores)
        return ([outputs, weights] if return_attention_scores else outputs), cache

    def backward(self, cache, grad_outputs):
        num_inputs, value, score_cache, probabilities, drop, query_mask, return_scores = cache
        grad_out, grad_weights = grad_outputs if return_scores else (grad_outputs, None)
        if query_mask is not None:
            grad_out = np.where(query_mask[..., None], grad_out, 0)
        weights = probabilities if drop is None else probabilities * drop
        grad_value = np.swapaxes(weights, -1, -2) @ grad_out
        grad_weights = grad_out @ np.swapaxes(value, -1, -2) + (0 if grad_weights is None else grad_weights)
        if drop is not None:
            grad_weights = grad_weights * drop
        # The masked scores were shifted by a constant: the shift has no gradient.
        grad_scores = activations.softmax.gradient(None, probabilities, grad_weights)
        grad_query, grad_key, grads = self._scores_backward(score_cache, grad_scores)
        if num_inputs == 3:
            return [grad_query, grad_value, grad_key], grads
        return [grad_query, grad_value + grad_key], grads

    def _scores(self, query, key):
        """The (B, Tq, Tv) scores and what their backward needs."""
        if self.score_mode == "dot":
            raw = query @ np.swapaxes(key, -1, -2)
            return (raw if self.scale is None else raw * self.scale.value), (query, key, raw)
        pairs = query[:, :, None, :] + key[:, None, :, :]
        tanh = np.tanh(pairs if self.scale is None else pairs * self.scale.value)
        summed = tanh.sum(axis=-1)
        return self.concat_score_weight.value * summed, (pairs, tanh, summed)

    def _scores_backward(self, score_cache, grad_scores):
        """Returns (grad_query, grad_key, {weight: grad}) given the scores' gradient."""
        grads = {}
        if self.score_mode == "dot":
            query, key, raw = score_cache
            if self.scale is not None:
                grads[self.scale] = np.sum(grad_scores * raw)
                grad_scores = grad_scores * self.scale.value
            return grad_scores @ key, np.swapaxes(grad_scores, -1, -2) @ query, grads
        pairs, tanh, summed = score_cache
        weight = self.concat_score_weight
        grads[weight] = np.sum(grad_scores * summed)
        grad_pre_tanh = (grad_scores * weight.value)[..., None] * (1 - tanh * tanh)
        if self.scale is not None:
            grads[self.scale] = np.sum(grad_pre_tanh * pairs)
            grad_pre_tanh = grad_pre_tanh * self.scale.value
        return grad_pre_tanh.sum(axis=2), grad_pre_tanh.sum(axis=1), grads

    def flops(self, input_shapes, output_shapes):
        """The scores, the softmax (3 per score) and the weighted sum of the values (2 per
        multiply-add). Scores ``"dot"``: 2 per multiply-add of ``query @ key^T``, then 1 per
        score for ``scale``; ``"concat"``: per score and feature the add, the tanh and the sum
        (and the scale), then 1 per score for ``concat_score_weight``. Masks select, uncounted."""
        (batch, query_steps, dim), (_, value_steps, value_dim) = input_shapes[0], input_shapes[1]
        scores = batch * query_steps * value_steps
        if self.score_mode == "dot":
            score_flops = scores * (2 * dim + (self.scale is not None))
        else:
            score_flops = scores * ((3 + (self.scale is not None)) * dim + 1)
        return score_flops + activations.softmax.flops(scores) + 2 * scores * value_dim

    def get_config(self):
        config = super().get_config()
        config.update(use_scale=self.use_scale, score_mode=self.score_mode, dropout=self.dropout, seed=self.seed)
        return config

