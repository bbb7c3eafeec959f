"""Shared checks for optimizer tests: Keras 3's optimizers as the oracle, run
step by step on the same weights and gradients as ours."""

import keras
import numpy as np

from engine import optimizers
from engine.network.variable import Variable

SHAPES = {"kernel": (3, 4), "bias": (4,)}

# Options every optimizer supports, on top of its own (learning rates large
# enough for the updates to matter; clip thresholds that bite on some steps).
COMMON_OPTIONS = [
    {"learning_rate": 0.05, "weight_decay": 0.1},
    {"learning_rate": 0.05, "clipnorm": 2.5},
    {"learning_rate": 0.05, "clipvalue": 0.5},
    {"learning_rate": 0.05, "global_clipnorm": 3.0},
    {"learning_rate": {"class_name": "ExponentialDecay",
                       "config": {"initial_learning_rate": 0.1, "decay_steps": 2, "decay_rate": 0.5}}},
]


def initial_weights(dtype="float32"):
    rng = np.random.default_rng(0)
    return [rng.normal(size=shape).astype(dtype) for shape in SHAPES.values()]


def fixed_gradients(steps=5, dtype="float32"):
    """A different, fixed gradient for each variable at each step."""
    rng = np.random.default_rng(1)
    return [[rng.normal(size=shape).astype(dtype) for shape in SHAPES.values()] for _ in range(steps)]


def our_variables(weights):
    return [Variable(w.copy(), name=name, path=f"dense/{name}") for w, name in zip(weights, SHAPES)]


def keras_variables(weights):
    return [keras.Variable(w.copy(), name=name) for w, name in zip(weights, SHAPES)]


def make_pair(name, **kwargs):
    """Our optimizer ``name`` and Keras', built from the same arguments (a
    schedule given as a config dict is deserialized for Keras)."""
    keras_kwargs = dict(kwargs)
    if isinstance(kwargs.get("learning_rate"), dict):
        keras_kwargs["learning_rate"] = keras.optimizers.schedules.deserialize(kwargs["learning_rate"])
    return getattr(optimizers, name)(**kwargs), getattr(keras.optimizers, name)(**keras_kwargs)


def assert_close(ours, theirs, rtol=1e-6, atol=1e-7):
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=rtol, atol=atol)


def assert_matches_keras(name, grads=None, **kwargs):
    """Applies the same gradients with ours and Keras' ``name`` optimizer and
    compares the weights after every step, then the optimizer states."""
    ours, theirs = make_pair(name, **kwargs)
    weights = initial_weights()
    our_vars, their_vars = our_variables(weights), keras_variables(weights)
    for step_grads in grads or fixed_gradients():
        ours.apply_gradients(zip(step_grads, our_vars))
        theirs.apply_gradients(zip(step_grads, their_vars))
        for mine, reference in zip(our_vars, their_vars):
            assert mine.value.dtype == np.float32
            assert_close(mine.value, reference)
    assert ours.iterations == int(theirs.iterations)
    assert [v.shape for v in ours.variables] == [tuple(v.shape) for v in theirs.variables]
    for mine, reference in zip(ours.variables, theirs.variables):
        assert_close(mine.value, reference)
    return ours, our_vars


def assert_config_round_trip(name, **kwargs):
    """``from_config(get_config())`` gives the same config, and every key we
    share with Keras holds Keras' value."""
    ours, theirs = make_pair(name, **kwargs)
    config = ours.get_config()
    clone = type(ours).from_config(config)
    assert type(clone) is type(ours) and clone.get_config() == config
    keras_config = theirs.get_config()
    for key, value in config.items():
        if key not in ("name", "learning_rate"):
            assert value == keras_config[key], key
    return clone
