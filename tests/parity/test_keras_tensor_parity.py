"""KerasTensor parity with Keras 3: every Python operator Keras supports is an
op layer with Keras' shape, dtype and values; a KerasTensor made directly feeds
a layer; misuse raises Keras' exception types."""

import re

import keras
import numpy as np
import pytest

from engine import Input, KerasTensor, Model, load_model, model_from_json
from engine.network.functional import Functional
from engine.network.gradient_check import gradient_check
from engine.network.ops import BinaryOp, ReshapeOp, Round, SqueezeOp, UnaryOp
from layers import Dense
from tests.parity.errors import raised

# Written once, run on our tensors and on Keras' alike.
FLOAT_EXPRESSIONS = {
    "less": lambda x, y: x < y,
    "less_equal_scalar": lambda x, y: x <= 0.5,
    "greater": lambda x, y: x > y,
    "greater_equal": lambda x, y: x >= y,
    "not_equal": lambda x, y: x != y,
    "reflected_comparison": lambda x, y: 0.5 < x,
    "floor_divide": lambda x, y: x // 0.3,
    "reflected_floor_divide": lambda x, y: 2.0 // x,
    "mod": lambda x, y: x % 0.3,
    "reflected_mod": lambda x, y: 2.0 % x,
    "mod_of_tensors": lambda x, y: x % y,
    "abs": lambda x, y: abs(x - y),
    "and": lambda x, y: (x > 0.5) & (y > 0.5),
    "or": lambda x, y: (x > 0.5) | (y > 0.5),
    "xor": lambda x, y: (x > 0.5) ^ (y > 0.5),
    "and_of_floats": lambda x, y: x & y,
    "invert": lambda x, y: ~(x > 0.5),
    "invert_float": lambda x, y: ~x,
    "round": lambda x, y: round(x * 10),
    "round_decimals": lambda x, y: round(x, 1),
    "reshape": lambda x, y: x.reshape((-1, 3, 2)),
    "squeeze_axis": lambda x, y: x.reshape((-1, 1, 6)).squeeze(1),
    "squeeze_all": lambda x, y: x.reshape((-1, 1, 6, 1)).squeeze(),
    "mask_times_value": lambda x, y: (x > y) * x,
}
INT_EXPRESSIONS = {
    "int_floor_divide": lambda x: x // 3,
    "int_mod": lambda x: x % -3,
    "int_abs": lambda x: abs(x),
    "int_compare": lambda x: x < 2,
    "int_invert": lambda x: ~x,
}


def _float_data():
    rng = np.random.default_rng(0)
    return [rng.uniform(-2, 2, size=(4, 6)).astype("float32") for _ in range(2)]


def _keras_values(keras_model, data):
    return [np.asarray(v) for v in keras.tree.flatten(keras_model(data))]


@pytest.mark.parametrize("name", sorted(FLOAT_EXPRESSIONS))
def test_float_operator_matches_keras_in_shape_dtype_and_values(name):
    expression = FLOAT_EXPRESSIONS[name]
    x, y = Input(shape=(6,)), Input(shape=(6,))
    ours = expression(x, y)
    kx, ky = keras.Input(shape=(6,)), keras.Input(shape=(6,))
    theirs = expression(kx, ky)
    assert (ours.shape, ours.dtype) == (theirs.shape, theirs.dtype)

    data = _float_data()
    received = Model([x, y], ours)(data)
    (expected,) = _keras_values(keras.Model([kx, ky], theirs), data)
    assert received.dtype == expected.dtype and received.shape == expected.shape
    np.testing.assert_allclose(received, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(INT_EXPRESSIONS))
def test_int_operator_matches_keras_in_shape_dtype_and_values(name):
    expression = INT_EXPRESSIONS[name]
    x, kx = Input(shape=(5,), dtype="int32"), keras.Input(shape=(5,), dtype="int32")
    ours, theirs = expression(x), expression(kx)
    assert (ours.shape, ours.dtype) == (theirs.shape, theirs.dtype)

    data = np.array([[-7, -3, 0, 4, 8], [1, 2, 3, 5, -1]], dtype="int32")
    received = Model(x, ours)(data)
    (expected,) = _keras_values(keras.Model(kx, theirs), data)
    assert received.dtype == expected.dtype
    np.testing.assert_array_equal(received, expected)


