"""The symbolic tensor: a shape, a dtype and the layer call that produced it."""

from typing import NamedTuple

from engine import extensions
from engine.dtypes import dtype_name


class KerasHistory(NamedTuple):
    """Where a symbolic tensor comes from: ``layer.inbound_nodes[node_index]``
    produced it as its output number ``tensor_index``.

    Args:
        layer: the layer whose call produced the tensor.
        node_index: which call of the layer (its index in ``inbound_nodes``).
        tensor_index: which output of that call.

    Example:
        >>> from engine import Input
        >>> from layers import Dense
        >>> layer = Dense(2, name="d")
        >>> layer(Input(shape=(3,)))
        <KerasTensor shape=(None, 2), dtype=float32, name=d[0][0]>
        >>> history = layer(Input(shape=(3,)))._keras_history
        >>> history.layer.name, history.node_index, history.tensor_index
        ('d', 1, 0)
    """

    layer: object
    node_index: int
    tensor_index: int


_SYMBOLIC_HINT = (
    "A KerasTensor is symbolic: it stands for the shape and dtype of a value "
    "that only exists when the model runs. "
)


def _dims(shape):
    """``shape`` as a tuple of ints and Nones (NumPy ints become ints)."""
    for size in shape:
        if size is not None and type(size) is not int:
            return tuple(None if d is None else int(d) for d in shape)
    return shape if type(shape) is tuple else tuple(shape)


