"""DenseNet (Huang et al., 2017), as ``keras.applications`` builds it: four dense blocks
(each conv block concatenates 32 new channels to its input) joined by transition blocks
that halve the channels and the size."""

from layers.applications._builders import variant
from layers.applications._common import check_weights, finish, head, image_input
from layers.convolutional import Conv2D
from layers.core import Activation
from layers.merging import Concatenate
from layers.normalization import BatchNormalization
from layers.pooling import AveragePooling2D, MaxPooling2D
from layers.reshaping import ZeroPadding2D

_EPSILON = 1.001e-5


def _bn_relu(x, name):
    x = BatchNormalization(axis=3, epsilon=_EPSILON, name=f"{name}_bn")(x)
    return Activation("relu", name=f"{name}_relu")(x)


def conv_block(x, growth_rate: int, name: str):
    """BN-ReLU-1x1 (``4 * growth_rate``), BN-ReLU-3x3 (``growth_rate``), concatenated to ``x``."""
    new = Conv2D(4 * growth_rate, 1, use_bias=False, name=f"{name}_1_conv")(_bn_relu(x, f"{name}_0"))
    new = Conv2D(growth_rate, 3, padding="same", use_bias=False, name=f"{name}_2_conv")(_bn_relu(new, f"{name}_1"))
    return Concatenate(axis=3, name=f"{name}_concat")([x, new])


def transition_block(x, reduction: float, name: str):
    """BN-ReLU, a 1x1 convolution to ``reduction`` of the channels, a 2x2 average pooling."""
    x = _bn_relu(x, name)
    x = Conv2D(int(x.shape[3] * reduction), 1, use_bias=False, name=f"{name}_conv")(x)
    return AveragePooling2D(2, strides=2, name=f"{name}_pool")(x)


def _densenet(builder, blocks, include_top, weights, input_tensor, input_shape, pooling, classes,
              classifier_activation, name):
    check_weights(weights, builder)
    img_input = image_input(input_shape, input_tensor, default_size=224, min_size=32, include_top=include_top)
    x = ZeroPadding2D(padding=((3, 3), (3, 3)))(img_input)
    x = Conv2D(64, 7, strides=2, use_bias=False, name="conv1_conv")(x)
    x = _bn_relu(x, "conv1")
    x = ZeroPadding2D(padding=((1, 1), (1, 1)))(x)
    x = MaxPooling2D(3, strides=2, name="pool1")(x)
    for stage, count in enumerate(blocks, start=2):
        for i in range(1, count + 1):
            x = conv_block(x, 32, name=f"conv{stage}_block{i}")
        if stage < 5:
            x = transition_block(x, 0.5, name=f"pool{stage}")
    x = Activation("relu", name="relu")(BatchNormalization(axis=3, epsilon=_EPSILON, name="bn")(x))
    x = head(x, include_top, pooling, classes, classifier_activation, avg_name="avg_pool", max_name="max_pool")
    return finish(img_input, x, name, weights)


def _variant(builder: str, blocks: tuple[int, int, int, int]):
    """The public builder of the DenseNet of ``blocks`` conv blocks in its four dense blocks."""
    return variant(builder, _densenet, blocks, notes=f"Dense blocks of {', '.join(map(str, blocks))} conv blocks.")


DenseNet121 = _variant("DenseNet121", (6, 12, 24, 16))
DenseNet169 = _variant("DenseNet169", (6, 12, 32, 32))
DenseNet201 = _variant("DenseNet201", (6, 12, 48, 32))
