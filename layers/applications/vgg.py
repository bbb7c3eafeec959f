"""VGG16 and VGG19 (Simonyan and Zisserman, 2014), as ``keras.applications`` builds them:
five blocks of 3x3 ``relu`` convolutions, each closed by a 2x2 max pooling, then (with
the classifier) two 4096-wide ``relu`` layers."""

from layers.applications._builders import variant
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


def _variant(builder: str, convs_per_block: tuple[int, int, int, int, int]):
    """The public builder of the VGG of ``convs_per_block`` convolutions in its five blocks."""
    notes = f"Blocks of {', '.join(map(str, convs_per_block))} convolutions."
    return variant(builder, _vgg, convs_per_block, notes=notes,
                   include_top="whether to end with ``flatten``, ``fc1``, ``fc2`` and the classifier.")


VGG16 = _variant("VGG16", (2, 2, 3, 3, 3))
VGG19 = _variant("VGG19", (2, 2, 4, 4, 4))