class KerasTensor:
    """A symbolic tensor, produced by ``Input`` or by calling a layer on
    other symbolic tensors.

    It carries a ``shape`` (the batch dimension is ``None``), a ``dtype``, a
    ``name`` and ``_keras_history``, the ``(layer, node_index, tensor_index)``
    triple that links it to the graph. ``_keras_mask``, as in Keras, is the
    spec of the mask the tensor will carry when run (a bool KerasTensor outside
    the graph), or None. It is immutable and hashed by identity.

    Python operators add op layers to the graph (``x + 1``, ``x < y``,
    ``x & y``, ``abs(x)``, ``x[:, 0]``, ``x.reshape((-1, 2))``...), as in
    Keras: ``< <= > >= !=`` are elementwise and give bool tensors, ``& | ^ ~``
    are logical (bool) operations. ``==`` is not elementwise: it compares
    identity, so tensors work as dict keys and with ``in``.

    Args:
        shape: the shape, batch axis included (``None`` for unknown sizes).
        dtype: the dtype's name.
        sparse, ragged: Keras' flags, kept as given (see the properties); no
            Input or layer of nodeweave makes such a tensor.
        name: a name (``Input`` gives its layer's).

    Example:
        >>> from engine import Input
        >>> x = Input(shape=(3,))
        >>> x.shape
        (None, 3)
        >>> layer, node_index, tensor_index = x._keras_history
        >>> (x > 0).dtype
        'bool'
    """

    # The history is kept in three slots, not in a KerasHistory, so that a deep graph holds one object fewer per
    # tensor for the garbage collector; ``_node_index`` is None until the tensor enters a graph.
    __slots__ = ("_shape", "_dtype", "_name", "_layer", "_node_index", "_tensor_index", "_keras_mask", "_mask_of",
                 "_sparse", "_ragged")
    __array_ufunc__ = None  # so `ndarray + KerasTensor` defers to our operators

    def __init__(self, shape, dtype="float32", sparse=False, ragged=False, name=None):
        if sparse and ragged:
            raise ValueError(f"KerasTensor {name!r} cannot have `sparse=True` and `ragged=True` at the same time.")
        _init(self, _dims(shape), dtype_name(dtype), name, bool(sparse), bool(ragged))

    @classmethod
    def _spec(cls, shape, dtype):
        """A tensor of ``shape`` (sizes or None, in a tuple or list) and ``dtype`` (a dtype name), unnamed and dense:
        what a symbolic call returns, made without the checks of the constructor."""
        spec = _new(cls)
        _init(spec, _dims(shape), dtype, None, False, False)
        return spec

    @property
    def shape(self):
        """The shape, a tuple with ``None`` for unknown sizes (the batch axis)."""
        return self._shape

    @property
    def dtype(self):
        """The dtype's name, such as ``'float32'``."""
        return self._dtype

    @property
    def name(self):
        """The tensor's name, or None."""
        return self._name

    @property
    def sparse(self) -> bool:
        """Keras' flag, as given (False by default). nodeweave computes on dense arrays, so no
        ``Input`` or layer makes a sparse tensor: a spec made with ``sparse=True`` only describes one."""
        return self._sparse

    @property
    def ragged(self) -> bool:
        """Keras' flag, as given (False by default); like ``sparse``, no Input or layer makes one."""
        return self._ragged

    @property
    def ndim(self):
        """The number of axes, batch axis included."""
        return len(self._shape)

    @property
    def _keras_history(self):
        """``(layer, node_index, tensor_index)``, a ``KerasHistory``; None before the tensor enters a graph."""
        if self._node_index is None:
            return None
        return _history(KerasHistory, (self._layer, self._node_index, self._tensor_index))

    def _set_history(self, layer, node_index, tensor_index):
        if self._node_index is not None:
            raise ValueError(
                f"KerasTensor {self._name!r} already comes from layer "
                f"{self._keras_history.layer.name!r}; a tensor is produced by one layer call."
            )
        _set_layer(self, layer)
        _set_node_index(self, node_index)
        _set_tensor_index(self, tensor_index)
        if self._name is None:
            _set_name(self, f"{layer.name}[{node_index}][{tensor_index}]")

    def _set_mask(self, mask):
        """Records the spec of the mask this tensor will carry (set once, by the layer call that made it)."""
        object.__setattr__(self, "_keras_mask", mask)
        if mask is not None and mask._keras_history is None:
            object.__setattr__(mask, "_mask_of", self)  # a model given the spec as an output computes it from here

    def _mark_graph_entry(self):
        """Gives a tensor made directly (``KerasTensor(shape)``), on its first use
        as a layer's input, the history of a graph entry point that no layer
        produced: ``(None, 0, 0)``, as in Keras."""
        if self._node_index is None:
            if self._name is None:
                from engine.network.naming import unique_name

                object.__setattr__(self, "_name", unique_name("keras_tensor"))
            _set_layer(self, None)
            _set_node_index(self, 0)
            _set_tensor_index(self, 0)

    def __setattr__(self, name, value):
        raise AttributeError(
            f"The `{name}` attribute of KerasTensor is immutable (tensor {self._name!r}). "
            "Call a layer on it to make a new tensor instead."
        )

    def __repr__(self):
        return f"<KerasTensor shape={self._shape}, dtype={self._dtype}, name={self._name}>"

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        """Notebook display: the calls that made the tensor, as SVG (text only for a tensor made directly)."""
        return extensions.provided("tensor_display")(self)

    def __bool__(self):
        raise TypeError(
            f"A symbolic KerasTensor cannot be used as a boolean: KerasTensor {self._name!r} has no truth value. "
            + _SYMBOLIC_HINT + "Use Python control flow inside a layer's call(), where inputs are NumPy arrays."
        )

    def __iter__(self):
        raise NotImplementedError(
            f"Iterating over a symbolic KerasTensor is not supported (KerasTensor {self._name!r}). "
            + _SYMBOLIC_HINT + "Index it instead (x[:, 0]) or split it inside a layer's call()."
        )

    def __len__(self):
        raise TypeError(
            _SYMBOLIC_HINT + f"KerasTensor {self._name!r} has no len(); read x.shape instead."
        )

    def __array__(self, dtype=None, copy=None):
        raise ValueError(
            f"KerasTensor {self._name!r}: " + _SYMBOLIC_HINT + "You cannot convert it to a NumPy array. "
            "Build a Model from it and call the model on NumPy arrays to get values, or use NumPy "
            "inside a layer's call()."
        )

    def __int__(self):
        raise ValueError(f"KerasTensor {self._name!r}: " + _SYMBOLIC_HINT + "You cannot convert it to an int.")

    def __float__(self):
        raise ValueError(f"KerasTensor {self._name!r}: " + _SYMBOLIC_HINT + "You cannot convert it to a float.")

    # Each operator adds an op layer (engine/network/ops.py) to the graph. As in Keras,
    # `==` is NOT among them: it compares identity, so that KerasTensors work as
    # dict keys, in sets and with `in`; write an elementwise equality as
    # BinaryOp("equal")([x, y]) or inside a layer's call().
    def __add__(self, other):
        return _binary("add", self, other)

    def __radd__(self, other):
        return _binary("add", other, self)

    def __sub__(self, other):
        return _binary("subtract", self, other)

    def __rsub__(self, other):
        return _binary("subtract", other, self)

    def __mul__(self, other):
        return _binary("multiply", self, other)

    def __rmul__(self, other):
        return _binary("multiply", other, self)

    def __truediv__(self, other):
        return _binary("divide", self, other)

    def __rtruediv__(self, other):
        return _binary("divide", other, self)

    def __floordiv__(self, other):
        return _binary("floor_divide", self, other)

    def __rfloordiv__(self, other):
        return _binary("floor_divide", other, self)

    def __mod__(self, other):
        return _binary("mod", self, other)

    def __rmod__(self, other):
        return _binary("mod", other, self)

    def __pow__(self, other):
        return _binary("power", self, other)

    def __rpow__(self, other):
        return _binary("power", other, self)

    def __matmul__(self, other):
        return _binary("matmul", self, other)

    def __rmatmul__(self, other):
        return _binary("matmul", other, self)

    def __lt__(self, other):
        return _binary("less", self, other)

    def __le__(self, other):
        return _binary("less_equal", self, other)

    def __gt__(self, other):
        return _binary("greater", self, other)

    def __ge__(self, other):
        return _binary("greater_equal", self, other)

    def __ne__(self, other):
        return _binary("not_equal", self, other)

    def __and__(self, other):
        return _binary("logical_and", self, other)

    def __rand__(self, other):
        return _binary("logical_and", other, self)

    def __or__(self, other):
        return _binary("logical_or", self, other)

    def __ror__(self, other):
        return _binary("logical_or", other, self)

    def __xor__(self, other):
        return _binary("logical_xor", self, other)

    def __rxor__(self, other):
        return _binary("logical_xor", other, self)

    def __neg__(self):
        return _operator_layers().Negative()(self)

    def __abs__(self):
        return _operator_layers().UnaryOp("absolute")(self)

    def __invert__(self):
        return _operator_layers().UnaryOp("logical_not")(self)

    def __round__(self, ndigits=None):
        return _operator_layers().Round(ndigits or 0)(self)

    def __getitem__(self, key):
        return _operator_layers().GetItem(key)(self)

    def reshape(self, newshape):
        """Adds a reshape op layer to the graph, as ``np.reshape``.

        Args:
            newshape: the new shape, batch axis included (``-1`` once for the
                size left over): ``x.reshape((-1, 2, 3))``.

        Returns:
            The reshaped KerasTensor.

        Example:
            >>> from engine import Input
            >>> Input(shape=(6,)).reshape((-1, 2, 3)).shape
            (None, 2, 3)
        """
        return _operator_layers().ReshapeOp(newshape)(self)

    def squeeze(self, axis=None):
        """Adds an op layer that removes axes of size 1, as ``np.squeeze``.

        Args:
            axis: the axis (or axes) to remove; None removes every axis known to be 1.

        Returns:
            The squeezed KerasTensor.

        Example:
            >>> from engine import Input
            >>> Input(shape=(3, 1)).squeeze(-1).shape
            (None, 3)
        """
        return _operator_layers().SqueezeOp(axis)(self)


