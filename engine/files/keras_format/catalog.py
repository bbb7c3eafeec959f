"""Which Keras 3 class each nodeweave class is, and where Keras keeps its weights.

One table for both directions: the reader turns a Keras 3 config entry
(``{"module", "class_name", "config", ...}``) into our registered class, and
the writer turns our class back into Keras' ``module`` and ``class_name``.

Our layers' configs use Keras' argument names, so a layer's config needs no
translation; what differs is listed here:

- operator layers: Keras records ``x + 3.0`` as an op node (module
  ``keras.src.ops.numpy``, class ``Add``, called on ``(x, 3.0)``); we record it
  as ``BinaryOp(op="add", constant=3.0)`` called on ``x``. ``OP_CLASSES`` and
  ``BINARY_OPS`` / ``UNARY_OPS`` name the pairs; ``keras.layers.Add`` (the
  merge layer) has another module and is our ``Add``.
- initializers: Keras writes arguments ours lack (``input_axes`` and
  ``output_axes`` of the variance-scaling initializers);
  ``KERAS_ONLY_ARGUMENTS`` gives their Keras defaults, the only values we
  can honour.
- weights: Keras' ``model.weights.h5`` keeps a layer's variables under
  ``vars/0..n``, but RNN layers keep them in their ``cell`` and
  ``MultiHeadAttention`` in four dense sub-layers; ``WEIGHT_GROUPS`` says where.
"""

import re

LAYERS_MODULE = "keras.layers"
OPS_MODULE = "keras.src.ops.numpy"
FUNCTIONAL = ("keras.src.models.functional", "Functional")
SEQUENTIAL = ("keras", "Sequential")
INITIALIZERS_MODULE = "keras.initializers"
REGULARIZERS_MODULE = "keras.regularizers"
CONSTRAINTS_MODULE = "keras.constraints"
OPTIMIZERS_MODULE = "keras.optimizers"
LOSSES_MODULE = "keras.losses"
METRICS_MODULE = "keras.metrics"

# Our layers that are keras.layers classes of the same name.
KERAS_LAYERS = frozenset({
    "Activation", "ActivityRegularization", "Add", "Attention", "Average", "AveragePooling1D",
    "AveragePooling2D", "BatchNormalization", "Bidirectional", "CenterCrop", "Concatenate", "Conv1D",
    "Conv1DTranspose", "Conv2D", "Conv2DTranspose", "Conv3D", "Cropping1D", "Cropping2D", "Dense",
    "DepthwiseConv2D", "Dot", "Dropout", "ELU", "Embedding", "Flatten", "GRU", "GaussianDropout",
    "GaussianNoise", "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalMaxPooling1D",
    "GlobalMaxPooling2D", "GroupNormalization", "Identity", "InputLayer", "LSTM", "Lambda",
    "LayerNormalization", "LeakyReLU", "Masking", "MaxPooling1D", "MaxPooling2D", "Maximum", "Minimum",
    "MultiHeadAttention", "Multiply", "Normalization", "PReLU", "Permute", "ReLU", "RepeatVector",
    "Rescaling", "Reshape", "Resizing", "SeparableConv2D", "SimpleRNN", "Softmax", "SpatialDropout1D",
    "SpatialDropout2D", "Subtract", "TimeDistributed", "UnitNormalization", "UpSampling1D",
    "UpSampling2D", "ZeroPadding1D", "ZeroPadding2D",
})

# Layers keras.applications architectures define for themselves (layers/applications.py) -> their module.
APPLICATION_LAYERS = {
    "LayerScale": "keras.src.applications.convnext",
    "CustomScaleLayer": "keras.src.applications.inception_resnet_v2",
}

# Our BinaryOp / UnaryOp ``op`` -> the keras.src.ops.numpy class that computes it.
BINARY_OPS = {
    "add": "Add", "subtract": "Subtract", "multiply": "Multiply", "divide": "TrueDivide",
    "floor_divide": "FloorDivide", "mod": "Mod", "power": "Power", "matmul": "Matmul",
    "less": "Less", "less_equal": "LessEqual", "greater": "Greater", "greater_equal": "GreaterEqual",
    "equal": "Equal", "not_equal": "NotEqual", "logical_and": "LogicalAnd", "logical_or": "LogicalOr",
    "logical_xor": "LogicalXor",
}
UNARY_OPS = {"negative": "Negative", "absolute": "Absolute", "logical_not": "LogicalNot"}
# Other op layers of ours -> the keras.src.ops.numpy class (config keys are Keras' own;
# Keras passes GetItem's key as its second call argument, we keep it in the config).
OP_CLASSES = {"Round": "Round", "ReshapeOp": "Reshape", "SqueezeOp": "Squeeze", "GetItem": "GetItem"}

