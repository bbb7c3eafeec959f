"""``keras.applications``: the architectures' builders, from nodeweave's own code, without downloaded
weights (``weights=None``, or a weights file; ``"imagenet"`` says how to bring Keras' weights). As in
Keras, each family also has its module: ``applications.mobilenet.MobileNet``, ``applications.resnet50``..."""

import layers.applications as _ours
from nodeweave.applications import (convnext, densenet, efficientnet, efficientnet_v2, inception_resnet_v2,
                                   inception_v3, mobilenet, mobilenet_v2, mobilenet_v3, nasnet, resnet, resnet50,
                                   resnet_v2, vgg16, vgg19, xception)

# Every builder of layers.applications; the two layers it also holds are no builders (Keras keeps them private).
BUILDERS = [name for name in _ours.__all__ if name not in ("CustomScaleLayer", "LayerScale")]
globals().update({name: getattr(_ours, name) for name in BUILDERS})

__all__ = ["convnext", "densenet", "efficientnet", "efficientnet_v2", "inception_resnet_v2", "inception_v3",
           "mobilenet", "mobilenet_v2", "mobilenet_v3", "nasnet", "resnet", "resnet50", "resnet_v2", "vgg16", "vgg19",
           "xception", *BUILDERS]
