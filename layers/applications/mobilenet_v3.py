"""MobileNetV3 (Howard et al., 2019), as ``keras.applications`` builds it: a stem, inverted
residual blocks (1x1 expansion, depthwise 3x3 or 5x5, optional squeeze-and-excite gated by
a hard sigmoid, linear 1x1 projection, a sum where shapes allow), a 1x1 convolution to six
times the last width, and a classifier made of 1x1 convolutions. ``minimalistic`` drops the
5x5 kernels, the squeeze-and-excite and the hard swish."""

from layers.activation import ReLU
from layers.applications._builders import documented
from layers.applications._common import check_weights, correct_pad, finish, image_input, make_divisible, pool
from layers.convolutional import Conv2D, DepthwiseConv2D
from layers.core import Activation, Dropout
from layers.merging import Add, Multiply
from layers.normalization import BatchNormalization
from layers.pooling import GlobalAveragePooling2D
from layers.preprocessing import Rescaling
from layers.reshaping import Flatten, ZeroPadding2D

# The blocks as (expansion, filters, kernel size, stride, squeeze-and-excite, activation). A kernel size of
# "model" is 5, or 3 when minimalistic; an activation of "model" is hard swish, or ReLU when minimalistic;
# squeeze-and-excite is dropped when minimalistic.
_SMALL_BLOCKS = ((1, 16, 3, 2, True, "relu"), (72.0 / 16, 24, 3, 2, False, "relu"),
                 (88.0 / 24, 24, 3, 1, False, "relu"), (4, 40, "model", 2, True, "model"),
                 (6, 40, "model", 1, True, "model"), (6, 40, "model", 1, True, "model"),
                 (3, 48, "model", 1, True, "model"), (3, 48, "model", 1, True, "model"),
                 (6, 96, "model", 2, True, "model"), (6, 96, "model", 1, True, "model"),
                 (6, 96, "model", 1, True, "model"))
_LARGE_BLOCKS = ((1, 16, 3, 1, False, "relu"), (4, 24, 3, 2, False, "relu"), (3, 24, 3, 1, False, "relu"),
                 (3, 40, "model", 2, True, "relu"), (3, 40, "model", 1, True, "relu"),
                 (3, 40, "model", 1, True, "relu"), (6, 80, 3, 2, False, "model"), (2.5, 80, 3, 1, False, "model"),
                 (2.3, 80, 3, 1, False, "model"), (2.3, 80, 3, 1, False, "model"), (6, 112, 3, 1, True, "model"),
                 (6, 112, 3, 1, True, "model"), (6, 160, "model", 2, True, "model"),
                 (6, 160, "model", 1, True, "model"), (6, 160, "model", 1, True, "model"))
_SE_RATIO = 0.25


def _relu(x):
    return ReLU()(x)


def _hard_swish(x):
    return Activation("hard_swish")(x)


def _hard_sigmoid(x):
    """ReLU6(x + 3) / 6, written with tensor arithmetic as Keras writes it (two operation nodes)."""
    return ReLU(6.0)(x + 3.0) * (1.0 / 6.0)


def _bn(name: str):
    return BatchNormalization(axis=-1, epsilon=1e-3, momentum=0.999, name=name)


def _squeeze_excite(inputs, filters: int, prefix: str):
    """Global average, 1x1 to a quarter of ``filters`` with ReLU, 1x1 back with a hard sigmoid, times ``inputs``."""
    x = GlobalAveragePooling2D(keepdims=True, name=f"{prefix}squeeze_excite_avg_pool")(inputs)
    x = Conv2D(make_divisible(filters * _SE_RATIO), kernel_size=1, padding="same",
               name=f"{prefix}squeeze_excite_conv")(x)
    x = ReLU(name=f"{prefix}squeeze_excite_relu")(x)
    x = Conv2D(filters, kernel_size=1, padding="same", name=f"{prefix}squeeze_excite_conv_1")(x)
    return Multiply(name=f"{prefix}squeeze_excite_mul")([inputs, _hard_sigmoid(x)])


def _inverted_res_block(x, expansion: float, filters: int, kernel_size: int, stride: int, se: bool, activation,
                       block_id: int):
    """Expand (except block 0), depthwise ``kernel_size`` at ``stride``, squeeze-and-excite when ``se``, project to
    ``filters``; add the input back when the shapes match."""
    shortcut, in_channels = x, x.shape[-1]
    expanded = make_divisible(in_channels * expansion)
    prefix = f"expanded_conv_{block_id}_" if block_id else "expanded_conv_"
    if block_id:
        x = Conv2D(expanded, kernel_size=1, padding="same", use_bias=False, name=f"{prefix}expand")(x)
        x = activation(_bn(f"{prefix}expand_bn")(x))
    if stride == 2:
        x = ZeroPadding2D(padding=correct_pad(x, kernel_size), name=f"{prefix}depthwise_pad")(x)
    x = DepthwiseConv2D(kernel_size, strides=stride, padding="same" if stride == 1 else "valid", use_bias=False,
                        name=f"{prefix}depthwise")(x)
    x = activation(_bn(f"{prefix}depthwise_bn")(x))
    if se:
        x = _squeeze_excite(x, expanded, prefix)
    x = Conv2D(filters, kernel_size=1, padding="same", use_bias=False, name=f"{prefix}project")(x)
    x = _bn(f"{prefix}project_bn")(x)
    if stride == 1 and in_channels == filters:
        x = Add(name=f"{prefix}add")([shortcut, x])
    return x


