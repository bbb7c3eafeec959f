"""A call's arguments bound once to the parameters of the layer's ``call``.

A layer is called as ``layer(inputs, *args, **kwargs)`` and tensors may sit in
any argument, in any structure: attention's ``value`` and ``key``, an RNN's
``initial_state=(h0, c0)``, a dict of tensors. ``BoundArguments`` binds them
to ``call``'s parameter names when the call is recorded (Keras'
``SymbolicArguments``) and keeps, per parameter, its structure and its tensor
slots (indices into the flat list of the call's tensors, a Node's
``input_tensors``). Everything that needs the call's shape reads it here: the
plan fills arrays in (``fill_in``), masks find the first argument's tensors
and the ``<argument>_mask`` parameters, and ``backward``'s gradients are
routed to the tensor slots with each argument's structure compared to the
structure of its gradient (as JAX's ``custom_vjp`` compares pytrees).
"""

import functools

from engine import tree
from engine.network.argument_gradients import ArgumentGradients, call_parameter_names, first_argument_name
from engine.network.call_keywords import mask_parameters
from engine.network.keras_tensor import KerasTensor


def _is_keras_tensor(value):
    return isinstance(value, KerasTensor)


def bind(layer, args, kwargs):
    """The call's arguments as ``{parameter name: value}``, in the flattened
    order of ``(args, kwargs)`` (the order of a Node's ``input_tensors``).

    Positional arguments past ``call``'s named parameters (a ``*args``) are
    named ``argument <i>``.

    Example:
        >>> from layers import LSTM
        >>> sorted(bind(LSTM(2), ("x", ["h", "c"]), {}).items())
        [('initial_state', ['h', 'c']), ('inputs', 'x')]
    """
    names = call_parameter_names(type(layer))
    named = {names[i] if i < len(names) else f"argument {i}": value for i, value in enumerate(args)}
    if kwargs:
        named.update(sorted(kwargs.items()))
    return named


