"""ConvNeXt (Liu et al., 2022), as ``keras.applications`` builds it: an optional ImageNet
normalization, a 4x4 stride-4 stem, then four stages of ConvNeXt blocks (7x7 depthwise
convolution, LayerNormalization, a 4x-wide GELU MLP, LayerScale, a residual sum), each stage
after the first opened by a 2x2 stride-2 downsampling. The stem and the downsamplings are
small ``Sequential`` models, as in Keras. The variants differ only in depths and widths."""

from engine import Sequential
from layers.applications._common import check_weights, default_shape, finish, image_input, pool
from layers.applications.scale_layers import LayerScale
from layers.convolutional import Conv2D
from layers.core import Activation, Dense
from layers.normalization import LayerNormalization
from layers.pooling import GlobalAveragePooling2D
from layers.preprocessing import Normalization

# (blocks per stage, channels per stage) of each variant.
_VARIANTS = {
    "tiny": ((3, 3, 9, 3), (96, 192, 384, 768)),
    "small": ((3, 3, 27, 3), (96, 192, 384, 768)),
    "base": ((3, 3, 27, 3), (128, 256, 512, 1024)),
    "large": ((3, 3, 27, 3), (192, 384, 768, 1536)),
    "xlarge": ((3, 3, 27, 3), (256, 512, 1024, 2048)),
}
# ImageNet's per-channel mean and variance on the 0-255 scale: the first layer when include_preprocessing.
_IMAGENET_MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
_IMAGENET_VARIANCE = [(0.229 * 255) ** 2, (0.224 * 255) ** 2, (0.225 * 255) ** 2]


def _layer_norm(name=None):
    return LayerNormalization(epsilon=1e-6, name=name)


def convnext_block(x, projection_dim: int, name: str):
    """7x7 depthwise convolution, LayerNormalization, Dense to 4x, GELU, Dense back, LayerScale (1e-6),
    then ``x`` plus that (through Keras' ``_identity``, where training would drop paths).

    Args:
        x: the block's input, a 4-D KerasTensor with ``projection_dim`` channels.
        projection_dim: the block's number of channels.
        name: the prefix of its layers' names.

    Example:
        >>> from engine import Input
        >>> convnext_block(Input(shape=(8, 8, 16)), 16, "stage_0_block_0").shape
        (None, 8, 8, 16)
    """
    inputs = x
    x = Conv2D(projection_dim, kernel_size=7, padding="same", groups=projection_dim, name=f"{name}_depthwise_conv")(x)
    x = _layer_norm(f"{name}_layernorm")(x)
    x = Dense(4 * projection_dim, name=f"{name}_pointwise_conv_1")(x)
    x = Activation("gelu", name=f"{name}_gelu")(x)
    x = Dense(projection_dim, name=f"{name}_pointwise_conv_2")(x)
    x = LayerScale(1e-6, projection_dim, name=f"{name}_layer_scale")(x)
    return inputs + Activation("linear", name=f"{name}_identity")(x)


def _downsampling(projection_dims, name):
    """The stem (4x4 stride-4 convolution, LayerNormalization) and the three downsamplings
    (LayerNormalization, 2x2 stride-2 convolution) that open the stages."""
    stem = Sequential([Conv2D(projection_dims[0], kernel_size=4, strides=4, name=f"{name}_stem_conv"),
                       _layer_norm(f"{name}_stem_layernorm")], name=f"{name}_stem")
    return [stem] + [Sequential([_layer_norm(f"{name}_downsampling_layernorm_{i}"),
                                 Conv2D(dim, kernel_size=2, strides=2, name=f"{name}_downsampling_conv_{i}")],
                                name=f"{name}_downsampling_block_{i}") for i, dim in enumerate(projection_dims[1:])]


def _convnext(builder, variant, include_top, include_preprocessing, weights, input_tensor, input_shape, pooling,
              classes, classifier_activation, name):
    check_weights(weights, builder)
    depths, projection_dims = _VARIANTS[variant]
    img_input = image_input(input_shape, input_tensor, default_size=224, min_size=32, include_top=include_top)
    x = img_input
    if include_preprocessing and default_shape(input_shape, 224, include_top)[2] == 3:
        x = Normalization(mean=_IMAGENET_MEAN, variance=_IMAGENET_VARIANCE, name=f"{name}_prestem_normalization")(x)
    for stage, (downsampling, depth, dim) in enumerate(zip(_downsampling(projection_dims, name), depths,
                                                           projection_dims)):
        x = downsampling(x)
        for block in range(depth):
            x = convnext_block(x, dim, name=f"{name}_stage_{stage}_block_{block}")
    if include_top:
        x = GlobalAveragePooling2D(name=f"{name}_head_gap")(x)
        x = _layer_norm(f"{name}_head_layernorm")(x)
        x = Dense(classes, activation=classifier_activation, name=f"{name}_head_dense")(x)
    else:
        x = pool(x, pooling)
        x = _layer_norm()(x)
    return finish(img_input, x, name, weights)


