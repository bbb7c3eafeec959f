"""Xception (Chollet, 2017), as ``keras.applications`` builds it: an entry flow of
downsampling blocks (two separable convolutions and a max pooling, summed with a strided
1x1 shortcut), eight 728-wide residual middle blocks, and an exit flow to 2048 channels."""

from layers.applications._builders import documented
from layers.applications._common import check_weights, finish, head, image_input
from layers.convolutional import Conv2D, SeparableConv2D
from layers.core import Activation
from layers.merging import add
from layers.normalization import BatchNormalization
from layers.pooling import MaxPooling2D


def _separable(x, filters, name):
    x = SeparableConv2D(filters, (3, 3), padding="same", use_bias=False, name=name)(x)
    return BatchNormalization(axis=-1, name=f"{name}_bn")(x)


def downsampling_block(x, filters: tuple[int, int], block: int, activate_first: bool = True):
    """Two separable 3x3 convolutions then a 3x3 stride-2 max pooling, plus a strided 1x1 shortcut
    (block 2 starts without the ReLU: its input has just had one)."""
    residual = Conv2D(filters[1], (1, 1), strides=(2, 2), padding="same", use_bias=False)(x)
    residual = BatchNormalization(axis=-1)(residual)
    if activate_first:
        x = Activation("relu", name=f"block{block}_sepconv1_act")(x)
    x = _separable(x, filters[0], f"block{block}_sepconv1")
    x = Activation("relu", name=f"block{block}_sepconv2_act")(x)
    x = _separable(x, filters[1], f"block{block}_sepconv2")
    x = MaxPooling2D((3, 3), strides=(2, 2), padding="same", name=f"block{block}_pool")(x)
    return add([x, residual])


def middle_block(x, block: int):
    """Three ReLU-separable-BN steps at 728 channels, summed with the block's input."""
    residual = x
    for step in (1, 2, 3):
        x = Activation("relu", name=f"block{block}_sepconv{step}_act")(x)
        x = _separable(x, 728, f"block{block}_sepconv{step}")
    return add([x, residual])


@documented("""
    >>> Xception(weights=None, input_shape=(71, 71, 3), classes=2).output.shape
    (None, 2)""", min_size=71, default_size=299)
def Xception(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
             classifier_activation="softmax", name="xception"):
    check_weights(weights, "Xception")
    img_input = image_input(input_shape, input_tensor, default_size=299, min_size=71, include_top=include_top)
    x = Conv2D(32, (3, 3), strides=(2, 2), use_bias=False, name="block1_conv1")(img_input)
    x = Activation("relu", name="block1_conv1_act")(BatchNormalization(axis=-1, name="block1_conv1_bn")(x))
    x = Conv2D(64, (3, 3), use_bias=False, name="block1_conv2")(x)
    x = Activation("relu", name="block1_conv2_act")(BatchNormalization(axis=-1, name="block1_conv2_bn")(x))
    x = downsampling_block(x, (128, 128), block=2, activate_first=False)
    x = downsampling_block(x, (256, 256), block=3)
    x = downsampling_block(x, (728, 728), block=4)
    for block in range(5, 13):
        x = middle_block(x, block)
    x = downsampling_block(x, (728, 1024), block=13)
    x = Activation("relu", name="block14_sepconv1_act")(_separable(x, 1536, "block14_sepconv1"))
    x = Activation("relu", name="block14_sepconv2_act")(_separable(x, 2048, "block14_sepconv2"))
    return finish(img_input, head(x, include_top, pooling, classes, classifier_activation), name, weights)
