"""InceptionV3 (Szegedy et al., 2016), as ``keras.applications`` builds it: a stem of
convolutions and poolings, then eleven ``mixed`` blocks that concatenate parallel branches
(1x1, factorized 5x5/7x7/3x3 convolutions, a pooled 1x1), two of them halving the size.

Every convolution is ``conv2d_bn`` (no bias, BatchNormalization without scale, ReLU) and,
as in Keras, left for the session to name: only the ``mixed*`` concatenations have names.
The layers are created in Keras' order, so Keras' weights files (which list the layers in
that order) fit."""

from layers.applications._builders import documented
from layers.applications._common import check_weights, finish, head, image_input
from layers.convolutional import Conv2D
from layers.core import Activation
from layers.merging import concatenate
from layers.normalization import BatchNormalization
from layers.pooling import AveragePooling2D, MaxPooling2D


def conv2d_bn(x, filters: int, kernel_size, strides: int = 1, padding: str = "same", name: str | None = None):
    """A convolution without bias, a BatchNormalization without scale and a ReLU, named ``name``,
    ``{name}_bn`` and ``{name}_ac``, or automatically (InceptionV3's and InceptionResNetV2's).

    Args:
        x: the input, a 4-D KerasTensor (channels last).
        filters: the convolution's number of filters.
        kernel_size: an integer or ``(rows, columns)``.
        strides: its strides.
        padding: ``"same"`` or ``"valid"``.
        name: the convolution's name, and its two followers' prefix; None to leave all three automatic.

    Example:
        >>> from engine import Input
        >>> conv2d_bn(Input(shape=(9, 9, 3)), 8, (1, 7), padding="valid").shape
        (None, 9, 3, 8)
        >>> x = conv2d_bn(Input(shape=(8, 8, 3)), 16, 1, name="conv_7b")
        >>> x._keras_history[0].name, x.shape
        ('conv_7b_ac', (None, 8, 8, 16))
    """
    x = Conv2D(filters, kernel_size, strides=strides, padding=padding, use_bias=False, name=name)(x)
    x = BatchNormalization(axis=3, scale=False, name=name and f"{name}_bn")(x)
    return Activation("relu", name=name and f"{name}_ac")(x)


def conv2d_bn_chain(x, *convs):
    """``conv2d_bn`` for each of ``convs`` in turn.

    Args:
        x: the input, a 4-D KerasTensor (channels last).
        *convs: ``conv2d_bn``'s arguments after ``x`` for each convolution: ``(filters, kernel_size[, strides,
            padding])``.

    Example:
        >>> from engine import Input
        >>> conv2d_bn_chain(Input(shape=(9, 9, 3)), (8, 1), (16, 3, 2, "valid")).shape
        (None, 4, 4, 16)
    """
    for conv in convs:
        x = conv2d_bn(x, *conv)
    return x


def _pooled(x, filters: int):
    """A 3x3 stride-1 average pooling then a 1x1 ``conv2d_bn``: every full block's last branch."""
    return conv2d_bn(AveragePooling2D((3, 3), strides=(1, 1), padding="same")(x), filters, (1, 1))


def _block_5x5(x, pool_filters: int, name: str):
    """``mixed0``-``mixed2`` (35x35 grid): 1x1, 1x1-5x5, 1x1-3x3-3x3 and pooled branches."""
    return concatenate([conv2d_bn_chain(x, (64, (1, 1))),
                        conv2d_bn_chain(x, (48, (1, 1)), (64, (5, 5))),
                        conv2d_bn_chain(x, (64, (1, 1)), (96, (3, 3)), (96, (3, 3))),
                        _pooled(x, pool_filters)], axis=3, name=name)


def _block_7x7(x, width: int, name: str):
    """``mixed4``-``mixed7`` (17x17 grid): 7x7 convolutions factorized into 1x7 and 7x1 ones, ``width`` wide."""
    return concatenate([conv2d_bn_chain(x, (192, (1, 1))),
                        conv2d_bn_chain(x, (width, (1, 1)), (width, (1, 7)), (192, (7, 1))),
                        conv2d_bn_chain(x, (width, (1, 1)), (width, (7, 1)), (width, (1, 7)), (width, (7, 1)),
                                        (192, (1, 7))),
                        _pooled(x, 192)], axis=3, name=name)