def ConvNeXtTiny(include_top=True, include_preprocessing=True, weights="imagenet", input_tensor=None,
                 input_shape=None, pooling=None, classes=1000, classifier_activation="softmax", name="convnext_tiny"):
    """ConvNeXtTiny as ``keras.applications.ConvNeXtTiny`` builds it (weights from a file, never downloaded).

    Args:
        include_top: whether to end with the ``{name}_head_*`` classifier (pooling,
            LayerNormalization, Dense); without it the network ends with a LayerNormalization.
        include_preprocessing: whether to begin (on 3-channel inputs) with a Normalization
            layer holding ImageNet's mean and variance, so the model takes 0-255 pixels.
        weights: None (random weights) or the path of a weights file; ``"imagenet"``,
            Keras' default, raises a ValueError saying how to get those weights from Keras.
        input_tensor: a KerasTensor to build on instead of a new ``Input``.
        input_shape: ``(height, width, channels)``, at least 32x32; by default
            (224, 224, 3) with the classifier and (None, None, 3) without.
        pooling: without the classifier: None, ``"avg"`` or ``"max"`` (before the last LayerNormalization).
        classes: the classifier's number of classes.
        classifier_activation: the classifier's activation.
        name: the model's name, and the prefix of its layers' names.

    Example:
        >>> model = ConvNeXtTiny(weights=None, input_shape=(32, 32, 3), classes=10)
        >>> model.output.shape, model.count_params()
        ((None, 10), 27827818)
    """
    return _convnext("ConvNeXtTiny", "tiny", include_top, include_preprocessing, weights, input_tensor, input_shape,
                     pooling, classes, classifier_activation, name)


def ConvNeXtSmall(include_top=True, include_preprocessing=True, weights="imagenet", input_tensor=None,
                  input_shape=None, pooling=None, classes=1000, classifier_activation="softmax",
                  name="convnext_small"):
    """ConvNeXtSmall as ``keras.applications.ConvNeXtSmall`` builds it (weights from a file, never downloaded).

    Args:
        include_top, include_preprocessing, weights, input_tensor, input_shape, pooling, classes,
            classifier_activation, name: as ``ConvNeXtTiny``'s.

    Example:
        >>> ConvNeXtSmall(weights=None, include_top=False, pooling="avg").output.shape
        (None, 768)
    """
    return _convnext("ConvNeXtSmall", "small", include_top, include_preprocessing, weights, input_tensor, input_shape,
                     pooling, classes, classifier_activation, name)


def ConvNeXtBase(include_top=True, include_preprocessing=True, weights="imagenet", input_tensor=None,
                 input_shape=None, pooling=None, classes=1000, classifier_activation="softmax", name="convnext_base"):
    """ConvNeXtBase as ``keras.applications.ConvNeXtBase`` builds it (weights from a file, never downloaded).

    Args:
        include_top, include_preprocessing, weights, input_tensor, input_shape, pooling, classes,
            classifier_activation, name: as ``ConvNeXtTiny``'s.

    Example:
        >>> ConvNeXtBase(weights=None, include_top=False, pooling="avg").output.shape
        (None, 1024)
    """
    return _convnext("ConvNeXtBase", "base", include_top, include_preprocessing, weights, input_tensor, input_shape,
                     pooling, classes, classifier_activation, name)


def ConvNeXtLarge(include_top=True, include_preprocessing=True, weights="imagenet", input_tensor=None,
                  input_shape=None, pooling=None, classes=1000, classifier_activation="softmax",
                  name="convnext_large"):
    """ConvNeXtLarge as ``keras.applications.ConvNeXtLarge`` builds it (weights from a file, never downloaded).

    Args:
        include_top, include_preprocessing, weights, input_tensor, input_shape, pooling, classes,
            classifier_activation, name: as ``ConvNeXtTiny``'s.

    Example (with ``weights=None``, 197,767,336 parameters at the defaults; Keras' are not downloaded):
        >>> ConvNeXtLarge()
        Traceback (most recent call last):
        ValueError: ConvNeXtLarge(weights='imagenet'): nodeweave does not download pretrained weights. ...
    """
    return _convnext("ConvNeXtLarge", "large", include_top, include_preprocessing, weights, input_tensor, input_shape,
                     pooling, classes, classifier_activation, name)


def ConvNeXtXLarge(include_top=True, include_preprocessing=True, weights="imagenet", input_tensor=None,
                   input_shape=None, pooling=None, classes=1000, classifier_activation="softmax",
                   name="convnext_xlarge"):
    """ConvNeXtXLarge as ``keras.applications.ConvNeXtXLarge`` builds it (weights from a file, never downloaded).

    Args:
        include_top, include_preprocessing, weights, input_tensor, input_shape, pooling, classes,
            classifier_activation, name: as ``ConvNeXtTiny``'s.

    Example (with ``weights=None``, 350,196,968 parameters at the defaults; Keras' are not downloaded):
        >>> ConvNeXtXLarge()
        Traceback (most recent call last):
        ValueError: ConvNeXtXLarge(weights='imagenet'): nodeweave does not download pretrained weights. ...
    """
    return _convnext("ConvNeXtXLarge", "xlarge", include_top, include_preprocessing, weights, input_tensor,
                     input_shape, pooling, classes, classifier_activation, name)
