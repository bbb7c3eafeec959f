"""ResNet (He et al., 2015) and ResNetV2 (He et al., 2016), as ``keras.applications``
builds them: layer for layer, with Keras' names, so their weights files fit.

V1 blocks end in the sum (``conv -> BN -> relu`` three times, then ``add`` and
``relu``); V2 blocks are pre-activated (``BN -> relu`` first) and the network
ends with ``post_bn``/``post_relu``."""

from layers.applications._builders import variant
from layers.applications._common import check_weights, finish, head, image_input
from layers.core import Activation
from layers.convolutional import Conv2D
from layers.merging import Add
from layers.normalization import BatchNormalization
from layers.pooling import MaxPooling2D
from layers.reshaping import ZeroPadding2D

_EPSILON = 1.001e-5


def _bn(name):
    return BatchNormalization(axis=3, epsilon=_EPSILON, name=name)


def residual_block_v1(x, filters: int, kernel_size: int = 3, stride: int = 1, conv_shortcut: bool = True,
                      name: str = ""):
    """A bottleneck block: 1x1 (``filters``), ``kernel_size`` (``filters``), 1x1 (``4 * filters``) plus the shortcut."""
    shortcut = x
    if conv_shortcut:
        shortcut = _bn(f"{name}_0_bn")(Conv2D(4 * filters, 1, strides=stride, name=f"{name}_0_conv")(x))
    x = Conv2D(filters, 1, strides=stride, name=f"{name}_1_conv")(x)
    x = Activation("relu", name=f"{name}_1_relu")(_bn(f"{name}_1_bn")(x))
    x = Conv2D(filters, kernel_size, padding="same", name=f"{name}_2_conv")(x)
    x = Activation("relu", name=f"{name}_2_relu")(_bn(f"{name}_2_bn")(x))
    x = _bn(f"{name}_3_bn")(Conv2D(4 * filters, 1, name=f"{name}_3_conv")(x))
    return Activation("relu", name=f"{name}_out")(Add(name=f"{name}_add")([shortcut, x]))


def residual_block_v2(x, filters: int, kernel_size: int = 3, stride: int = 1, conv_shortcut: bool = False,
                      name: str = ""):
    """A pre-activated bottleneck block; the stride is on its 3x3 convolution."""
    preact = Activation("relu", name=f"{name}_preact_relu")(_bn(f"{name}_preact_bn")(x))
    if conv_shortcut:
        shortcut = Conv2D(4 * filters, 1, strides=stride, name=f"{name}_0_conv")(preact)
    else:
        shortcut = MaxPooling2D(1, strides=stride)(x) if stride > 1 else x
    x = Conv2D(filters, 1, use_bias=False, name=f"{name}_1_conv")(preact)
    x = Activation("relu", name=f"{name}_1_relu")(_bn(f"{name}_1_bn")(x))
    x = ZeroPadding2D(padding=((1, 1), (1, 1)), name=f"{name}_2_pad")(x)
    x = Conv2D(filters, kernel_size, strides=stride, use_bias=False, name=f"{name}_2_conv")(x)
    x = Activation("relu", name=f"{name}_2_relu")(_bn(f"{name}_2_bn")(x))
    x = Conv2D(4 * filters, 1, name=f"{name}_3_conv")(x)
    return Add(name=f"{name}_out")([shortcut, x])


def _stack_v1(x, filters, blocks, stride, name):
    x = residual_block_v1(x, filters, stride=stride, name=f"{name}_block1")
    for i in range(2, blocks + 1):
        x = residual_block_v1(x, filters, conv_shortcut=False, name=f"{name}_block{i}")
    return x


def _stack_v2(x, filters, blocks, stride, name):
    x = residual_block_v2(x, filters, conv_shortcut=True, name=f"{name}_block1")
    for i in range(2, blocks):
        x = residual_block_v2(x, filters, name=f"{name}_block{i}")
    return residual_block_v2(x, filters, stride=stride, name=f"{name}_block{blocks}")


def _resnet(builder, blocks, preact, include_top, weights, input_tensor, input_shape, pooling, classes,
            classifier_activation, name):
    check_weights(weights, builder)
    img_input = image_input(input_shape, input_tensor, default_size=224, min_size=32, include_top=include_top)
    x = ZeroPadding2D(padding=((3, 3), (3, 3)), name="conv1_pad")(img_input)
    x = Conv2D(64, 7, strides=2, use_bias=True, name="conv1_conv")(x)
    if not preact:
        x = Activation("relu", name="conv1_relu")(_bn("conv1_bn")(x))
    x = ZeroPadding2D(padding=((1, 1), (1, 1)), name="pool1_pad")(x)
    x = MaxPooling2D(3, strides=2, name="pool1_pool")(x)
    for stage, (filters, count) in enumerate(zip((64, 128, 256, 512), blocks)):
        if preact:  # V2 downsamples at the end of each stage but the last
            x = _stack_v2(x, filters, count, stride=1 if stage == 3 else 2, name=f"conv{stage + 2}")
        else:  # V1 at the start of each stage but the first
            x = _stack_v1(x, filters, count, stride=1 if stage == 0 else 2, name=f"conv{stage + 2}")
    if preact:
        x = Activation("relu", name="post_relu")(_bn("post_bn")(x))
    x = head(x, include_top, pooling, classes, classifier_activation, avg_name="avg_pool", max_name="max_pool")
    return finish(img_input, x, name, weights)


def _variant(builder: str, blocks: tuple[int, int, int, int], preact: bool):
    """The public builder of the ResNet (V2 when ``preact``) of ``blocks`` residual blocks in its four stages."""
    notes = (f"{'Pre-activated' if preact else 'Bottleneck'} residual blocks, {', '.join(map(str, blocks))} in "
             "the four stages.")
    return variant(builder, _resnet, blocks, preact, notes=notes)


ResNet50 = _variant("ResNet50", (3, 4, 6, 3), False)
ResNet101 = _variant("ResNet101", (3, 4, 23, 3), False)
ResNet152 = _variant("ResNet152", (3, 8, 36, 3), False)
ResNet50V2 = _variant("ResNet50V2", (3, 4, 6, 3), True)
ResNet101V2 = _variant("ResNet101V2", (3, 4, 23, 3), True)
ResNet152V2 = _variant("ResNet152V2", (3, 8, 36, 3), True)