def _block_3x3(x, index: int):
    """``mixed9``/``mixed10`` (8x8 grid): 3x3 convolutions split into parallel 1x3 and 3x1 ones."""
    branch1x1 = conv2d_bn_chain(x, (320, (1, 1)))
    branch3x3 = conv2d_bn_chain(x, (384, (1, 1)))
    branch3x3 = concatenate([conv2d_bn_chain(branch3x3, (384, (1, 3))), conv2d_bn_chain(branch3x3, (384, (3, 1)))],
                            axis=3, name=f"mixed9_{index}")
    branch3x3dbl = conv2d_bn_chain(x, (448, (1, 1)), (384, (3, 3)))
    branch3x3dbl = concatenate([conv2d_bn_chain(branch3x3dbl, (384, (1, 3))),
                                conv2d_bn_chain(branch3x3dbl, (384, (3, 1)))], axis=3)
    return concatenate([branch1x1, branch3x3, branch3x3dbl, _pooled(x, 192)], axis=3, name=f"mixed{9 + index}")


def reduction_block(x, branches, name: str):
    """Strided ``branches`` and a 3x3 stride-2 max pooling, concatenated (InceptionV3's and InceptionResNetV2's
    halvings).

    Args:
        x: the input, a 4-D KerasTensor (channels last).
        branches: a list of ``conv2d_bn_chain`` specifications, one a branch, each ending at stride 2.
        name: the concatenation's name.

    Example:
        >>> from engine import Input
        >>> reduction_block(Input(shape=(9, 9, 4)), [[(8, 3, 2, "valid")]], name="mixed3").shape
        (None, 4, 4, 12)
    """
    convolved = [conv2d_bn_chain(x, *convs) for convs in branches]
    return concatenate(convolved + [MaxPooling2D((3, 3), strides=(2, 2))(x)], axis=3, name=name)


def stem(x):
    """Three 3x3 convolutions (the first at stride 2), a max pooling, a 1x1 and a 3x3 convolution, a max
    pooling: the first layers of InceptionV3 and InceptionResNetV2, a quarter of the size.

    Args:
        x: the image input, a 4-D KerasTensor (channels last).

    Example:
        >>> from engine import Input
        >>> stem(Input(shape=(75, 75, 3))).shape
        (None, 7, 7, 192)
    """
    x = conv2d_bn_chain(x, (32, (3, 3), 2, "valid"), (32, (3, 3), 1, "valid"), (64, (3, 3)))
    x = MaxPooling2D((3, 3), strides=(2, 2))(x)
    x = conv2d_bn_chain(x, (80, (1, 1), 1, "valid"), (192, (3, 3), 1, "valid"))
    return MaxPooling2D((3, 3), strides=(2, 2))(x)


@documented("""
    >>> model = InceptionV3(weights=None, input_shape=(75, 75, 3), classes=10)
    >>> model.output.shape, model.count_params()
    ((None, 10), 21823274)""", min_size=75, default_size=299)
def InceptionV3(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                classes=1000, classifier_activation="softmax", name="inception_v3"):
    check_weights(weights, "InceptionV3")
    img_input = image_input(input_shape, input_tensor, default_size=299, min_size=75, include_top=include_top)
    x = stem(img_input)
    for index, pool_filters in enumerate((32, 64, 64)):
        x = _block_5x5(x, pool_filters, name=f"mixed{index}")
    x = reduction_block(x, [[(384, (3, 3), 2, "valid")],
                            [(64, (1, 1)), (96, (3, 3)), (96, (3, 3), 2, "valid")]], name="mixed3")
    for index, width in enumerate((128, 160, 160, 192), start=4):
        x = _block_7x7(x, width, name=f"mixed{index}")
    x = reduction_block(x, [[(192, (1, 1)), (320, (3, 3), 2, "valid")],
                            [(192, (1, 1)), (192, (1, 7)), (192, (7, 1)), (192, (3, 3), 2, "valid")]], name="mixed8")
    for index in range(2):
        x = _block_3x3(x, index)
    return finish(img_input, head(x, include_top, pooling, classes, classifier_activation), name, weights)