def test_operators_are_auto_named_op_layers():
    x, y = Input(shape=(3,)), Input(shape=(3,))
    outputs = [x < y, x // 2, x % 2, abs(x), x & y, ~x, round(x), x.reshape((-1, 3, 1)), x.squeeze()]
    assert [t._keras_history.layer.name for t in outputs] == [
        "less", "floor_divide", "mod", "absolute", "logical_and", "logical_not", "round", "reshape", "squeeze"]
    assert [type(t._keras_history.layer) for t in outputs] == [
        BinaryOp, BinaryOp, BinaryOp, UnaryOp, BinaryOp, UnaryOp, Round, ReshapeOp, SqueezeOp]


def test_equality_compares_identity_as_in_keras_so_tensors_stay_usable_as_keys():
    x, y = Input(shape=(3,)), Input(shape=(3,))
    kx, ky = keras.Input(shape=(3,)), keras.Input(shape=(3,))
    assert (x == x, x == y) == (kx == kx, kx == ky) == (True, False)
    assert {x: "a", y: "b"}[y] == "b" and len({x, y, x}) == 2
    assert y in [x, y] and [x, y].index(y) == 1
    assert (x != None) is True  # noqa: E711 (identity, as `==`)
    assert BinaryOp("equal")([x, y]).dtype == "bool"  # the elementwise equality, spelled out


def test_keras_tensor_methods_are_those_of_keras():
    def methods(tensor):
        return {name for name in dir(tensor) if not name.startswith("_") and callable(getattr(tensor, name))}

    assert methods(keras.KerasTensor((None, 3))) == methods(KerasTensor((None, 3))) == {"reshape", "squeeze"}


def test_reshape_and_squeeze_shapes_and_errors():
    x = Input(shape=(2, 3))
    assert x.reshape((-1, 6)).shape == (None, 6)
    assert x.reshape((4, 3, 2)).shape == (4, 3, 2)  # the batch axis is the caller's to get right, as in Keras
    assert KerasTensor((2, 3)).reshape(-1).shape == (6,)
    assert Input(shape=(1, 3, 1)).squeeze(-1).shape == (None, 1, 3)
    with pytest.raises(ValueError, match="cannot reshape a tensor of shape \\(2, 3\\) \\(6 values\\) to \\(4,\\)"):
        KerasTensor((2, 3)).reshape((4,))
    with pytest.raises(ValueError, match="at most one -1"):
        x.reshape((-1, -1))
    with pytest.raises(ValueError, match="cannot squeeze axis 2 of shape \\(None, 2, 3\\): its size is 3, not 1"):
        x.squeeze(2)


@pytest.mark.parametrize("expression", [
    lambda x, y: abs(x - y) * x,
    lambda x, y: x % 0.7 + y,
    lambda x, y: 2.5 % x + y,
    lambda x, y: x % y,
    lambda x, y: (x > y) * x + (y >= 0.5) * y,
    lambda x, y: (x // 0.4) * y + x,
    lambda x, y: round(x * 10) * y + x,
    lambda x, y: x.reshape((-1, 1, 3, 2)).squeeze().reshape((-1, 6)) * y,
], ids=["abs", "mod", "reflected_mod", "mod_of_tensors", "comparison_mask", "floor_divide", "round", "reshape"])
def test_gradients_match_finite_differences(expression):
    """Differentiable ops pass gradients; comparisons, floor_divide and round
    pass none (they are locally constant), as in Keras."""
    x, y = Input(shape=(6,)), Input(shape=(6,))
    model = Model([x, y], Dense(6)(expression(x, y)))
    rng = np.random.default_rng(1)
    data = [rng.uniform(0.6, 1.9, size=(3, 6)), rng.uniform(0.6, 1.9, size=(3, 6))]
    assert gradient_check(model, data).max_error < 1e-6


def test_comparisons_and_logical_ops_return_no_gradient():
    x, y = Input(shape=(3,)), Input(shape=(3,))
    for tensor in (x < y, x & y, ~x, x // 2.0, round(x)):
        layer = tensor._keras_history.layer
        inputs = [np.ones((2, 3))] * 2 if isinstance(layer, BinaryOp) and layer.constant is None else np.ones((2, 3))
        outputs, cache = layer.forward(inputs)
        grad_inputs, grad_weights = layer.backward(cache, np.ones(outputs.shape))
        assert grad_weights == {}
        assert all(g is None for g in (grad_inputs if isinstance(grad_inputs, list) else [grad_inputs]))


def _model_with_every_operator():
    x, y = Input(shape=(6,), name="x"), Input(shape=(6,), name="y")
    mask = (x < y) | ((x >= 0.5) & ~(y != 1.0)) ^ (y > x)
    value = abs(x) // 0.5 + x % 0.3 + round(y, 1) + (2.0 // (abs(y) + 1)) + (x <= 0.1)
    out = mask * value
    out = out.reshape((-1, 2, 3, 1)).squeeze(-1).reshape((-1, 6))
    return Model([x, y], out)


def test_every_operator_round_trips_through_config_json_and_file(tmp_path):
    model = _model_with_every_operator()
    data = _float_data()
    expected = model(data)

    rebuilt = Functional.from_config(model.get_config())
    np.testing.assert_array_equal(rebuilt(data), expected)
    assert rebuilt.get_config() == model.get_config()
    np.testing.assert_array_equal(model_from_json(model.to_json())(data), expected)
    model.save(tmp_path / "ops.nw")
    np.testing.assert_array_equal(load_model(tmp_path / "ops.nw")(data), expected)


def test_a_keras_tensor_made_directly_feeds_a_layer_as_in_keras():
    ours, theirs = KerasTensor((None, 3)), keras.KerasTensor((None, 3))
    dense, keras_dense = Dense(2), keras.layers.Dense(2)
    out, keras_out = dense(ours), keras_dense(theirs)
    assert isinstance(out, KerasTensor) and out.shape == keras_out.shape == (None, 2)
    assert dense.built and keras_dense.built and dense.kernel.shape == (3, 2)
    node = dense.inbound_nodes[0]
    assert ours._keras_history == (None, 0, 0) and tuple(theirs._keras_history) == (None, 0, 0)
    assert node.inbound_layers == [None] and node.parent_nodes == [] and not node.is_input


def test_a_keras_tensor_made_directly_takes_operators_and_names():
    ours = KerasTensor((None, 3))
    assert ours.name is None
    total = ours * 2.0 + ours
    assert total.shape == (None, 3) and ours.name == "keras_tensor"


def test_a_model_from_a_keras_tensor_made_directly_is_rejected_clearly():
    """Keras' Model only takes tensors from Input() (a bare KerasTensor crashes
    with AttributeError there); ours says so with a ValueError."""
    ours = KerasTensor((None, 3))
    out = Dense(2)(ours)
    with pytest.raises(ValueError, match="made directly with KerasTensor.*must be created via Input\\(\\).*"
                                         "Input\\(shape=\\(3,\\)\\)"):
        Model(ours, out)
    with pytest.raises(ValueError, match="depends on is KerasTensor 'keras_tensor'.*made directly"):
        Model(Input(shape=(3,)), out)


@pytest.mark.parametrize("misuse, phrase", [
    (lambda t: list(t), "Iterating over a symbolic KerasTensor is not supported"),
    (lambda t: [a for a in t], "Iterating over a symbolic KerasTensor is not supported"),
    (lambda t: np.array(t), "You cannot convert it to a NumPy array"),
    (lambda t: np.asarray(t), "You cannot convert it to a NumPy array"),
    (lambda t: np.mean(t), "You cannot convert it to a NumPy array"),
    (lambda t: bool(t), "cannot be used as a boolean"),
    (lambda t: int(t), "You cannot convert it to an int"),
    (lambda t: float(t), "You cannot convert it to a float"),
    (lambda t: len(t), "has no len\\(\\)"),
], ids=["list", "loop", "np.array", "np.asarray", "np.mean", "bool", "int", "float", "len"])
def test_misuse_raises_keras_exception_type_with_our_advice(misuse, phrase):
    theirs = raised(lambda: misuse(keras.Input(shape=(3,))))
    ours = raised(lambda: misuse(Input(shape=(3,), name="x")))
    assert type(ours) is type(theirs)
    assert re.search(phrase, str(theirs)) and re.search(phrase, str(ours)), (str(theirs), str(ours))
    assert "symbolic" in str(ours)
