"""Adadelta, Adafactor, Ftrl, Lamb and Lion against Keras 3, in one table."""

import keras
import numpy as np
import pytest

from engine import optimizers
from engine.network.variable import Variable
from tests.engine.optimizers.oracle import (COMMON_OPTIONS, assert_config_round_trip, assert_matches_keras,
                                            fixed_gradients, initial_weights, keras_variables, make_pair,
                                            our_variables)

# Each optimizer with its own hyperparameters away from their defaults.
OWN_OPTIONS = {
    "Adadelta": {"learning_rate": 0.5, "rho": 0.8, "epsilon": 1e-3},
    "Adafactor": {"learning_rate": 0.3, "beta_2_decay": -0.5, "epsilon_2": 1e-2, "clip_threshold": 0.5,
                  "relative_step": False},
    "Ftrl": {"learning_rate": 0.3, "learning_rate_power": -0.3, "initial_accumulator_value": 0.5,
             "l1_regularization_strength": 0.05, "l2_regularization_strength": 0.1,
             "l2_shrinkage_regularization_strength": 0.05, "beta": 0.2},
    "Lamb": {"learning_rate": 0.05, "beta_1": 0.8, "beta_2": 0.99, "epsilon": 1e-3},
    "Lion": {"learning_rate": 0.05, "beta_1": 0.5, "beta_2": 0.9},
}
EXTRAS = {"learning_rate": 0.05, "use_ema": True, "ema_momentum": 0.8, "ema_overwrite_frequency": 2,
          "gradient_accumulation_steps": 2, "loss_scale_factor": 4.0}
CASES = [(name, kwargs) for name in OWN_OPTIONS for kwargs in ({}, OWN_OPTIONS[name], *COMMON_OPTIONS, EXTRAS)]


@pytest.mark.parametrize("name, kwargs", CASES)
def test_matches_keras(name, kwargs):
    assert_matches_keras(name, grads=fixed_gradients(6), **kwargs)


def test_ftrl_l1_zeroes_weights_and_lion_steps_by_the_learning_rate():
    """The checks above can fail: these optimizers' own rules show in the weights."""
    _, ftrl = assert_matches_keras("Ftrl", learning_rate=0.05, l1_regularization_strength=100.0)
    assert all(np.array_equal(v.value, np.zeros_like(v.value)) for v in ftrl)
    weights = initial_weights()
    _, lion = assert_matches_keras("Lion", grads=fixed_gradients(1), learning_rate=0.25)
    for variable, before in zip(lion, weights):
        np.testing.assert_allclose(np.abs(variable.value - before), 0.25, rtol=1e-6)


@pytest.mark.parametrize("name", OWN_OPTIONS)
def test_config_round_trip_and_get_by_keras_name(name):
    clone = assert_config_round_trip(name, **OWN_OPTIONS[name], clipnorm=1.0, use_ema=True)
    assert clone.clipnorm == 1.0 and clone.use_ema
    for key, value in OWN_OPTIONS[name].items():
        assert getattr(clone, key) == value, key
    for identifier in (name.lower(), name):
        ours = optimizers.get(identifier)
        assert type(ours).__name__ == name
        expected = getattr(keras.optimizers, name)().get_config()  # Keras' get() does not know "lamb"
        assert ours.get_config().keys() == expected.keys()
        for key, value in ours.get_config().items():
            if key != "name":
                assert value == pytest.approx(expected[key]), key


@pytest.mark.parametrize("name", OWN_OPTIONS)
def test_slots_follow_keras_layout(name):
    """The .keras format stores optimizer variables by position: shapes, dtypes
    and order follow Keras' (names too, but for Adafactor's factors)."""
    shapes = {"kernel": (2, 3, 4), "bias": (4,)}
    ours, theirs = make_pair(name, use_ema=True, gradient_accumulation_steps=2)
    ours.build([Variable(np.zeros(s, "float32"), name=n, path=f"dense/{n}") for n, s in shapes.items()])
    theirs.build([keras.Variable(np.zeros(s, "float32"), name=n) for n, s in shapes.items()])
    assert [(v.shape, v.value.dtype.kind) for v in ours.variables] == \
        [(tuple(v.shape), np.dtype(v.dtype).kind) for v in theirs.variables]
    names = [v.name.replace("dense_", "") for v in ours.variables]
    if name == "Adafactor":
        assert names[6:] == ["kernel_row_factor", "kernel_column_factor", "kernel_velocity",
                             "bias_row_factor", "bias_column_factor", "bias_velocity"]
    else:
        assert names == [v.name for v in theirs.variables]


@pytest.mark.parametrize("name", OWN_OPTIONS)
def test_state_saved_by_keras_loads_and_resumes(name):
    ours, theirs = make_pair(name, **OWN_OPTIONS[name])
    their_vars = keras_variables(initial_weights())
    grads = fixed_gradients(5)
    for step_grads in grads[:2]:
        theirs.apply_gradients(zip(step_grads, their_vars))
    store = {}
    theirs.save_own_variables(store)
    our_vars = our_variables([np.asarray(v) for v in their_vars])
    ours.build(our_vars)
    ours.load_own_variables(store)
    for step_grads in grads[2:]:
        ours.apply_gradients(zip(step_grads, our_vars))
        theirs.apply_gradients(zip(step_grads, their_vars))
    for mine, reference in zip(our_vars + ours.variables, their_vars + theirs.variables):
        np.testing.assert_allclose(mine.value, np.asarray(reference), rtol=1e-6, atol=1e-7)


def test_float64_weights_stay_float64():
    for name in OWN_OPTIONS:
        ours, _ = make_pair(name, **OWN_OPTIONS[name])
        doubles = our_variables(initial_weights("float64"))
        for grads in fixed_gradients(3, dtype="float64"):
            ours.apply_gradients(zip(grads, doubles))
        assert all(v.value.dtype == np.float64 for v in doubles), name
        assert {v.value.dtype for v in ours.variables if v.value.ndim} == {np.dtype("float64")}, name


def test_bad_hyperparameters_are_refused_with_keras_wording():
    with pytest.raises(ValueError, match=r"Ftrl: `learning_rate_power` needs to be negative or zero. "
                                         r"Received: learning_rate_power=0.5."):
        optimizers.Ftrl(learning_rate_power=0.5)
    for key in ("initial_accumulator_value", "l1_regularization_strength", "l2_regularization_strength",
                "l2_shrinkage_regularization_strength"):
        with pytest.raises(ValueError, match=rf"Ftrl: `{key}` needs to be positive or zero. Received: {key}=-1.0."):
            optimizers.Ftrl(**{key: -1.0})
    for beta_1 in (0.0, 1.5):
        with pytest.raises(ValueError, match=rf"`beta_1` of Lion must be in the \(0, 1\] range.*beta_1={beta_1}"):
            optimizers.Lion(beta_1=beta_1)
