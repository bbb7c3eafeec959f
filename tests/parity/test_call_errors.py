"""Errors around Layer.__call__ as Keras 3 raises them: an exception inside a
user's call() comes back with the layer's name and the arguments it received
(same type, the original as __cause__), and misuse of Node and add_weight
raises Keras' exception types."""

import keras
import numpy as np
import pytest

from engine import GradientTape, Input, KerasTensor, Layer, Model
from engine.autodiff import TracingError
from engine.network.node import Node
from layers import Dense
from tests.parity.errors import raised


def _matmul_layer(base):
    class Mismatched(base):
        def call(self, x):
            return x @ np.ones((5, 2), "float32")

    return Mismatched


def _value_error_layer(base):
    class Checking(base):
        def call(self, x):
            raise ValueError(f"expected 5 features, got {x.shape[-1]}")

    return Checking


def _key_error_layer(base):
    class Lookup(base):
        def call(self, x):
            return {"a": x}["missing"]

    return Lookup


def _two_argument_error_layer(base):
    class Failing(base):
        def call(self, x):
            raise _NeedsTwoArguments("code", 42)

    return Failing


class _NeedsTwoArguments(Exception):
    def __init__(self, code, detail):
        super().__init__(code, detail)


@pytest.mark.parametrize("make", [_value_error_layer, _key_error_layer, _two_argument_error_layer],
                         ids=["ValueError", "KeyError", "custom signature"])
def test_an_eager_call_error_keeps_keras_type_and_gains_the_layer_and_its_arguments(make):
    data = np.ones((2, 3), "float32")
    theirs = raised(lambda: make(keras.layers.Layer)(name="failing")(data))
    ours = raised(lambda: make(Layer)(name="failing")(data))
    assert type(ours) is type(theirs)  # RuntimeError for a type that cannot be made from a message, as Keras
    assert "Exception encountered when calling" in str(theirs)
    message = str(ours)
    assert "Exception encountered when calling layer 'failing'" in message
    assert "x=ndarray(shape=(2, 3), dtype=float32)" in message
    cause = ours.__cause__
    assert cause is not None and "Exception encountered" not in str(cause)
    assert str(cause) in message


def test_the_original_message_is_kept_whole():
    error = raised(lambda: _matmul_layer(Layer)(name="mm")(np.ones((2, 3), "float32")))
    assert isinstance(error, ValueError) and isinstance(error.__cause__, ValueError)
    assert "matmul" in str(error) and "(size 5 is different from 3)" in str(error)
    assert "Arguments received by layer 'mm' (Mismatched)" in str(error)


def test_a_symbolic_call_error_keeps_the_type_and_names_the_layer_and_the_tensor_shapes():
    theirs = raised(lambda: _key_error_layer(keras.layers.Layer)(name="lookup")(keras.Input(shape=(3,))))
    ours = raised(lambda: _key_error_layer(Layer)(name="lookup")(Input(shape=(3,))))
    assert type(ours) is type(theirs) is KeyError
    message = str(ours)
    assert "Exception encountered when calling layer 'lookup' (Lookup)" in message
    assert "x=KerasTensor(shape=(None, 3), dtype=float32)" in message
    assert "defines no compute_output_shape" in message
    assert isinstance(ours.__cause__, KeyError)


def test_a_symbolic_call_with_several_inputs_lists_each_shape():
    class Pair(Layer):
        def call(self, inputs, scale=None):
            return inputs[0] @ inputs[1]

        def compute_output_shape(self, input_shape):
            raise ValueError("shapes do not multiply")

    error = raised(lambda: Pair(name="pair")([Input(shape=(3,)), Input(shape=(4, 2))], scale=2.0))
    assert isinstance(error, ValueError)
    assert ("inputs=[KerasTensor(shape=(None, 3), dtype=float32), KerasTensor(shape=(None, 4, 2), dtype=float32)]"
            in str(error))
    assert "scale=2.0" in str(error)


def _nested(base):
    class Inner(base):
        def call(self, x):
            raise ValueError(f"expected 5 features, got {x.shape[-1]}")

    class Outer(base):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.inner = Inner(name="inner")

        def call(self, x):
            return self.inner(x * 2.0)

    return Outer(name="outer")


def test_nested_layers_give_one_context_naming_the_innermost_layer_as_keras():
    data = np.ones((2, 3), "float32")
    theirs = raised(lambda: _nested(keras.layers.Layer)(data))
    ours = raised(lambda: _nested(Layer)(data))
    assert type(ours) is type(theirs)
    for error, inner_name in ((theirs, "Inner"), (ours, "layer 'inner'")):
        assert str(error).count("Exception encountered when calling") == 1
        assert inner_name in str(error) and "Outer" not in str(error)
    assert "Exception encountered" not in str(ours.__cause__)


def test_an_error_inside_a_gradient_tape_is_put_in_context_too():
    layer = _matmul_layer(Layer)(name="taped")
    with GradientTape():
        error = raised(lambda: layer(np.ones((2, 3), "float32")))
    assert isinstance(error, ValueError) and "calling layer 'taped'" in str(error)


def test_a_model_call_names_the_failing_layer_inside_it():
    inputs = Input(shape=(3,))
    model = Model(inputs, _ShapeDeclared(name="inside")(Dense(4)(inputs)))
    for run in (lambda: model(np.ones((2, 3))), lambda: model.predict(np.ones((2, 3)), verbose=0)):
        error = raised(run)
        assert isinstance(error, ValueError)
        assert "calling layer 'inside' (_ShapeDeclared)" in str(error)
        assert "x=ndarray(shape=(2, 4), dtype=float32)" in str(error)


