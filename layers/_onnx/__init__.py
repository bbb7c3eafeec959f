"""The ONNX table: one converter per layer class, beside the layers.

A converter turns one call of a layer into ONNX nodes. It gets the layer and
an ``OnnxCall`` (graph/onnx_export.py) that names the call's inputs and adds
nodes, weights and constants, and returns the name of the output (or the
list of names, in the flat order of the call's outputs). The family modules
(every module of this package, imported at the bottom) fill ``CONVERTERS``; none of them imports ``onnx``.
"""

CONVERTERS = {}


def onnx_converter(*layer_classes):
    """Registers the decorated function as the converter of ``layer_classes``.

    Args:
        *layer_classes: the layer classes it converts.

    Returns:
        The decorator, which returns the function unchanged.

    Example:
        >>> from engine import Layer
        >>> class Twice(Layer):
        ...     def call(self, x):
        ...         return x + x
        >>> @onnx_converter(Twice)
        ... def twice(layer, call):
        ...     return call.op("Add", [call.input, call.input])
        >>> CONVERTERS[Twice] is twice
        True
    """
    def register(function):
        for layer_class in layer_classes:
            register_onnx_converter(layer_class, function)
        return function

    return register


def register_onnx_converter(layer_class, function):
    """Makes ``function(layer, call)`` the ONNX converter of ``layer_class``
    (and of its subclasses that register none of their own).

    ``call`` names the layer call's inputs (``call.input``, ``call.inputs``),
    adds nodes (``call.op(op_type, inputs, **attributes)``), weights
    (``call.weight(variable)``, stored once however often the layer is called)
    and small constants (``call.constant(value)``); the converter returns the
    name of its output. See ``graph.onnx_export.OnnxCall``.

    Args:
        layer_class: a Layer subclass.
        function: ``function(layer, call) -> output name(s)``.

    Raises:
        TypeError: ``layer_class`` is not a class or ``function`` not callable.

    Example:
        >>> import numpy as np
        >>> from engine import Layer
        >>> class Scale(Layer):
        ...     def call(self, x):
        ...         return 3.0 * x
        >>> register_onnx_converter(Scale, lambda layer, call: call.op(
        ...     "Mul", [call.input, call.constant(np.float32(3.0))]))
        >>> converter_for(Scale()) is CONVERTERS[Scale]
        True
    """
    if not isinstance(layer_class, type):
        raise TypeError(f"register_onnx_converter expects a layer class, received {layer_class!r}.")
    if not callable(function):
        raise TypeError(f"The ONNX converter of {layer_class.__name__} must be callable "
                        f"function(layer, call), received {function!r}.")
    CONVERTERS[layer_class] = function


def converter_for(layer):
    """The converter of ``layer``: its class's own, else the nearest base
    class's in its MRO, else None.

    Args:
        layer: a layer instance.

    Example:
        >>> from layers import Dense
        >>> class MyDense(Dense):
        ...     pass
        >>> converter_for(MyDense(2)) is CONVERTERS[Dense]
        True
    """
    for layer_class in type(layer).__mro__:
        function = CONVERTERS.get(layer_class)
        if function is not None:
            return function
    return None


def _import_families():
    """Imports every family module of this package (each registers its converters)."""
    import importlib
    import pkgutil

    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")


_import_families()
