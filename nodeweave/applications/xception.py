"""``keras.applications.xception``: Xception."""

from layers.applications.xception import Xception

__all__ = ["Xception"]
