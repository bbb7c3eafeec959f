"""Activation functions, each with its derivative beside it.

Every activation is callable on an array (``relu(x)``) and has
``gradient(x, y, grad_y)``, the gradient with respect to ``x`` given the input
``x``, the output ``y`` and the gradient of the output.
"""

import difflib
import functools
import math

import numpy as np

from layers.convolutional._runs import over_elements

# The activations that do not cost one FLOP per element.
_FLOPS_PER_ELEMENT = {"linear": 0, "softmax": 3, "log_softmax": 3}


class ActivationFunction:
    """A named elementwise (or softmax-like) function with its backward.

    Calling it computes the activation; ``gradient(x, y, grad_y)`` returns the
    gradient with respect to ``x`` given the input, the output and the
    gradient of the output. Keyword arguments (``axis=`` for the softmaxes,
    ``alpha=`` for elu...) go to both.

    Args:
        name: the activation's name (``__name__``), as configs save it.
        forward: ``fn(x, **kwargs)``, the activation.
        gradient: ``fn(x, y, grad_y, **kwargs)``, its backward.
        output_suffices: True, or ``fn(**kwargs) -> bool``, where the gradient
            reads only ``y`` (then ``x`` may be None): a layer applying the
            activation need not keep its input for backward.

    Example:
        >>> import numpy as np
        >>> x = np.array([-1.0, 2.0], "float32")
        >>> relu(x), relu.gradient(x, relu(x), np.ones_like(x))
        (array([0., 2.], dtype=float32), array([0., 1.], dtype=float32))
        >>> cube = ActivationFunction("cube", lambda x: x ** 3, lambda x, y, g: 3 * x ** 2 * g)
        >>> cube(x)
        array([-1.,  8.], dtype=float32)
    """

    def __init__(self, name, forward, gradient, output_suffices=False):
        self.__name__ = name
        self._forward = forward
        self._gradient = gradient
        self._output_suffices = output_suffices

    def __call__(self, x, **kwargs):
        """Applies the activation.

        Args:
            x: an array.
            **kwargs: the activation's options (``axis=`` for softmax...).

        Example:
            >>> import numpy as np
            >>> softmax(np.array([[0.0, 0.0]], "float32"))
            array([[0.5, 0.5]], dtype=float32)
        """
        return self._forward(x, **kwargs)

    def gradient(self, x, y, grad_y, **kwargs):
        """The gradient with respect to ``x``.

        Args:
            x: the input.
            y: the output the activation gave for it.
            grad_y: the gradient with respect to ``y``.
            **kwargs: the options the activation was applied with.

        Example:
            >>> import numpy as np
            >>> x = np.array([0.0], "float32")
            >>> sigmoid.gradient(x, sigmoid(x), np.ones_like(x))
            array([0.25], dtype=float32)
        """
        return self._gradient(x, y, grad_y, **kwargs)

    def gradient_reads_input(self, **kwargs):
        """Whether ``gradient`` needs the input ``x`` with these options; not where
        the output determines the gradient (sigmoid, tanh, linear, the plain relu).

        Args:
            **kwargs: the options the activation is applied with.

        Example:
            >>> relu.gradient_reads_input(), relu.gradient_reads_input(negative_slope=0.1), gelu.gradient_reads_input()
            (False, True, True)
        """
        suffices = self._output_suffices
        return not (suffices(**kwargs) if callable(suffices) else suffices)

    def flops(self, size):
        """FLOPs of applying it to ``size`` elements: 1 each (an exp or a tanh
        counts as one), none for linear, 3 for the softmaxes (exp, sum, divide).

        Args:
            size: the number of elements.

        Example:
            >>> relu.flops(10), linear.flops(10), softmax.flops(10)
            (10, 0, 30)
        """
        return size * _FLOPS_PER_ELEMENT.get(self.__name__, 1)

    def __repr__(self):
        return f"<activation {self.__name__}>"


def _relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    # Keras 3: the part above `threshold` (clipped to [0, max_value]) minus
    # `negative_slope` times the distance below it.
    if not negative_slope and max_value is None and not threshold and type(x) is np.ndarray and x.dtype.kind == "f":
        return over_elements(_positive_part, x)  # the plain relu, on the hot path of every CNN (a tape traces others)
    y = np.where(x > threshold, x, 0) if threshold else np.maximum(x, 0)
    if max_value is not None:
        y = np.clip(y, 0, max_value)
    if negative_slope:
        y = y - negative_slope * np.maximum(threshold - x, 0)
    return y.astype(x.dtype, copy=False)


def _plain_relu(negative_slope=0.0, max_value=None, threshold=0.0):
    """Whether the relu with these options is max(x, 0), whose output is positive exactly where its input is."""
    return not negative_slope and max_value is None and not threshold


