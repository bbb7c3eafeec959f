"""A Keras model compiled with any Keras 3 loss or metric opens compiled here from
its .keras archive, and evaluates to Keras' numbers; ours opens compiled in Keras."""

import keras
import numpy as np
import pytest

import engine
from engine import Model, load_model
from layers import Dense
from tests.keras_format.read_helpers import save_keras

RNG = np.random.default_rng(0)
X = RNG.normal(size=(16, 4)).astype("float32")
TARGETS = {
    "binary": RNG.integers(0, 2, (16, 3)).astype("float32"),
    "one-hot": np.eye(3, dtype="float32")[RNG.integers(0, 3, 16)],
    "sparse": RNG.integers(0, 3, 16),
    "real": RNG.normal(size=(16, 3)).astype("float32"),
}
# (loss, metrics, targets, output activation): every new loss once, every new metric once.
CASES = {
    "hinge": ("hinge", [keras.metrics.Hinge(), keras.metrics.SquaredHinge(), keras.metrics.TruePositives(),
                        keras.metrics.FalseNegatives(thresholds=[0.3, 0.6])], "binary", "sigmoid"),
    "squared_hinge": (keras.losses.SquaredHinge(), [keras.metrics.FalsePositives(), keras.metrics.TrueNegatives(),
                                                   keras.metrics.AUC(multi_label=True, num_labels=3)],
                      "binary", "sigmoid"),
    "categorical_hinge": ("categorical_hinge", [keras.metrics.CategoricalHinge(), keras.metrics.F1Score(),
                                                keras.metrics.FBetaScore(beta=2.0, average="macro")],
                          "one-hot", "softmax"),
    "log_cosh": ("log_cosh", [keras.metrics.LogCoshError(), keras.metrics.R2Score(),
                              keras.metrics.PearsonCorrelation(), keras.metrics.ConcordanceCorrelation()],
                 "real", None),
    "poisson": (keras.losses.Poisson(), [keras.metrics.Poisson()], "binary", "softplus"),
    "dice": (keras.losses.Dice(), [keras.metrics.BinaryIoU(), keras.metrics.PrecisionAtRecall(0.5),
                                   keras.metrics.RecallAtPrecision(0.5)], "binary", "sigmoid"),
    "tversky": (keras.losses.Tversky(alpha=0.3, beta=0.7), [keras.metrics.SensitivityAtSpecificity(0.4),
                                                            keras.metrics.SpecificityAtSensitivity(0.4)],
                "binary", "sigmoid"),
    "focal": (keras.losses.CategoricalFocalCrossentropy(gamma=1.5),
              [keras.metrics.OneHotIoU(3, [0, 1]), keras.metrics.OneHotMeanIoU(3)], "one-hot", "softmax"),
    "binary focal": (keras.losses.BinaryFocalCrossentropy(apply_class_balancing=True), [], "binary", "sigmoid"),
    "generalized": (keras.losses.CategoricalGeneralizedCrossEntropy(q=0.4),
                    [keras.metrics.SparseTopKCategoricalAccuracy(k=2), keras.metrics.IoU(3, [1], sparse_y_pred=False),
                     keras.metrics.MeanIoU(3, sparse_y_pred=False)], "sparse", "softmax"),
}


def _keras_model(loss, metrics, activation):
    inputs = keras.Input((4,))
    model = keras.Model(inputs, keras.layers.Dense(3, activation=activation)(inputs))
    model.compile(optimizer="sgd", loss=loss, metrics=metrics)
    return model


@pytest.mark.parametrize("case", CASES)
def test_a_keras_archive_loads_compiled_and_evaluates_as_keras(case, tmp_path):
    loss, metrics, targets, activation = CASES[case]
    keras_model = _keras_model(loss, metrics, activation)
    y = TARGETS[targets]
    expected = keras_model.evaluate(X, y, batch_size=8, verbose=0, return_dict=True)
    ours = load_model(save_keras(keras_model, tmp_path))
    received = ours.evaluate(X, y, batch_size=8, verbose=0, return_dict=True)
    assert received.keys() == expected.keys()
    for name in expected:
        np.testing.assert_allclose(received[name], expected[name], rtol=1e-5, atol=1e-6, err_msg=name)


@pytest.mark.parametrize("case", ["hinge", "categorical_hinge", "log_cosh", "tversky", "generalized"])
def test_our_archive_loads_compiled_in_keras(case, tmp_path):
    loss, metrics, targets, activation = CASES[case]
    ours_loss = engine.training.losses.get(keras.losses.serialize(loss) if not isinstance(loss, str) else loss)
    ours_metrics = [engine.training.metrics.get(keras.metrics.serialize(metric)) for metric in metrics]
    inputs = engine.Input((4,))
    model = Model(inputs, Dense(3, activation=activation)(inputs))
    model.compile(optimizer="sgd", loss=ours_loss, metrics=ours_metrics)
    y = TARGETS[targets]
    expected = model.evaluate(X, y, batch_size=8, verbose=0, return_dict=True)
    model.save(tmp_path / "ours.keras")
    theirs = keras.saving.load_model(tmp_path / "ours.keras")
    received = theirs.evaluate(X, y, batch_size=8, verbose=0, return_dict=True)
    assert received.keys() == expected.keys()
    for name in expected:
        np.testing.assert_allclose(received[name], expected[name], rtol=1e-5, atol=1e-6, err_msg=name)