class BoundArguments:
    """A call's ``args`` and ``kwargs`` bound to ``call``'s parameters, made once per recorded call.

    Args:
        layer: the layer called.
        args: the call's positional arguments.
        kwargs: its keyword arguments.
        is_tensor: which leaves are the call's tensors (KerasTensors by
            default; arrays for an eager call).

    Attributes:
        args, kwargs: the call's arguments, tensors in place.
        arguments: ``{parameter name: value}`` in the flattened order of the call.
        tensors: the tensors among the arguments, flattened (a Node's ``input_tensors``).
        slots: ``{parameter name: range of indices into tensors}``.
        first: the name of the first argument's parameter (``inputs``, ``query``...).
        single: whether the call is one tensor and nothing else (the fast path).
        structure: the call's shape, tensors replaced by a marker: equal for
            calls that bind the same parameters in the same structures.

    Example:
        >>> from engine import Input
        >>> from layers import LSTM
        >>> x, h, c = Input((5, 3)), Input((2,)), Input((2,))
        >>> bound = BoundArguments(LSTM(2), (x,), {"initial_state": (h, c)})
        >>> bound.first, bound.slots, bound.single
        ('inputs', {'inputs': range(0, 1), 'initial_state': range(1, 3)}, False)
        >>> bound.tensors == [x, h, c]
        True
    """

    __slots__ = ("args", "kwargs", "_arguments", "tensors", "_slots", "first", "single", "structure",
                 "_is_tensor", "_leaves", "_positions", "_listed")

    def __init__(self, layer, args, kwargs, is_tensor=_is_keras_tensor):
        self.args, self.kwargs, self._is_tensor = args, kwargs, is_tensor
        self.first = first_argument_name(layer)
        if len(args) == 1 and not kwargs and is_tensor(args[0]):
            self._bind_one()
            return
        self.single = False
        # A list of tensors and nothing else (Add, Concatenate): filled in without packing.
        self._listed = (len(args) == 1 and not kwargs and type(args[0]) is list
                        and all(is_tensor(t) for t in args[0]))
        self._arguments = bind(layer, args, kwargs)
        if args:
            self.first = next(iter(self._arguments))
        self._leaves = tree.flatten((args, kwargs))
        self._positions = [i for i, leaf in enumerate(self._leaves) if is_tensor(leaf)]
        self.tensors = [self._leaves[i] for i in self._positions]
        self._slots, start = {}, 0
        for name, value in self._arguments.items():
            count = sum(1 for leaf in tree.flatten(value) if is_tensor(leaf))
            self._slots[name] = range(start, start + count)
            start += count
        self.structure = tuple((name, _shape_of(value, is_tensor)) for name, value in self._arguments.items())

    def _bind_one(self):
        """The fast path, for a call on one tensor: what other calls need is made on first use."""
        self.single = True
        self.tensors = [self.args[0]]
        self.structure = _SINGLE_STRUCTURE
        self._arguments = self._slots = self._leaves = self._positions = self._listed = None

    @property
    def arguments(self):
        """``{parameter name: value}`` in the flattened order of the call."""
        if self._arguments is None:
            self._arguments = {self.first: self.args[0]}
        return self._arguments

    @property
    def slots(self):
        """``{parameter name: range of indices into tensors}``."""
        if self._slots is None:
            self._slots = {self.first: range(1)}
        return self._slots

    def __repr__(self):
        shown = ", ".join(f"{name}={self._describe(value)}" for name, value in self.arguments.items())
        return f"BoundArguments({shown})"

    def _describe(self, value):
        return _describe(value, lambda leaf: "tensor" if self._is_tensor(leaf) else repr(leaf))

    def fill_in(self, values, slots):
        """Returns ``(inputs, extra_args, kwargs)``: the call with
        ``values[slots[i]]`` in place of tensor ``i``.

        Example:
            >>> from engine import Input
            >>> from layers import Dense
            >>> BoundArguments(Dense(2), ([Input((3,)), Input((3,))],), {}).fill_in(["a", "b"], [1, 0])
            (['b', 'a'], (), {})
        """
        if self.single:
            return values[slots[0]], (), {}
        if self._listed:
            return [values[s] for s in slots], (), {}
        leaves = list(self._leaves)
        for position, slot in zip(self._positions, slots):
            leaves[position] = values[slot]
        args, kwargs = tree.pack_as((self.args, self.kwargs), leaves)
        return args[0], tuple(args[1:]), kwargs

    def first_tensors(self):
        """(The indices of the first argument's tensors, whether it is one tensor): whose mask the layer gets."""
        return self.slots.get(self.first, range(0)), self.single or self._is_tensor(self.arguments.get(self.first))

    def argument_masks(self, layer_type):
        """``(<argument>_mask, indices of the argument's tensors, whether it is one tensor)`` for
        each argument with tensors whose mask ``layer_type.call`` takes by that name (as Keras)."""
        parameters = mask_parameters(layer_type)
        if not parameters:
            return []
        return [(f"{name}_mask", self.slots[name], self._is_tensor(value))
                for name, value in self.arguments.items() if self.slots[name] and f"{name}_mask" in parameters]

    def argument_of(self, index):
        """The parameter tensor ``index`` feeds, with its position when the argument holds several."""
        for name, indices in self.slots.items():
            if index in indices:
                return name if self._is_tensor(self.arguments[name]) else f"{name}[{index - indices.start}]"
        raise IndexError(f"The call has {len(self.tensors)} tensors, not {index + 1}.")

    def route(self, layer, grad_inputs):
        """One gradient (None where none) per tensor, in the order of ``tensors``,
        from what ``layer.backward`` returned: the first argument's gradients in
        its structure, or ``ArgumentGradients`` by parameter name.

        Raises:
            ValueError: gradients for an argument the call did not receive, or
                whose structure is not the argument's.

        Example:
            >>> import numpy as np
            >>> from engine import Input
            >>> from layers import LSTM
            >>> lstm = LSTM(2, name="lstm")
            >>> bound = BoundArguments(lstm, (Input((5, 3)),), {"initial_state": [Input((2,)), Input((2,))]})
            >>> g = np.zeros((1, 2))
            >>> len(bound.route(lstm, ArgumentGradients(inputs=g, initial_state=[g, g])))
            3
            >>> bound.route(lstm, ArgumentGradients(inputs=g, initial_state=g))
            Traceback (most recent call last):
            ...
            ValueError: backward() of layer 'lstm' (LSTM) returned 1 gradient for its argument 'initial_state', which holds 2 tensors: expected the structure [tensor, tensor], received array. Return the gradients of 'initial_state' in its structure (None for a tensor without gradient).
            >>> bound.route(lstm, ArgumentGradients(inputs=g, initial_state={"h": g, "c": g}))
            Traceback (most recent call last):
            ...
            ValueError: backward() of layer 'lstm' (LSTM) returned the gradients of its argument 'initial_state' in another structure than the argument's: expected the structure [tensor, tensor], received {'c': array, 'h': array}. Return the gradients of 'initial_state' in its structure (None for a tensor without gradient).
        """
        if isinstance(grad_inputs, ArgumentGradients):
            unknown = sorted(set(grad_inputs) - set(self.arguments))
            if unknown:
                raise ValueError(
                    f"backward() of layer {layer.name!r} ({type(layer).__name__}) returned gradients for "
                    f"{unknown}, which this call did not receive. Its arguments were {list(self.arguments)}; key "
                    "ArgumentGradients by the names of call()'s parameters."
                )
            by_name = grad_inputs
        else:
            by_name = {self.first: grad_inputs}
        routed = []
        for name, value in self.arguments.items():
            count = len(self.slots[name])
            if not count:
                continue
            grad = by_name.get(name)
            if grad is None:
                routed.extend([None] * count)
            elif not _gather_gradients(value, grad, self._is_tensor, routed):
                received = len(tree.flatten(grad))
                what = (f"{received} gradient{'s' if received != 1 else ''} for its argument {name!r}, which holds "
                        f"{count} tensor{'s' if count != 1 else ''}" if received != count else
                        f"the gradients of its argument {name!r} in another structure than the argument's")
                raise ValueError(
                    f"backward() of layer {layer.name!r} ({type(layer).__name__}) returned {what}: "
                    f"expected the structure {self._describe(value)}, received {_describe(grad, _array_name)}. "
                    f"Return the gradients of {name!r} in its structure (None for a tensor without gradient)"
                    + ("." if isinstance(grad_inputs, ArgumentGradients) else
                       "; for tensors in other arguments, return ArgumentGradients(name=gradients, ...) keyed by "
                       "call()'s parameter names.")
                )
        return routed


