"""``keras.ops.nn`` (and ``math``, ``linalg``) functions in NumPy the tracer differentiates.

Stable forms as in JAX: ``sigmoid`` from ``exp(-|x|)``, ``softmax`` and
``logsumexp`` shifted by the maximum (held constant: the shift cancels in the
gradient), ``softplus`` as ``logaddexp(x, 0)``. ``conv`` and the pools gather
one strided slice of the (padded) input per window position, so they are
slicing, ``stack`` and ``matmul`` to the tracer.
"""

import itertools
import math

import numpy as np

from engine.autodiff import untraced
from engine.utils.backend import epsilon as _epsilon

_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
_erf_values = np.frompyfunc(math.erf, 1, 1)


def _with_slope(value, x, slope):
    """``value`` (computed on plain arrays), differentiated as ``slope * dx``
    when ``x`` is traced: ``x - untraced(x)`` is zero with gradient one."""
    if x is untraced(x):
        return value
    return value + (x - untraced(x)) * slope


def relu(x):
    """``max(x, 0)``."""
    return np.maximum(x, 0)


def relu6(x):
    """``min(max(x, 0), 6)``."""
    return np.clip(x, 0, 6)


def sigmoid(x):
    """``1 / (1 + exp(-x))``, computed without overflow."""
    e = np.exp(-np.abs(x))
    return np.where(untraced(x) >= 0, 1 / (1 + e), e / (1 + e))


def hard_sigmoid(x):
    """``relu6(x + 3) / 6``."""
    return np.clip(x + 3, 0, 6) / 6


def softplus(x):
    """``log(exp(x) + 1)``."""
    return np.logaddexp(x, 0)


def log_sigmoid(x):
    """``log(sigmoid(x))`` = ``-softplus(-x)``."""
    return -np.logaddexp(-x, 0)


def softsign(x):
    """``x / (|x| + 1)``."""
    return x / (np.abs(x) + 1)


def silu(x):
    """``x * sigmoid(x)`` (also called swish)."""
    return x * sigmoid(x)


def leaky_relu(x, negative_slope=0.2):
    """``x`` where ``x >= 0``, else ``negative_slope * x``."""
    return np.where(untraced(x) >= 0, x, x * negative_slope)


def elu(x, alpha=1.0):
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``."""
    return np.where(untraced(x) > 0, x, np.expm1(np.minimum(x, 0)) * alpha)


def selu(x):
    """``scale * elu(x, alpha)`` with the self-normalizing constants."""
    return elu(x, _SELU_ALPHA) * _SELU_SCALE


def erf(x):
    """The error function (exact values; its derivative ``2 / sqrt(pi) * exp(-x^2)``)."""
    plain = np.asarray(untraced(x))
    value = _erf_values(plain).astype(np.result_type(plain, np.float32))
    return _with_slope(value, x, 2 / math.sqrt(math.pi) * np.exp(-np.square(plain)))


def gelu(x, approximate=True):
    """``x * P(X <= x)`` for a standard normal X; the tanh approximation by default, as in Keras."""
    if approximate:
        return x * 0.5 * (1 + np.tanh((x + 0.044715 * x ** 3) * math.sqrt(2 / math.pi)))
    return x * 0.5 * (1 + erf(x / math.sqrt(2)))


def softmax(x, axis=-1):
    """``exp(x) / sum(exp(x))`` along ``axis``."""
    e = np.exp(x - _finite_max(x, axis))
    return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax(x, axis=-1):
    """``log(softmax(x))``, computed stably."""
    shifted = x - _finite_max(x, axis)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def logsumexp(x, axis=None, keepdims=False):
    """``log(sum(exp(x)))`` over ``axis``, computed stably."""
    top = _finite_max(x, axis)
    out = np.log(np.sum(np.exp(x - top), axis=axis, keepdims=True)) + top
    return out if keepdims else np.squeeze(out, axis)


def _finite_max(x, axis):
    top = np.max(untraced(x), axis=axis, keepdims=True)
    return np.where(np.isfinite(top), top, 0)


def rsqrt(x):
    """``1 / sqrt(x)``."""
    return 1 / np.sqrt(x)


def one_hot(x, num_classes, axis=-1, dtype=None, sparse=False):
    """``x``'s integer classes as one-hot vectors along ``axis`` (float32 by default); out-of-range classes give zeros."""
    if sparse:
        raise ValueError("ops.one_hot gives dense arrays: sparse=True is not supported. Pass sparse=False.")
    hot = np.expand_dims(np.asarray(x), -1) == np.arange(num_classes)
    return np.moveaxis(hot, -1, axis).astype(dtype or "float32")


