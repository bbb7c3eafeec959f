"""NASNet-A (Zoph et al., 2018), as ``keras.applications`` builds it: a strided stem, two
reduction cells, then three stages of ``num_blocks`` normal cells, the second and third
opened by a reduction cell. Each cell reads the outputs of the two cells before it
(``ip``, the last, and ``p``, the one before, first ``_adjust``-ed to ``ip``'s size and
width) and concatenates sums of separable convolutions and poolings of the two.

NASNetMobile and NASNetLarge differ in width, depth, stem and in which ``p`` follows a
reduction cell (``skip_reduction``: the Large one keeps the ``p`` from before it)."""

from layers.applications._builders import documented
from layers.applications._common import check_weights, correct_pad, finish, head, image_input
from layers.convolutional import Conv2D, SeparableConv2D
from layers.core import Activation
from layers.merging import add, concatenate
from layers.normalization import BatchNormalization
from layers.pooling import AveragePooling2D, MaxPooling2D
from layers.reshaping import Cropping2D, ZeroPadding2D


def _bn(name):
    return BatchNormalization(axis=-1, momentum=0.9997, epsilon=1e-3, name=name)


def _conv_1x1(x, filters, name):
    return Conv2D(filters, (1, 1), padding="same", use_bias=False, kernel_initializer="he_normal", name=name)(x)


def _separable_conv_block(x, filters: int, kernel_size: int = 3, strides: int = 1, block_id: str = ""):
    """Twice ReLU, separable convolution, BatchNormalization; the first convolution at ``strides``
    (stride 2: on TensorFlow-style zero padding, ``valid``)."""
    x = Activation("relu")(x)
    if strides == 2:
        x = ZeroPadding2D(padding=correct_pad(x, kernel_size), name=f"separable_conv_1_pad_{block_id}")(x)
    x = SeparableConv2D(filters, kernel_size, strides=strides, padding="valid" if strides == 2 else "same",
                        use_bias=False, name=f"separable_conv_1_{block_id}")(x)
    x = Activation("relu")(_bn(f"separable_conv_1_bn_{block_id}")(x))
    x = SeparableConv2D(filters, kernel_size, padding="same", use_bias=False, name=f"separable_conv_2_{block_id}")(x)
    return _bn(f"separable_conv_2_bn_{block_id}")(x)


