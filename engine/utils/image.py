"""Images as arrays and back (Keras' ``array_to_img``, ``img_to_array``,
``load_img``, ``save_img``), through Pillow, imported when first needed."""

import numpy as np

_DATA_FORMATS = ("channels_last", "channels_first")
_MODES = {1: "L", 3: "RGB", 4: "RGBA"}
_COLOR_MODES = {"grayscale": "L", "rgb": "RGB", "rgba": "RGBA"}


def _pil_image():
    try:
        from PIL import Image
    except ImportError as error:
        raise ImportError("Converting between arrays and images needs Pillow, which is not installed. "
                          "Install it with `pip install pillow`.") from error
    return Image


def _check_data_format(data_format):
    data_format = data_format or "channels_last"
    if data_format not in _DATA_FORMATS:
        raise ValueError(f"data_format must be one of {_DATA_FORMATS}, received {data_format!r}.")
    return data_format


def array_to_img(x, data_format: str | None = None, scale: bool = True, dtype=None):
    """A PIL Image of a (height, width, channels) array of 1, 3 or 4 channels.

    Args:
        x: the image, anything ``np.asarray`` takes, of rank 3.
        data_format: ``"channels_last"`` (the default) or ``"channels_first"``.
        scale: whether to stretch the values to [0, 255] (the minimum to 0, the
            maximum to 255) before casting to bytes.
        dtype: the dtype the values are computed in; float32 by default.

    Returns:
        A ``PIL.Image.Image`` in mode ``"L"`` (``"I"`` for one channel above
        255 without scaling), ``"RGB"`` or ``"RGBA"``.

    Example:
        >>> image = array_to_img(np.zeros((2, 3, 3)))
        >>> image.mode, image.size
        ('RGB', (3, 2))
    """
    data_format = _check_data_format(data_format)
    x = np.array(x, dtype=dtype or "float32")
    if x.ndim != 3:
        raise ValueError(f"array_to_img expects a single image of rank 3, received an array of shape {x.shape}. "
                         f"Pass one image at a time (x[i] of a batch).")
    if data_format == "channels_first":
        x = x.transpose(1, 2, 0)
    if x.shape[2] not in _MODES:
        raise ValueError(f"array_to_img expects 1, 3 or 4 channels, received an image of shape {x.shape} "
                         f"({x.shape[2]} channels, data_format={data_format!r}).")
    if scale:
        x = x - np.min(x)
        if np.max(x) != 0:
            x /= np.max(x)
        x *= 255
    image = _pil_image()
    if x.shape[2] == 1:
        if np.max(x) > 255:
            return image.fromarray(x[:, :, 0].astype("int32"), "I")
        return image.fromarray(x[:, :, 0].astype("uint8"), "L")
    return image.fromarray(x.astype("uint8"), _MODES[x.shape[2]])


def img_to_array(img, data_format: str | None = None, dtype=None) -> np.ndarray:
    """The array of a PIL Image: (height, width, channels), one channel for a grayscale image.

    Args:
        img: a PIL Image (or anything ``np.asarray`` takes, of rank 2 or 3).
        data_format: ``"channels_last"`` (the default) or ``"channels_first"``.
        dtype: the array's dtype; float32 by default.

    Example:
        >>> img_to_array(array_to_img(np.zeros((2, 3, 1)))).shape
        (2, 3, 1)
    """
    data_format = _check_data_format(data_format)
    x = np.asarray(img, dtype=dtype or "float32")
    if x.ndim == 2:
        x = x[:, :, np.newaxis]
    elif x.ndim != 3:
        raise ValueError(f"img_to_array expects an image of rank 2 or 3, received shape {x.shape}.")
    return x.transpose(2, 0, 1) if data_format == "channels_first" else x


def load_img(path, color_mode: str = "rgb", target_size: tuple[int, int] | None = None,
             interpolation: str = "nearest"):
    """Reads an image file into a PIL Image.

    Args:
        path: the file's path.
        color_mode: ``"rgb"``, ``"rgba"`` or ``"grayscale"``.
        target_size: ``(height, width)`` to resize to, or None to keep the size.
        interpolation: the resampling filter's name in Pillow (``"nearest"``,
            ``"bilinear"``, ``"bicubic"``, ``"lanczos"``, ``"box"``, ``"hamming"``).

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "x.png")
        >>> save_img(path, np.zeros((4, 6, 3)))
        >>> load_img(path, color_mode="grayscale", target_size=(2, 3)).size
        (3, 2)
    """
    if color_mode not in _COLOR_MODES:
        raise ValueError(f"color_mode must be one of {tuple(_COLOR_MODES)}, received {color_mode!r}.")
    image = _pil_image()
    with open(path, "rb") as handle:
        img = image.open(handle)
        img.load()
    if img.mode != _COLOR_MODES[color_mode]:
        img = img.convert(_COLOR_MODES[color_mode])
    if target_size is not None and img.size != (target_size[1], target_size[0]):
        filters = {name.lower(): member for name, member in image.Resampling.__members__.items()}
        if interpolation not in filters:
            raise ValueError(f"interpolation must be one of {tuple(filters)}, received {interpolation!r}.")
        img = img.resize((target_size[1], target_size[0]), filters[interpolation])
    return img


def save_img(path, x, data_format: str | None = None, file_format: str | None = None, scale: bool = True,
             **kwargs) -> None:
    """Writes an image array to a file (``array_to_img`` then Pillow's ``save``).

    Args:
        path: the file's path; its extension picks the format unless ``file_format`` is given.
        x: the image array, of rank 3.
        data_format: ``"channels_last"`` (the default) or ``"channels_first"``.
        file_format: Pillow's format name (``"PNG"``, ``"JPEG"``...), or None.
        scale: whether to stretch the values to [0, 255] first.
        **kwargs: passed to Pillow's ``Image.save`` (``quality``...).

    Example:
        >>> import os, tempfile
        >>> save_img(os.path.join(tempfile.mkdtemp(), "x.png"), np.ones((2, 2, 1)))
    """
    img = array_to_img(x, data_format=data_format, scale=scale)
    if img.mode == "RGBA" and (file_format == "jpeg" or str(path).lower().endswith((".jpg", ".jpeg"))):
        img = img.convert("RGB")
    img.save(path, format=file_format, **kwargs)