def _mobilenet_v3(builder, blocks, last_point_channels, input_shape, alpha, minimalistic, include_top, weights,
                  input_tensor, classes, pooling, dropout_rate, classifier_activation, include_preprocessing, name):
    check_weights(weights, builder)
    img_input = image_input(input_shape or (None, None, 3), input_tensor, default_size=224, min_size=32,
                            include_top=include_top)
    model_kernel, model_activation = (3, _relu) if minimalistic else (5, _hard_swish)
    x = Rescaling(scale=1.0 / 127.5, offset=-1.0)(img_input) if include_preprocessing else img_input
    x = Conv2D(16, kernel_size=3, strides=(2, 2), padding="same", use_bias=False, name="conv")(x)
    x = model_activation(_bn("conv_bn")(x))
    for block_id, (expansion, filters, kernel_size, stride, se, activation) in enumerate(blocks):
        x = _inverted_res_block(x, expansion, make_divisible(filters * alpha),
                               model_kernel if kernel_size == "model" else kernel_size, stride,
                               se and not minimalistic, model_activation if activation == "model" else _relu,
                               block_id)
    last_conv_channels = make_divisible(x.shape[-1] * 6)
    if alpha > 1.0:
        last_point_channels = make_divisible(last_point_channels * alpha)
    x = Conv2D(last_conv_channels, kernel_size=1, padding="same", use_bias=False, name="conv_1")(x)
    x = model_activation(_bn("conv_1_bn")(x))
    if include_top:
        x = GlobalAveragePooling2D(keepdims=True)(x)
        x = Conv2D(last_point_channels, kernel_size=1, padding="same", use_bias=True, name="conv_2")(x)
        x = model_activation(x)
        if dropout_rate > 0:
            x = Dropout(dropout_rate)(x)
        x = Conv2D(classes, kernel_size=1, padding="same", name="logits")(x)
        x = Activation(activation=classifier_activation, name="predictions")(Flatten()(x))
    else:
        x = pool(x, pooling, "avg_pool", "max_pool")
    return finish(img_input, x, name, weights)


# The words of the builders' arguments that mean more than usual, for ``documented``.
_WORDS = {
    "input_shape": "``(height, width, channels)``, at least 32x32; by default (None, None, 3), with or without the "
                   "classifier (it pools globally).",
    "alpha": "the width multiplier of the blocks (1.0: the paper's widths; above 1 it also widens ``conv_2``).",
    "minimalistic": "3x3 kernels, ReLU and no squeeze-and-excite everywhere.",
    "include_top": "whether to end with the pooled 1x1 convolutions ``conv_2``, ``logits`` and ``predictions``.",
    "dropout_rate": "the dropout before ``logits`` (none when 0).",
    "classifier_activation": "the activation of ``predictions``.",
    "include_preprocessing": "whether to start with ``Rescaling`` from [0, 255] to [-1, 1].",
}


def _variant(builder: str, blocks: tuple, last_point_channels: int, example: str):
    """The public builder of the MobileNetV3 of ``blocks`` and ``last_point_channels`` (``conv_2``'s width),
    documented with ``example``."""
    def build(input_shape=None, alpha=1.0, minimalistic=False, include_top=True, weights="imagenet",
              input_tensor=None, classes=1000, pooling=None, dropout_rate=0.2, classifier_activation="softmax",
              include_preprocessing=True, name=builder):
        return _mobilenet_v3(builder, blocks, last_point_channels, input_shape, alpha, minimalistic, include_top,
                             weights, input_tensor, classes, pooling, dropout_rate, classifier_activation,
                             include_preprocessing, name)
    build.__name__ = build.__qualname__ = builder
    return documented(example, f"{len(blocks)} inverted residual blocks, ``conv_2`` {last_point_channels} wide.",
                      **_WORDS)(build)


MobileNetV3Small = _variant("MobileNetV3Small", _SMALL_BLOCKS, 1024, """
    >>> model = MobileNetV3Small(input_shape=(32, 32, 3), weights=None, classes=5)
    >>> model.output.shape, model.count_params()
    ((None, 5), 1535093)""")
MobileNetV3Large = _variant("MobileNetV3Large", _LARGE_BLOCKS, 1280, """
    >>> model = MobileNetV3Large(weights=None, include_top=False, pooling="avg", minimalistic=True)
    >>> model.output.shape, model.count_params()
    ((None, 960), 1437608)""")
