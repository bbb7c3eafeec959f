"""ResNet (He et al., 2015) and ResNetV2 (He et al., 2016), as ``keras.applications``
builds them: layer for layer, with Keras' names, so their weights files fit.

V1 blocks end in the sum (``conv -> BN -> relu`` three times, then ``add`` and
``relu``); V2 blocks are pre-activated (``BN -> relu`` first) and the network
ends with ``post_bn``/``post_relu``."""

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


def ResNet50(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
             classifier_activation="softmax", name="resnet50"):
    """ResNet50 as ``keras.applications.ResNet50`` builds it (weights from a file, never downloaded).

    Args:
        include_top: whether to end with the 1000-way (``classes``) classifier.
        weights: None (random weights) or the path of a weights file
            (``.weights.h5``, ``.keras``, ``.npz``). ``"imagenet"``, Keras'
            default, raises a ValueError saying how to get those weights from
            Keras: nodeweave downloads nothing.
        input_tensor: a KerasTensor to build on instead of a new ``Input``.
        input_shape: ``(height, width, channels)``, at least 32x32; by default
            (224, 224, 3) with the classifier and (None, None, 3) without.
        pooling: without the classifier: None (the last feature map), ``"avg"`` or ``"max"``.
        classes: the classifier's number of classes.
        classifier_activation: the classifier's activation.
        name: the model's name.

    Example:
        >>> model = ResNet50(weights=None, input_shape=(32, 32, 3), classes=10)
        >>> model.output.shape, model.count_params()
        ((None, 10), 23608202)
    """
    return _resnet("ResNet50", (3, 4, 6, 3), False, include_top, weights, input_tensor, input_shape, pooling, classes,
                   classifier_activation, name)


def ResNet101(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
              classifier_activation="softmax", name="resnet101"):
    """ResNet101 as ``keras.applications.ResNet101`` builds it (weights from a file, never downloaded).

    Args:
        include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation, name:
            as ``ResNet50``'s.

    Example:
        >>> model = ResNet101(weights=None, include_top=False, pooling="avg")
        >>> model.output.shape, model.count_params()
        ((None, 2048), 42658176)
    """
    return _resnet("ResNet101", (3, 4, 23, 3), False, include_top, weights, input_tensor, input_shape, pooling,
                   classes, classifier_activation, name)


def ResNet152(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
              classifier_activation="softmax", name="resnet152"):
    """ResNet152 as ``keras.applications.ResNet152`` builds it (weights from a file, never downloaded).

    Args:
        include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation, name:
            as ``ResNet50``'s.

    Example:
        >>> model = ResNet152(weights=None, include_top=False, pooling="avg")
        >>> model.output.shape, model.count_params()
        ((None, 2048), 58370944)
    """
    return _resnet("ResNet152", (3, 8, 36, 3), False, include_top, weights, input_tensor, input_shape, pooling,
                   classes, classifier_activation, name)


def ResNet50V2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
               classifier_activation="softmax", name="resnet50v2"):
    """ResNet50V2 as ``keras.applications.ResNet50V2`` builds it (weights from a file, never downloaded).

    Args:
        include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation, name:
            as ``ResNet50``'s.

    Example:
        >>> ResNet50V2(weights=None, include_top=False, pooling="avg").output.shape
        (None, 2048)
    """
    return _resnet("ResNet50V2", (3, 4, 6, 3), True, include_top, weights, input_tensor, input_shape, pooling,
                   classes, classifier_activation, name)


def ResNet101V2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
                classifier_activation="softmax", name="resnet101v2"):
    """ResNet101V2 as ``keras.applications.ResNet101V2`` builds it (weights from a file, never downloaded).

    Args:
        include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation, name:
            as ``ResNet50``'s.

    Example:
        >>> model = ResNet101V2(weights=None, include_top=False, pooling="avg")
        >>> model.output.shape, model.count_params()
        ((None, 2048), 42626560)
    """
    return _resnet("ResNet101V2", (3, 4, 23, 3), True, include_top, weights, input_tensor, input_shape, pooling,
                   classes, classifier_activation, name)


def ResNet152V2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
                classifier_activation="softmax", name="resnet152v2"):
    """ResNet152V2 as ``keras.applications.ResNet152V2`` builds it (weights from a file, never downloaded).

    Args:
        include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation, name:
            as ``ResNet50``'s.

    Example:
        >>> model = ResNet152V2(weights=None, include_top=False, pooling="avg")
        >>> model.output.shape, model.count_params()
        ((None, 2048), 58331648)
    """
    return _resnet("ResNet152V2", (3, 8, 36, 3), True, include_top, weights, input_tensor, input_shape, pooling,
                   classes, classifier_activation, name)