def _adjust(p, ip, filters: int, block_id: str):
    """``p`` made to fit ``ip``: ``ip`` itself when there is no ``p``; halved in size (two offset 1x1 stride-2
    samplings, each projected to ``filters // 2``, concatenated) when wider than ``ip``; projected to
    ``filters`` when of another width."""
    if p is None:
        return ip
    if p.shape[-2] != ip.shape[-2]:
        p = Activation("relu", name=f"adjust_relu_1_{block_id}")(p)
        p1 = AveragePooling2D((1, 1), strides=(2, 2), padding="valid", name=f"adjust_avg_pool_1_{block_id}")(p)
        p1 = _conv_1x1(p1, filters // 2, f"adjust_conv_1_{block_id}")
        p2 = Cropping2D(cropping=((1, 0), (1, 0)))(ZeroPadding2D(padding=((0, 1), (0, 1)))(p))
        p2 = AveragePooling2D((1, 1), strides=(2, 2), padding="valid", name=f"adjust_avg_pool_2_{block_id}")(p2)
        p2 = _conv_1x1(p2, filters // 2, f"adjust_conv_2_{block_id}")
        return _bn(f"adjust_bn_{block_id}")(concatenate([p1, p2], axis=-1))
    if p.shape[-1] != filters:
        p = _conv_1x1(Activation("relu")(p), filters, f"adjust_conv_projection_{block_id}")
        return _bn(f"adjust_bn_{block_id}")(p)
    return p


def _avg_pool(x, strides, name):
    return AveragePooling2D((3, 3), strides=strides, padding="same" if strides == 1 else "valid", name=name)(x)


def _normal_cell(ip, p, filters: int, block_id: str):
    """Five sums of separable convolutions, average poolings and identities of ``h`` (``ip`` projected)
    and ``p``, concatenated with ``p``. Returns the cell's output and ``ip`` (the next cell's ``p``)."""
    p = _adjust(p, ip, filters, block_id)
    h = _bn(f"normal_bn_1_{block_id}")(_conv_1x1(Activation("relu")(ip), filters, f"normal_conv_1_{block_id}"))
    x1 = add([_separable_conv_block(h, filters, 5, block_id=f"normal_left1_{block_id}"),
              _separable_conv_block(p, filters, 3, block_id=f"normal_right1_{block_id}")],
             name=f"normal_add_1_{block_id}")
    x2 = add([_separable_conv_block(p, filters, 5, block_id=f"normal_left2_{block_id}"),
              _separable_conv_block(p, filters, 3, block_id=f"normal_right2_{block_id}")],
             name=f"normal_add_2_{block_id}")
    x3 = add([_avg_pool(h, 1, f"normal_left3_{block_id}"), p], name=f"normal_add_3_{block_id}")
    x4 = add([_avg_pool(p, 1, f"normal_left4_{block_id}"), _avg_pool(p, 1, f"normal_right4_{block_id}")],
             name=f"normal_add_4_{block_id}")
    x5 = add([_separable_conv_block(h, filters, 3, block_id=f"normal_left5_{block_id}"), h],
             name=f"normal_add_5_{block_id}")
    return concatenate([p, x1, x2, x3, x4, x5], axis=-1, name=f"normal_concat_{block_id}"), ip


def _reduction_cell(ip, p, filters: int, block_id: str):
    """Sums of stride-2 separable convolutions and poolings of ``h`` (``ip`` projected) and ``p``, halving the
    size, concatenated. Returns the cell's output and ``ip`` (the next cell's ``p``)."""
    p = _adjust(p, ip, filters, block_id)
    h = _bn(f"reduction_bn_1_{block_id}")(_conv_1x1(Activation("relu")(ip), filters, f"reduction_conv_1_{block_id}"))
    h3 = ZeroPadding2D(padding=correct_pad(h, 3), name=f"reduction_pad_1_{block_id}")(h)
    x1 = add([_separable_conv_block(h, filters, 5, strides=2, block_id=f"reduction_left1_{block_id}"),
              _separable_conv_block(p, filters, 7, strides=2, block_id=f"reduction_right1_{block_id}")],
             name=f"reduction_add_1_{block_id}")
    x2 = add([MaxPooling2D((3, 3), strides=(2, 2), padding="valid", name=f"reduction_left2_{block_id}")(h3),
              _separable_conv_block(p, filters, 7, strides=2, block_id=f"reduction_right2_{block_id}")],
             name=f"reduction_add_2_{block_id}")
    x3 = add([_avg_pool(h3, 2, f"reduction_left3_{block_id}"),
              _separable_conv_block(p, filters, 5, strides=2, block_id=f"reduction_right3_{block_id}")],
             name=f"reduction_add3_{block_id}")
    x4 = add([x2, _avg_pool(x1, 1, f"reduction_left4_{block_id}")])
    x5 = add([_separable_conv_block(x1, filters, 3, block_id=f"reduction_left4_{block_id}"),
              MaxPooling2D((3, 3), strides=(2, 2), padding="valid", name=f"reduction_right5_{block_id}")(h3)],
             name=f"reduction_add4_{block_id}")
    return concatenate([x2, x3, x4, x5], axis=-1, name=f"reduction_concat_{block_id}"), ip


def _nasnet(builder, input_shape, penultimate_filters, num_blocks, stem_block_filters, skip_reduction, include_top,
            weights, input_tensor, pooling, classes, default_size, classifier_activation, name):
    check_weights(weights, builder)
    img_input = image_input(input_shape, input_tensor, default_size=default_size, min_size=32,
                            include_top=include_top)
    filters = penultimate_filters // 24
    x = Conv2D(stem_block_filters, (3, 3), strides=(2, 2), padding="valid", use_bias=False,
               kernel_initializer="he_normal", name="stem_conv1")(img_input)
    x = _bn("stem_bn1")(x)
    x, p = _reduction_cell(x, None, filters // 4, block_id="stem_1")
    x, p = _reduction_cell(x, p, filters // 2, block_id="stem_2")
    for stage in range(3):  # normal cells are numbered across the stages, skipping the reductions' numbers
        width = filters * 2 ** stage
        if stage:
            x, reduced_p = _reduction_cell(x, p, width, block_id=f"reduce_{stage * num_blocks}")
            p = p if skip_reduction else reduced_p
        for i in range(num_blocks):
            x, p = _normal_cell(x, p, width, block_id=str(stage * num_blocks + min(stage, 1) + i))
    x = Activation("relu")(x)
    x = head(x, include_top, pooling, classes, classifier_activation, top_pool_name=None)
    return finish(img_input, x, name, weights)


@documented("""
    >>> model = NASNetMobile(weights=None, input_shape=(32, 32, 3), classes=10)
    >>> model.output.shape, model.count_params()
    ((None, 10), 4280286)""", "NASNet-A 4@1056.",
            input_shape="``(height, width, channels)``, at least 32x32; by default (224, 224, 3).")
def NASNetMobile(input_shape=None, include_top=True, weights="imagenet", input_tensor=None, pooling=None,
                 classes=1000, classifier_activation="softmax", name="nasnet_mobile"):
    if not include_top and input_shape is None:
        input_shape = (224, 224, 3)
    return _nasnet("NASNetMobile", input_shape, penultimate_filters=1056, num_blocks=4, stem_block_filters=32,
                   skip_reduction=False, include_top=include_top, weights=weights, input_tensor=input_tensor,
                   pooling=pooling, classes=classes, default_size=224, classifier_activation=classifier_activation,
                   name=name)


@documented("""
    >>> model = NASNetLarge(weights=None, input_shape=(32, 32, 3), classes=10)
    >>> model.output.shape, model.count_params()
    ((None, 10), 84957148)""", "NASNet-A 6@4032.", default_size=331)
def NASNetLarge(input_shape=None, include_top=True, weights="imagenet", input_tensor=None, pooling=None,
                classes=1000, classifier_activation="softmax", name="nasnet_large"):
    return _nasnet("NASNetLarge", input_shape, penultimate_filters=4032, num_blocks=6, stem_block_filters=96,
                   skip_reduction=True, include_top=include_top, weights=weights, input_tensor=input_tensor,
                   pooling=pooling, classes=classes, default_size=331, classifier_activation=classifier_activation,
                   name=name)
