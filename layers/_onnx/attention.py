"""ONNX converters of the attention layers: MultiHeadAttention and Attention.

Both are written out in MatMul, Softmax and elementwise nodes, as their
``call`` computes them. A causal mask (``use_causal_mask=True``) is a
lower-triangular ``Trilu`` of the sequences' lengths read from their shapes,
so the exported graph takes any length; MultiHeadAttention's
``attention_mask`` argument is an input of the graph when the call got a
tensor. The inputs' own masks (``query_mask``..., from ``Embedding(mask_zero=True)``)
are not exported.
"""

import math

import numpy as np

from engine import tree
from layers._onnx import onnx_converter
from layers.attention import Attention, MultiHeadAttention
from layers.attention.attention import _MASK_PENALTY
from layers.attention.multi_head_attention import _LARGE_NEGATIVE


@onnx_converter(MultiHeadAttention)
def multi_head_attention(layer, call):
    """Projections to heads, ``softmax(q k^T / sqrt(key_dim))`` (masked) times ``v``, the output projection."""
    query, value, key = _operands(call)
    q = call.op("Mul", [_heads(call, layer.query_kernel, layer.query_bias, query, [0, 2, 1, 3]),
                        call.constant(np.float32(1.0 / math.sqrt(layer.key_dim)))])
    k = _heads(call, layer.key_kernel, layer.key_bias, key, [0, 2, 3, 1])  # (B, N, key_dim, S)
    v = _heads(call, layer.value_kernel, layer.value_bias, value, [0, 2, 1, 3])
    logits = call.op("MatMul", [q, k])  # (B, N, T, S)
    keep = _keep(call, query, key)
    if keep is None:
        probabilities = call.op("Softmax", [logits], axis=-1)
    else:
        masked = call.op("Where", [keep, logits, call.constant(np.float32(_LARGE_NEGATIVE))])
        probabilities = call.op("Where", [keep, call.op("Softmax", [masked], axis=-1), call.constant(np.float32(0))])
    heads = call.op("MatMul", [probabilities, v])  # (B, N, T, value_dim)
    merged = call.op("Reshape", [call.op("Transpose", [heads], perm=[0, 2, 1, 3]),
                                 call.constant([0, 0, layer.num_heads * layer.value_dim])])
    kernel = layer.output_kernel
    outputs = call.op("MatMul", [merged, call.weight(kernel, lambda w: w.reshape(kernel.shape[0] * kernel.shape[1], -1),
                                                     key="flat")])
    if layer.output_bias is not None:
        outputs = call.op("Add", [outputs, call.weight(layer.output_bias, lambda b: b.reshape(-1), key="flat")])
    if len(kernel.shape) > 3:
        outputs = call.op("Reshape", [outputs, call.constant([0, 0, *kernel.shape[2:]])])
    return [outputs, probabilities] if call.kwargs.get("return_attention_scores") else outputs


@onnx_converter(Attention)
def attention(layer, call):
    """Scores (dot or concat), a causal mask, ``softmax(scores) @ value``."""
    query, value = call.inputs[:2]
    key = call.inputs[2] if len(call.inputs) == 3 else value
    if layer.score_mode == "dot":
        scores = call.op("MatMul", [query, call.op("Transpose", [key], perm=[0, 2, 1])])
        if layer.scale is not None:
            scores = call.op("Mul", [scores, call.weight(layer.scale)])
    else:
        pairs = call.op("Add", [call.op("Unsqueeze", [query, call.constant([2])]),
                                call.op("Unsqueeze", [key, call.constant([1])])])  # (B, Tq, Tv, dim)
        if layer.scale is not None:
            pairs = call.op("Mul", [pairs, call.weight(layer.scale)])
        summed = call.op("ReduceSum", [call.op("Tanh", [pairs]), call.constant([-1])], keepdims=0)
        scores = call.op("Mul", [call.weight(layer.concat_score_weight), summed])
    if call.kwargs.get("use_causal_mask"):
        penalized = call.op("Sub", [scores, call.constant(np.float32(_MASK_PENALTY))])
        scores = call.op("Where", [_causal(call, query, key), scores, penalized])
    weights = call.op("Softmax", [scores], axis=-1)
    outputs = call.op("MatMul", [weights, value])
    return [outputs, weights] if call.kwargs.get("return_attention_scores") else outputs


def _operands(call):
    """MultiHeadAttention's (query, value, key) names, from ``[q, v(, k)]`` or the arguments."""
    if len(call.inputs) > 1:
        return call.inputs[0], call.inputs[1], call.inputs[-1]
    extra = list(call.extra_args)
    value = extra[0] if extra else call.kwargs["value"]
    key = extra[1] if len(extra) > 1 else call.kwargs.get("key")
    return call.inputs[0], value, key or value


def _heads(call, kernel, bias, x, perm):
    """``x`` ``(B, L, dim)`` projected by a ``(dim, N, H)`` kernel, as ``(B, L, N, H)`` permuted by ``perm``."""
    dim, heads, size = kernel.shape
    y = call.op("MatMul", [x, call.weight(kernel, lambda w: w.reshape(dim, heads * size), key="flat")])
    if bias is not None:
        y = call.op("Add", [y, call.weight(bias, lambda b: b.reshape(-1), key="flat")])
    return call.op("Transpose", [call.op("Reshape", [y, call.constant([0, 0, heads, size])])], perm=perm)


def _keep(call, query, key):
    """The booleans broadcastable to the scores ``(B, N, T, S)`` of the positions that may attend, or None."""
    parts = []
    attention_mask = call.kwargs.get("attention_mask")
    if isinstance(attention_mask, str):
        mask = call.cast(attention_mask, "bool")
        parts.append(call.op("Unsqueeze", [mask, call.constant([1])]) if _rank(call, attention_mask) == 3 else mask)
    elif attention_mask is not None:
        mask = np.asarray(attention_mask).astype(bool)
        parts.append(call.constant(mask[:, None] if mask.ndim == 3 else mask))
    if call.kwargs.get("use_causal_mask"):
        parts.append(_causal(call, query, key))
    keep = parts[0] if parts else None
    for part in parts[1:]:
        keep = call.op("And", [keep, part])
    return keep


def _rank(call, name):
    """The rank of the call's tensor ``name`` (the arguments flatten in the order of ``call.input_shapes``)."""
    names = [n for n in tree.flatten((call.inputs, call.extra_args, call.kwargs)) if isinstance(n, str)]
    return len(call.input_shapes[names.index(name)])


def _causal(call, query, key):
    """``(query length, key length)`` booleans, True where the key position is at most the query's."""
    lengths = call.op("Concat", [call.op("Shape", [query], start=1, end=2), call.op("Shape", [key], start=1, end=2)],
                      axis=0)
    return call.op("Trilu", [call.op("Expand", [call.constant(np.ones((1, 1), bool)), lengths])], upper=0)
