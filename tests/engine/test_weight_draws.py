import pickle

import numpy as np
import pytest

from engine import Input, Model
from engine.network.initializers import GlorotUniform
from engine.utils import random_generator, set_random_seed
from engine.network.variable import Variable
from layers import Dense


def _model():
    x = Input(shape=(5,))
    return Model(x, Dense(2, name="top")(Dense(4, name="hidden")(x)))


def _pending(model):
    return [v._value is None for v in model.weights]


def test_building_a_graph_draws_no_weight_and_shapes_are_known():
    model = _model()
    assert _pending(model) == [True] * 4
    assert [v.shape for v in model.weights] == [(5, 4), (4,), (4, 2), (2,)]
    assert [v.dtype for v in model.weights] == [np.dtype("float32")] * 4
    assert model.count_params() == 34
    repr(model.weights[0])
    assert _pending(model) == [True] * 4


def test_a_seed_gives_the_same_weights_whatever_the_order_of_first_use():
    set_random_seed(11)
    first = _model().get_weights()
    set_random_seed(11)
    second = _model()
    later_first = [v.numpy().copy() for v in reversed(second.weights)][::-1]
    for a, b in zip(first, later_first):
        np.testing.assert_array_equal(a, b)
    set_random_seed(12)
    assert not np.array_equal(_model().get_weights()[0], first[0])


def test_each_weight_takes_one_number_from_the_global_generator_when_created():
    set_random_seed(3)
    _model()
    after_build = random_generator().bit_generator.state
    set_random_seed(3)
    for _ in range(2):  # two kernels drawn from the global generator; the biases are zeros
        random_generator().bit_generator.random_raw()
    assert random_generator().bit_generator.state == after_build


def test_an_initializer_with_a_seed_draws_as_when_called():
    layer = Dense(3, kernel_initializer=GlorotUniform(seed=5))
    layer.build((None, 4))
    assert layer.kernel._value is None
    np.testing.assert_array_equal(layer.kernel.numpy(), GlorotUniform(seed=5)((4, 3)))


def test_a_weight_assigned_before_first_use_is_never_drawn():
    model = _model()
    weights = [np.full(v.shape, 0.5, "float32") for v in model.weights]
    model.set_weights(weights)
    assert all(v._pending is None for v in model.weights)
    np.testing.assert_array_equal(model.weights[0].numpy(), weights[0])
    pending = _model().weights[0]
    with pytest.raises(ValueError, match=r"shape \(2, 2\) to variable .* of shape \(5, 4\)"):
        pending.assign(np.zeros((2, 2)))
    assert pending._value is None


def test_a_pending_weight_pickles_and_draws_the_same_values_after():
    model = _model()
    copy = pickle.loads(pickle.dumps(model.weights[0]))
    assert copy._value is None
    np.testing.assert_array_equal(copy.numpy(), model.weights[0].numpy())


def test_a_dtype_policy_draws_in_the_weights_dtype():
    layer = Dense(2, dtype="float64")
    layer.build((None, 3))
    assert layer.kernel.dtype == np.float64
    assert layer.kernel.numpy().dtype == np.float64


def test_a_user_initializer_still_draws_at_creation():
    calls = []

    def initializer(shape, dtype=None):
        calls.append(shape)
        return np.ones(shape, dtype)

    layer = Dense(2, kernel_initializer=initializer)
    layer.build((None, 3))
    assert calls == [(3, 2)]
    assert isinstance(layer.kernel, Variable) and layer.kernel._value is not None
