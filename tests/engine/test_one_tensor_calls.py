"""The common symbolic call, one KerasTensor and nothing else, takes a lean path (issue 23: graph building)."""

import numpy as np
import pytest

from engine import Input, Model
from engine.network.bound_arguments import BoundArguments, one_tensor_call
from engine.network.layer import Layer
from engine.network.layer_weights import _int_shape
from layers import Add, Dense, LSTM


def test_a_node_of_a_one_tensor_call_makes_its_bound_arguments_when_read():
    x = Input((3,))
    dense = Dense(2)
    dense(x)
    node = dense.inbound_nodes[0]
    assert node.single and node._bound is None
    assert node.call_args == (x,) and node.input_tensors == [x] and node.call_kwargs == {}
    bound = node.bound_arguments
    assert isinstance(bound, BoundArguments) and node.bound_arguments is bound
    assert bound.tensors == [x] and bound.first == "inputs" and bound.arguments == {"inputs": x}


def test_one_tensor_calls_share_the_call_shape_their_steps_read():
    x = Input((3,))
    model = Model(x, Dense(2)(Dense(3)(x)))
    first, second = model.plan.steps
    assert first.arguments is second.arguments is one_tensor_call("inputs")
    assert first.node.call_shape is one_tensor_call("inputs")
    assert first.first_slots == first.in_slots and second.first_single
    values = ["x", "y", "z"]
    assert second.arguments.fill_in(values, second.in_slots) == ("y", (), {})


def test_a_shared_call_shape_routes_gradients_and_refuses_another_structure():
    layer = Dense(2, name="d")
    shared = one_tensor_call("inputs")
    grad = np.ones((1, 2))
    assert shared.route(layer, grad)[0] is grad
    with pytest.raises(ValueError, match="expected the structure tensor, received"):
        shared.route(layer, [grad, grad])


def test_calls_with_more_than_one_tensor_keep_their_own_bound_arguments():
    a, b = Input((3,)), Input((3,))
    add = Add()
    add([a, b])
    node = add.inbound_nodes[0]
    assert not node.single and node.input_tensors == [a, b]
    assert node.call_shape is node.bound_arguments and node.bound_arguments.tensors == [a, b]
    h, c = Input((2,)), Input((2,))
    lstm = LSTM(2)
    lstm(Input((5, 3)), initial_state=[h, c])
    assert lstm.inbound_nodes[0].bound_arguments.slots["initial_state"] == range(1, 3)


def test_a_trained_chain_of_one_tensor_calls_matches_its_eager_calls():
    x = Input((3,))
    first, second = Dense(4, activation="tanh"), Dense(1)
    model = Model(x, second(first(x)))
    data = np.random.default_rng(0).standard_normal((8, 3)).astype("float32")
    np.testing.assert_allclose(model.predict(data, verbose=0), second(first(data)), rtol=1e-6)
    model.compile(optimizer="sgd", loss="mse")
    before = second.kernel.numpy().copy()
    model.fit(data, np.ones((8, 1), "float32"), verbose=0)
    assert not np.allclose(second.kernel.numpy(), before)


def test_a_layer_keeps_its_weights_in_creation_order_and_refuses_a_name_twice():
    layer = Layer(name="l")
    assert layer._variables == ()
    first = layer.add_weight(shape=(2,), name="a")
    second = layer.add_weight(shape=[np.int64(3)], name="b")
    assert layer._variables == [first, second] and second.shape == (3,)
    with pytest.raises(ValueError, match="already has a weight named 'a'"):
        layer.add_weight(shape=(2,), name="a")


def test_weight_shapes_are_tuples_of_ints_whatever_the_sizes_given():
    assert _int_shape((np.int64(3), 2)) == (3, 2) and type(_int_shape((np.int64(3), 2))[0]) is int
    assert _int_shape([2.0, 3]) == (2, 3) and _int_shape(None) == () and _int_shape(()) == ()
    with pytest.raises(TypeError):
        _int_shape((None, 3))
