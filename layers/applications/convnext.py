"""ConvNeXt (Liu et al., 2022), as ``keras.applications`` builds it: an optional ImageNet
normalization, a 4x4 stride-4 stem, then four stages of ConvNeXt blocks (7x7 depthwise
convolution, LayerNormalization, a 4x-wide GELU MLP, LayerScale, a residual sum), each stage
after the first opened by a 2x2 stride-2 downsampling. The stem and the downsamplings are
small ``Sequential`` models, as in Keras. The variants differ only in depths and widths."""

from engine import Sequential
from layers.applications._builders import documented
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


def _variant(builder: str, variant: str, example: str):
    """The public builder of one ConvNeXt variant (its depths and widths in ``_VARIANTS``), documented with
    ``example``."""
    def build(include_top=True, include_preprocessing=True, weights="imagenet", input_tensor=None, input_shape=None,
              pooling=None, classes=1000, classifier_activation="softmax", name=f"convnext_{variant}"):
        return _convnext(builder, variant, include_top, include_preprocessing, weights, input_tensor, input_shape,
                         pooling, classes, classifier_activation, name)
    build.__name__ = build.__qualname__ = builder
    depths, widths = _VARIANTS[variant]
    return documented(
        example, f"Stages of {', '.join(map(str, depths))} blocks, {', '.join(map(str, widths))} channels wide.",
        include_top="whether to end with the ``{name}_head_*`` classifier (pooling, LayerNormalization, Dense); "
                    "without it the network ends with a LayerNormalization.",
        include_preprocessing="whether to begin (on 3-channel inputs) with a Normalization layer holding "
                              "ImageNet's mean and variance, so the model takes 0-255 pixels.",
        pooling='without the classifier: None, ``"avg"`` or ``"max"`` (before the last LayerNormalization).',
        name="the model's name, and the prefix of its layers' names.")(build)


ConvNeXtTiny = _variant("ConvNeXtTiny", "tiny", """
    >>> model = ConvNeXtTiny(weights=None, input_shape=(32, 32, 3), classes=10)
    >>> model.output.shape, model.count_params()
    ((None, 10), 27827818)""")
ConvNeXtSmall = _variant("ConvNeXtSmall", "small", """
    >>> ConvNeXtSmall(weights=None, include_top=False, pooling="avg").output.shape
    (None, 768)""")
ConvNeXtBase = _variant("ConvNeXtBase", "base", """
    >>> ConvNeXtBase(weights=None, include_top=False, pooling="avg").output.shape
    (None, 1024)""")
# 197,767,336 and 350,196,968 parameters at the defaults: their examples build nothing.
ConvNeXtLarge = _variant("ConvNeXtLarge", "large", """
    >>> ConvNeXtLarge()
    Traceback (most recent call last):
    ValueError: ConvNeXtLarge(weights='imagenet'): nodeweave does not download pretrained weights. ...""")
ConvNeXtXLarge = _variant("ConvNeXtXLarge", "xlarge", """
    >>> ConvNeXtXLarge()
    Traceback (most recent call last):
    ValueError: ConvNeXtXLarge(weights='imagenet'): nodeweave does not download pretrained weights. ...""")