def _relu_grad(x, y, g, negative_slope=0.0, max_value=None, threshold=0.0):
    if _plain_relu(negative_slope, max_value, threshold):  # read from y: the layer may not have kept x
        if type(g) is np.ndarray and type(y) is np.ndarray and g.shape == y.shape and g.dtype.kind == "f":
            return over_elements(_where_positive, g, y)
        return g * (y > 0)
    active = x > threshold
    if max_value is not None:
        active &= (x > 0) & (x < max_value)
    slope = np.where(x < threshold, negative_slope, active.astype(g.dtype))
    return g * slope


def _positive_part(x, out):
    return np.maximum(x, 0, out=out)


def _where_positive(g, y, out):
    return np.multiply(g, y > 0, out=out)


def _leaky_relu(x, negative_slope=0.2):
    # Keras 3 (jax.nn): where(x >= 0, x, negative_slope * x). For float arrays and a positive slope, the
    # larger of x and negative_slope * x (the smaller for slopes above 1): the same values, 10x faster
    # (a where over a random sign pattern mispredicts half its branches).
    if type(x) is np.ndarray and x.dtype.kind == "f" and negative_slope > 0:
        pick = np.maximum if negative_slope <= 1 else np.minimum
        return over_elements(lambda a, out: pick(a, np.multiply(a, negative_slope, out=out), out=out), x)
    return np.where(x >= 0, x, negative_slope * x).astype(x.dtype, copy=False)


def _leaky_relu_grad(x, y, g, negative_slope=0.2):
    if type(g) is np.ndarray and type(x) is np.ndarray and g.shape == x.shape and g.dtype.kind == "f":
        return over_elements(functools.partial(_times_slope, negative_slope=negative_slope), g, x)
    return g * np.where(x >= 0, 1.0, negative_slope).astype(x.dtype)


def _times_slope(g, x, out, negative_slope):
    """``g`` times 1 where ``x >= 0``, else ``negative_slope``, into ``out``. The factor's bits are
    picked by integer arithmetic (slope's bits plus, where ``x >= 0``, the difference to 1's): exact,
    and 5x faster than a where over a random sign pattern, which mispredicts half its branches."""
    bits = np.dtype(f"u{g.itemsize}")
    slope, one = (int(np.array(v, g.dtype).view(bits)) for v in (negative_slope, 1))
    factor = out.view(bits)  # made in place of the result: no temporary the size of g
    np.multiply((x >= 0).view(np.uint8), np.array((one - slope) % (1 << 8 * g.itemsize), bits), out=factor)
    factor += np.array(slope, bits)
    return np.multiply(g, out, out=out)


def _sigmoid(x):
    return (0.5 * (np.tanh(0.5 * x) + 1.0)).astype(x.dtype, copy=False)


def _hard_sigmoid(x):
    # Keras 3 (jax.nn): relu6(x + 3) / 6, the division done as XLA compiles it (times 1/6), so that
    # values match Keras' bit for bit.
    return (np.minimum(np.maximum(x + 3.0, 0.0), 6.0) * (1.0 / 6.0)).astype(x.dtype, copy=False)


def _hard_silu(x):
    return x * _hard_sigmoid(x)


def _hard_silu_grad(x, y, g):
    # d/dx x * relu6(x + 3) / 6 = hard_sigmoid(x) + x / 6 inside (-3, 3), with relu6's zero slope at its kinks.
    inside = ((x > -3.0) & (x < 3.0)).astype(x.dtype)
    return g * (_hard_sigmoid(x) + inside * x / 6.0)


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


# W. J. Cody's rational approximations (Math. Comp. 23, 1969, pp. 631-638), as in
# netlib's CALERF: erf on |x| <= 0.46875, erfc on (0.46875, 4] and beyond 4.
# Coefficients are highest degree first, for np.polyval.
_ERF_SMALL_NUM = (1.85777706184603153e-1, 3.16112374387056560e00, 1.13864154151050156e02,
                  3.77485237685302021e02, 3.20937758913846947e03)
_ERF_SMALL_DEN = (1.0, 2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
                  2.84423683343917062e03)
_ERFC_MID_NUM = (2.15311535474403846e-8, 5.64188496988670089e-1, 8.88314979438837594e00,
                 6.61191906371416295e01, 2.98635138197400131e02, 8.81952221241769090e02,
                 1.71204761263407058e03, 2.05107837782607147e03, 1.23033935479799725e03)
_ERFC_MID_DEN = (1.0, 1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
                 1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
                 3.43936767414372164e03, 1.23033935480374942e03)
_ERFC_TAIL_NUM = (1.63153871373020978e-2, 3.05326634961232344e-1, 3.60344899949804439e-1,
                  1.25781726111229246e-1, 1.60837851487422766e-2, 6.58749161529837803e-4)
_ERFC_TAIL_DEN = (1.0, 2.56852019228982242e00, 1.87295284992346047e00, 5.27905102951428412e-1,
                  6.05183413124413191e-2, 2.33520497626869185e-3)


