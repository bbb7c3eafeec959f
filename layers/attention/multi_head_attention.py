"""MultiHeadAttention: scaled dot-product attention in several learned subspaces."""

import functools
import math

import numpy as np

from engine import KerasTensor, Layer, tree
from engine.training import constraints, regularizers
from engine.network import initializers
from engine.network.bound_arguments import gradients_as_given
from layers import activations
from layers.attention._common import causal_mask, check_dropout, dropout_mask, shapes_agree
from layers.core.seed_generator import SeedGenerator

# What masked scores are replaced by before the softmax, as in Keras.
_LARGE_NEGATIVE = -1e9


class MultiHeadAttention(Layer):
    """Multi-head attention (Vaswani et al., 2017), as Keras 3's ``MultiHeadAttention``.

    ``query`` ``(B, T, dim)``, ``value`` ``(B, S, dv)`` and ``key`` ``(B, S, dk)``
    (``value`` when not given) are projected to ``num_heads`` heads; each head
    computes ``softmax(q k^T / sqrt(key_dim)) v``; the heads are projected
    together to the output ``(B, T, dim)`` (or ``(B, T, *output_shape)``).

    Two call forms:

    - ``mha(query, value, key=None)``, Keras' form. The weights are created at
      the first call, from the shapes of all three; backward returns the
      gradients of query, value and key as ``ArgumentGradients``, so all three
      train. For self-attention, ``mha(x, x)``, the gradients of the three
      uses of ``x`` are summed.
    - ``mha([query, value])`` or ``mha([query, value, key])``: the same, with
      the tensors as one list.

    Args:
        num_heads: number of attention heads.
        key_dim: size of each head for query and key.
        value_dim: size of each head for value; ``key_dim`` when None.
        dropout: fraction of the attention probabilities dropped in training.
        use_bias: whether the projections add biases.
        output_shape: the output's feature shape (an int or a tuple); the
            query's feature size when None.
        attention_axes: only the default is supported: attention over the
            sequence axis of rank-3 inputs (None, or ``(1,)`` as Keras reports it).
        kernel_initializer, bias_initializer: initializers of the projections.
        kernel_regularizer, bias_regularizer: penalties on the projections.
        kernel_constraint, bias_constraint: projections applied after each update.
        seed: integer seed of the dropout masks.

    Call arguments:
        attention_mask: booleans ``(B, T, S)`` (or ``(T, S)``, or
            ``(B, num_heads, T, S)``, sizes of 1 broadcasting): False where a
            query position may not attend to a key position. Masked positions
            get probability 0, also when a whole row is masked (its output is
            then the output bias).
        return_attention_scores: also return the attention probabilities
            ``(B, num_heads, T, S)`` (before dropout, as Keras).
        use_causal_mask: position i attends only to the positions j <= i.
        query_mask, value_mask, key_mask: the inputs' masks, ``(B, T)`` and
            ``(B, S)`` booleans, filled in by the engine from upstream layers
            (``Embedding(mask_zero=True)``, ``Masking``) as in Keras, and
            combined with ``attention_mask``.
        mask: the same masks as a list ``[query_mask, value_mask, key_mask]``,
            for the list form ``mha([query, value, key])``; a single mask is
            the query's (and, in self-attention ``mha(x, x)``, every input's).

    Weights, in order, as in Keras 3: ``query/kernel`` ``(dim, num_heads, key_dim)``,
    ``query/bias`` ``(num_heads, key_dim)``, the same for ``key`` and for
    ``value`` (with ``value_dim``), ``attention_output/kernel``
    ``(num_heads, value_dim, *output_shape)`` and ``attention_output/bias``
    ``output_shape``.

    Example:
        >>> import numpy as np
        >>> mha = MultiHeadAttention(num_heads=2, key_dim=4)
        >>> query, value = np.ones((2, 3, 8)), np.ones((2, 5, 6))
        >>> output, scores = mha([query, value], return_attention_scores=True)
        >>> output.shape, scores.shape
        ((2, 3, 8), (2, 2, 3, 5))
    """

    _combines_masks_only = True

    min_inputs = 1
    max_inputs = 3
    supports_masking = True

    def __init__(self, num_heads, key_dim, value_dim=None, dropout=0.0, use_bias=True, output_shape=None,
                 attention_axes=None, kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 seed=None, **kwargs):
        super().__init__(**kwargs)
        for name, value in (("num_heads", num_heads), ("key_dim", key_dim)):
            if not _is_positive_int(value):
                raise ValueError(
                    f"Received an invalid value for argument `{name}`, expected a positive integer. "
                    f"Received: {name}={value!r}"
                )
        if value_dim is not None and not _is_positive_int(value_dim):
            raise ValueError(
                "Received an invalid value for argument `value_dim`, expected a positive integer or "
                f"`None`. Received: value_dim={value_dim!r}"
            )
        if not isinstance(use_bias, bool):
            raise ValueError(
                f"Received an invalid value for `use_bias`, expected a bool. Received: use_bias={use_bias!r}"
            )
        self.num_heads = int(num_heads)
        self.key_dim = int(key_dim)
        self.value_dim = int(value_dim or key_dim)
        self.dropout = check_dropout(dropout)
        self.use_bias = use_bias
        self._output_shape = _check_output_shape(output_shape)
        self.attention_axes = _check_attention_axes(attention_axes)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.seed = seed
        self.seed_generator = SeedGenerator(seed)

    # ------------------------------------------------------------------ shapes
    def build(self, input_shape):
        # The list form gives all shapes here; Keras' form gives only the query's, so
        # its weights are created at the first call, once value and key are seen.
        if isinstance(input_shape[0], (list, tuple)) and len(input_shape) in (2, 3):
            self._create_weights(input_shape[0], input_shape[1], input_shape[-1])

    def _create_weights(self, query, value, key):
        self._check_ranks(query, value, key)
        if None in (query[-1], value[-1], key[-1]):
            raise ValueError(
                f"Layer {self.name!r} (MultiHeadAttention) needs known feature sizes (last axes) to create "
                f"its weights. Received: query_shape={tuple(query)}, value_shape={tuple(value)}, "
                f"key_shape={tuple(key)}"
            )
        heads = self.num_heads
        self.query_kernel, self.query_bias = self._projection("query", (query[-1], heads, self.key_dim))
        self.key_kernel, self.key_bias = self._projection("key", (key[-1], heads, self.key_dim))
        self.value_kernel, self.value_bias = self._projection("value", (value[-1], heads, self.value_dim))
        out_shape = self._output_shape or (query[-1],)
        self.output_kernel, self.output_bias = self._projection(
            "attention_output", (heads, self.value_dim) + out_shape, bias_shape=out_shape
        )

    def _projection(self, name, kernel_shape, bias_shape=None):
        kernel = self.add_weight(shape=kernel_shape, initializer=self.kernel_initializer, name=f"{name}/kernel",
                                 regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        bias = None
        if self.use_bias:
            bias = self.add_weight(shape=bias_shape or kernel_shape[1:], initializer=self.bias_initializer,
                                   name=f"{name}/bias", regularizer=self.bias_regularizer,
                                   constraint=self.bias_constraint)
        return kernel, bias

    def _check_ranks(self, query, value, key):
        if any(len(s) != 3 for s in (query, value, key)):
            raise ValueError(
                f"Layer {self.name!r} (MultiHeadAttention) supports query, value and key of rank 3, "
                "(batch, sequence, features), attending over the sequence axis; attention over several "
                "axes (Keras' attention_axes) is not supported. Received: "
                f"query_shape={tuple(query)}, value_shape={tuple(value)}, key_shape={tuple(key)}"
            )
        if not shapes_agree(value[:-1], key[:-1]):
            raise ValueError(
                "All dimensions of `value` and `key`, except the last one, must be equal. "
                f"Received: value_shape={tuple(value)} and key_shape={tuple(key)}"
            )
        if not shapes_agree(query[:1], value[:1]):
            raise ValueError(
                f"Layer {self.name!r} (MultiHeadAttention) needs query and value with the same batch size. "
                f"Received: query_shape={tuple(query)}, value_shape={tuple(value)}"
            )

    def _create_weights_once(self, query, value, key):
        if "query_kernel" not in self.__dict__:  # deferred by build (Keras' form): made at the first call on purpose
            self._tracker.unlock()
            self._create_weights(query, value, key)
            self._tracker.lock()

    def _check_shapes(self, query, value, key):
        """Raises unless the shapes fit each other and the projections' kernels."""
        self._check_ranks(query, value, key)
        for role, shape, kernel in (("query", query, self.query_kernel), ("value", value, self.value_kernel),
                                    ("key", key, self.key_kernel)):
            if shape[-1] not in (None, kernel.shape[0]):
                raise ValueError(
                    f"Layer {self.name!r} (MultiHeadAttention) was built for a {role} with {kernel.shape[0]} "
                    f"features (last axis), but received {role}_shape={tuple(shape)}."
                )

    def _check_masks(self, query, value, attention_mask, input_masks):
        target = (query[0], self.num_heads, query[1], value[1])
        if attention_mask is not None:
            shape = tuple(attention_mask.shape)
            aligned = shape[:1] + (1,) + shape[1:] if len(shape) == 3 else shape
            if not 2 <= len(shape) <= 4 or any(
                m != 1 and not shapes_agree((m,), (t,)) for m, t in zip(reversed(aligned), reversed(target))
            ):
                raise ValueError(
                    f"Layer {self.name!r} (MultiHeadAttention) expects attention_mask of shape (B, T, S) = "
                    f"{(target[0],) + target[2:]} (or (T, S), or (B, num_heads, T, S); sizes of 1 broadcast). "
                    f"Received: attention_mask.shape={shape}"
                )
        for role, mask, shape in zip(("query_mask", "value_mask", "key_mask"), input_masks, (query, value, value)):
            if mask is not None and not shapes_agree(mask.shape, shape[:2]):
                raise ValueError(
                    f"Layer {self.name!r} (MultiHeadAttention): {role} must have shape {tuple(shape[:2])} "
                    f"(batch, sequence). Received: {role}.shape={tuple(mask.shape)}"
                )

    def compute_output_shape(self, input_shape):
        query = input_shape[0] if isinstance(input_shape[0], (list, tuple)) else input_shape
        return tuple(query[:-1]) + (self._output_shape or (query[-1],))

    def compute_output_spec(self, query, value=None, key=None, query_mask=None, value_mask=None, key_mask=None,
                            attention_mask=None, return_attention_scores=False, use_causal_mask=False, mask=None):
        (query, value, key), self_attention = self._operands(query, value, key)
        self._create_weights_once(query.shape, value.shape, key.shape)
        self._check_shapes(query.shape, value.shape, key.shape)
        input_masks = _input_masks(mask, self_attention, [query_mask, value_mask, key_mask])
        self._check_masks(query.shape, value.shape, attention_mask, input_masks)
        output = KerasTensor(self.compute_output_shape(query.shape), self.dtype)
        if return_attention_scores:
            return [output, KerasTensor((query.shape[0], self.num_heads, query.shape[1], key.shape[1]), self.dtype)]
        return output

    def compute_mask(self, inputs, mask=None):
        """The query's mask, for the output (none for the scores)."""
        return None if mask is None else [_input_masks(mask, self_attention=False)[0], None]

    def _operands(self, query, value, key):
        """Returns ((query, value, key), self_attention): self_attention when called as
        ``mha(x, x)``; the key is the value when not given."""
        if isinstance(query, (list, tuple)):
            if value is not None or key is not None:
                raise ValueError(
                    f"Layer {self.name!r} (MultiHeadAttention) received a list as query and also a value or "
                    "key: pass mha([query, value, key]) or mha(query, value, key), not both."
                )
            if len(query) not in (2, 3):
                raise ValueError(
                    f"Layer {self.name!r} (MultiHeadAttention) expects a list [query, value] or "
                    f"[query, value, key]. Received a list of {len(query)} tensors."
                )
            return (query[0], query[1], query[-1]), False
        if value is None:
            raise ValueError(
                f"Layer {self.name!r} (MultiHeadAttention) needs a value: call it as mha([query, value]), "
                "or mha(x, x) for self-attention."
            )
        if key is None:
            return (query, value, value), value is query
        return (query, value, key), False

    # ------------------------------------------------------------ the maths
    def call(self, query, value=None, key=None, query_mask=None, value_mask=None, key_mask=None,
             attention_mask=None, return_attention_scores=False, training=False, use_causal_mask=False, mask=None):
        return self.forward(query, value, key, query_mask, value_mask, key_mask, attention_mask, return_attention_scores,
                            training, use_causal_mask, mask)[0]

    def forward(self, query, value=None, key=None, query_mask=None, value_mask=None, key_mask=None,
                attention_mask=None, return_attention_scores=False, training=True, use_causal_mask=False, mask=None):
        given = {"query": query, "value": value, "key": key}
        (query, value, key), self_attention = self._operands(query, value, key)
        self._create_weights_once(query.shape, value.shape, key.shape)
        self._check_shapes(query.shape, value.shape, key.shape)
        input_masks = _input_masks(mask, self_attention, [query_mask, value_mask, key_mask])
        if attention_mask is not None:
            attention_mask = np.asarray(attention_mask)
        self._check_masks(query.shape, value.shape, attention_mask, input_masks)
        scale = 1.0 / math.sqrt(self.key_dim)
        q = _project(query, self.query_kernel, self.query_bias) * scale  # (B, N, T, key_dim)
        k = _project(key, self.key_kernel, self.key_bias)  # (B, N, S, key_dim)
        v = _project(value, self.value_kernel, self.value_bias)  # (B, N, S, value_dim)
        logits = q @ np.swapaxes(k, -1, -2)  # (B, N, T, S)
        keep = _scores_mask(attention_mask, input_masks, use_causal_mask, query.shape[1], key.shape[1])
        if keep is None:
            probabilities = activations.softmax(logits)
        else:
            probabilities = np.where(keep, activations.softmax(np.where(keep, logits, _LARGE_NEGATIVE)), 0)
        drop = None
        if training and self.dropout > 0:
            drop = dropout_mask(self.seed_generator, self.dropout, probabilities.shape, probabilities.dtype)
        heads = (probabilities if drop is None else probabilities * drop) @ v  # (B, N, T, value_dim)
        batch, steps = query.shape[:2]
        num_heads, value_dim = heads.shape[1], heads.shape[3]
        merged = heads.transpose(0, 2, 1, 3).reshape(batch * steps, num_heads * value_dim)
        outputs = merged @ self.output_kernel.value.reshape(merged.shape[1], -1)
        if self.output_bias is not None:
            outputs += self.output_bias.value.reshape(-1)
        outputs = outputs.reshape(self.compute_output_shape(query.shape))
        cache = (given, (query, value, key), (q, k, v), probabilities, drop, merged, return_attention_scores)
        return ([outputs, probabilities] if return_attention_scores else outputs), cache

    def backward(self, cache, grad_outputs):
        given, (query, value, key), (q, k, v), probabilities, drop, merged, return_scores = cache
        grad_outputs, grad_scores = grad_outputs if return_scores else (grad_outputs, None)
        grad_outputs = grad_outputs.reshape(merged.shape[0], math.prod(self.output_kernel.shape[2:]))
        grads = {self.output_kernel: (merged.T @ grad_outputs).reshape(self.output_kernel.shape)}
        if self.output_bias is not None:
            grads[self.output_bias] = grad_outputs.sum(axis=0).reshape(self.output_bias.shape)
        grad_merged = grad_outputs @ self.output_kernel.value.reshape(merged.shape[1], -1).T
        grad_heads = grad_merged.reshape(q.shape[0], q.shape[2], q.shape[1], v.shape[3]).transpose(0, 2, 1, 3)
        weights = probabilities if drop is None else probabilities * drop
        grad_v = np.swapaxes(weights, -1, -2) @ grad_heads
        grad_probabilities = grad_heads @ np.swapaxes(v, -1, -2)
        if drop is not None:
            grad_probabilities = grad_probabilities * drop
        if grad_scores is not None:
            grad_probabilities = grad_probabilities + grad_scores
        # Masked positions have probability 0, so the softmax gives them no gradient.
        grad_logits = activations.softmax.gradient(None, probabilities, grad_probabilities)
        grad_q = grad_logits @ k * (1.0 / math.sqrt(self.key_dim))
        grad_k = np.swapaxes(grad_logits, -1, -2) @ q
        grad_query = _project_backward(query, self.query_kernel, self.query_bias, grad_q, grads)
        grad_key = _project_backward(key, self.key_kernel, self.key_bias, grad_k, grads)
        grad_value = _project_backward(value, self.value_kernel, self.value_bias, grad_v, grads)
        # Without a key, the value served as both: it gets both gradients.
        key_given = sum(x is not None for x in tree.flatten(given)) == 3
        flat = [grad_query, grad_value, grad_key] if key_given else [grad_query, grad_value + grad_key]
        return gradients_as_given(given, flat), grads

    def flops(self, input_shapes, output_shapes):
        """The query, key and value projections (2 per multiply-add, and the biases), the
        query's scaling, the ``q k^T`` scores and the weighted sum of the values (2 per
        multiply-add), the softmax (3 per score) and the output projection. Masks select, uncounted."""
        (batch, query_steps, _), (_, value_steps, _) = input_shapes[0], input_shapes[1]
        heads = self.num_heads
        scores = batch * heads * query_steps * value_steps
        projections = (_projection_flops(batch * query_steps, self.query_kernel, self.query_bias)
                       + batch * query_steps * heads * self.key_dim  # the scaling of q
                       + _projection_flops(batch * value_steps, self.key_kernel, self.key_bias)
                       + _projection_flops(batch * value_steps, self.value_kernel, self.value_bias))
        attention = scores * 2 * (self.key_dim + self.value_dim) + activations.softmax.flops(scores)
        output = math.prod(output_shapes[0]) * (2 * heads * self.value_dim + (self.output_bias is not None))
        return projections + attention + output

    def get_config(self):
        config = super().get_config()
        config.update(
            num_heads=self.num_heads,
            key_dim=self.key_dim,
            value_dim=self.value_dim,
            dropout=self.dropout,
            use_bias=self.use_bias,
            output_shape=self._output_shape,
            attention_axes=self.attention_axes,
            kernel_initializer=initializers.serialize(self.kernel_initializer),
            bias_initializer=initializers.serialize(self.bias_initializer),
            kernel_regularizer=regularizers.serialize(self.kernel_regularizer),
            bias_regularizer=regularizers.serialize(self.bias_regularizer),
            kernel_constraint=constraints.serialize(self.kernel_constraint),
            bias_constraint=constraints.serialize(self.bias_constraint),
            seed=self.seed,
        )
        return config


def _project(x, kernel, bias):
    """``(B, L, dim)`` through a ``(dim, N, H)`` kernel (and ``(N, H)`` bias) to ``(B, N, L, H)``."""
    dim, heads, size = kernel.shape
    y = x.reshape(-1, dim) @ kernel.value.reshape(dim, heads * size)
    if bias is not None:
        y += bias.value.reshape(-1)
    return y.reshape(x.shape[0], x.shape[1], heads, size).transpose(0, 2, 1, 3)


def _projection_flops(rows, kernel, bias):
    """FLOPs of ``_project`` on ``rows`` vectors: 2 per multiply-add, and the bias."""
    dim, heads, size = kernel.shape
    return rows * heads * size * (2 * dim + (bias is not None))


def _project_backward(x, kernel, bias, grad, grads):
    """Gradient of ``_project``'s input given ``grad`` ``(B, N, L, H)``; adds the weights' to ``grads``."""
    dim, heads, size = kernel.shape
    grad = grad.transpose(0, 2, 1, 3).reshape(-1, heads * size)
    grads[kernel] = (x.reshape(-1, dim).T @ grad).reshape(kernel.shape)
    if bias is not None:
        grads[bias] = grad.sum(axis=0).reshape(bias.shape)
    return (grad @ kernel.value.reshape(dim, -1).T).reshape(x.shape)


def _input_masks(mask, self_attention, argument_masks=(None, None, None)):
    """``[query_mask, value_mask, key_mask]`` (None where unknown): the masks
    given by argument in Keras' form, else from the ``mask`` argument."""
    # In the list form mha([query, value]) the engine fills query_mask with the list's masks, as ``mask``.
    if any(m is not None and not isinstance(m, (list, tuple)) for m in argument_masks):
        return list(argument_masks)
    if mask is None:
        return [None, None, None]
    masks = list(mask) if isinstance(mask, (list, tuple)) else [mask]
    if self_attention:  # self-attention in Keras' form: the query's mask is also value's and key's
        masks = masks[:1] * 3
    return (masks + [None, None])[:3]


def _scores_mask(attention_mask, input_masks, use_causal_mask, query_length, key_length):
    """The booleans, broadcastable to the scores ``(B, N, T, S)``, of the positions that may attend."""
    parts = []
    if attention_mask is not None:
        attention_mask = attention_mask.astype(bool)
        parts.append(attention_mask[:, None] if attention_mask.ndim == 3 else attention_mask)
    query_mask, value_mask, key_mask = (None if m is None else np.asarray(m).astype(bool) for m in input_masks)
    if query_mask is not None:
        parts.append(query_mask[:, None, :, None])
    for m in (value_mask, key_mask):
        if m is not None:
            parts.append(m[:, None, None, :])
    if use_causal_mask:
        parts.append(causal_mask(query_length, key_length))
    return functools.reduce(np.logical_and, parts) if parts else None


def _is_positive_int(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value > 0


def _check_output_shape(output_shape):
    if output_shape is None:
        return None
    shape = (output_shape,) if _is_positive_int(output_shape) else output_shape
    if not isinstance(shape, (list, tuple)) or not shape or not all(_is_positive_int(d) for d in shape):
        raise ValueError(
            "Invalid `output_shape`: when specified, it should be a positive integer or a non-empty tuple "
            f"or list of positive integers. Received: output_shape={output_shape!r}"
        )
    return tuple(int(d) for d in shape)


def _check_attention_axes(attention_axes):
    if attention_axes is None:
        return None
    axes = (attention_axes,) if isinstance(attention_axes, int) else attention_axes
    if not isinstance(axes, (list, tuple)) or tuple(axes) not in ((1,), (-2,)):
        raise ValueError(
            "MultiHeadAttention supports only the default attention_axes: attention over the sequence axis "
            "of rank-3 inputs (batch, sequence, features), i.e. attention_axes=None or (1,). "
            f"Received: attention_axes={attention_axes!r}"
        )
    return tuple(axes)
