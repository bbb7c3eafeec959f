"""Array helpers Keras examples call on their data: one-hot labels, normalized rows."""

import numpy as np


def to_categorical(x, num_classes: int | None = None) -> np.ndarray:
    """One-hot encodes integer class labels (float64, the class axis last), as Keras does.

    Args:
        x: integer labels from 0 to ``num_classes - 1``, of any shape; a
            trailing axis of 1 is dropped first.
        num_classes: the number of classes; by default ``max(x) + 1``.

    Example:
        >>> to_categorical([0, 2, 1], num_classes=3)
        array([[1., 0., 0.],
               [0., 0., 1.],
               [0., 1., 0.]])
    """
    values = np.asarray(x)
    if values.dtype.kind not in "biuf" or (values.dtype.kind == "f" and not np.all(np.mod(values, 1) == 0)):
        raise ValueError(f"to_categorical expects integer class labels, received an array of dtype {values.dtype} "
                         f"and shape {values.shape}. Map the labels to 0 ... num_classes - 1 first.")
    labels = values.astype("int64")
    shape = labels.shape[:-1] if labels.ndim > 1 and labels.shape[-1] == 1 else labels.shape
    labels = labels.reshape(-1)
    if not num_classes:
        num_classes = int(labels.max()) + 1 if labels.size else 0
    bad = labels[(labels < 0) | (labels >= num_classes)]
    if bad.size:
        raise IndexError(f"to_categorical received label {bad[0]}, outside the range [0, {num_classes}) of "
                         f"num_classes={num_classes}. Pass a larger num_classes, or map the labels into range.")
    categorical = np.zeros((labels.size, num_classes))
    categorical[np.arange(labels.size), labels] = 1
    return categorical.reshape(shape + (num_classes,))


def normalize(x, axis: int = -1, order: int = 2) -> np.ndarray:
    """``x`` divided by its ``order``-norm along ``axis`` (zero norms left as 1), as Keras does.

    Args:
        x: the array (array-likes are converted).
        axis: the axis along which to normalize.
        order: the norm's order (``2``: Euclidean, ``1``: sum of absolute values).

    Example:
        >>> normalize(np.array([[3.0, 4.0], [0.0, 0.0]]))
        array([[0.6, 0.8],
               [0. , 0. ]])
    """
    x = np.asarray(x)
    norm = np.atleast_1d(np.linalg.norm(x, order, axis))
    norm[norm == 0] = 1
    return x / np.expand_dims(norm, axis)
