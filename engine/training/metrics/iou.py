"""Intersection-over-union metrics, read from a running class confusion matrix."""

import numpy as np

from engine.training.losses.loss import EPSILON
from engine.training.metrics.metric import Metric, broadcast_weights


class IoU(Metric):
    """The mean over ``target_class_ids`` of ``true_positives / (true_positives
    + false_positives + false_negatives)``, from the confusion matrix
    ``total_cm`` (rows: labels, columns: predictions) accumulated over batches.

    Labels and predictions are class ids (or one-hot / scores, arg-maxed along
    ``axis``, when not sparse), cast to the metric's dtype as Keras does: with
    the default ``int32``, fractional sample weights are truncated. Pairs
    outside ``[0, num_classes)`` and labels equal to ``ignore_class`` are
    skipped. Classes that never occur are left out of the mean.

    Args:
        num_classes: the number of classes.
        target_class_ids: the classes whose IoU is averaged.
        name: the metric's name (default ``'io_u'``).
        dtype: the dtype of the confusion matrix (``int32`` by default, or a float dtype).
        ignore_class: a label whose pairs are skipped, or None.
        sparse_y_true: whether labels are class ids (else arg-maxed along ``axis``).
        sparse_y_pred: whether predictions are class ids (else arg-maxed along ``axis``).
        axis: the class axis of non-sparse labels and predictions.

    Example:
        >>> round(IoU(num_classes=2, target_class_ids=[0])([0, 0, 1, 1], [0, 1, 0, 1]), 4)
        0.3333
    """

    additive_state = ("total_cm",)

    _DEFAULT_DTYPE, _DTYPE_KINDS = "int32", "iuf"

    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None, sparse_y_true=True,
                 sparse_y_pred=True, axis=-1):
        super().__init__(name=name, dtype=dtype)
        if max(target_class_ids) >= num_classes:
            raise ValueError(
                f"{type(self).__name__}: target class id {max(target_class_ids)} is out of range, which is "
                f"[0, {num_classes}). Pass class ids below num_classes={num_classes}."
            )
        self.num_classes, self.target_class_ids = num_classes, list(target_class_ids)
        self.ignore_class, self.sparse_y_true, self.sparse_y_pred, self.axis = (
            ignore_class, sparse_y_true, sparse_y_pred, axis)
        self.reset_state()

    def update_state(self, y_true, y_pred, sample_weight=None):
        if not self.sparse_y_true:
            y_true = np.argmax(y_true, axis=self.axis)
        if not self.sparse_y_pred:
            y_pred = np.argmax(y_pred, axis=self.axis)
        y_true = np.asarray(y_true).astype(self.dtype).reshape(-1)
        y_pred = np.asarray(y_pred).astype(self.dtype).reshape(-1)
        weight = np.asarray(1 if sample_weight is None else sample_weight).astype(self.dtype).reshape(-1)
        weight = broadcast_weights(self, weight if weight.size > 1 else weight.reshape(()), y_true.shape)
        valid = (y_true >= 0) & (y_true < self.num_classes) & (y_pred >= 0) & (y_pred < self.num_classes)
        if self.ignore_class is not None:
            valid &= y_true != self.ignore_class
        pairs = y_true[valid].astype(np.int64) * self.num_classes + y_pred[valid].astype(np.int64)
        counts = np.bincount(pairs, weights=weight[valid], minlength=self.num_classes**2)
        self.total_cm = self.total_cm + counts.reshape(self.num_classes, self.num_classes).astype(self.dtype)

    def result(self):
        matrix = self.total_cm.astype("float32")
        true_positives = np.diag(matrix)
        denominator = matrix.sum(axis=0) + matrix.sum(axis=1) - true_positives
        true_positives = true_positives[self.target_class_ids]
        denominator = denominator[self.target_class_ids]
        valid = denominator > 1e-9
        iou = np.where(valid, true_positives / (denominator + np.float32(EPSILON)), np.float32(0))
        return float(np.sum(iou) / (np.float32(valid.sum()) + np.float32(EPSILON)))

    def reset_state(self):
        self.total_cm = np.zeros((self.num_classes, self.num_classes), self.dtype)

    def get_config(self):
        return {**super().get_config(), "num_classes": self.num_classes, "target_class_ids": self.target_class_ids,
                "ignore_class": self.ignore_class, "sparse_y_true": self.sparse_y_true,
                "sparse_y_pred": self.sparse_y_pred, "axis": self.axis}


