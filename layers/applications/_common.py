"""What every architecture builder shares, as Keras' ``imagenet_utils`` does: the
``weights`` check, the input shape, the classifier or pooling head, and the model."""

import os

from engine import Input, InputLayer, KerasTensor, Model
from layers.core import Dense
from layers.pooling import GlobalAveragePooling2D, GlobalMaxPooling2D


def check_weights(weights, builder: str) -> None:
    """Refuses ``weights="imagenet"`` (nodeweave downloads nothing) and paths that do not exist."""
    if weights == "imagenet":
        raise ValueError(
            f"{builder}(weights='imagenet'): nodeweave does not download pretrained weights. Save the model "
            f"with Keras once (`keras.applications.{builder}(weights='imagenet').save('{builder.lower()}.keras')`) "
            f"and load that file here (`nodeweave.saving.load_model('{builder.lower()}.keras')`), or pass "
            f"weights=None for random weights, or the path of a weights file."
        )
    if weights is not None and not os.path.exists(weights):
        raise ValueError(
            f"The `weights` argument of {builder} should be either None (random initialization) or the path to "
            f"the weights file to be loaded. Received: weights={weights!r}, which is no file."
        )


def default_shape(input_shape, default_size: int, include_top: bool) -> tuple:
    """``input_shape``, or Keras' default: ``(default_size, default_size, 3)`` when ``include_top``
    (the classifier needs a fixed size), else ``(None, None, 3)``."""
    if input_shape is None:
        return (default_size, default_size, 3) if include_top else (None, None, 3)
    return tuple(input_shape)


def image_input(input_shape, input_tensor, default_size: int, min_size: int, include_top: bool) -> KerasTensor:
    """The model's image input: ``input_tensor``, or an ``Input`` of ``default_shape(input_shape, ...)``."""
    input_shape = default_shape(input_shape, default_size, include_top)
    if len(input_shape) != 3:
        raise ValueError(f"`input_shape` must be a tuple of three integers (height, width, channels). "
                         f"Received: input_shape={input_shape}")
    if any(size is not None and size < min_size for size in input_shape[:2]):
        raise ValueError(f"Input size must be at least {min_size}x{min_size}; Received: input_shape={input_shape}")
    if input_tensor is None:
        return Input(shape=input_shape)
    if isinstance(input_tensor, KerasTensor) and input_tensor._keras_history is not None:
        return input_tensor
    return Input(tensor=input_tensor, shape=input_shape)


def head(x, include_top: bool, pooling, classes: int, classifier_activation, top_pool_name: str | None = "avg_pool",
         avg_name: str | None = None, max_name: str | None = None):
    """Keras' usual end of an architecture: global average pooling (``top_pool_name``) and the
    ``predictions`` classifier when ``include_top``, else ``pool(x, pooling, avg_name, max_name)``."""
    if include_top:
        x = GlobalAveragePooling2D(name=top_pool_name)(x)
        return Dense(classes, activation=classifier_activation, name="predictions")(x)
    return pool(x, pooling, avg_name, max_name)


def pool(x, pooling, avg_name: str | None = None, max_name: str | None = None):
    """Without the classifier: the last feature map (``pooling=None``), or its global ``"avg"`` or ``"max"``."""
    if pooling == "avg":
        return GlobalAveragePooling2D(name=avg_name)(x)
    if pooling == "max":
        return GlobalMaxPooling2D(name=max_name)(x)
    return x


def finish(img_input, outputs, name: str, weights) -> Model:
    """The functional model from the source inputs of ``img_input`` to ``outputs``, with ``weights`` loaded."""
    model = Model(_source_inputs(img_input), outputs, name=name)
    if weights is not None:
        model.load_weights(weights)
    return model


def _source_inputs(tensor):
    """The Input tensors ``tensor`` is computed from (itself when it is one)."""
    sources, pending, seen = [], [tensor], set()
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        layer, node_index, _ = current._keras_history
        if isinstance(layer, InputLayer):
            sources.append(current)
        else:
            pending.extend(reversed(layer.inbound_nodes[node_index].input_tensors))
    return sources[0] if len(sources) == 1 else sources


def correct_pad(x, kernel_size: int):
    """The zero padding before a stride-2 ``valid`` convolution of ``kernel_size`` that centres
    it as TensorFlow's ``same`` does (one row and column fewer before than after on even sizes)."""
    sizes = x.shape[1:3]
    adjust = (1, 1) if sizes[0] is None else (1 - sizes[0] % 2, 1 - sizes[1] % 2)
    half = kernel_size // 2
    return ((half - adjust[0], half), (half - adjust[1], half))


def make_divisible(value: float, divisor: int = 8) -> int:
    """``value`` rounded to a multiple of ``divisor``, never more than 10% below it (MobileNet's channel counts)."""
    rounded = max(divisor, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded
