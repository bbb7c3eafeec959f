"""``keras.applications.vgg16``: VGG16."""

from layers.applications.vgg import VGG16

__all__ = ["VGG16"]
