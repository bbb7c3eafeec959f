"""The symbolic tensor: a shape, a dtype and the layer call that produced it."""

from typing import NamedTuple

from engine.dtypes import dtype_name


class KerasHistory(NamedTuple):
    """Where a symbolic tensor comes from: ``layer.inbound_nodes[node_index]``
    produced it as its output number ``tensor_index``."""

    layer: object
    node_index: int
    tensor_index: int


_SYMBOLIC_HINT = (
    "A KerasTensor is symbolic: it stands for the shape and dtype of a value "
    "that only exists when the model runs. "
)


class KerasTensor:
    """A symbolic tensor, produced by ``Input`` or by calling a layer on
    other symbolic tensors.

    It carries a ``shape`` (the batch dimension is ``None``), a ``dtype``, a
    ``name`` and ``_keras_history``, the ``(layer, node_index, tensor_index)``
    triple that links it to the graph. It is immutable and hashed by identity.

    Example:
        >>> from engine import Input
        >>> x = Input(shape=(3,))
        >>> x.shape
        (None, 3)
        >>> layer, node_index, tensor_index = x._keras_history
    """

    __slots__ = ("_shape", "_dtype", "_name", "_keras_history")
    __array_ufunc__ = None  # so `ndarray + KerasTensor` defers to our operators

    def __init__(self, shape, dtype="float32", name=None):
        object.__setattr__(self, "_shape", tuple(None if d is None else int(d) for d in shape))
        object.__setattr__(self, "_dtype", dtype_name(dtype))
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_keras_history", None)

    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    @property
    def name(self):
        return self._name

    @property
    def ndim(self):
        return len(self._shape)

    def _set_history(self, layer, node_index, tensor_index):
        if self._keras_history is not None:
            raise ValueError(
                f"KerasTensor {self._name!r} already comes from layer "
                f"{self._keras_history.layer.name!r}; a tensor is produced by one layer call."
            )
        object.__setattr__(self, "_keras_history", KerasHistory(layer, node_index, tensor_index))
        if self._name is None:
            object.__setattr__(self, "_name", f"{layer.name}[{node_index}][{tensor_index}]")

    def __setattr__(self, name, value):
        raise AttributeError(
            f"KerasTensor {self._name!r} is immutable: cannot set {name!r}. "
            "Call a layer on it to make a new tensor instead."
        )

    def __repr__(self):
        return f"<KerasTensor shape={self._shape}, dtype={self._dtype}, name={self._name}>"

    def __bool__(self):
        raise TypeError(
            _SYMBOLIC_HINT + f"KerasTensor {self._name!r} has no truth value. "
            "Use Python control flow inside a layer's call(), where inputs are NumPy arrays."
        )

    def __iter__(self):
        raise TypeError(
            _SYMBOLIC_HINT + f"KerasTensor {self._name!r} cannot be iterated. "
            "Index it instead (x[:, 0]) or split it inside a layer's call()."
        )

    def __len__(self):
        raise TypeError(
            _SYMBOLIC_HINT + f"KerasTensor {self._name!r} has no len(); read x.shape instead."
        )

    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            _SYMBOLIC_HINT + f"KerasTensor {self._name!r} cannot be converted to a NumPy array. "
            "Build a Model from it and call the model on NumPy arrays to get values."
        )

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

    def __pow__(self, other):
        return _binary("power", self, other)

    def __rpow__(self, other):
        return _binary("power", other, self)

    def __matmul__(self, other):
        return _binary("matmul", self, other)

    def __rmatmul__(self, other):
        return _binary("matmul", other, self)

    def __neg__(self):
        from engine.ops import Negative

        return Negative()(self)

    def __getitem__(self, key):
        from engine.ops import GetItem

        return GetItem(key)(self)


def _binary(op, left, right):
    from engine.ops import binary_op

    return binary_op(op, left, right)


def is_symbolic(value):
    return isinstance(value, KerasTensor)
