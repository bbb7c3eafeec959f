import numpy as np
import pytest

from engine.training.metrics import BinaryIoU, IoU, MeanIoU, OneHotIoU, OneHotMeanIoU
from tests.engine.metrics.oracle import assert_matches_keras, keras

RNG = np.random.default_rng(0)
LABELS = RNG.integers(0, 4, size=(3, 6, 5))
PREDICTED = RNG.integers(-1, 5, size=(3, 6, 5))  # -1 and 4 are outside the 4 classes: skipped
SCORES = RNG.uniform(size=(3, 6, 4)).astype("float32")
WEIGHTS = {"unweighted": None, "integer weights": RNG.integers(0, 3, size=(3, 6, 5)).astype("float32"),
           "fractional weights": RNG.uniform(0, 2.5, size=(3, 6, 5)).astype("float32")}
CASES = {
    "IoU": (IoU, {"num_classes": 4, "target_class_ids": [0, 2]}, "sparse"),
    "IoU float dtype, ignore_class": (IoU, {"num_classes": 4, "target_class_ids": [1, 3], "ignore_class": 2,
                                            "dtype": "float32"}, "sparse"),
    "MeanIoU": (MeanIoU, {"num_classes": 4}, "sparse"),
    "MeanIoU scores": (MeanIoU, {"num_classes": 4, "sparse_y_pred": False, "ignore_class": 0}, "scores"),
    "BinaryIoU": (BinaryIoU, {}, "binary"),
    "BinaryIoU class 1 at 0.3": (BinaryIoU, {"target_class_ids": [1], "threshold": 0.3}, "binary"),
    "OneHotIoU": (OneHotIoU, {"num_classes": 4, "target_class_ids": [0, 3]}, "one-hot"),
    "OneHotMeanIoU float dtype": (OneHotMeanIoU, {"num_classes": 4, "dtype": "float32"}, "one-hot"),
}


def batches(labels, weights):
    result = []
    for i in range(3):
        y_true, y_pred = {
            "sparse": (LABELS[i], PREDICTED[i]),
            "scores": (LABELS[i, :, 0], SCORES[i]),
            "binary": (LABELS[i] % 2, SCORES[i, :, :1].repeat(5, axis=1) + 0.1 * LABELS[i]),
            "one-hot": (np.eye(4)[LABELS[i, :, 0]], SCORES[i]),
        }[labels]
        weight = WEIGHTS[weights]
        if weight is not None:  # one weight per label
            weight = weight[i] if labels in ("sparse", "binary") else weight[i, :, 0]
        result.append((y_true, y_pred, weight))
    return result


@pytest.mark.filterwarnings("ignore:You are passing weight as `float`")
@pytest.mark.parametrize("weights", WEIGHTS)
@pytest.mark.parametrize("case", CASES)
def test_result_after_updates_matches_keras(case, weights):
    cls, kwargs, labels = CASES[case]
    ours, theirs = cls(**kwargs, name="m"), getattr(keras.metrics, cls.__name__)(**kwargs, name="m")
    assert_matches_keras(ours, theirs, batches(labels, weights))
    np.testing.assert_allclose(ours.total_cm, theirs.total_cm, rtol=1e-6)
    assert ours.total_cm.dtype == theirs.total_cm.dtype
    assert ours.get_config() == theirs.get_config()
    assert cls.from_config(ours.get_config()).get_config() == ours.get_config()


def test_target_class_out_of_range_is_refused():
    with pytest.raises(ValueError, match=r"IoU: target class id 3 is out of range, which is \[0, 3\)"):
        IoU(num_classes=3, target_class_ids=[0, 3])


def test_weights_that_do_not_fit_the_labels_are_refused():
    with pytest.raises(ValueError, match=r"Metric 'm': sample_weight of shape \(6,\) cannot be broadcast to the "
                                         r"values of shape \(30,\)"):
        MeanIoU(num_classes=4, name="m").update_state(LABELS[0], PREDICTED[0], sample_weight=np.ones(6))
