"""Keras 3's layer arguments that nodeweave's layers take only at the values they can honour.

A Keras script, or a config Keras wrote, passes arguments that our layers do
not implement: LoRA and quantization on Dense, batch renormalization, gated
attention, ``autocast``, a ``DTypePolicy`` as ``dtype``... ``Layer.__init__``
consults the table below before anything else: such an argument is accepted
(and dropped) at the values that change nothing here, Keras' default first,
and refused with a ValueError naming the layer, the argument and the value at
any other. ``input_dim`` is Keras' shorthand for ``input_shape=(input_dim,)``.

The table lists, per Keras class name, what Keras 3.15's constructor takes and
ours does not; ``tests/layers/test_keras_arguments.py`` derives that list from
both signatures and checks it is this one.
"""

import functools

# Values that change nothing here, Keras' default first: {argument: (values, what the others need)}.
_LORA = {"lora_rank": ((None,), "LoRA fine-tuning"), "lora_alpha": ((None,), "LoRA fine-tuning")}
_QUANTIZATION = {"quantization_config": ((None,), "quantized weights")}
_BOUNDING_BOXES = {"bounding_box_format": ((None,), "bounding boxes transformed with the images"),
                   "factor": ((None,), "random augmentation factor in this layer (Keras refuses it too)")}

# Every layer: one precision, so casting the weights to the computation's dtype is always a no-op.
_EVERY_LAYER = {"autocast": ((True, False), "")}

KERAS_LAYER_ARGUMENTS = {
    "Dense": {**_LORA, **_QUANTIZATION},
    "Embedding": {**_LORA, **_QUANTIZATION},
    "Conv1D": _LORA,
    "Conv2D": _LORA,
    "Conv3D": _LORA,
    "BatchNormalization": {
        "renorm": ((False,), "batch renormalization"),
        "renorm_clipping": ((None,), "batch renormalization"),
        "renorm_momentum": ((0.99,), "batch renormalization"),
        # One device: statistics synchronized across replicas are the batch's own.
        "synchronized": ((False, True), ""),
    },
    "MultiHeadAttention": {
        "sliding_window": ((None,), "sliding-window attention"),
        # Flash attention computes the same attention with a GPU kernel; True asks for that kernel.
        "flash_attention": ((None, False), "GPU flash-attention kernel"),
        "use_gate": ((False,), "gated attention output"),
    },
    # cuDNN computes the same recurrence on a GPU; True asks for it (Keras on CPU refuses it too).
    "GRU": {"use_cudnn": (("auto", False), "cuDNN (a GPU library)")},
    "LSTM": {"use_cudnn": (("auto", False), "cuDNN (a GPU library)")},
    "Bidirectional": {"weights": ((None,), "initial weights in the constructor of Bidirectional (use set_weights)")},
    "CenterCrop": _BOUNDING_BOXES,
    "Resizing": _BOUNDING_BOXES,
}
_DTYPE_POLICIES = ("DTypePolicy", "FloatDTypePolicy")


def accept_keras_arguments(layer_class, name, dtype, kwargs):
    """Returns ``(dtype, kwargs)`` for ``Layer.__init__``: the dtype as a name, and
    ``kwargs`` without the Keras arguments accepted here (``input_dim`` becomes
    ``input_shape``). Raises ValueError for a value of those we cannot honour.

    Args:
        layer_class: the class being constructed (its table entries and its
            bases' apply).
        name: the layer's name, if given, for error messages.
        dtype: the ``dtype`` argument: a name, a NumPy dtype, or a Keras
            ``DTypePolicy`` (its config dict, or the object).
        kwargs: the other keyword arguments ``Layer.__init__`` received.

    Example:
        >>> from layers import Dense
        >>> accept_keras_arguments(Dense, None, {"class_name": "DTypePolicy", "config": {"name": "float32"}},
        ...                        {"lora_rank": None, "autocast": True, "input_dim": 4})
        ('float32', {'input_shape': (4,)})
    """
    if not kwargs:
        return _dtype_name(layer_class, name, dtype), kwargs
    where = _where(layer_class, name)
    accepted = _accepted_arguments(layer_class)
    kwargs = dict(kwargs)
    for argument in set(kwargs) & set(accepted):
        values, needs = accepted[argument]
        value = kwargs.pop(argument)
        if not any(value is v or (type(value) is type(v) and value == v) for v in values):
            choices = " or ".join(repr(v) for v in values)
            raise ValueError(
                f"{where} does not support {argument}={value!r}" + (f": nodeweave has no {needs}" if needs else "")
                + f". Keras' argument {argument!r} is accepted here only as {choices}; remove it or pass "
                f"{values[0]!r}."
            )
    if "input_dim" in kwargs:
        input_dim = kwargs.pop("input_dim")
        if input_dim is not None:
            if kwargs.get("input_shape") is not None:
                raise ValueError(f"{where} received both input_dim={input_dim!r} and "
                                 f"input_shape={kwargs['input_shape']!r}; pass one of them.")
            kwargs["input_shape"] = (input_dim,)
    return _dtype_name(layer_class, name, dtype), kwargs


def _where(layer_class, name):
    """``Dense 'hidden'``: the layer an error names."""
    return f"{layer_class.__name__}" + (f" {name!r}" if name is not None else "")


@functools.lru_cache(maxsize=None)
def _accepted_arguments(layer_class):
    """The table's entries for ``layer_class`` and its bases from nodeweave's packages, and every layer's."""
    accepted = dict(_EVERY_LAYER)
    for klass in reversed(layer_class.__mro__):
        if klass.__module__.split(".")[0] in ("engine", "layers"):
            accepted.update(KERAS_LAYER_ARGUMENTS.get(klass.__name__, {}))
    return accepted


def _dtype_name(layer_class, name, dtype):
    """A dtype given as a Keras ``DTypePolicy`` (its config dict or the object) as its name;
    a mixed or quantized policy is refused (one precision here)."""
    if dtype is None or dtype == "float32":  # the common case, checked first
        return dtype
    where = _where(layer_class, name)
    if isinstance(dtype, dict) and "class_name" in dtype:
        config = dtype.get("config")
        if dtype["class_name"] not in _DTYPE_POLICIES or not isinstance(config, dict):
            raise ValueError(f"{where} does not support dtype={dtype!r}: nodeweave computes in one precision, "
                             "without quantization. Pass a dtype name such as 'float32'.")
        dtype = config.get("name")
    elif type(dtype).__name__ in _DTYPE_POLICIES and hasattr(dtype, "name"):
        dtype = dtype.name
    if isinstance(dtype, str) and dtype.startswith("mixed_"):
        raise ValueError(f"{where} does not support dtype={dtype!r}: nodeweave computes and keeps weights in one "
                         "precision, so mixed precision is not supported. Pass a dtype name such as 'float32'.")
    return dtype
