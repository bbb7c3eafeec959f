"""What a layer accepts, checked on every call: rank, axis sizes, dtype kind."""

from engine.dtypes import dtype_kind, dtype_name


class InputSpec:
    """Specifies the rank, dtype and shape of every input to a layer.

    Args:
        dtype: expected dtype; only its kind (float, int, ...) is checked.
        shape: expected shape; ``None`` entries match any size.
        ndim, max_ndim, min_ndim: expected rank, or bounds on it.
        axes: ``{axis: size}`` for axes whose size is fixed (Dense sets ``{-1: in_features}``).
        allow_last_axis_squeeze: accept a trailing axis of size 1 more or less.
        name: the input's name, when the layer takes named inputs.

    Example:
        >>> spec = InputSpec(min_ndim=2, axes={-1: 5})
    """

    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None,
                 axes=None, allow_last_axis_squeeze=False, name=None):
        self.dtype = dtype_name(dtype) if dtype is not None else None
        self.shape = tuple(shape) if shape is not None else None
        self.ndim = len(self.shape) if self.shape is not None else ndim
        self.max_ndim = max_ndim
        self.min_ndim = min_ndim
        self.axes = dict(axes or {})
        self.allow_last_axis_squeeze = allow_last_axis_squeeze
        self.name = name
        if self.axes and (self.ndim is not None or self.max_ndim is not None):
            max_dim = (self.ndim if self.ndim is not None else self.max_ndim) - 1
            if max(self.axes) > max_dim:
                raise ValueError(f"InputSpec axes {self.axes} are out of range for ndim={max_dim + 1}.")

    def __repr__(self):
        fields = ("dtype", "shape", "ndim", "max_ndim", "min_ndim", "axes")
        parts = [f"{f}={getattr(self, f)}" for f in fields if getattr(self, f)]
        return f"InputSpec({', '.join(parts)})"


def assert_input_compatibility(input_spec, inputs, layer_name):
    """Raises ValueError naming the layer and the mismatch when ``inputs``
    (arrays or KerasTensors, anything with ``shape`` and ``dtype``) do not fit
    ``input_spec`` (an InputSpec or a list of them, one per input)."""
    if not input_spec:
        return
    if type(input_spec) is InputSpec and len(inputs) == 1:  # the common case, one spec and one input
        _check_one(input_spec, inputs[0], 0, layer_name)
        return
    specs = input_spec if isinstance(input_spec, (list, tuple)) else [input_spec]
    if len(inputs) != len(specs):
        raise ValueError(
            f'Layer "{layer_name}" expects {len(specs)} input(s), but it received '
            f"{len(inputs)} input tensors. Input shapes received: "
            f"{[tuple(x.shape) for x in inputs]}"
        )
    for index, (spec, x) in enumerate(zip(specs, inputs)):
        if spec is not None:
            _check_one(spec, x, index, layer_name)


def _check_one(spec, x, index, layer_name):
    shape = tuple(x.shape)
    ndim = len(shape)
    if spec.ndim is not None and not spec.allow_last_axis_squeeze and ndim != spec.ndim:
        _refuse(index, layer_name, f"expected ndim={spec.ndim}, found ndim={ndim}. Full shape received: {shape}")
    if spec.max_ndim is not None and ndim > spec.max_ndim:
        _refuse(index, layer_name, f"expected max_ndim={spec.max_ndim}, found ndim={ndim}. Full shape received: {shape}")
    if spec.min_ndim is not None and ndim < spec.min_ndim:
        _refuse(index, layer_name, f"expected min_ndim={spec.min_ndim}, found ndim={ndim}. Full shape received: {shape}")
    if spec.dtype is not None:
        if dtype_kind(x.dtype) != dtype_kind(spec.dtype):
            _refuse(index, layer_name, f"expected dtype {spec.dtype} (or another of its kind) but received input "
                                       f"with dtype {dtype_name(x.dtype)}")
    for axis, value in spec.axes.items():
        if value is None:
            continue
        if not -ndim <= axis < ndim:
            _refuse(index, layer_name,
                    f"expected axis {axis} of input shape to exist but received input with shape {shape}")
        if shape[axis] != value and shape[axis] is not None:
            _refuse(index, layer_name,
                    f"expected axis {axis} of input shape to have value {value} but received input with shape {shape}")
    if spec.shape is not None:
        received = shape
        expected = spec.shape
        if spec.allow_last_axis_squeeze:
            received = received[:-1] if received and received[-1] == 1 else received
            expected = expected[:-1] if expected and expected[-1] == 1 else expected
        if len(received) != len(expected) or any(
            e is not None and r is not None and e != r for e, r in zip(expected, received)
        ):
            _refuse(index, layer_name, f"expected shape={spec.shape}, found shape={shape}")


def _refuse(index, layer_name, what):
    raise ValueError(f"Input {index} of layer {layer_name} is incompatible with the layer: {what}")