_SINGLE_STRUCTURE = (("", "tensor"),)


class _Marker:
    """Stands for the tensor of the calls that share a ``one_tensor_call``."""

    def __repr__(self):
        return "<the call's tensor>"


_MARKER = _Marker()


def _is_marker(leaf):
    return leaf is _MARKER


@functools.lru_cache(maxsize=None)
def one_tensor_call(first):
    """The ``BoundArguments`` of a call on one tensor by parameter ``first``, shared by all such calls: a plan's
    step reads from it what it reads from any call's (``fill_in``, ``route``, the masks' slots), which does
    not depend on the tensor (a marker stands for it), so such a Node makes none of its own.

    Example:
        >>> call = one_tensor_call("inputs")
        >>> call is one_tensor_call("inputs"), call.single, call.fill_in(["a", "b"], (1,))
        (True, True, ('b', (), {}))
    """
    bound = BoundArguments.__new__(BoundArguments)
    bound.args, bound.kwargs, bound._is_tensor, bound.first = (_MARKER,), {}, _is_marker, first
    bound._bind_one()
    return bound


def gradients_as_given(given, grads):
    """``backward``'s input gradients in the structure of the arguments as
    ``forward`` received them: ``given`` maps parameter names to those
    arguments (None for one not given), ``grads`` holds one gradient per
    array among them, in order. The first argument's gradients alone when
    it is the only argument given, else ``ArgumentGradients``.

    Example:
        >>> gradients_as_given({"inputs": "x", "initial_state": ("h", "c")}, [1, 2, 3])
        ArgumentGradients({'inputs': 1, 'initial_state': (2, 3)})
        >>> gradients_as_given({"inputs": ["x", "h"], "initial_state": None}, [1, 2])
        [1, 2]
    """
    grads = iter(grads)
    packed = {name: tree.pack_as(value, [next(grads) for _ in tree.flatten(value)])
              for name, value in given.items() if value is not None}
    if len(packed) == 1:
        return next(iter(packed.values()))
    return ArgumentGradients(packed)


def _gather_gradients(value, grad, is_tensor, out):
    """Appends to ``out`` the gradients of the tensors in ``value`` from ``grad``; False when
    ``grad``'s structure is not ``value``'s (lists and tuples are both sequences)."""
    if is_tensor(value):
        if isinstance(grad, (list, tuple, dict)):
            return False
        out.append(grad)
        return True
    if isinstance(value, (list, tuple)):
        if grad is None:
            out.extend(None for leaf in tree.flatten(value) if is_tensor(leaf))
            return True
        if not isinstance(grad, (list, tuple)) or len(grad) != len(value):
            return False
        return all(_gather_gradients(v, g, is_tensor, out) for v, g in zip(value, grad))
    if isinstance(value, dict):
        if grad is None:
            out.extend(None for leaf in tree.flatten(value) if is_tensor(leaf))
            return True
        if not isinstance(grad, dict) or set(grad) != set(value):
            return False
        return all(_gather_gradients(value[k], grad[k], is_tensor, out) for k in sorted(value))
    return True  # not a tensor: its gradient, if any, goes nowhere


def _array_name(leaf):
    return "array"


def _shape_of(value, is_tensor):
    """``value``'s structure with tensors as "tensor" and other leaves as their type's name (hashable)."""
    if is_tensor(value):
        return "tensor"
    if isinstance(value, (list, tuple)):
        return tuple(_shape_of(v, is_tensor) for v in value)
    if isinstance(value, dict):
        return tuple((k, _shape_of(value[k], is_tensor)) for k in sorted(value))
    return type(value).__name__


def _describe(value, leaf_name):
    """``[tensor, tensor]``, ``{'a': tensor}``: a structure as an error shows it, ``leaf_name`` naming its leaves."""
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_describe(v, leaf_name) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_describe(value[k], leaf_name)}" for k in sorted(value)) + "}"
    return "None" if value is None else leaf_name(value)
