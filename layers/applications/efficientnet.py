"""EfficientNet B0 to B7 (Tan and Le, 2019), as ``keras.applications`` builds them: one
network of seven stages of inverted residual blocks with squeeze-and-excite, scaled in
width (channels) and depth (blocks per stage) by two coefficients, with a swish activation."""

import math

from layers.applications._builders import variant
from layers.applications._common import check_weights, correct_pad, finish, image_input, make_divisible, pool
from layers.convolutional import Conv2D, DepthwiseConv2D
from layers.core import Activation, Dense, Dropout
from layers.merging import Add, Multiply
from layers.normalization import BatchNormalization
from layers.pooling import GlobalAveragePooling2D
from layers.preprocessing import Normalization, Rescaling
from layers.reshaping import Reshape, ZeroPadding2D

CONV_KERNEL_INITIALIZER = {"class_name": "VarianceScaling",
                           "config": {"scale": 2.0, "mode": "fan_out", "distribution": "truncated_normal"}}
DENSE_KERNEL_INITIALIZER = {"class_name": "VarianceScaling",
                            "config": {"scale": 1.0 / 3.0, "mode": "fan_out", "distribution": "uniform"}}
# The stages of B0 as (kernel size, repeats, input filters, output filters, expansion, stride); every block
# has squeeze-and-excite (ratio 0.25) and a sum with its input where the shapes allow.
_STAGES = ((3, 1, 32, 16, 1, 1), (3, 2, 16, 24, 6, 2), (5, 2, 24, 40, 6, 2), (3, 3, 40, 80, 6, 2),
           (5, 3, 80, 112, 6, 1), (5, 4, 112, 192, 6, 2), (3, 1, 192, 320, 6, 1))
_SE_RATIO = 0.25
_DROP_CONNECT_RATE = 0.2


def squeeze_excite(x, filters_in: int, activation: str, name: str):
    """Global average, 1x1 to a quarter of ``filters_in`` with ``activation``, 1x1 back with a sigmoid, times ``x``
    (EfficientNet's and EfficientNetV2's).

    Args:
        x: the block's 4D feature map (channels last).
        filters_in: the block's input width, which sizes the squeeze (a quarter of it, at least 1).
        activation: the squeeze convolution's activation.
        name: the prefix of the five layers' names (``se_squeeze`` ... ``se_excite``).

    Example:
        >>> from engine import Input
        >>> y = squeeze_excite(Input(shape=(8, 8, 64)), 16, "swish", "block2a_")
        >>> y.shape, y._keras_history.layer.name
        ((None, 8, 8, 64), 'block2a_se_excite')
    """
    filters = x.shape[-1]
    se = GlobalAveragePooling2D(name=f"{name}se_squeeze")(x)
    se = Reshape((1, 1, filters), name=f"{name}se_reshape")(se)
    se = Conv2D(max(1, int(filters_in * _SE_RATIO)), 1, padding="same", activation=activation,
                kernel_initializer=CONV_KERNEL_INITIALIZER, name=f"{name}se_reduce")(se)
    se = Conv2D(filters, 1, padding="same", activation="sigmoid", kernel_initializer=CONV_KERNEL_INITIALIZER,
                name=f"{name}se_expand")(se)
    return Multiply(name=f"{name}se_excite")([x, se])


def add_residual(x, inputs, drop_rate: float, name: str):
    """``x`` (with whole-sample dropout at ``drop_rate`` when above 0) plus ``inputs``.

    Args:
        x: the block's output before the sum.
        inputs: the block's input, of ``x``'s shape.
        drop_rate: the rate of the ``drop`` layer (stochastic depth); none when 0.
        name: the prefix of the ``drop`` and ``add`` layers' names.

    Example:
        >>> from engine import Input
        >>> inputs = Input(shape=(4, 4, 8))
        >>> add_residual(inputs * 2.0, inputs, 0.1, "block2b_")._keras_history.layer.name
        'block2b_add'
    """
    if drop_rate > 0:
        x = Dropout(drop_rate, noise_shape=(None, 1, 1, 1), name=f"{name}drop")(x)
    return Add(name=f"{name}add")([x, inputs])


def classifier(x, include_top: bool, pooling, classes: int, classifier_activation, dropout_rate: float,
               **dense_arguments):
    """Global average pooling, dropout and the ``predictions`` layer when ``include_top``, else
    ``pool(x, pooling)`` (EfficientNet's and EfficientNetV2's).

    Args:
        x: the last 4D feature map.
        include_top: whether to end with ``predictions``.
        pooling: without the classifier: None, ``"avg"`` or ``"max"``.
        classes: the classifier's number of classes.
        classifier_activation: the classifier's activation.
        dropout_rate: the rate of ``top_dropout`` (none when 0).
        **dense_arguments: further arguments of ``predictions`` (EfficientNetV2's ``bias_initializer``).

    Example:
        >>> from engine import Input
        >>> classifier(Input(shape=(4, 4, 8)), True, None, 5, "softmax", 0.2).shape
        (None, 5)
    """
    if not include_top:
        return pool(x, pooling, "avg_pool", "max_pool")
    x = GlobalAveragePooling2D(name="avg_pool")(x)
    if dropout_rate > 0:
        x = Dropout(dropout_rate, name="top_dropout")(x)
    return Dense(classes, activation=classifier_activation, kernel_initializer=DENSE_KERNEL_INITIALIZER,
                 name="predictions", **dense_arguments)(x)


