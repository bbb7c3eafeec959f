"""``keras.applications.inception_v3``: InceptionV3."""

from layers.applications.inception_v3 import InceptionV3

__all__ = ["InceptionV3"]
