"""InceptionResNetV2 (Szegedy et al., 2017), as ``keras.applications`` builds it: an
Inception stem, then 10 ``block35``, 20 ``block17`` and 10 ``block8`` residual blocks
(parallel convolution branches, concatenated, projected back by a 1x1 convolution and added
to the block's input, scaled, by ``CustomScaleLayer``), with ``mixed_6a`` and ``mixed_7a``
halving the size between them, and a last 1x1 convolution to 1536 channels.

Only the blocks' concatenations, projections and activations are named, as in Keras; the
other layers are created in Keras' order, so Keras' weights files fit."""

from layers.applications._common import check_weights, finish, head, image_input
from layers.applications.scale_layers import CustomScaleLayer
from layers.convolutional import Conv2D
from layers.core import Activation
from layers.merging import Concatenate
from layers.normalization import BatchNormalization
from layers.pooling import AveragePooling2D, MaxPooling2D

# The branches of each residual block type, each a chain of (filters, kernel_size) convolutions.
_BRANCHES = {
    "block35": [[(32, 1)], [(32, 1), (32, 3)], [(32, 1), (48, 3), (64, 3)]],
    "block17": [[(192, 1)], [(128, 1), (160, (1, 7)), (192, (7, 1))]],
    "block8": [[(192, 1)], [(192, 1), (224, (1, 3)), (256, (3, 1))]],
}


def conv2d_bn(x, filters: int, kernel_size, strides: int = 1, padding: str = "same", name: str | None = None):
    """A convolution without bias, a BatchNormalization without scale and a ReLU, named ``name``,
    ``{name}_bn`` and ``{name}_ac`` (or automatically).

    Args:
        x: the input, a 4-D KerasTensor (channels last).
        filters: the convolution's number of filters.
        kernel_size: an integer or ``(rows, columns)``.
        strides: its strides.
        padding: ``"same"`` or ``"valid"``.
        name: the convolution's name, and its two followers' prefix; None to leave all three automatic.

    Example:
        >>> from engine import Input
        >>> x = conv2d_bn(Input(shape=(8, 8, 3)), 16, 1, name="conv_7b")
        >>> x._keras_history[0].name, x.shape
        ('conv_7b_ac', (None, 8, 8, 16))
    """
    x = Conv2D(filters, kernel_size, strides=strides, padding=padding, use_bias=False, name=name)(x)
    x = BatchNormalization(axis=3, scale=False, name=name and f"{name}_bn")(x)
    return Activation("relu", name=name and f"{name}_ac")(x)


def _chain(x, *convs):
    """``conv2d_bn`` for each ``(filters, kernel_size[, strides, padding])`` in turn."""
    for conv in convs:
        x = conv2d_bn(x, *conv)
    return x


def inception_resnet_block(x, scale: float, block_type: str, block_idx: int, activation: str | None = "relu"):
    """``x + scale * conv1x1(concat(branches))``, then ``activation`` (the very last block has none).

    Args:
        x: the block's input, a 4-D KerasTensor (channels last).
        scale: the factor of the residual branch.
        block_type: ``"block35"``, ``"block17"`` or ``"block8"`` (the branches of ``_BRANCHES``).
        block_idx: the block's number, in its layers' names (``block35_3_mixed``).
        activation: the activation after the sum, or None.

    Example:
        >>> from engine import Input
        >>> y = inception_resnet_block(Input(shape=(8, 8, 320)), 0.17, "block35", 1)
        >>> y._keras_history[0].name, y.shape
        ('block35_1_ac', (None, 8, 8, 320))
    """
    name = f"{block_type}_{block_idx}"
    mixed = Concatenate(axis=3, name=f"{name}_mixed")([_chain(x, *convs) for convs in _BRANCHES[block_type]])
    up = Conv2D(x.shape[3], 1, use_bias=True, name=f"{name}_conv")(mixed)
    x = CustomScaleLayer(scale)([x, up])
    return x if activation is None else Activation(activation, name=f"{name}_ac")(x)


def _reduction(x, branches, name):
    """Strided convolution ``branches`` and a 3x3 stride-2 max pooling, concatenated."""
    convolved = [_chain(x, *convs) for convs in branches]
    return Concatenate(axis=3, name=name)(convolved + [MaxPooling2D(3, strides=2, padding="valid")(x)])


def InceptionResNetV2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                      classes=1000, classifier_activation="softmax", name="inception_resnet_v2"):
    """InceptionResNetV2 as ``keras.applications.InceptionResNetV2`` builds it (weights from a file, never
    downloaded).

    Args:
        include_top: whether to end with the pooled ``predictions`` classifier.
        weights: None (random weights) or the path of a weights file; ``"imagenet"``,
            Keras' default, raises a ValueError saying how to get those weights from Keras.
        input_tensor: a KerasTensor to build on instead of a new ``Input``.
        input_shape: ``(height, width, channels)``, at least 75x75; by default
            (299, 299, 3) with the classifier and (None, None, 3) without.
        pooling: without the classifier: None, ``"avg"`` or ``"max"``.
        classes: the classifier's number of classes.
        classifier_activation: the classifier's activation.
        name: the model's name.

    Example:
        >>> model = InceptionResNetV2(weights=None, input_shape=(75, 75, 3), classes=10)
        >>> model.output.shape, model.count_params()
        ((None, 10), 54352106)
    """
    check_weights(weights, "InceptionResNetV2")
    img_input = image_input(input_shape, input_tensor, default_size=299, min_size=75, include_top=include_top)
    x = _chain(img_input, (32, 3, 2, "valid"), (32, 3, 1, "valid"), (64, 3))
    x = MaxPooling2D(3, strides=2)(x)
    x = _chain(x, (80, 1, 1, "valid"), (192, 3, 1, "valid"))
    x = MaxPooling2D(3, strides=2)(x)
    x = Concatenate(axis=3, name="mixed_5b")([
        _chain(x, (96, 1)),
        _chain(x, (48, 1), (64, 5)),
        _chain(x, (64, 1), (96, 3), (96, 3)),
        conv2d_bn(AveragePooling2D(3, strides=1, padding="same")(x), 64, 1),
    ])
    for block_idx in range(1, 11):
        x = inception_resnet_block(x, scale=0.17, block_type="block35", block_idx=block_idx)
    x = _reduction(x, [[(384, 3, 2, "valid")], [(256, 1), (256, 3), (384, 3, 2, "valid")]], name="mixed_6a")
    for block_idx in range(1, 21):
        x = inception_resnet_block(x, scale=0.1, block_type="block17", block_idx=block_idx)
    x = _reduction(x, [[(256, 1), (384, 3, 2, "valid")], [(256, 1), (288, 3, 2, "valid")],
                       [(256, 1), (288, 3), (320, 3, 2, "valid")]], name="mixed_7a")
    for block_idx in range(1, 11):
        x = inception_resnet_block(x, scale=0.2 if block_idx < 10 else 1.0, block_type="block8", block_idx=block_idx,
                                   activation="relu" if block_idx < 10 else None)
    x = conv2d_bn(x, 1536, 1, name="conv_7b")
    return finish(img_input, head(x, include_top, pooling, classes, classifier_activation), name, weights)
