"""``keras.applications.inception_resnet_v2``: InceptionResNetV2."""

from layers.applications.inception_resnet_v2 import InceptionResNetV2

__all__ = ["InceptionResNetV2"]