class _ShapeDeclared(Layer):
    """Declares a shape its call cannot deliver: fails only when run."""

    def call(self, x):
        return x @ np.ones((3, 2), "float32")

    def compute_output_shape(self, input_shape):
        return input_shape[:-1] + (2,)


def test_our_errors_that_name_the_layer_are_not_wrapped():
    class Strict(Layer):
        def call(self, x):
            raise ValueError(f"Layer {self.name!r} expects positive values.")

    layer = Strict(name="strict")
    error = raised(lambda: layer(np.ones((2, 3))))
    assert str(error) == "Layer 'strict' expects positive values." and error.__cause__ is None

    class Holder(Layer):
        def __init__(self):
            super().__init__(name="holder")
            self.strict = Strict(name="strict_inner")

        def call(self, x):
            return self.strict(x)

    error = raised(lambda: Holder()(np.ones((2, 3))))
    assert str(error) == "Layer 'strict_inner' expects positive values."  # no context added by the holder


def test_input_spec_errors_of_a_layer_stay_as_they_are():
    dense = Dense(3)
    dense(np.ones((2, 3), "float32"))
    error = raised(lambda: dense(np.ones((2, 4), "float32")))
    assert isinstance(error, ValueError) and "Exception encountered" not in str(error)
    assert "of layer dense is incompatible" in str(error)


class _Sorting(Layer):
    def build(self, input_shape):
        self.w = self.add_weight(shape=input_shape[-1:], initializer="ones")

    def call(self, x):
        return np.sort(x * self.w, axis=-1)

    def compute_output_shape(self, input_shape):
        return input_shape


def test_tracing_errors_keep_their_type_and_message():
    layer = _Sorting(name="sorting")
    with GradientTape():
        error = raised(lambda: layer(np.ones((2, 3), "float32")))
    assert type(error) is TracingError
    assert "numpy.sort cannot be traced" in str(error) and "Exception encountered" not in str(error)

    inputs = Input(shape=(3,))
    model = Model(inputs, _Sorting(name="sorting_in_model")(inputs))
    model.compile(optimizer="sgd", loss="mse")
    error = raised(lambda: model.fit(np.ones((4, 3)), np.ones((4, 3)), verbose=0))
    assert type(error) is TracingError and "Exception encountered" not in str(error)
    assert "numpy.sort cannot be traced in layer 'sorting_in_model'" in str(error)


@pytest.mark.parametrize("exception", [StopIteration("done"), KeyboardInterrupt()])
def test_stop_iteration_and_keyboard_interrupt_pass_untouched(exception):
    class Raising(Layer):
        def call(self, x):
            raise exception

    with pytest.raises(type(exception)) as info:
        Raising()(np.ones((2, 3)))
    assert info.value is exception


def test_a_node_given_a_numpy_output_raises_keras_value_error():
    theirs = raised(lambda: keras.src.ops.node.Node(keras.layers.Dense(2), call_args=(), call_kwargs={},
                                                     outputs=np.ones((2, 3))))
    layer = Dense(2, name="d")
    ours = raised(lambda: Node(layer, outputs=np.ones((2, 3))))
    assert type(ours) is type(theirs) is ValueError
    assert "outputs must be tensors" in str(theirs) and "outputs must be tensors" in str(ours)
    assert "layer 'd' (Dense)" in str(ours) and "ndarray" in str(ours)
    assert layer.inbound_nodes == []  # nothing half-registered
    node = Node(layer, outputs=KerasTensor((2, 3)))
    assert node.is_input and node.output_tensors[0]._keras_history == (layer, 0, 0)


def _layer_adding_weight(base, *args, **kwargs):
    class WithWeight(base):
        def __init__(self):
            super().__init__()
            self.w = self.add_weight(*args, **kwargs)

    return WithWeight


@pytest.mark.parametrize("args, kwargs, phrase", [
    (("my_weight",), {}, "`name` must be passed as a keyword argument"),
    (("matrix",), {"shape": (3, 4), "initializer": "zeros"}, "`name` must be passed as a keyword argument"),
    (((3, 4),), {"shape": (3, 4)}, "`shape` was passed both positionally and as a keyword argument"),
    (((3, 4), "zeros"), {"initializer": "ones"}, "`initializer` was passed both positionally"),
    (((3, 4), "zeros", "float32", True), {}, "at most 3 positional arguments"),
], ids=["name", "name and shape", "shape twice", "initializer twice", "four positional"])
def test_add_weight_positional_misuse_raises_as_keras(args, kwargs, phrase):
    theirs = raised(lambda: _layer_adding_weight(keras.layers.Layer, *args, **kwargs)())
    ours = raised(lambda: _layer_adding_weight(Layer, *args, **kwargs)())
    assert type(ours) is type(theirs)
    assert phrase in str(ours) and phrase in str(theirs)


def test_add_weight_takes_keras_positional_and_keyword_arguments():
    theirs = _layer_adding_weight(keras.layers.Layer, (3, 4), "ones", "float32")()
    ours = _layer_adding_weight(Layer, (3, 4), "ones", "float32")()
    np.testing.assert_array_equal(ours.w.value, np.asarray(theirs.w))
    assert ours.w.dtype == "float32"
    kept = _layer_adding_weight(Layer, shape=(2,), initializer="zeros", autocast=False, aggregation="sum",
                                name="count")()
    assert kept.w.name == "count" and kept.w.shape == (2,)
    with pytest.raises(ValueError, match="aggregation in .*received 'total'"):
        _layer_adding_weight(Layer, shape=(2,), aggregation="total")()
