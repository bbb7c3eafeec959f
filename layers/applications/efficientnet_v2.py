"""EfficientNetV2 B0 to B3, S, M and L (Tan and Le, 2021), as ``keras.applications`` builds
them: fused inverted residual blocks (one full 3x3 convolution in place of expansion and
depthwise) in the early stages, squeeze-and-excite inverted residual blocks later; B0 to B3
share one stage table scaled in width and depth, S, M and L have tables of their own."""

import math

from layers.applications._builders import documented, shapes_example
from layers.applications._common import check_weights, default_shape, finish, image_input
from layers.applications.efficientnet import CONV_KERNEL_INITIALIZER, add_residual, classifier, squeeze_excite
from layers.convolutional import Conv2D, DepthwiseConv2D
from layers.core import Activation
from layers.normalization import BatchNormalization
from layers.preprocessing import Normalization, Rescaling

# Stages as (repeats, input filters, output filters, expansion, stride, squeeze-and-excite ratio, fused); every
# kernel is 3x3.
_B_STAGES = ((1, 32, 16, 1, 1, 0, True), (2, 16, 32, 4, 2, 0, True), (2, 32, 48, 4, 2, 0, True),
             (3, 48, 96, 4, 2, 0.25, False), (5, 96, 112, 6, 1, 0.25, False), (8, 112, 192, 6, 2, 0.25, False))
_STAGES = {
    "b": _B_STAGES,
    "s": ((2, 24, 24, 1, 1, 0, True), (4, 24, 48, 4, 2, 0, True), (4, 48, 64, 4, 2, 0, True),
          (6, 64, 128, 4, 2, 0.25, False), (9, 128, 160, 6, 1, 0.25, False), (15, 160, 256, 6, 2, 0.25, False)),
    "m": ((3, 24, 24, 1, 1, 0, True), (5, 24, 48, 4, 2, 0, True), (5, 48, 80, 4, 2, 0, True),
          (7, 80, 160, 4, 2, 0.25, False), (14, 160, 176, 6, 1, 0.25, False), (18, 176, 304, 6, 2, 0.25, False),
          (5, 304, 512, 6, 1, 0.25, False)),
    "l": ((4, 32, 32, 1, 1, 0, True), (7, 32, 64, 4, 2, 0, True), (7, 64, 96, 4, 2, 0, True),
          (10, 96, 192, 4, 2, 0.25, False), (19, 192, 224, 6, 1, 0.25, False), (25, 224, 384, 6, 2, 0.25, False),
          (7, 384, 640, 6, 1, 0.25, False)),
}
_KERNEL_SIZE = 3
_BN_MOMENTUM = 0.9
_DROP_CONNECT_RATE = 0.2
# ImageNet's per-channel mean and variance, which the B models' preprocessing normalizes with.
_IMAGENET_MEAN = (0.485, 0.456, 0.406)
_IMAGENET_VARIANCE = (0.229**2, 0.224**2, 0.225**2)


def _bn(name: str):
    return BatchNormalization(axis=3, momentum=_BN_MOMENTUM, name=name)


def _conv(filters: int, kernel_size: int, strides: int, name: str):
    return Conv2D(filters, kernel_size, strides=strides, kernel_initializer=CONV_KERNEL_INITIALIZER, padding="same",
                  use_bias=False, name=name)


def _mb_conv_block(inputs, input_filters: int, output_filters: int, expand_ratio: int, strides: int, se_ratio: float,
                  activation: str, drop_rate: float, name: str):
    """Expand (when ``expand_ratio`` is not 1), depthwise 3x3 at ``strides``, squeeze-and-excite when ``se_ratio``,
    project to ``output_filters``; add the input back when the shapes match."""
    x = inputs
    if expand_ratio != 1:
        x = _conv(input_filters * expand_ratio, 1, 1, f"{name}expand_conv")(x)
        x = Activation(activation, name=f"{name}expand_activation")(_bn(f"{name}expand_bn")(x))
    x = DepthwiseConv2D(kernel_size=_KERNEL_SIZE, strides=strides, depthwise_initializer=CONV_KERNEL_INITIALIZER,
                        padding="same", use_bias=False, name=f"{name}dwconv2")(x)
    x = Activation(activation, name=f"{name}activation")(_bn(f"{name}bn")(x))
    if 0 < se_ratio:
        x = squeeze_excite(x, input_filters, activation, name)
    x = _bn(f"{name}project_bn")(_conv(output_filters, 1, 1, f"{name}project_conv")(x))
    if strides == 1 and input_filters == output_filters:
        x = add_residual(x, inputs, drop_rate, name)
    return x


