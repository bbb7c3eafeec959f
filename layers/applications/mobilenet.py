"""MobileNet (Howard et al., 2017), as ``keras.applications`` builds it: a 3x3 stem and 13
depthwise-separable blocks (3x3 depthwise, 1x1 pointwise, each followed by batch
normalization and ReLU6), widths scaled by ``alpha``, a 1x1 convolution as classifier."""

from layers.activation import ReLU
from layers.applications._builders import documented
from layers.applications._common import check_weights, default_shape, finish, image_input, pool
from layers.convolutional import Conv2D, DepthwiseConv2D
from layers.core import Activation, Dropout
from layers.normalization import BatchNormalization
from layers.pooling import GlobalAveragePooling2D
from layers.reshaping import Reshape, ZeroPadding2D

# (pointwise filters, stride) of blocks 1 to 13.
_BLOCKS = ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1), (512, 1), (512, 1),
           (512, 1), (1024, 2), (1024, 1))


def depthwise_conv_block(inputs, pointwise_filters: int, alpha: float, depth_multiplier: int = 1, stride: int = 1,
                         block_id: int = 1):
    """3x3 depthwise at ``stride`` (zero-padded bottom-right when 2), then 1x1 to ``pointwise_filters * alpha``."""
    x = inputs if stride == 1 else ZeroPadding2D(((0, 1), (0, 1)), name=f"conv_pad_{block_id}")(inputs)
    x = DepthwiseConv2D((3, 3), padding="same" if stride == 1 else "valid", depth_multiplier=depth_multiplier,
                        strides=(stride, stride), use_bias=False, name=f"conv_dw_{block_id}")(x)
    x = ReLU(6.0, name=f"conv_dw_{block_id}_relu")(BatchNormalization(axis=-1, name=f"conv_dw_{block_id}_bn")(x))
    x = Conv2D(int(pointwise_filters * alpha), (1, 1), padding="same", use_bias=False, strides=(1, 1),
               name=f"conv_pw_{block_id}")(x)
    return ReLU(6.0, name=f"conv_pw_{block_id}_relu")(BatchNormalization(axis=-1, name=f"conv_pw_{block_id}_bn")(x))


@documented("""
    >>> model = MobileNet(input_shape=(32, 32, 3), alpha=0.25, weights=None, classes=3)
    >>> model.name, model.output.shape
    ('mobilenet_0.25_32', (None, 3))""", alpha="the width multiplier of every layer (1.0: the paper's widths).",
            depth_multiplier="the depthwise convolutions' channel multiplier.",
            dropout="the dropout rate before the classifier.",
            include_top="whether to end with the 1x1-convolution classifier.",
            name="the model's name; by default ``mobilenet_{alpha:.2f}_{rows}``.")
def MobileNet(input_shape=None, alpha=1.0, depth_multiplier=1, dropout=1e-3, include_top=True, weights="imagenet",
              input_tensor=None, pooling=None, classes=1000, classifier_activation="softmax", name=None):
    check_weights(weights, "MobileNet")
    img_input = image_input(input_shape, input_tensor, default_size=224, min_size=32, include_top=include_top)
    x = Conv2D(int(32 * alpha), (3, 3), padding="same", use_bias=False, strides=(2, 2), name="conv1")(img_input)
    x = ReLU(6.0, name="conv1_relu")(BatchNormalization(axis=-1, name="conv1_bn")(x))
    for block_id, (filters, stride) in enumerate(_BLOCKS, start=1):
        x = depthwise_conv_block(x, filters, alpha, depth_multiplier, stride=stride, block_id=block_id)
    if include_top:
        x = GlobalAveragePooling2D(keepdims=True)(x)
        x = Dropout(dropout, name="dropout")(x)
        x = Conv2D(classes, (1, 1), padding="same", name="conv_preds")(x)
        x = Reshape((classes,), name="reshape_2")(x)
        x = Activation(activation=classifier_activation, name="predictions")(x)
    else:
        x = pool(x, pooling)
    rows = default_shape(input_shape, 224, include_top)[0]
    return finish(img_input, x, name or f"mobilenet_{alpha:0.2f}_{rows}", weights)
