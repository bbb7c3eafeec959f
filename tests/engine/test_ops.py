"""Operators on KerasTensors: shapes, numerics and backward."""

import numpy as np
import pytest

from engine import Input, Model
from engine.network.gradient_check import gradient_check
from engine.network.ops import BinaryOp, GetItem, broadcast_shapes
from layers import Dense


def _run(fn, *shapes):
    inputs = [Input(shape=s) for s in shapes]
    model = Model(inputs, fn(*inputs))
    data = [np.random.rand(2, *s).astype("float32") + 0.5 for s in shapes]
    return model, data


@pytest.mark.parametrize("fn, ref", [
    (lambda x, y: x + y, lambda x, y: x + y),
    (lambda x, y: x - y, lambda x, y: x - y),
    (lambda x, y: x * y, lambda x, y: x * y),
    (lambda x, y: x / y, lambda x, y: x / y),
    (lambda x, y: x ** y, lambda x, y: x ** y),
])
def test_binary_tensor_ops_forward_and_backward(fn, ref):
    model, data = _run(fn, (3,), (3,))
    np.testing.assert_allclose(model(data), ref(*data), rtol=1e-6)
    assert gradient_check(model, data).max_error < 1e-6


@pytest.mark.parametrize("fn, ref", [
    (lambda x: x * 2.0 + 1.0, lambda x: x * 2.0 + 1.0),
    (lambda x: 1.0 - x, lambda x: 1.0 - x),
    (lambda x: 3.0 / x, lambda x: 3.0 / x),
    (lambda x: x ** 3, lambda x: x ** 3),
    (lambda x: 2.0 ** x, lambda x: 2.0 ** x),
    (lambda x: -x, lambda x: -x),
    (lambda x: x[:, 1:], lambda x: x[:, 1:]),
    (lambda x: x[:, None, ::2], lambda x: x[:, None, ::2]),
    (lambda x: x @ np.arange(12.0).reshape(3, 4), lambda x: x @ np.arange(12.0).reshape(3, 4)),
    (lambda x: x + np.ones((1, 3)), lambda x: x + 1.0),
])
def test_ops_with_constants(fn, ref):
    model, data = _run(fn, (3,))
    out = model(data)
    np.testing.assert_allclose(out, ref(data[0]), rtol=1e-5)
    assert out.dtype == np.float32
    assert model.outputs[0].shape == (None,) + out.shape[1:]
    assert gradient_check(model, data).max_error < 1e-6


def test_dense_times_constant_plus_input_runs_and_trains():
    x = Input(shape=(4,))
    y = Dense(4)(x) * 2.0 + x
    model = Model(x, y)
    assert [type(s.layer).__name__ for s in model.plan.steps] == ["Dense", "BinaryOp", "BinaryOp"]
    assert [s.layer.name for s in model.plan.steps][1:] == ["multiply", "add"]
    assert gradient_check(model, np.random.rand(3, 4)).max_error < 1e-6


def test_broadcasting_shapes_and_gradients():
    model, data = _run(lambda x, y: x * y, (3, 1), (1, 4))
    assert model.outputs[0].shape == (None, 3, 4)
    assert gradient_check(model, data).max_error < 1e-6
    assert broadcast_shapes((None, 3), (1, 3)) == (None, 3)
    assert broadcast_shapes((None, 1), (5,)) == (None, 5)
    with pytest.raises(ValueError, match="cannot be broadcast together"):
        Input(shape=(3,)) + Input(shape=(4,))


def test_matmul_of_two_tensors_and_shape_errors():
    model, data = _run(lambda x, y: x @ y, (2, 3), (3, 5))
    assert model.outputs[0].shape == (None, 2, 5)
    np.testing.assert_allclose(model(data), data[0] @ data[1], rtol=1e-5)
    assert gradient_check(model, data).max_error < 1e-6
    with pytest.raises(ValueError, match=r"matmul \(@\) cannot multiply shapes \(None, 2, 3\) and \(4, 5\)"):
        Input(shape=(2, 3)) @ np.ones((4, 5))
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        Input(shape=(3,)) @ np.ones(3)


def test_getitem_shapes_with_unknown_batch_and_bad_keys():
    x = Input(shape=(4, 5))
    assert x[0].shape == (4, 5)
    assert x[:, -1].shape == (None, 5)
    assert x[..., 1:3].shape == (None, 4, 2)
    assert x[:2].shape == (None, 4, 5)
    with pytest.raises(TypeError, match="supports ints, slices, None and ...*received \\[0, 1\\]"):
        x[:, [0, 1]]
    with pytest.raises(ValueError, match="cannot index a tensor of shape"):
        x[:, 9]


def test_int_tensors_keep_their_dtype():
    ids = Input(shape=(3,), dtype="int32")
    assert (ids + 1).dtype == "int32"
    half = ids * 0.5
    model = Model(ids, half)
    assert model(np.array([[1, 2, 3]], "int32")).dtype == np.dtype(half.dtype)


def test_op_layers_round_trip_their_config():
    for layer in (BinaryOp("multiply", constant=[1.0, 2.0], constant_position="left"), GetItem((slice(None), Ellipsis, 1))):
        clone = type(layer).from_config(layer.get_config())
        assert clone.get_config() == layer.get_config()