def _erf(x):
    """Error function, elementwise, accurate to about 1e-16 (computed in float64)."""
    z = np.asarray(x, dtype=np.float64)
    y = np.abs(z)
    out = np.empty_like(y)
    small = y <= 0.46875
    t = y[small] ** 2
    out[small] = z[small] * np.polyval(_ERF_SMALL_NUM, t) / np.polyval(_ERF_SMALL_DEN, t)
    rest = ~small  # NaNs included, so that they propagate
    out[rest] = np.copysign(1.0 - _erfc_above_half(y[rest]), z[rest])
    return out.astype(np.result_type(x), copy=False)


def _erfc_above_half(y):
    """erfc(y) for y > 0.46875 (inf and NaN included)."""
    y = np.minimum(y, 27.0)  # erfc underflows to 0 beyond 26.55
    ratio = np.empty_like(y)
    mid = y <= 4.0
    ratio[mid] = np.polyval(_ERFC_MID_NUM, y[mid]) / np.polyval(_ERFC_MID_DEN, y[mid])
    tail = ~mid
    w = 1.0 / y[tail] ** 2
    correction = w * np.polyval(_ERFC_TAIL_NUM, w) / np.polyval(_ERFC_TAIL_DEN, w)
    ratio[tail] = (1.0 / math.sqrt(math.pi) - correction) / y[tail]
    # exp(-y*y) as exp(-r*r) * exp(-(y-r)(y+r)), r = y rounded down to a multiple of 1/16,
    # so that the rounding error of y*y is not magnified by the exponential.
    r = np.trunc(16.0 * y) / 16.0
    return np.exp(-r * r) * np.exp(-(y - r) * (y + r)) * ratio


def _softplus(x):
    return np.logaddexp(0.0, x).astype(x.dtype, copy=False)


_SPECS = {
    "relu": (_relu, _relu_grad),
    "leaky_relu": (_leaky_relu, _leaky_relu_grad),
    "elu": (_elu, _elu_grad),
    "selu": (
        lambda x: (_SELU_SCALE * _elu(x, _SELU_ALPHA)).astype(x.dtype, copy=False),
        lambda x, y, g: g * np.where(x > 0, _SELU_SCALE, y + _SELU_SCALE * _SELU_ALPHA).astype(x.dtype),
    ),
    "gelu": (_gelu, _gelu_grad),
    "sigmoid": (_sigmoid, lambda x, y, g: g * y * (1.0 - y)),
    "hard_sigmoid": (_hard_sigmoid, lambda x, y, g: g * ((x > -3.0) & (x < 3.0)).astype(x.dtype) / 6.0),
    "hard_silu": (_hard_silu, _hard_silu_grad),
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

# The activations whose gradient the output determines (with these options).
_OUTPUT_SUFFICES = {"relu": _plain_relu, "sigmoid": True, "tanh": True, "linear": True}
_REGISTRY = {name: ActivationFunction(name, f, grad, _OUTPUT_SUFFICES.get(name, False))
             for name, (f, grad) in _SPECS.items()}
_REGISTRY["swish"] = _REGISTRY["silu"]
_REGISTRY["hard_swish"] = _REGISTRY["hard_silu"]

relu = _REGISTRY["relu"]
leaky_relu = _REGISTRY["leaky_relu"]
elu = _REGISTRY["elu"]
selu = _REGISTRY["selu"]
gelu = _REGISTRY["gelu"]
sigmoid = _REGISTRY["sigmoid"]
hard_sigmoid = _REGISTRY["hard_sigmoid"]
hard_silu = hard_swish = _REGISTRY["hard_silu"]
tanh = _REGISTRY["tanh"]
softmax = _REGISTRY["softmax"]
log_softmax = _REGISTRY["log_softmax"]
softplus = _REGISTRY["softplus"]
softsign = _REGISTRY["softsign"]
silu = swish = _REGISTRY["silu"]
linear = _REGISTRY["linear"]


def get(identifier):
    """Returns the activation for a name, an ActivationFunction, or None (linear).

    Args:
        identifier: a name (``"relu"``), an ActivationFunction, or None.

    Returns:
        The ActivationFunction.

    Raises:
        ValueError: an unknown name (with "Did you mean" the closest one).
        TypeError: a plain callable, which has no backward.

    Example:
        >>> get("relu") is relu, get(None).__name__
        (True, 'linear')
    """
    if identifier is None:
        return linear
    if isinstance(identifier, ActivationFunction):
        return identifier
    if isinstance(identifier, str):
        if identifier not in _REGISTRY:
            close = difflib.get_close_matches(identifier, _REGISTRY, n=1)
            raise ValueError(
                f"Unknown activation: {identifier!r}." + (f" Did you mean {close[0]!r}?" if close else "")
                + f" Known activations: {', '.join(sorted(_REGISTRY))}."
            )
        return _REGISTRY[identifier]
    raise TypeError(
        f"Could not interpret activation {identifier!r}: expected a name such as 'relu' or a "
        "function from layers.activations (a plain callable has no backward)."
    )


def serialize(activation):
    """The name configs save an activation by.

    Args:
        activation: an ActivationFunction.

    Returns:
        Its name, which ``get`` turns back into it.

    Example:
        >>> serialize(get("gelu"))
        'gelu'
    """
    return activation.__name__