def _block(inputs, activation: str, drop_rate: float, name: str, filters_in: int, filters_out: int, kernel_size: int,
          strides: int, expand_ratio: int):
    """Expand (when ``expand_ratio`` is not 1), depthwise ``kernel_size`` at ``strides``, squeeze-and-excite,
    project to ``filters_out``; add the input back when the shapes match."""
    x = inputs
    if expand_ratio != 1:
        x = Conv2D(filters_in * expand_ratio, 1, padding="same", use_bias=False,
                   kernel_initializer=CONV_KERNEL_INITIALIZER, name=f"{name}expand_conv")(x)
        x = BatchNormalization(axis=3, name=f"{name}expand_bn")(x)
        x = Activation(activation, name=f"{name}expand_activation")(x)
    if strides == 2:
        x = ZeroPadding2D(padding=correct_pad(x, kernel_size), name=f"{name}dwconv_pad")(x)
    x = DepthwiseConv2D(kernel_size, strides=strides, padding="same" if strides == 1 else "valid", use_bias=False,
                        depthwise_initializer=CONV_KERNEL_INITIALIZER, name=f"{name}dwconv")(x)
    x = Activation(activation, name=f"{name}activation")(BatchNormalization(axis=3, name=f"{name}bn")(x))
    x = squeeze_excite(x, filters_in, activation, name)
    x = Conv2D(filters_out, 1, padding="same", use_bias=False, kernel_initializer=CONV_KERNEL_INITIALIZER,
               name=f"{name}project_conv")(x)
    x = BatchNormalization(axis=3, name=f"{name}project_bn")(x)
    if strides == 1 and filters_in == filters_out:
        x = add_residual(x, inputs, drop_rate, name)
    return x


def _efficientnet(builder, width_coefficient, depth_coefficient, default_size, dropout_rate, include_top, weights,
                  input_tensor, input_shape, pooling, classes, classifier_activation, name):
    check_weights(weights, builder)
    img_input = image_input(input_shape, input_tensor, default_size=default_size, min_size=32,
                            include_top=include_top)
    activation = "swish"

    def filters(count):
        return make_divisible(count * width_coefficient, 8)

    def repeats(count):
        return int(math.ceil(depth_coefficient * count))

    x = Normalization(axis=3)(Rescaling(1.0 / 255.0)(img_input))
    x = ZeroPadding2D(padding=correct_pad(x, 3), name="stem_conv_pad")(x)
    x = Conv2D(filters(32), 3, strides=2, padding="valid", use_bias=False,
               kernel_initializer=CONV_KERNEL_INITIALIZER, name="stem_conv")(x)
    x = Activation(activation, name="stem_activation")(BatchNormalization(axis=3, name="stem_bn")(x))
    total = float(sum(repeats(stage[1]) for stage in _STAGES))
    done = 0
    for stage, (kernel_size, count, filters_in, filters_out, expand_ratio, strides) in enumerate(_STAGES, start=1):
        filters_in, filters_out = filters(filters_in), filters(filters_out)
        for j in range(repeats(count)):
            x = _block(x, activation, _DROP_CONNECT_RATE * done / total, f"block{stage}{chr(ord('a') + j)}_",
                      filters_out if j else filters_in, filters_out, kernel_size, 1 if j else strides,
                      expand_ratio)
            done += 1
    x = Conv2D(filters(1280), 1, padding="same", use_bias=False, kernel_initializer=CONV_KERNEL_INITIALIZER,
               name="top_conv")(x)
    x = Activation(activation, name="top_activation")(BatchNormalization(axis=3, name="top_bn")(x))
    x = classifier(x, include_top, pooling, classes, classifier_activation, dropout_rate)
    return finish(img_input, x, name, weights)


def _variant(builder: str, width_coefficient: float, depth_coefficient: float, default_size: int,
             dropout_rate: float):
    """The public builder of one EfficientNet variant: B0 scaled in width and depth, its default input size and
    its classifier's dropout rate."""
    notes = (f"Width coefficient {width_coefficient}, depth coefficient {depth_coefficient}; {default_size}x"
             f"{default_size} inputs by default. The model rescales and normalizes its inputs itself: it expects "
             "pixels in [0, 255].")
    return variant(builder, _efficientnet, width_coefficient, depth_coefficient, default_size, dropout_rate,
                   default_size=default_size, notes=notes)


EfficientNetB0 = _variant("EfficientNetB0", 1.0, 1.0, 224, 0.2)
EfficientNetB1 = _variant("EfficientNetB1", 1.0, 1.1, 240, 0.2)
EfficientNetB2 = _variant("EfficientNetB2", 1.1, 1.2, 260, 0.3)
EfficientNetB3 = _variant("EfficientNetB3", 1.2, 1.4, 300, 0.3)
EfficientNetB4 = _variant("EfficientNetB4", 1.4, 1.8, 380, 0.4)
EfficientNetB5 = _variant("EfficientNetB5", 1.6, 2.2, 456, 0.4)
EfficientNetB6 = _variant("EfficientNetB6", 1.8, 2.6, 528, 0.5)
EfficientNetB7 = _variant("EfficientNetB7", 2.0, 3.1, 600, 0.5)
