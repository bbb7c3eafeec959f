"""Seed 001's example test (adapted only in its imports), and Node bookkeeping."""

from engine import Input, Model
from layers import Dense


def test_seed_001_node_tensor_layer_links():
    a = Input(shape=(32,), name="input_a")
    b = Input(shape=(32,), name="input_b")

    a_layer, a_node_index, a_tensor_index = a._keras_history
    b_layer, b_node_index, b_tensor_index = b._keras_history
    assert len(a_layer.inbound_nodes) == 1
    assert a_tensor_index == 0

    node = a_layer.inbound_nodes[a_node_index]
    assert node.outbound_layer == a_layer

    dense = Dense(16, name="dense_1")
    a_2 = dense(a)
    b_2 = dense(b)

    assert len(dense.inbound_nodes) == 2
    assert len(dense.outbound_nodes) == 0

    assert dense.inbound_nodes[0].inbound_layers == [a_layer]
    assert dense.inbound_nodes[0].outbound_layer == dense
    assert dense.inbound_nodes[0].input_tensors == [a]

    assert dense.inbound_nodes[1].inbound_layers == [b_layer]
    assert dense.inbound_nodes[1].outbound_layer == dense
    assert dense.inbound_nodes[1].input_tensors == [b]

    assert a_2._keras_history == (dense, 0, 0)
    assert b_2._keras_history == (dense, 1, 0)


def test_node_fields_and_parent_nodes():
    a = Input(shape=(4,), name="a")
    b = Input(shape=(4,), name="b")
    shared = Dense(3, name="shared")
    a2, b2 = shared(a), shared(b)
    summed = a2 + b2
    node = summed._keras_history.layer.inbound_nodes[0]
    assert node.inbound_layers == [shared, shared]
    assert node.node_indices == [0, 1]
    assert node.tensor_indices == [0, 0]
    assert node.input_tensors == [a2, b2]
    assert node.output_tensors == [summed]
    assert node.parent_nodes == [shared.inbound_nodes[0], shared.inbound_nodes[1]]
    assert shared.inbound_nodes[1].parent_nodes == [b._keras_history.layer.inbound_nodes[0]]
    # The shared layer links to the add layer once, although it feeds it twice.
    assert shared.outbound_nodes == [node]
    assert a._keras_history.layer.outbound_nodes == [shared.inbound_nodes[0]]


def test_history_unpacks_as_tuple_and_names_fields():
    x = Input(shape=(2,))
    y = Dense(1)(x)
    layer, node_index, tensor_index = y._keras_history
    assert (layer.name, node_index, tensor_index) == ("dense", 0, 0)
    assert y._keras_history.layer is layer
    assert y._keras_history.node_index == 0


def test_model_graph_is_made_of_the_same_nodes():
    x = Input(shape=(2,))
    y = Dense(1)(x)
    model = Model(x, y)
    assert [step.node for step in model.plan.steps] == [y._keras_history.layer.inbound_nodes[0]]


def test_operation_is_the_layer_the_node_is_a_call_of():
    x = Input(shape=(2,))
    first, second = Dense(3), Dense(1)
    y = second(first(x))
    assert first.inbound_nodes[0].operation is first
    assert y._keras_history.layer.inbound_nodes[0].operation is second


def test_arguments_show_the_call_as_it_was_made():
    x, y = Input(shape=(2,)), Input(shape=(2,))
    layer = Dense(2)
    layer(x)
    node = layer.inbound_nodes[0]
    assert node.arguments.args == (x,) and node.arguments.kwargs == {}
    from engine import Layer

    class Scaled(Layer):
        def call(self, inputs, other=None, scale=1.0):
            return inputs * scale + other

    scaled = Scaled()
    scaled(x, other=y, scale=2.0)
    assert scaled.inbound_nodes[0].arguments.args == (x,)
    assert scaled.inbound_nodes[0].arguments.kwargs["other"] is y
    assert scaled.inbound_nodes[0].arguments.kwargs["scale"] == 2.0
