import numpy as np
import pytest

from engine.training.metrics import F1Score, FBetaScore
from tests.engine.metrics.oracle import assert_matches_keras, keras

RNG = np.random.default_rng(0)
Y_TRUE = RNG.integers(0, 2, size=(3, 10, 4)).astype("float32")
Y_PRED = RNG.uniform(size=(3, 10, 4)).astype("float32")
WEIGHTS = RNG.uniform(size=(3, 10)).astype("float32")
CASES = {
    "F1 per class": (F1Score, {}),
    "F1 micro at 0.4": (F1Score, {"average": "micro", "threshold": 0.4}),
    "F1 macro": (F1Score, {"average": "macro"}),
    "F1 weighted at 0.6": (F1Score, {"average": "weighted", "threshold": 0.6}),
    "F2 per class at 0.5": (FBetaScore, {"beta": 2.0, "threshold": 0.5}),
    "F0.5 micro": (FBetaScore, {"beta": 0.5, "average": "micro"}),
    "F3 weighted": (FBetaScore, {"beta": 3.0, "average": "weighted"}),
}


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("case", CASES)
def test_result_after_updates_matches_keras(case, weighted):
    cls, kwargs = CASES[case]
    batches = [(Y_TRUE[i], Y_PRED[i], WEIGHTS[i] if weighted else None) for i in range(3)]
    ours, theirs = cls(**kwargs), getattr(keras.metrics, cls.__name__)(**kwargs)
    assert_matches_keras(ours, theirs, batches)
    assert ours.get_config() == theirs.get_config()
    assert cls.from_config(ours.get_config()).get_config() == ours.get_config()


def test_bad_arguments_and_inputs_raise():
    with pytest.raises(ValueError, match=r"Invalid `average` argument value for F1Score. Expected one of: "
                                         r"\{None, 'micro', 'macro', 'weighted'\}. Received: average='mean'"):
        F1Score(average="mean")
    with pytest.raises(ValueError, match=r"`beta` argument value for FBetaScore: expected a Python float > 0. "
                                         r"Received: beta=2 of type 'int'"):
        FBetaScore(beta=2)
    with pytest.raises(ValueError, match=r"with 0 < threshold <= 1, or None. Received: threshold=1.5"):
        F1Score(threshold=1.5)
    with pytest.raises(ValueError, match=r"F1Score expects 2D inputs with shape \(batch_size, output_dim\). "
                                         r"Received input shapes: y_pred.shape=\(4,\) and y_true.shape=\(4,\)."):
        F1Score().update_state([0, 1, 1, 0], [0.1, 0.2, 0.3, 0.4])
