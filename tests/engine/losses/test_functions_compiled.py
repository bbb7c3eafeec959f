"""Every built-in loss function passed to compile() as the function itself (as Keras scripts
write `loss=keras.losses.mean_squared_error`) trains through the tape exactly as its name does
through the hand-written backward."""

import inspect

import numpy as np
import pytest

from engine import Input, Model
from engine.training import losses
from engine.utils import set_random_seed
from layers import Dense
from tests.engine.losses.oracle import assert_fit_step_matches_keras, keras

# categorical_generalized_cross_entropy has no default q: compile takes it by name or as a class.
FUNCTIONS = sorted(name for name, value in vars(losses).items()
                   if inspect.isfunction(value) and not name.startswith("_")
                   and name not in ("get", "serialize", "deserialize", "categorical_generalized_cross_entropy"))
_PROBABILITY_TARGETS = ("crossentropy", "kl_divergence", "hinge", "dice", "tversky")


def _targets(name, rng):
    if name.startswith("sparse") or name == "categorical_generalized_cross_entropy":
        return rng.integers(0, 3, (16, 1))
    if any(kind in name for kind in _PROBABILITY_TARGETS):
        return rng.integers(0, 2, (16, 3)).astype("float32")
    return rng.normal(size=(16, 3)).astype("float32")


def _fit_losses(loss, targets):
    set_random_seed(0)
    x = Input((4,))
    model = Model(x, Dense(3, activation="softmax")(x))
    model.compile("sgd", loss=loss)
    inputs = np.linspace(0, 1, 64, dtype="float32").reshape(16, 4)
    return model.fit(inputs, targets, epochs=2, batch_size=8, verbose=0).history["loss"]


def test_every_loss_function_is_covered():
    assert {"mean_squared_error", "categorical_crossentropy", "sparse_categorical_crossentropy"} <= set(FUNCTIONS)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_the_function_trains_as_its_name(name):
    targets = _targets(name, np.random.default_rng(0))
    by_function = _fit_losses(getattr(losses, name), targets)
    np.testing.assert_allclose(by_function, _fit_losses(name, targets), rtol=1e-6)


# Each loss, by name and as a configured class, on the targets and output activation it is meant for.
_RNG = np.random.default_rng(1)
_BINARY = _RNG.integers(0, 2, (8, 3)).astype("float32")
_ONE_HOT = np.eye(3, dtype="float32")[_RNG.integers(0, 3, 8)]
_SPARSE = _RNG.integers(0, 3, 8)
_REAL = _RNG.normal(size=(8, 3)).astype("float32")
_COUNTS = _RNG.poisson(2.0, (8, 3)).astype("float32")
FIT_CASES = {
    "hinge": ("hinge", {}, _BINARY, "tanh"),
    "squared_hinge": ("squared_hinge", {}, _BINARY, "tanh"),
    "categorical_hinge": ("categorical_hinge", {}, _ONE_HOT, None),
    "log_cosh": ("log_cosh", {}, _REAL, None),
    "poisson": ("poisson", {}, _COUNTS, "softplus"),
    "binary_focal_crossentropy": ("BinaryFocalCrossentropy", {"apply_class_balancing": True, "gamma": 1.5},
                                  _BINARY, "sigmoid"),
    "binary_focal_crossentropy from logits": ("BinaryFocalCrossentropy", {"from_logits": True}, _BINARY, None),
    "categorical_focal_crossentropy": ("categorical_focal_crossentropy", {}, _ONE_HOT, "softmax"),
    "categorical_focal_crossentropy from logits": ("CategoricalFocalCrossentropy",
                                                   {"from_logits": True, "label_smoothing": 0.1}, _ONE_HOT, None),
    "categorical_generalized_cross_entropy": ("CategoricalGeneralizedCrossEntropy", {"q": 0.3}, _SPARSE, "softmax"),
    "dice": ("dice", {}, _BINARY, "sigmoid"),
    "dice per sample": ("Dice", {"axis": -1}, _BINARY, "sigmoid"),
    "tversky": ("Tversky", {"alpha": 0.3, "beta": 0.7}, _BINARY, "sigmoid"),
}


@pytest.mark.parametrize("case", FIT_CASES)
def test_one_fit_step_matches_keras(case):
    name, kwargs, targets, activation = FIT_CASES[case]
    ours = getattr(losses, name)(**kwargs) if kwargs else name
    theirs = getattr(keras.losses, name)(**kwargs) if kwargs else name
    assert_fit_step_matches_keras(ours, theirs, targets, activation)
