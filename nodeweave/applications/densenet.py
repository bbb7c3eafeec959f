"""``keras.applications.densenet``: DenseNet121, DenseNet169, DenseNet201."""

from layers.applications.densenet import DenseNet121, DenseNet169, DenseNet201

__all__ = ["DenseNet121", "DenseNet169", "DenseNet201"]
