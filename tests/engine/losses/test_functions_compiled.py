"""Every built-in loss function passed to compile() as the function itself (as Keras scripts
write `loss=keras.losses.mean_squared_error`) trains through the tape exactly as its name does
through the hand-written backward."""

import inspect

import numpy as np
import pytest

from engine import Input, Model, losses
from engine.utils import set_random_seed
from layers import Dense

FUNCTIONS = sorted(name for name, value in vars(losses).items()
                   if inspect.isfunction(value) and not name.startswith("_")
                   and name not in ("get", "serialize", "deserialize"))
_PROBABILITY_TARGETS = ("crossentropy", "kl_divergence")


def _targets(name, rng):
    if name.startswith("sparse"):
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
