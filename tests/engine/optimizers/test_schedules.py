import jax
import keras
import numpy as np
import pytest

from engine.training.optimizers import schedules

STEPS = list(range(0, 40)) + list(range(40, 400, 7))

CASES = [
    ("ExponentialDecay", {"initial_learning_rate": 0.1, "decay_steps": 10, "decay_rate": 0.5}),
    ("ExponentialDecay", {"initial_learning_rate": 0.1, "decay_steps": 7, "decay_rate": 0.96, "staircase": True}),
    ("PiecewiseConstantDecay", {"boundaries": [5, 20, 100], "values": [1.0, 0.5, 0.1, 0.01]}),
    ("PiecewiseConstantDecay", {"boundaries": [10], "values": [0.3, 0.03]}),
    ("CosineDecay", {"initial_learning_rate": 0.1, "decay_steps": 100}),
    ("CosineDecay", {"initial_learning_rate": 0.1, "decay_steps": 100, "alpha": 0.1}),
    ("CosineDecay", {"initial_learning_rate": 0.0, "decay_steps": 100, "warmup_target": 0.2, "warmup_steps": 30}),
    ("CosineDecay", {"initial_learning_rate": 0.05, "decay_steps": 50, "alpha": 0.2, "warmup_target": 0.1,
                     "warmup_steps": 10}),
]


@pytest.mark.parametrize("name, kwargs", CASES)
def test_matches_keras_at_many_steps(name, kwargs):
    ours, theirs = getattr(schedules, name)(**kwargs), getattr(keras.optimizers.schedules, name)(**kwargs)
    received = np.array([ours(step) for step in STEPS])
    expected = np.asarray(jax.vmap(theirs)(np.array(STEPS, "int32")))  # one trace instead of one per step
    assert all(isinstance(ours(step), float) for step in STEPS[:3])
    # Keras computes in float32 and we in float64; the cosine's cancellation
    # near the end of the decay needs a small absolute tolerance.
    np.testing.assert_allclose(received, expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name, kwargs", CASES)
def test_config_matches_keras_and_round_trips(name, kwargs):
    ours = getattr(schedules, name)(**kwargs)
    config = ours.get_config()
    assert config == getattr(keras.optimizers.schedules, name)(**kwargs).get_config()
    clone = schedules.get({"class_name": name, "config": config})
    assert type(clone) is type(ours) and clone.get_config() == config
    assert schedules.get(ours) is ours


def test_validation_errors():
    with pytest.raises(ValueError, match=r"ExponentialDecay: argument `decay_steps` must be > 0. "
                                         r"Received: decay_steps=0"):
        schedules.ExponentialDecay(0.1, 0, 0.5)
    with pytest.raises(ValueError, match=r"CosineDecay: argument `decay_steps` must be > 0. Received: decay_steps=-5"):
        schedules.CosineDecay(0.1, -5)
    with pytest.raises(ValueError, match=r"The length of boundaries should be 1 less than the length of values. "
                                         r"Received: boundaries=\[1, 2\] of length 2, and values=\[1.0, 0.5\] of "
                                         r"length 2."):
        schedules.PiecewiseConstantDecay([1, 2], [1.0, 0.5])
    with pytest.raises(ValueError, match=r"expects increasing boundaries. Received: boundaries=\[5, 2\]"):
        schedules.PiecewiseConstantDecay([5, 2], [1.0, 0.5, 0.1])
    with pytest.raises(ValueError, match="Unknown learning rate schedule: 'CosineDecy'.* Did you mean 'CosineDecay'"):
        schedules.get({"class_name": "CosineDecy", "config": {}})


def test_base_class_must_be_overridden():
    class Constant(schedules.LearningRateSchedule):
        pass

    with pytest.raises(NotImplementedError, match=r"'Constant' must override `__call__\(self, step\)`"):
        Constant()(0)
    with pytest.raises(NotImplementedError, match=r"'Constant' must override `get_config\(\)`"):
        Constant().get_config()
