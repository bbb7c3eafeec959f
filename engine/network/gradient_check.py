"""Checks a layer's or model's backward pass against central finite differences.

Caffe's GradientChecker, for NumPy layers: in float64, the analytic gradients of
the scalar ``sum(outputs * R)`` (R a fixed random projection) with respect to
every floating input and every trainable weight are compared with
``(L(w + h) - L(w - h)) / 2h`` element by element.
"""

import numpy as np

from engine import tree
from engine.dtypes import keeping_float64
from engine.network.bound_arguments import BoundArguments


class GradientCheckReport:
    """The relative error of each checked gradient, by name (``input 0``, ``dense/kernel``).

    The relative error of a tensor is ``||analytic - numeric|| / max(||analytic||, ||numeric||, 1)``
    over the elements checked: relative for gradients of norm above 1, absolute
    below (Caffe's GradientChecker scale), so a gradient that is truly zero does
    not read as a relative error of 1.
    """

    def __init__(self, errors):
        self.errors = errors

    @property
    def max_error(self):
        return max(self.errors.values(), default=0.0)

    def __str__(self):
        width = max((len(name) for name in self.errors), default=4)
        lines = [f"{'gradient':<{width}}  relative error"]
        lines += [f"{name:<{width}}  {error:.3e}" for name, error in self.errors.items()]
        return "\n".join(lines)


def gradient_check(layer, inputs, training=False, epsilon=1e-6, samples=None, seed=0, call_kwargs=None):
    """Compares ``layer.backward`` with finite differences; returns a GradientCheckReport.

    Args:
        layer: any Layer or Model with ``forward`` and ``backward`` (a user's own included).
        inputs: the inputs, as the layer would be called with them.
        call_kwargs: further arguments of the call, by name, such as attention's
            ``value`` or an RNN's ``initial_state``; their floating arrays are
            checked too.
        training: the ``training`` flag of the forward passes.
        epsilon: the finite-difference step.
        samples: check only this many randomly chosen elements per tensor (all when None).
        seed: seed of the projection and of the element sampling.

    Example:
        >>> import numpy as np
        >>> from layers import Dense
        >>> report = gradient_check(Dense(3, activation="tanh"), np.random.rand(4, 2))
        >>> report.max_error < 1e-6
        True
    """
    inputs = tree.map_structure(np.asarray, inputs)
    call_kwargs = dict(call_kwargs or {})
    if not layer.built:
        layer(inputs, **call_kwargs)
    inputs, call_kwargs = tree.map_structure(_as_float64, (inputs, call_kwargs))
    weights = layer.trainable_weights
    originals = [(v, v.value) for v in layer.weights]
    rng = np.random.default_rng(seed)
    with keeping_float64():  # a model keeps the float64 inputs too
        try:
            for variable, value in originals:
                if value.dtype.kind == "f":
                    variable.value = np.array(value, np.float64, order="C")
            outputs, cache = layer.forward(inputs, training=training, **call_kwargs)
            projections = [rng.standard_normal(np.shape(o)) for o in tree.flatten(outputs)]
            grad_outputs = tree.pack_as(outputs, projections)
            grad_inputs, grad_weights = layer.backward(cache, grad_outputs)

            def loss():
                out, _ = layer.forward(inputs, training=training, **call_kwargs)
                return sum(float(np.sum(o * r)) for o, r in zip(tree.flatten(out), projections))

            errors = {}
            bound = BoundArguments(layer, (inputs,), call_kwargs, _is_array)
            flat_grads = iter(bound.route(layer, grad_inputs))
            for name, value in bound.arguments.items():
                arrays = [x for x in tree.flatten(value) if _is_array(x)]
                label = "input" if name == bound.first else name
                for index, x in enumerate(arrays):
                    grad = next(flat_grads)
                    if x.dtype.kind == "f":
                        key = label if label != "input" and len(arrays) == 1 else f"{label} {index}"
                        errors[key] = _compare(x, grad, loss, epsilon, samples, rng, key)
            for variable in weights:
                if variable not in grad_weights:
                    raise ValueError(
                        f"{type(layer).__name__} {layer.name!r}: backward returned no gradient for the "
                        f"trainable weight {variable.path!r}."
                    )
                errors[variable.path] = _compare(
                    variable.value, grad_weights[variable], loss, epsilon, samples, rng, variable.path
                )
            return GradientCheckReport(errors)
        finally:
            for variable, value in originals:
                variable.value = value


def _is_array(value):
    return isinstance(value, np.ndarray)


def _as_float64(value):
    """A C-ordered float64 copy of a floating array (other values as they are)."""
    return np.array(value, np.float64, order="C") if _is_array(value) and value.dtype.kind == "f" else value


def _compare(array, analytic, loss, epsilon, samples, rng, name):
    if analytic is None or np.shape(analytic) != array.shape:
        raise ValueError(
            f"Gradient of {name} has shape {np.shape(analytic) if analytic is not None else None}, "
            f"expected {array.shape}."
        )
    flat = array.reshape(-1)  # a view: perturbing it perturbs the array the layer reads
    indices = np.arange(flat.size)
    if samples is not None and samples < flat.size:
        indices = rng.choice(flat.size, size=samples, replace=False)
    numeric = np.empty(len(indices))
    for position, index in enumerate(indices):
        saved = flat[index]
        flat[index] = saved + epsilon
        upper = loss()
        flat[index] = saved - epsilon
        lower = loss()
        flat[index] = saved
        numeric[position] = (upper - lower) / (2 * epsilon)
    analytic = np.asarray(analytic, dtype=np.float64).reshape(-1)[indices]
    # Caffe's GradientChecker scale: a gradient smaller than 1 is judged by its
    # absolute error, so one that is truly zero (only rounding noise on both
    # sides) does not read as a relative error of 1.
    scale = max(np.linalg.norm(analytic), np.linalg.norm(numeric), 1.0)
    return float(np.linalg.norm(analytic - numeric) / scale)
