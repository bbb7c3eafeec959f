"""``keras.preprocessing.image``: images as arrays and back (needs Pillow when called)."""

from engine.utils.image import array_to_img, img_to_array, load_img, save_img

__all__ = ["array_to_img", "img_to_array", "load_img", "save_img"]
