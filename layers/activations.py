"""Activation functions, each with its derivative beside it.

Every activation is callable on an array (``relu(x)``) and has
``gradient(x, y, grad_y)``, the gradient with respect to ``x`` given the input
``x``, the output ``y`` and the gradient of the output.
"""

import math

import numpy as np


class ActivationFunction:
    """A named elementwise (or softmax-like) function with its backward."""

    def __init__(self, name, forward, gradient):
        self.__name__ = name
        self._forward = forward
        self._gradient = gradient

    def __call__(self, x, **kwargs):
        return self._forward(x, **kwargs)

    def gradient(self, x, y, grad_y, **kwargs):
        return self._gradient(x, y, grad_y, **kwargs)

    def __repr__(self):
        return f"<activation {self.__name__}>"


def _relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    y = np.where(x >= threshold, x, negative_slope * (x - threshold)) if (negative_slope or threshold) else np.maximum(x, 0)
    if max_value is not None:
        y = np.minimum(y, max_value)
    return y.astype(x.dtype, copy=False)


def _relu_grad(x, y, g, negative_slope=0.0, max_value=None, threshold=0.0):
    slope = np.where(x >= threshold, 1.0, negative_slope).astype(x.dtype)
    if max_value is not None:
        slope = np.where(x >= max_value, 0.0, slope).astype(x.dtype)
    return g * slope


def _sigmoid(x):
    return (0.5 * (np.tanh(0.5 * x) + 1.0)).astype(x.dtype, copy=False)


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _softmax_grad(x, y, g, axis=-1):
    return y * (g - (g * y).sum(axis=axis, keepdims=True))


def _log_softmax(x, axis=-1):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def _log_softmax_grad(x, y, g, axis=-1):
    return g - np.exp(y) * g.sum(axis=axis, keepdims=True)


def _elu(x, alpha=1.0):
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0))).astype(x.dtype, copy=False)


def _elu_grad(x, y, g, alpha=1.0):
    return g * np.where(x > 0, 1.0, y + alpha).astype(x.dtype)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _gelu(x, approximate=False):
    if approximate:
        c = math.sqrt(2.0 / math.pi)
        return 0.5 * x * (1.0 + np.tanh(c * (x + 0.044715 * x**3)))
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def _gelu_grad(x, y, g, approximate=False):
    if approximate:
        c = math.sqrt(2.0 / math.pi)
        t = np.tanh(c * (x + 0.044715 * x**3))
        return g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * c * (1.0 + 3 * 0.044715 * x * x))
    cdf = 0.5 * (1.0 + _erf(x / math.sqrt(2.0)))
    pdf = np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
    return g * (cdf + x * pdf)


def _erf(x):
    """Error function, elementwise (NumPy has none; math.erf is scalar)."""
    return np.vectorize(math.erf, otypes=[x.dtype])(x) if x.size else x.copy()


def _softplus(x):
    return np.logaddexp(0.0, x).astype(x.dtype, copy=False)


_SPECS = {
    "relu": (_relu, _relu_grad),
    "leaky_relu": (
        lambda x, negative_slope=0.2: np.where(x >= 0, x, negative_slope * x).astype(x.dtype, copy=False),
        lambda x, y, g, negative_slope=0.2: g * np.where(x >= 0, 1.0, negative_slope).astype(x.dtype),
    ),
    "elu": (_elu, _elu_grad),
    "selu": (
        lambda x: (_SELU_SCALE * _elu(x, _SELU_ALPHA)).astype(x.dtype, copy=False),
        lambda x, y, g: g * np.where(x > 0, _SELU_SCALE, y + _SELU_SCALE * _SELU_ALPHA).astype(x.dtype),
    ),
    "gelu": (_gelu, _gelu_grad),
    "sigmoid": (_sigmoid, lambda x, y, g: g * y * (1.0 - y)),
    "hard_sigmoid": (
        lambda x: np.clip(x / 6.0 + 0.5, 0.0, 1.0).astype(x.dtype, copy=False),
        lambda x, y, g: g * ((x > -3.0) & (x < 3.0)).astype(x.dtype) / 6.0,
    ),
    "tanh": (np.tanh, lambda x, y, g: g * (1.0 - y * y)),
    "softmax": (_softmax, _softmax_grad),
    "log_softmax": (_log_softmax, _log_softmax_grad),
    "softplus": (_softplus, lambda x, y, g: g * _sigmoid(x)),
    "softsign": (lambda x: x / (1.0 + np.abs(x)), lambda x, y, g: g / (1.0 + np.abs(x)) ** 2),
    "silu": (
        lambda x: x * _sigmoid(x),
        lambda x, y, g: g * (_sigmoid(x) * (1.0 + x * (1.0 - _sigmoid(x)))),
    ),
    "linear": (lambda x: x, lambda x, y, g: g),
}

_REGISTRY = {name: ActivationFunction(name, f, grad) for name, (f, grad) in _SPECS.items()}
_REGISTRY["swish"] = _REGISTRY["silu"]

relu = _REGISTRY["relu"]
leaky_relu = _REGISTRY["leaky_relu"]
elu = _REGISTRY["elu"]
selu = _REGISTRY["selu"]
gelu = _REGISTRY["gelu"]
sigmoid = _REGISTRY["sigmoid"]
hard_sigmoid = _REGISTRY["hard_sigmoid"]
tanh = _REGISTRY["tanh"]
softmax = _REGISTRY["softmax"]
log_softmax = _REGISTRY["log_softmax"]
softplus = _REGISTRY["softplus"]
softsign = _REGISTRY["softsign"]
silu = swish = _REGISTRY["silu"]
linear = _REGISTRY["linear"]


def get(identifier):
    """Returns the activation for a name, an ActivationFunction, or None (linear)."""
    if identifier is None:
        return linear
    if isinstance(identifier, ActivationFunction):
        return identifier
    if isinstance(identifier, str):
        if identifier not in _REGISTRY:
            raise ValueError(
                f"Unknown activation: {identifier!r}. Known activations: {', '.join(sorted(_REGISTRY))}."
            )
        return _REGISTRY[identifier]
    raise TypeError(
        f"Could not interpret activation {identifier!r}: expected a name such as 'relu' or a "
        "function from layers.activations (a plain callable has no backward)."
    )


def serialize(activation):
    return activation.__name__