class BinaryIoU(IoU):
    """IoU of binary labels and predictions thresholded at ``threshold`` (``>=``), averaged over ``target_class_ids``.

    Args:
        target_class_ids: which of the classes 0 and 1 are averaged.
        threshold: predictions at or above it are class 1.
        name: the metric's name (default ``'binary_io_u'``).
        dtype: the dtype of the confusion matrix (``int32`` by default, or a float dtype).

    Example:
        >>> round(BinaryIoU(target_class_ids=[1])([0, 1, 1, 1], [0.1, 0.6, 0.4, 0.9]), 4)
        0.6667
    """

    def __init__(self, target_class_ids=(0, 1), threshold=0.5, name=None, dtype=None):
        super().__init__(num_classes=2, target_class_ids=target_class_ids, name=name, dtype=dtype)
        self.threshold = threshold

    def update_state(self, y_true, y_pred, sample_weight=None):
        predicted = np.asarray(y_pred, "float32") >= self.threshold
        super().update_state(y_true, predicted, sample_weight)

    def get_config(self):
        return {"target_class_ids": self.target_class_ids, "threshold": self.threshold, "name": self.name,
                "dtype": self.dtype}


class MeanIoU(IoU):
    """IoU averaged over every class.

    Args:
        num_classes: the number of classes.
        name: the metric's name (default ``'mean_io_u'``).
        dtype: the dtype of the confusion matrix (``int32`` by default, or a float dtype).
        ignore_class: a label whose pairs are skipped, or None.
        sparse_y_true: whether labels are class ids (else arg-maxed along ``axis``).
        sparse_y_pred: whether predictions are class ids (else arg-maxed along ``axis``).
        axis: the class axis of non-sparse labels and predictions.

    Example:
        >>> MeanIoU(num_classes=2)([0, 0, 1, 1], [0, 1, 0, 1])
        0.3333333432674408
    """

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_true=True,
                 sparse_y_pred=True, axis=-1):
        super().__init__(num_classes, list(range(num_classes)), name=name, dtype=dtype, ignore_class=ignore_class,
                         sparse_y_true=sparse_y_true, sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self):
        config = super().get_config()
        del config["target_class_ids"]
        return config


class OneHotIoU(IoU):
    """IoU of one-hot labels (and scores, arg-maxed), averaged over ``target_class_ids``.

    Args:
        num_classes: the number of classes.
        target_class_ids: the classes whose IoU is averaged.
        name: the metric's name (default ``'one_hot_io_u'``).
        dtype: the dtype of the confusion matrix (``int32`` by default, or a float dtype).
        ignore_class: a label whose pairs are skipped, or None.
        sparse_y_pred: whether predictions are class ids (else arg-maxed along ``axis``).
        axis: the class axis.

    Example:
        >>> metric = OneHotIoU(num_classes=3, target_class_ids=[0, 2])
        >>> round(metric([[0, 0, 1], [1, 0, 0]], [[0.1, 0.2, 0.7], [0.3, 0.5, 0.2]]), 4)
        0.5
    """

    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None, sparse_y_pred=False,
                 axis=-1):
        super().__init__(num_classes, target_class_ids, name=name, dtype=dtype, ignore_class=ignore_class,
                         sparse_y_true=False, sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self):
        config = super().get_config()
        del config["sparse_y_true"]
        return config


class OneHotMeanIoU(MeanIoU):
    """IoU of one-hot labels (and scores, arg-maxed), averaged over every class.

    Args:
        num_classes: the number of classes.
        name: the metric's name (default ``'one_hot_mean_io_u'``).
        dtype: the dtype of the confusion matrix (``int32`` by default, or a float dtype).
        ignore_class: a label whose pairs are skipped, or None.
        sparse_y_pred: whether predictions are class ids (else arg-maxed along ``axis``).
        axis: the class axis.

    Example:
        >>> round(OneHotMeanIoU(num_classes=3)([[0, 0, 1], [1, 0, 0]], [[0.1, 0.2, 0.7], [0.3, 0.5, 0.2]]), 4)
        0.3333
    """

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_pred=False, axis=-1):
        super().__init__(num_classes, name=name, dtype=dtype, ignore_class=ignore_class, sparse_y_true=False,
                         sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self):
        config = super().get_config()
        del config["sparse_y_true"]
        return config
