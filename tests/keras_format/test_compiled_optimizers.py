"""Keras models compiled with Adadelta, Adafactor, Ftrl, Lamb or Lion, or with
the base optimizer's averaging, loss-scaling and accumulation arguments, load
here compiled from ``.keras`` and go on training as in Keras; ours saved to
``.keras`` load compiled in Keras."""

import keras
import numpy as np
import pytest

import engine
import layers
from engine import load_model
from engine.files.keras_format.write_weights import keras_weight_paths

# Keras' config of each optimizer (hyperparameters away from their defaults where they have any).
CONFIGS = {
    "adadelta": ("Adadelta", {"learning_rate": 0.5, "rho": 0.9}),
    "adafactor": ("Adafactor", {"learning_rate": 0.05, "beta_2_decay": -0.6, "clip_threshold": 0.5}),
    "ftrl": ("Ftrl", {"learning_rate": 0.1, "l1_regularization_strength": 0.01, "beta": 0.1}),
    "lamb": ("Lamb", {"learning_rate": 0.01, "beta_1": 0.8}),
    "lion": ("Lion", {"learning_rate": 0.01, "beta_2": 0.9}),
    "adam_extras": ("Adam", {"learning_rate": 0.01, "use_ema": True, "ema_momentum": 0.9,
                             "ema_overwrite_frequency": 3, "gradient_accumulation_steps": 2,
                             "loss_scale_factor": 8.0}),
}


def conv_model():
    """A 4-D kernel (Adafactor factors its last two axes), a matrix and vectors."""
    x = keras.Input((5, 5, 2))
    h = keras.layers.Conv2D(3, 3, activation="tanh")(x)
    return keras.Model(x, keras.layers.Dense(2)(keras.layers.Flatten()(h)))


def batch(seed):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(8, 5, 5, 2)).astype("float32"), rng.normal(size=(8, 2)).astype("float32")


def fit_steps(model, seed, epochs=1):
    x, y = batch(seed)
    model.fit(x, y, batch_size=4, epochs=epochs, shuffle=False, verbose=0)


def assert_same_state(ours, theirs):
    mine_in_keras_order = list(keras_weight_paths(ours).values())
    for mine, keras_variable in zip(mine_in_keras_order, theirs.weights, strict=True):
        np.testing.assert_allclose(mine.value, np.asarray(keras_variable), rtol=1e-5, atol=1e-6, err_msg=mine.path)
    for mine, keras_variable in zip(ours.optimizer.variables, theirs.optimizer.variables, strict=True):
        np.testing.assert_allclose(mine.value, np.asarray(keras_variable), rtol=1e-5, atol=1e-6, err_msg=mine.path)


@pytest.mark.parametrize("case", CONFIGS)
def test_keras_archive_loads_compiled_and_trains_on_as_keras(case, tmp_path):
    class_name, config = CONFIGS[case]
    theirs = conv_model()
    theirs.compile(optimizer=getattr(keras.optimizers, class_name)(**config), loss="mse")
    fit_steps(theirs, seed=0)
    theirs.save(tmp_path / "trained.keras")

    ours = load_model(tmp_path / "trained.keras")
    assert type(ours.optimizer).__name__ == class_name
    assert {key: ours.optimizer.get_config()[key] for key in config} == pytest.approx(config)
    assert ours.optimizer.iterations == int(theirs.optimizer.iterations)
    assert_same_state(ours, theirs)
    # Keras' JAX backend fails to fit a model twice with use_ema ("Attempt to donate the same buffer twice"):
    # Keras goes on from its own load of the archive.
    theirs = keras.saving.load_model(tmp_path / "trained.keras")
    fit_steps(ours, seed=1, epochs=2)
    fit_steps(theirs, seed=1, epochs=2)
    assert_same_state(ours, theirs)


@pytest.mark.parametrize("case", CONFIGS)
def test_our_archive_loads_compiled_in_keras_and_trains_on_alike(case, tmp_path):
    class_name, config = CONFIGS[case]
    x = engine.Input((5, 5, 2))
    h = layers.Conv2D(3, 3, activation="tanh")(x)
    model = engine.Model(x, layers.Dense(2)(layers.Flatten()(h)))
    model.compile(optimizer=getattr(engine.training.optimizers, class_name)(**config), loss="mse")
    fit_steps(model, seed=0)
    model.save(tmp_path / "m.keras")

    theirs = keras.saving.load_model(tmp_path / "m.keras")
    assert type(theirs.optimizer).__name__ == class_name
    assert {key: theirs.optimizer.get_config()[key] for key in config} == pytest.approx(config)
    assert_same_state(model, theirs)
    fit_steps(model, seed=1)
    fit_steps(theirs, seed=1)
    assert_same_state(model, theirs)
