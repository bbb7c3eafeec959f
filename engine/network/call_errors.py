"""Errors raised inside a layer's ``call``, put in the context of that call.

An exception from a user's ``call`` (a raw NumPy message such as a ``matmul``
shape mismatch) is raised again, as Keras does, with the layer's name and the
arguments it received, the original as ``__cause__``: for eager calls, symbolic
calls and each step of a model's plan alike.
"""

import inspect

import numpy as np

from engine.autodiff import Traced, TracingError, untraced
from engine.network.keras_tensor import KerasTensor


def raise_in_call_context(layer, error, inputs, extra_args=(), kwargs=None, note=""):
    """Raises ``error``, which ``layer``'s call raised, again: as the same type
    (``RuntimeError`` when that type cannot be made from a message), with the
    layer's name and the arguments it received (shapes and dtypes of arrays
    and tensors), the original as ``__cause__``, as Keras does.

    Raised unchanged: ``TracingError``, ``StopIteration``, an error that already
    carries a call context (from a layer called inside this one: the innermost
    call names the failure) and our own errors that already name ``layer``.

    Args:
        layer: the layer whose ``call`` (or symbolic call) failed.
        error: the exception it raised.
        inputs, extra_args, kwargs: the call's arguments.
        note: what the call was doing, when not the plain computation.
    """
    if _has_context(error, layer):
        raise error
    received = "\n".join(f"  • {name}={_describe_argument(value)}"
                          for name, value in _named_arguments(layer, inputs, extra_args, kwargs or {}))
    where = f"layer {layer.name!r} ({type(layer).__name__})"
    message = (f"Exception encountered when calling {where}.\n\n{error}\n\n" + (f"{note}\n\n" if note else "")
               + f"Arguments received by {where}:\n{received}")
    try:
        wrapped = type(error)(message)
    except Exception:
        wrapped = RuntimeError(message)
    wrapped._nodeweave_call_context = True
    raise wrapped from error


def _has_context(error, layer):
    if isinstance(error, (TracingError, StopIteration, StopAsyncIteration)):
        return True
    if getattr(error, "_nodeweave_call_context", False):
        return True
    message = str(error)
    if f"'{layer.name}'" in message or f'"{layer.name}"' in message:
        try:  # so that the layers around this one leave it as it is too
            error._nodeweave_call_context = True
        except AttributeError:
            pass
        return True
    return False


def _named_arguments(layer, inputs, extra_args, kwargs):
    """``(parameter name, value)`` for each argument of the call, by ``call``'s signature when it binds."""
    try:
        bound = inspect.signature(layer.call).bind(inputs, *extra_args, **kwargs)
    except (TypeError, ValueError):
        return [("inputs", inputs)] + [(f"args[{i}]", v) for i, v in enumerate(extra_args)] + list(kwargs.items())
    return list(bound.arguments.items())


def _describe_argument(value):
    """Arrays and tensors by shape and dtype, in the structure of ``value``."""
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_describe_argument(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_describe_argument(v)}" for k, v in value.items()) + "}"
    value = untraced(value) if isinstance(value, Traced) else value
    if isinstance(value, KerasTensor):
        return f"KerasTensor(shape={value.shape}, dtype={value.dtype})"
    if isinstance(value, np.ndarray):
        return f"ndarray(shape={value.shape}, dtype={value.dtype})"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
