"""What a symbolic call leaves behind and the shortcuts it takes (issue 23: graph building per layer)."""

import gc

import numpy as np
import pytest

from engine import Input, KerasTensor, Model
from engine.network.initializers import GlorotUniform, Ones
from engine.network.keras_tensor import KerasHistory
from engine.network.layer import Layer
from engine.network.node import Node
from engine.network.variable import Variable
from engine.network.weight_draws import PendingDraw, drawn_later
from layers import Dense


def _chain(x, depth):
    for _ in range(depth):
        x = Dense(4)(x)
    return x


def _tracked_per_layer(build, depth=300):
    build(3)
    gc.collect()
    before = len(gc.get_objects())
    kept = build(depth)
    gc.collect()
    count = (len(gc.get_objects()) - before) / depth
    del kept
    return count


def test_a_dense_layer_of_a_chain_leaves_9_objects_and_10_with_its_model():
    # Dense, 3 lists (nodes in, nodes out, weights), InputSpec, 2 Variables, Node, the output KerasTensor;
    # the Model adds one Step per layer. No __dict__, BoundArguments, argument tuple or tensor list.
    x = Input((4,))
    assert _tracked_per_layer(lambda depth: _chain(x, depth)) <= 9.1
    assert _tracked_per_layer(lambda depth: Model(x, _chain(x, depth))) <= 10.1
    assert _chain(x, 2).shape == (None, 4)


def test_the_history_is_read_from_the_tensor_as_a_keras_history():
    free = KerasTensor((None, 3))
    assert free._keras_history is None
    dense = Dense(2, name="hist")
    y = dense(free)
    assert free._keras_history == KerasHistory(None, 0, 0) and free.name.startswith("keras_tensor")
    history = y._keras_history
    assert isinstance(history, KerasHistory) and (history.layer, history.node_index, history.tensor_index) == (
        dense, 0, 0)
    with pytest.raises(ValueError, match="already comes from layer 'hist'"):
        y._set_history(dense, 1, 0)


def test_a_node_lists_one_output_or_the_flattened_outputs():
    x = Input((3,))
    y = Dense(2)(x)
    node = y._keras_history.layer.inbound_nodes[0]
    assert node.output_tensors == [y] and node.outputs is y
    a, b = KerasTensor((None, 2)), KerasTensor((None, 2))
    pair = Node(Layer(), (x,), {}, {"b": b, "a": a})
    assert pair.output_tensors == [a, b] and a._keras_history.tensor_index == 0
    with pytest.raises(ValueError, match="non-tensor output, int"):
        Node(Layer(), (x,), {}, [KerasTensor((None, 2)), 3])


def test_a_spec_takes_numpy_sizes_as_ints():
    spec = KerasTensor._spec([None, np.int64(3)], "float32")
    assert spec.shape == (None, 3) and type(spec.shape[1]) is int and spec.name is None
    assert KerasTensor((np.int32(2),), np.float64).shape == (2,)


def test_a_weight_drawn_on_first_use_is_the_pending_draw_it_stands_for():
    later, place = drawn_later(GlorotUniform())
    assert later and isinstance(place, int)
    assert drawn_later(GlorotUniform(seed=3)) == (True, None) and drawn_later(lambda s, dtype: None) == (False, None)
    made = Variable.drawn_on_first_use(GlorotUniform(), (3, 2), np.dtype("float32"), place, name="k", path="l/k",
                                       trainable=False)
    given = Variable(PendingDraw(GlorotUniform(), (3, 2), np.dtype("float32"), place), name="k", path="l/k",
                     trainable=False)
    assert made._value is None and (made.shape, made.dtype, made.path, made.trainable) == ((3, 2), np.float32,
                                                                                           "l/k", False)
    np.testing.assert_array_equal(made.numpy(), given.numpy())


def test_weight_names_checked_once_are_still_refused_when_not_storable():
    layer = Layer(name="names")
    layer.add_weight(shape=(1,), initializer=Ones(), name="gamma")
    with pytest.raises(ValueError, match="already has a weight named 'gamma'"):
        layer.add_weight(shape=(1,), name="gamma")
    for bad in ("back\\slash", ["gamma"]):
        with pytest.raises(ValueError, match="expects weight names of"):
            layer.add_weight(shape=(1,), name=bad)
    assert [v.path for v in layer.weights] == ["names/gamma"]