def is_keras_tensor(x) -> bool:
    """Whether ``x`` is a symbolic tensor (a KerasTensor from ``Input`` or a layer call).

    Example:
        >>> from engine import Input
        >>> is_keras_tensor(Input(shape=(2,))), is_keras_tensor(1.0)
        (True, False)
    """
    return isinstance(x, KerasTensor)


def any_symbolic_tensors(args=(), kwargs=None) -> bool:
    """Whether any value in ``args`` or ``kwargs`` (nested in lists, tuples and dicts) is a KerasTensor.

    Example:
        >>> import numpy as np
        >>> any_symbolic_tensors([np.ones(2), [KerasTensor((None, 2))]]), any_symbolic_tensors([np.ones(2)])
        (True, False)
    """
    from engine import tree

    return any(isinstance(x, KerasTensor) for x in tree.flatten((args, kwargs or {})))


def _binary(op, left, right):
    if any(x is None or isinstance(x, str) for x in (left, right)):
        return NotImplemented  # `x != None` compares identity; `x + "a"` is a TypeError
    return _operator_layers().binary_op(op, left, right)


def _operator_layers():
    """``engine.network.ops``, the operator layers: it imports this module, so it lends itself from above."""
    return extensions.provided("operator_layers")


_new = object.__new__
_history = tuple.__new__  # KerasHistory(...) without the frame of its generated __new__
_set_shape, _set_dtype, _set_name = KerasTensor._shape.__set__, KerasTensor._dtype.__set__, KerasTensor._name.__set__
_set_layer, _set_node_index = KerasTensor._layer.__set__, KerasTensor._node_index.__set__
_set_tensor_index, _set_keras_mask = KerasTensor._tensor_index.__set__, KerasTensor._keras_mask.__set__
_set_mask_of, _set_sparse, _set_ragged = KerasTensor._mask_of.__set__, KerasTensor._sparse.__set__, KerasTensor._ragged.__set__


def _init(tensor, shape, dtype, name, sparse, ragged):
    """Sets every slot of a new tensor (its class refuses ``setattr``)."""
    _set_shape(tensor, shape)
    _set_dtype(tensor, dtype)
    _set_name(tensor, name)
    _set_layer(tensor, None)
    _set_node_index(tensor, None)
    _set_tensor_index(tensor, None)
    _set_keras_mask(tensor, None)
    _set_mask_of(tensor, None)  # for a mask spec: the tensor whose mask it is
    _set_sparse(tensor, sparse)
    _set_ragged(tensor, ragged)


def not_from_a_layer_error(tensor, role):
    """The error for a tensor made directly (``KerasTensor(shape)``, no layer
    produced it) where a model needs one from ``Input()``: ``role`` says where."""
    return ValueError(
        f"{role} is KerasTensor {tensor.name!r} of shape {tensor.shape}, made directly with KerasTensor(...): no "
        "Input() or layer produced it, so a Model cannot feed it. Model inputs must be created via Input(): write "
        f"Input(shape={tensor.shape[1:]}) (the shape without the batch axis) and build the graph from it."
    )
