"""``keras.preprocessing``: ``sequence.pad_sequences`` and the image array helpers."""

from nodeweave.preprocessing import image, sequence

__all__ = ["image", "sequence"]