def _fused_mb_conv_block(inputs, input_filters: int, output_filters: int, expand_ratio: int, strides: int,
                        se_ratio: float, activation: str, drop_rate: float, name: str):
    """A full 3x3 convolution at ``strides`` to ``expand_ratio`` times the width and a 1x1 projection (or, when
    ``expand_ratio`` is 1, the 3x3 convolution alone, activated); add the input back when the shapes match."""
    x = inputs
    if expand_ratio != 1:
        x = _conv(input_filters * expand_ratio, _KERNEL_SIZE, strides, f"{name}expand_conv")(x)
        x = Activation(activation, name=f"{name}expand_activation")(_bn(f"{name}expand_bn")(x))
    if 0 < se_ratio:
        x = squeeze_excite(x, input_filters, activation, name)
    kernel_size, project_strides = (1, 1) if expand_ratio != 1 else (_KERNEL_SIZE, strides)
    x = _bn(f"{name}project_bn")(_conv(output_filters, kernel_size, project_strides, f"{name}project_conv")(x))
    if expand_ratio == 1:
        x = Activation(activation, name=f"{name}project_activation")(x)
    if strides == 1 and input_filters == output_filters:
        x = add_residual(x, inputs, drop_rate, name)
    return x


def _efficientnet_v2(builder, variant, width_coefficient, depth_coefficient, default_size, include_top, weights,
                     input_tensor, input_shape, pooling, classes, classifier_activation, include_preprocessing, name):
    check_weights(weights, builder)
    img_input = image_input(input_shape, input_tensor, default_size=default_size, min_size=32,
                            include_top=include_top)
    stages, activation = _STAGES[variant], "swish"

    def filters(count):
        return max(8, int(count * width_coefficient + 4) // 8 * 8)

    x = img_input
    if include_preprocessing:
        if variant == "b" and default_shape(input_shape, default_size, include_top)[2] == 3:
            x = Normalization(mean=list(_IMAGENET_MEAN), variance=list(_IMAGENET_VARIANCE), axis=3)(
                Rescaling(scale=1.0 / 255)(x))
        else:
            x = Rescaling(scale=1.0 / 128.0, offset=-1)(x)
    x = _conv(filters(stages[0][1]), 3, 2, "stem_conv")(x)
    x = Activation(activation, name="stem_activation")(_bn("stem_bn")(x))
    total = float(sum(stage[0] for stage in stages))
    done = 0
    for stage, (count, input_filters, output_filters, expand_ratio, strides, se_ratio, fused) in enumerate(
            stages, start=1):
        input_filters, output_filters = filters(input_filters), filters(output_filters)
        make_block = _fused_mb_conv_block if fused else _mb_conv_block
        for j in range(int(math.ceil(depth_coefficient * count))):
            x = make_block(x, output_filters if j else input_filters, output_filters, expand_ratio,
                           1 if j else strides, se_ratio, activation, _DROP_CONNECT_RATE * done / total,
                           f"block{stage}{chr(ord('a') + j)}_")
            done += 1
    x = _conv(filters(1280), 1, 1, "top_conv")(x)
    x = Activation(activation=activation, name="top_activation")(_bn("top_bn")(x))
    x = classifier(x, include_top, pooling, classes, classifier_activation, 0.2,
                   bias_initializer={"class_name": "Constant", "config": {"value": 0.0}})
    return finish(img_input, x, name, weights)


def _variant(builder: str, variant: str, width_coefficient: float, depth_coefficient: float, default_size: int):
    """The public builder of one EfficientNetV2 variant: its stage table (``"b"``, ``"s"``, ``"m"`` or ``"l"``)
    scaled in width and depth, and its default input size."""
    def build(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
              classes=1000, classifier_activation="softmax", include_preprocessing=True,
              name=f"efficientnetv2-{builder.removeprefix('EfficientNetV2').lower()}"):
        return _efficientnet_v2(builder, variant, width_coefficient, depth_coefficient, default_size, include_top,
                                weights, input_tensor, input_shape, pooling, classes, classifier_activation,
                                include_preprocessing, name)
    build.__name__ = build.__qualname__ = builder
    notes = (f"The {variant.upper()} models' stage table with width coefficient {width_coefficient} and depth "
             f"coefficient {depth_coefficient}; {default_size}x{default_size} inputs by default.")
    preprocessing = ("whether to start with the layers taking pixels in [0, 255] to the network's range (B models "
                     "with three channels: ``Rescaling`` to [0, 1] and ImageNet's ``Normalization``; otherwise "
                     "``Rescaling`` to [-1, 1]).")
    return documented(shapes_example(builder, default_size), notes, default_size=default_size,
                      include_preprocessing=preprocessing)(build)


EfficientNetV2B0 = _variant("EfficientNetV2B0", "b", 1.0, 1.0, 224)
EfficientNetV2B1 = _variant("EfficientNetV2B1", "b", 1.0, 1.1, 240)
EfficientNetV2B2 = _variant("EfficientNetV2B2", "b", 1.1, 1.2, 260)
EfficientNetV2B3 = _variant("EfficientNetV2B3", "b", 1.2, 1.4, 300)
EfficientNetV2S = _variant("EfficientNetV2S", "s", 1.0, 1.0, 384)
EfficientNetV2M = _variant("EfficientNetV2M", "m", 1.0, 1.0, 480)
EfficientNetV2L = _variant("EfficientNetV2L", "l", 1.0, 1.0, 480)