# keras.src.ops.numpy class -> ("BinaryOp" or "UnaryOp", our op), for reading.
KERAS_OPS = {
    **{keras: ("BinaryOp", op) for op, keras in BINARY_OPS.items()},
    "Divide": ("BinaryOp", "divide"),
    **{keras: ("UnaryOp", op) for op, keras in UNARY_OPS.items()},
}
KERAS_OP_LAYERS = {keras: ours for ours, keras in OP_CLASSES.items()}

# Arguments Keras 3.15 writes in the configs of these objects and ours do not
# take: {class_name: {argument: Keras default}}. Only the default can be honoured.
_VARIANCE_SCALING_AXES = {"input_axes": None, "output_axes": None}
KERAS_ONLY_ARGUMENTS = {
    name: _VARIANCE_SCALING_AXES
    for name in ("VarianceScaling", "GlorotUniform", "GlorotNormal", "HeUniform", "HeNormal", "LecunNormal",
                 "LecunUniform")
}

# Where Keras' weight file keeps the variables of our layers that differ from
# the plain ``vars/0..n``: {class: [(group, (our variable names in order))]}.
# A variable the layer does not have (``use_bias=False``) is left out.
_RNN_CELL = [("cell", ("kernel", "recurrent_kernel", "bias"))]
WEIGHT_GROUPS = {
    "LSTM": _RNN_CELL,
    "GRU": _RNN_CELL,
    "SimpleRNN": _RNN_CELL,
    "MultiHeadAttention": [
        ("query_dense", ("query/kernel", "query/bias")),
        ("key_dense", ("key/kernel", "key/bias")),
        ("value_dense", ("value/kernel", "value/bias")),
        ("output_dense", ("attention_output/kernel", "attention_output/bias")),
    ],
}


def keras_class(class_name: str, config: dict | None = None) -> tuple[str, str] | None:
    """``(module, class_name)`` Keras 3 writes for our registered class
    ``class_name`` (with ``config``, for op layers), or None when Keras has no
    such built-in class (a user's own layer).

    Example:
        >>> keras_class("BinaryOp", {"op": "add"})
        ('keras.src.ops.numpy', 'Add')
    """
    if class_name in KERAS_LAYERS:
        return LAYERS_MODULE, class_name
    if class_name in APPLICATION_LAYERS:
        return APPLICATION_LAYERS[class_name], class_name
    if class_name in ("Functional", "Model"):
        return FUNCTIONAL
    if class_name == "Sequential":
        return SEQUENTIAL
    if class_name == "BinaryOp":
        return OPS_MODULE, BINARY_OPS[config["op"]]
    if class_name in ("UnaryOp", "Negative"):
        return OPS_MODULE, UNARY_OPS[(config or {}).get("op", "negative")]
    if class_name in OP_CLASSES:
        return OPS_MODULE, OP_CLASSES[class_name]
    return None


def is_op(module: object) -> bool:
    """Whether a Keras config entry of ``module`` is an op node (``keras.src.ops.*``), not a layer."""
    return isinstance(module, str) and module.startswith("keras.src.ops")


def snake_case(class_name: str) -> str:
    """Keras' name for an object of class ``class_name`` in its weight file
    (``PReLU`` -> ``p_re_lu``), before a ``_1``, ``_2`` suffix makes it unique.

    Example:
        >>> snake_case("BatchNormalization")
        'batch_normalization'
    """
    name = re.sub(r"\W+", "", class_name)
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


def unique_names(class_names: list[str]) -> list[str]:
    """The weight-file names of a container's objects, in order: each class's
    snake-case name, then ``_1``, ``_2``... for the next objects of that name.

    Example:
        >>> unique_names(["Dense", "Dense", "ReLU"])
        ['dense', 'dense_1', 're_lu']
    """
    used, names = {}, []
    for class_name in class_names:
        base = snake_case(class_name)
        used[base] = used.get(base, -1) + 1
        names.append(f"{base}_{used[base]}" if used[base] else base)
    return names
