"""VGG16 and VGG19 (Simonyan and Zisserman, 2014), as ``keras.applications`` builds them:
five blocks of 3x3 ``relu`` convolutions, each closed by a 2x2 max pooling, then (with
the classifier) two 4096-wide ``relu`` layers."""

from layers.applications._common import check_weights, finish, image_input, pool
from layers.convolutional import Conv2D
from layers.core import Dense
from layers.pooling import MaxPooling2D
from layers.reshaping import Flatten

_FILTERS = (64, 128, 256, 512, 512)


def _vgg(builder, convs_per_block, include_top, weights, input_tensor, input_shape, pooling, classes,
         classifier_activation, name):
    check_weights(weights, builder)
    img_input = image_input(input_shape, input_tensor, default_size=224, min_size=32, include_top=include_top)
    x = img_input
    for block, (filters, convs) in enumerate(zip(_FILTERS, convs_per_block), start=1):
        for conv in range(1, convs + 1):
            x = Conv2D(filters, (3, 3), activation="relu", padding="same", name=f"block{block}_conv{conv}")(x)
        x = MaxPooling2D((2, 2), strides=(2, 2), name=f"block{block}_pool")(x)
    if include_top:
        x = Flatten(name="flatten")(x)
        x = Dense(4096, activation="relu", name="fc1")(x)
        x = Dense(4096, activation="relu", name="fc2")(x)
        x = Dense(classes, activation=classifier_activation, name="predictions")(x)
    else:
        x = pool(x, pooling)
    return finish(img_input, x, name, weights)


def VGG16(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
          classifier_activation="softmax", name="vgg16"):
    """VGG16 as ``keras.applications.VGG16`` builds it (weights from a file, never downloaded).

    Args:
        include_top: whether to end with ``flatten``, ``fc1``, ``fc2`` and the classifier.
        weights: None (random weights) or the path of a weights file; ``"imagenet"``,
            Keras' default, raises a ValueError saying how to get those weights from Keras.
        input_tensor: a KerasTensor to build on instead of a new ``Input``.
        input_shape: ``(height, width, channels)``, at least 32x32; by default
            (224, 224, 3) with the classifier and (None, None, 3) without.
        pooling: without the classifier: None, ``"avg"`` or ``"max"``.
        classes: the classifier's number of classes.
        classifier_activation: the classifier's activation.
        name: the model's name.

    Example:
        >>> VGG16(weights=None, include_top=False, input_shape=(32, 32, 3)).output.shape
        (None, 1, 1, 512)
    """
    return _vgg("VGG16", (2, 2, 3, 3, 3), include_top, weights, input_tensor, input_shape, pooling, classes,
                classifier_activation, name)


def VGG19(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
          classifier_activation="softmax", name="vgg19"):
    """VGG19 as ``keras.applications.VGG19`` builds it (weights from a file, never downloaded).

    Args:
        include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation, name:
            as ``VGG16``'s.

    Example:
        >>> model = VGG19(weights=None, include_top=False, pooling="avg")
        >>> model.output.shape, model.count_params()
        ((None, 512), 20024384)
    """
    return _vgg("VGG19", (2, 2, 4, 4, 4), include_top, weights, input_tensor, input_shape, pooling, classes,
                classifier_activation, name)