def top_k(x, k, sorted=True):  # noqa: A002 (Keras' name)
    """The ``k`` largest entries along the last axis and their indices (the first index among ties)."""
    indices = np.argsort(-untraced(x), axis=-1, kind="stable")[..., :k].astype("int32")
    return np.take_along_axis(x, indices, axis=-1), indices


def moments(x, axes, keepdims=False, synchronized=False):
    """The mean and the (biased) variance of ``x`` over ``axes``."""
    if synchronized:
        raise NotImplementedError("ops.moments: synchronized=True needs distributed replicas; nodeweave computes "
                                  "on one. Pass synchronized=False.")
    return np.mean(x, axis=axes, keepdims=keepdims), np.var(x, axis=axes, keepdims=keepdims)


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002
    """The vector norm of ``x`` over ``axis`` (an int or None for all entries), or the matrix norm over a pair
    of axes: ``ord`` None/2/1/inf/-inf/0/p for vectors, None/'fro'/1/-1/inf/-inf for matrices."""
    if isinstance(axis, (tuple, list)) and len(axis) == 2 or axis is None and ord is not None and np.ndim(x) == 2:
        return _matrix_norm(x, ord, tuple(axis) if axis is not None else (0, 1), keepdims)
    if isinstance(axis, (tuple, list)):
        (axis,) = axis
    magnitude = np.abs(x)
    if ord is None or ord == 2:
        return np.sqrt(np.sum(np.square(x), axis=axis, keepdims=keepdims))
    if ord == np.inf:
        return np.max(magnitude, axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return np.min(magnitude, axis=axis, keepdims=keepdims)
    if ord == 0:
        return np.sum(untraced(x) != 0, axis=axis, keepdims=keepdims).astype(np.result_type(untraced(x), np.float32))
    if ord == 1:
        return np.sum(magnitude, axis=axis, keepdims=keepdims)
    return np.sum(magnitude ** ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)


def _matrix_norm(x, ord, axes, keepdims):  # noqa: A002
    rows, columns = (a % np.ndim(x) for a in axes)
    if ord in (None, "fro"):
        out = np.sqrt(np.sum(np.square(x), axis=(rows, columns), keepdims=True))
    elif ord in (1, -1, np.inf, -np.inf):
        summed, pick = (rows, columns) if ord in (1, -1) else (columns, rows)
        totals = np.sum(np.abs(x), axis=summed, keepdims=True)
        out = (np.max if ord > 0 else np.min)(totals, axis=pick, keepdims=True)
    else:
        raise ValueError(f"ops.norm supports the matrix norms ord=None, 'fro', 1, -1, inf and -inf; received "
                         f"ord={ord!r} (the nuclear and spectral norms need an SVD).")
    return out if keepdims else np.squeeze(out, (rows, columns))


def normalize(x, axis=-1, order=2, epsilon=None):
    """``x / max(norm(x, order), epsilon)`` along ``axis``."""
    if not isinstance(order, int) or order < 1:
        raise ValueError(f"Argument `order` must be an int >= 1. Received: order={order}")
    epsilon = _epsilon() if epsilon is None else epsilon
    if np.ndim(x) == 0:
        x = np.expand_dims(x, 0)
    if order == 2:
        return x * np.minimum(rsqrt(np.sum(np.square(x), axis=axis, keepdims=True)), 1.0 / epsilon)
    return x / np.maximum(norm(x, order, axis, keepdims=True), epsilon)


def binary_crossentropy(target, output, from_logits=False):
    """Elementwise binary cross-entropy of probabilities (clipped to [eps, 1 - eps]) or logits."""
    _same_shapes(target, output)
    if from_logits:
        return -target * log_sigmoid(output) - (1.0 - target) * log_sigmoid(-output)
    output = np.clip(output, _epsilon(), 1.0 - _epsilon())
    return -(target * np.log(output) + (1.0 - target) * np.log(1.0 - output))


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Cross-entropy along ``axis`` of one-hot (or soft) targets and probabilities (renormalized, clipped) or logits."""
    _same_shapes(target, output)
    if np.ndim(target) < 1:
        raise ValueError(f"Arguments `target` and `output` must be at least rank 1. Received: "
                         f"target.shape={np.shape(target)}, output.shape={np.shape(output)}")
    return -np.sum(target * _log_probabilities(output, from_logits, axis), axis=axis)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Cross-entropy along ``axis`` of integer targets and probabilities (renormalized, clipped) or logits."""
    target = np.asarray(untraced(target)).astype("int32")
    if np.ndim(target) == np.ndim(output) and np.shape(target)[-1] == 1:
        target = np.squeeze(target, -1)
    if np.ndim(output) < 1:
        raise ValueError(f"Argument `output` must be at least rank 1. Received: output.shape={np.shape(output)}")
    if np.shape(target) != np.shape(output)[:-1]:
        raise ValueError(f"Arguments `target` and `output` must have the same shape up until the last dimension: "
                         f"target.shape={np.shape(target)}, output.shape={np.shape(output)}")
    hot = one_hot(target, np.shape(output)[axis], axis=axis, dtype=np.result_type(untraced(output), np.float32))
    return -np.sum(hot * _log_probabilities(output, from_logits, axis), axis=axis)


def _log_probabilities(output, from_logits, axis):
    if from_logits:
        return log_softmax(output, axis)
    output = output / np.sum(output, axis=axis, keepdims=True)
    return np.log(np.clip(output, _epsilon(), 1.0 - _epsilon()))


def _same_shapes(target, output):
    if np.shape(target) != np.shape(output):
        raise ValueError(f"Arguments `target` and `output` must have the same shape. Received: "
                         f"target.shape={np.shape(target)}, output.shape={np.shape(output)}")


# ------------------------------------------------------- windows: conv and pools


def _tuple(value, count, name):
    values = (value,) * count if isinstance(value, int) else tuple(value)
    if len(values) != count:
        raise ValueError(f"Argument `{name}` must be an int or a tuple of {count} ints for {count} spatial "
                         f"dimensions. Received: {name}={value!r}")
    return values


def _channels_last(inputs, data_format):
    if data_format not in (None, "channels_last", "channels_first"):
        raise ValueError(f"Argument `data_format` must be 'channels_last' or 'channels_first'. "
                         f"Received: data_format={data_format!r}")
    return inputs if data_format in (None, "channels_last") else np.moveaxis(inputs, 1, -1)


def _back(outputs, data_format):
    return outputs if data_format in (None, "channels_last") else np.moveaxis(outputs, -1, 1)


def _windows(inputs, window, strides, dilation, padding, fill):
    """Every window position's strided slice of ``inputs`` (batch, *spatial, channels), padded
    ``"same"`` as TensorFlow does (the extra entry after) with ``fill``, or ``"valid"``."""
    padding = padding.lower() if isinstance(padding, str) else padding
    if padding not in ("valid", "same"):
        raise ValueError(f"Argument `padding` must be 'valid' or 'same'. Received: padding={padding!r}")
    spatial = np.shape(inputs)[1:-1]
    spans = [(k - 1) * d + 1 for k, d in zip(window, dilation)]
    if padding == "same":
        outs = [-(-n // s) for n, s in zip(spatial, strides)]
        totals = [max((o - 1) * s + span - n, 0) for o, s, span, n in zip(outs, strides, spans, spatial)]
        inputs = np.pad(inputs, [(0, 0)] + [(t // 2, t - t // 2) for t in totals] + [(0, 0)],
                        constant_values=fill)
    else:
        outs = [(n - span) // s + 1 for n, span, s in zip(spatial, spans, strides)]
    if min(outs) < 1:
        raise ValueError(f"The window {tuple(window)} (dilation {tuple(dilation)}) does not fit the input's spatial "
                         f"shape {tuple(spatial)} with padding='valid'.")
    slices = []
    for offset in itertools.product(*(range(k) for k in window)):
        key = tuple(slice(i * d, i * d + (o - 1) * s + 1, s) for i, d, o, s in zip(offset, dilation, outs, strides))
        slices.append(inputs[(slice(None), *key, slice(None))])
    return slices


def conv(inputs, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    """N-D convolution (cross-correlation) of ``inputs`` (batch, *spatial, in) with ``kernel`` (*window, in, out)."""
    count = np.ndim(inputs) - 2
    x = _channels_last(inputs, data_format)
    if np.shape(x)[-1] != np.shape(kernel)[-2]:
        raise ValueError(f"ops.conv: the input has {np.shape(x)[-1]} channels but the kernel of shape "
                         f"{np.shape(kernel)} expects {np.shape(kernel)[-2]} (grouped convolutions are not "
                         "supported).")
    window = np.shape(kernel)[:-2]
    slices = _windows(x, window, _tuple(strides, count, "strides"), _tuple(dilation_rate, count, "dilation_rate"),
                      padding, 0)
    patches = np.stack(slices, axis=-2)  # (batch, *out, window positions, in)
    flat = np.reshape(patches, np.shape(patches)[:-2] + (-1,))
    return _back(flat @ np.reshape(kernel, (-1, np.shape(kernel)[-1])), data_format)


def depthwise_conv(inputs, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    """Depthwise convolution: ``kernel`` (*window, in, multiplier) filters each input channel on its own."""
    count = np.ndim(inputs) - 2
    x = _channels_last(inputs, data_format)
    slices = _windows(x, np.shape(kernel)[:-2], _tuple(strides, count, "strides"),
                      _tuple(dilation_rate, count, "dilation_rate"), padding, 0)
    patches = np.stack(slices, axis=-2)  # (batch, *out, window positions, in)
    kernel = np.reshape(kernel, (-1,) + np.shape(kernel)[-2:])  # (window positions, in, multiplier)
    out = np.einsum("...kc,kcm->...cm", patches, kernel)
    return _back(np.reshape(out, np.shape(out)[:-2] + (-1,)), data_format)


def max_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    """The maximum of each window of ``pool_size`` (strides default to the pool size)."""
    count = np.ndim(inputs) - 2
    window = _tuple(pool_size, count, "pool_size")
    strides = window if strides is None else _tuple(strides, count, "strides")
    slices = _windows(_channels_last(inputs, data_format), window, strides, (1,) * count, padding, -np.inf)
    return _back(np.max(np.stack(slices), axis=0), data_format)


def average_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    """The mean of each window of ``pool_size``, over the entries inside the input (``"same"`` padding)."""
    count = np.ndim(inputs) - 2
    window = _tuple(pool_size, count, "pool_size")
    strides = window if strides is None else _tuple(strides, count, "strides")
    x = _channels_last(inputs, data_format)
    total = np.sum(np.stack(_windows(x, window, strides, (1,) * count, padding, 0)), axis=0)
    inside = np.ones((1,) + np.shape(x)[1:-1] + (1,), np.result_type(untraced(x)))
    counts = np.sum(np.stack(_windows(inside, window, strides, (1,) * count, padding, 0)), axis=0)
    return _back(total / counts, data_format)
