"""MobileNetV2 (Sandler et al., 2018), as ``keras.applications`` builds it: a stem, 17
inverted residual blocks (1x1 expansion, 3x3 depthwise, linear 1x1 projection, a sum
where shapes allow) and a 1x1 convolution to 1280 channels, every width scaled by ``alpha``."""

from layers.activation import ReLU
from layers.applications._builders import documented
from layers.applications._common import (check_weights, correct_pad, default_shape, finish, head, image_input,
                                         make_divisible)
from layers.convolutional import Conv2D, DepthwiseConv2D
from layers.merging import Add
from layers.normalization import BatchNormalization
from layers.reshaping import ZeroPadding2D

# (filters, stride, expansion) of blocks 0 to 16.
_BLOCKS = ((16, 1, 1), (24, 2, 6), (24, 1, 6), (32, 2, 6), (32, 1, 6), (32, 1, 6), (64, 2, 6), (64, 1, 6),
           (64, 1, 6), (64, 1, 6), (96, 1, 6), (96, 1, 6), (96, 1, 6), (160, 2, 6), (160, 1, 6), (160, 1, 6),
           (320, 1, 6))


def _bn(name):
    return BatchNormalization(axis=-1, epsilon=1e-3, momentum=0.999, name=name)


def inverted_res_block(inputs, expansion: int, stride: int, alpha: float, filters: int, block_id: int):
    """Expand (except block 0), depthwise 3x3 at ``stride``, project to ``filters * alpha``; add the input back
    when the shapes match."""
    in_channels = inputs.shape[-1]
    pointwise_filters = make_divisible(int(filters * alpha), 8)
    x, prefix = inputs, f"block_{block_id}_" if block_id else "expanded_conv_"
    if block_id:
        x = Conv2D(expansion * in_channels, kernel_size=1, padding="same", use_bias=False, activation=None,
                   name=f"{prefix}expand")(x)
        x = ReLU(6.0, name=f"{prefix}expand_relu")(_bn(f"{prefix}expand_BN")(x))
    if stride == 2:
        x = ZeroPadding2D(padding=correct_pad(x, 3), name=f"{prefix}pad")(x)
    x = DepthwiseConv2D(kernel_size=3, strides=stride, activation=None, use_bias=False,
                        padding="same" if stride == 1 else "valid", name=f"{prefix}depthwise")(x)
    x = ReLU(6.0, name=f"{prefix}depthwise_relu")(_bn(f"{prefix}depthwise_BN")(x))
    x = Conv2D(pointwise_filters, kernel_size=1, padding="same", use_bias=False, activation=None,
               name=f"{prefix}project")(x)
    x = _bn(f"{prefix}project_BN")(x)
    if in_channels == pointwise_filters and stride == 1:
        return Add(name=f"{prefix}add")([inputs, x])
    return x


@documented("""
    >>> model = MobileNetV2(input_shape=(96, 96, 3), alpha=0.35, weights=None, classes=5)
    >>> model.name, model.output.shape
    ('mobilenetv2_0.35_96', (None, 5))""", alpha="the width multiplier of every layer (1.0: the paper's widths).",
            name="the model's name; by default ``mobilenetv2_{alpha:.2f}_{rows}``.")
def MobileNetV2(input_shape=None, alpha=1.0, include_top=True, weights="imagenet", input_tensor=None, pooling=None,
                classes=1000, classifier_activation="softmax", name=None):
    check_weights(weights, "MobileNetV2")
    img_input = image_input(input_shape, input_tensor, default_size=224, min_size=32, include_top=include_top)
    x = Conv2D(make_divisible(32 * alpha, 8), kernel_size=3, strides=(2, 2), padding="same", use_bias=False,
               name="Conv1")(img_input)
    x = ReLU(6.0, name="Conv1_relu")(_bn("bn_Conv1")(x))
    for block_id, (filters, stride, expansion) in enumerate(_BLOCKS):
        x = inverted_res_block(x, filters=filters, alpha=alpha, stride=stride, expansion=expansion, block_id=block_id)
    last_filters = make_divisible(1280 * alpha, 8) if alpha > 1.0 else 1280
    x = Conv2D(last_filters, kernel_size=1, use_bias=False, name="Conv_1")(x)
    x = ReLU(6.0, name="out_relu")(_bn("Conv_1_bn")(x))
    x = head(x, include_top, pooling, classes, classifier_activation, top_pool_name=None)
    rows = default_shape(input_shape, 224, include_top)[0]
    return finish(img_input, x, name or f"mobilenetv2_{alpha:0.2f}_{rows}", weights)
