"""InceptionResNetV2 (Szegedy et al., 2017), as ``keras.applications`` builds it: an
Inception stem, then 10 ``block35``, 20 ``block17`` and 10 ``block8`` residual blocks
(parallel convolution branches, concatenated, projected back by a 1x1 convolution and added
to the block's input, scaled, by ``CustomScaleLayer``), with ``mixed_6a`` and ``mixed_7a``
halving the size between them, and a last 1x1 convolution to 1536 channels.

Only the blocks' concatenations, projections and activations are named, as in Keras; the
other layers are created in Keras' order, so Keras' weights files fit."""

from layers.applications._builders import documented
from layers.applications._common import check_weights, finish, head, image_input
from layers.applications.inception_v3 import conv2d_bn, conv2d_bn_chain, reduction_block, stem
from layers.applications.scale_layers import CustomScaleLayer
from layers.convolutional import Conv2D
from layers.core import Activation
from layers.merging import Concatenate
from layers.pooling import AveragePooling2D

# The branches of each residual block type, each a chain of (filters, kernel_size) convolutions.
_BRANCHES = {
    "block35": [[(32, 1)], [(32, 1), (32, 3)], [(32, 1), (48, 3), (64, 3)]],
    "block17": [[(192, 1)], [(128, 1), (160, (1, 7)), (192, (7, 1))]],
    "block8": [[(192, 1)], [(192, 1), (224, (1, 3)), (256, (3, 1))]],
}


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
    branches = [conv2d_bn_chain(x, *convs) for convs in _BRANCHES[block_type]]
    mixed = Concatenate(axis=3, name=f"{name}_mixed")(branches)
    up = Conv2D(x.shape[3], 1, use_bias=True, name=f"{name}_conv")(mixed)
    x = CustomScaleLayer(scale)([x, up])
    return x if activation is None else Activation(activation, name=f"{name}_ac")(x)


@documented("""
    >>> model = InceptionResNetV2(weights=None, input_shape=(75, 75, 3), classes=10)
    >>> model.output.shape, model.count_params()
    ((None, 10), 54352106)""", min_size=75, default_size=299)
def InceptionResNetV2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                      classes=1000, classifier_activation="softmax", name="inception_resnet_v2"):
    check_weights(weights, "InceptionResNetV2")
    img_input = image_input(input_shape, input_tensor, default_size=299, min_size=75, include_top=include_top)
    x = stem(img_input)
    x = Concatenate(axis=3, name="mixed_5b")([
        conv2d_bn_chain(x, (96, 1)),
        conv2d_bn_chain(x, (48, 1), (64, 5)),
        conv2d_bn_chain(x, (64, 1), (96, 3), (96, 3)),
        conv2d_bn(AveragePooling2D(3, strides=1, padding="same")(x), 64, 1),
    ])
    for block_idx in range(1, 11):
        x = inception_resnet_block(x, scale=0.17, block_type="block35", block_idx=block_idx)
    x = reduction_block(x, [[(384, 3, 2, "valid")], [(256, 1), (256, 3), (384, 3, 2, "valid")]], name="mixed_6a")
    for block_idx in range(1, 21):
        x = inception_resnet_block(x, scale=0.1, block_type="block17", block_idx=block_idx)
    x = reduction_block(x, [[(256, 1), (384, 3, 2, "valid")], [(256, 1), (288, 3, 2, "valid")],
                            [(256, 1), (288, 3), (320, 3, 2, "valid")]], name="mixed_7a")
    for block_idx in range(1, 11):
        x = inception_resnet_block(x, scale=0.2 if block_idx < 10 else 1.0, block_type="block8", block_idx=block_idx,
                                   activation="relu" if block_idx < 10 else None)
    x = conv2d_bn(x, 1536, 1, name="conv_7b")
    return finish(img_input, head(x, include_top, pooling, classes, classifier_activation), name, weights)
