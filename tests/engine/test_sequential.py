import numpy as np
import pytest

from engine import Input, Layer, Model, Sequential
from layers import Activation, Dense


def test_seed_003_sequential_example():
    model = Sequential()
    model.add(Dense(input_shape=(10,), units=10, activation="relu"))
    model.add(Dense(units=1))
    assert model.inputs[0].shape == (None, 10)
    assert model.outputs[0].shape == (None, 1)
    assert [l.name for l in model.layers] == ["dense", "dense_1"]
    assert model.count_params() == 10 * 10 + 10 + 10 + 1
    assert model(np.ones((3, 10))).shape == (3, 1)


def test_sequential_with_input_and_list_constructor():
    model = Sequential([Input(shape=(4,)), Dense(3, activation="tanh"), Activation("softmax")])
    out = model(np.random.rand(2, 4))
    np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=1e-6)
    assert len(model.layers) == 2  # the InputLayer is not listed, as in Keras


def test_sequential_builds_on_first_call_when_shape_unknown():
    model = Sequential([Dense(2), Dense(1)])
    assert model.weights == []
    assert model(np.ones((5, 7))).shape == (5, 1)
    assert model.layers[0].kernel.shape == (7, 2)
    with pytest.raises(ValueError, match="Input 0 .* expected shape=\\(None, 7\\)"):
        model(np.ones((5, 6)))


def test_sequential_without_shape_explains_how_to_build():
    with pytest.raises(ValueError, match="cannot be built without an input shape: add an Input first"):
        Sequential([Dense(2)]).plan


def test_add_and_pop():
    model = Sequential([Input(shape=(3,)), Dense(4), Dense(2)])
    assert model(np.ones((1, 3))).shape == (1, 2)
    popped = model.pop()
    assert popped.units == 2
    assert model(np.ones((1, 3))).shape == (1, 4)
    model.add(Dense(5))
    assert model(np.ones((1, 3))).shape == (1, 5)
    with pytest.raises(ValueError, match="Only instances of Layer can be added .* received 3 \\(of type int\\)"):
        model.add(3)
    with pytest.raises(ValueError, match="already been configured to use input shape \\(None, 3\\)"):
        model.add(Input(shape=(3,)))
    with pytest.raises(ValueError, match="InputLayer can only be the first layer"):
        Sequential([Dense(2), Input(shape=(3,))])


def test_sequential_is_a_functional_model_and_nests():
    block = Sequential([Input(shape=(3,)), Dense(3)], name="block")
    x = Input(shape=(3,))
    model = Model(x, block(x) + x)
    assert model(np.zeros((2, 3))).shape == (2, 3)
    assert block.get_layer(index=0).name == "dense"


def test_seeded_weights_are_reproducible():
    from engine.utils import set_random_seed

    set_random_seed(7)
    first = Sequential([Input(shape=(5,)), Dense(4), Dense(2)]).get_weights()
    set_random_seed(7)
    second = Sequential([Input(shape=(5,)), Dense(4), Dense(2)]).get_weights()
    set_random_seed(8)
    third = Sequential([Input(shape=(5,)), Dense(4), Dense(2)]).get_weights()
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], third[0])


@pytest.mark.parametrize("layer_by_layer", [False, True])
def test_a_sub_model_may_end_inside_a_nested_sequential_however_it_was_built(layer_by_layer):
    if layer_by_layer:  # add() maps the graph again each time, from the same Input
        block = Sequential()
        for layer in (Input((2,)), Dense(3, name="a"), Dense(4), Dense(5)):
            block.add(layer)
        block.pop()
    else:
        block = Sequential([Input((2,)), Dense(3, name="a"), Dense(4)])
    x = Input((2,))
    block(x)
    inner = Model(x, block.get_layer("a").output)
    np.testing.assert_allclose(inner(np.ones((1, 2))), block.get_layer("a")(np.ones((1, 2))), rtol=1e-6)


def test_a_layer_whose_call_needs_two_positional_arguments_is_refused_at_build():
    class NeedsTraining(Layer):
        def call(self, inputs, training):
            return inputs

    model = Sequential([NeedsTraining(name="needy")], name="seq")
    with pytest.raises(ValueError, match=r"can only have a single positional argument, the input tensor\. Layer "
                                         r"'needy' \(NeedsTraining\) in Sequential model 'seq' has multiple "
                                         r"positional arguments: \['inputs', 'training'\]"):
        model.build((None, 2))
