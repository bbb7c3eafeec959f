import numpy as np
import pytest

from engine import Input, Model
from layers.core import Dense
from layers.regularization import ActivityRegularization
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)


def _x(shape=(4, 3), dtype="float32"):
    x = np.random.default_rng(0).normal(size=shape)
    return (np.sign(x) * (np.abs(x) + 0.1)).astype(dtype)  # away from the kink of |x|


@pytest.mark.parametrize("shape", [(4, 3), (2, 5, 3)])
def test_forward_is_the_identity_as_in_keras(shape):
    x = _x(shape)
    out = assert_matches_keras(ActivityRegularization(0.1, 0.2), keras.layers.ActivityRegularization(0.1, 0.2), x)
    np.testing.assert_array_equal(out[0], x)


def test_gradients_of_the_layer_alone():
    assert_gradients(ActivityRegularization(l1=0.1, l2=0.2), _x(dtype="float64"))


@pytest.mark.parametrize("l1, l2", [(0.1, 0.0), (0.0, 0.3), (0.05, 0.2)])
def test_activity_loss_and_its_gradient_in_a_model(l1, l2):
    x = _x((5, 3))
    keras_layer = keras.layers.ActivityRegularization(l1=l1, l2=l2)
    keras_layer(x)
    (expected,) = [float(loss) for loss in keras_layer.losses]

    inputs = Input(shape=(3,))
    model = Model(inputs, ActivityRegularization(l1=l1, l2=l2)(inputs))
    (out,), tape = model.plan.forward([x])
    np.testing.assert_array_equal(out, x)
    assert tape.activity_loss == pytest.approx(expected, rel=1e-6)

    # Total loss sum(out * g) + activity_loss: its gradient against central differences.
    x64 = x.astype(np.float64)
    g = np.random.default_rng(1).normal(size=x.shape)
    (grad,), _ = model.plan.backward(tape, [g])
    np.testing.assert_allclose(grad, g + (l1 * np.sign(x64) + 2 * l2 * x64) / len(x), rtol=1e-5)

    def total(values):
        (y,), t = model.plan.forward([values])
        return float(np.sum(y * g)) + t.activity_loss

    numeric = np.empty_like(x64)
    for index in np.ndindex(x64.shape):
        upper, lower = x64.copy(), x64.copy()
        upper[index] += 1e-6
        lower[index] -= 1e-6
        numeric[index] = (total(upper) - total(lower)) / 2e-6
    np.testing.assert_allclose(grad, numeric, rtol=1e-6)


def test_activity_loss_after_a_dense_layer_reaches_its_weights():
    inputs = Input(shape=(3,))
    dense = Dense(2)
    model = Model(inputs, ActivityRegularization(l2=0.5)(dense(inputs)))
    x = _x((4, 3))
    (out,), tape = model.plan.forward([x])
    assert tape.activity_loss == pytest.approx(0.5 * float(np.sum(out.astype(np.float64) ** 2)) / 4, rel=1e-5)
    _, weight_grads = model.plan.backward(tape, [np.zeros_like(out)])
    np.testing.assert_allclose(weight_grads[dense.kernel], x.T @ (2 * 0.5 * out / 4), rtol=1e-5)


def test_config_round_trip_and_symbolic_shape():
    layer = ActivityRegularization(l1=0.1, l2=0.2, name="act_reg")
    config = assert_config_round_trip(layer).get_config()
    assert "activity_regularizer" not in config and (config["l1"], config["l2"]) == (0.1, 0.2)
    assert layer.activity_regularizer.get_config() == {"l1": 0.1, "l2": 0.2}
    assert_symbolic_shape_matches_eager(layer, _x())
    assert layer.supports_masking and keras.layers.ActivityRegularization().supports_masking


def test_errors():
    # Keras' wording (its ActivityRegularization checks through L1L2 as well).
    with pytest.raises(ValueError, match="Invalid value for argument l1: expected a non-negative float. "
                                         "L1L2 received l1=-0.1"):
        ActivityRegularization(l1=-0.1)
    with pytest.raises(ValueError, match="Invalid value for argument l2: expected a non-negative float. "
                                         "L1L2 received l2='0.1'"):
        ActivityRegularization(l2="0.1")
