"""Layer internals as Keras 3 has them: call-context arguments, output specs,
losses, build arguments, state tracking (issue 26). Our own cases."""

import numpy as np
import pytest

from engine import KerasTensor, Layer, Sequential


class Scale(Layer):
    """Multiplies by ``factor`` when called with it (a declared call-context argument)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._register_call_context_args("factor")

    def call(self, x, factor=None):
        return x * (1.0 if factor is None else factor)


class Holder(Layer):
    """Calls the layer it holds, passing nothing on by hand."""

    def __init__(self, inner, **kwargs):
        super().__init__(**kwargs)
        self.inner = inner

    def call(self, x):
        return self.inner(x)


def test_a_declared_argument_reaches_a_layer_called_two_levels_down():
    outer = Holder(Holder(Scale()))
    outer._register_call_context_args("factor")
    x = np.ones((2, 2), "float32")
    assert np.allclose(outer(x, factor=3.0), 3.0)
    assert np.allclose(outer(x), 1.0)  # the value belongs to one call


def test_the_innermost_explicit_value_wins():
    class Explicit(Layer):
        def __init__(self):
            super().__init__()
            self._register_call_context_args("factor")
            self.scale = Scale()

        def call(self, x):
            return self.scale(x, factor=5.0)

    outer = Holder(Explicit())
    outer._register_call_context_args("factor")
    assert np.allclose(outer(np.ones((1,), "float32"), factor=2.0), 5.0)


def test_a_layer_that_does_not_declare_the_argument_keeps_its_own_default():
    class Undeclared(Layer):
        def call(self, x, factor=None):
            return x * (1.0 if factor is None else factor)

    outer = Holder(Undeclared())
    outer._register_call_context_args("factor")
    assert np.allclose(outer(np.ones((1,), "float32"), factor=4.0), 1.0)


def test_a_model_hands_a_declared_argument_to_the_layers_it_runs():
    model = Sequential([Holder(Scale())])
    model._register_call_context_args("factor")
    x = np.ones((3, 2), "float32")
    assert np.allclose(model(x, factor=2.0), 2.0)
    assert np.allclose(model(x), 1.0)


def test_registering_after_the_first_call_is_a_runtime_error_naming_the_layer():
    layer = Holder(Scale(), name="late")
    layer(np.ones((1,), "float32"))
    with pytest.raises(RuntimeError, match="Cannot add call-context args after the layer has been called.*'late'"):
        layer._register_call_context_args("factor")
    assert Scale()._call_context_args == {"training", "factor"}


@pytest.mark.parametrize("structure", [
    ((2, 3), (2, 3)),
    [(2, 3), ((2, 3), (2, 3))],
    {"a": (2, 3), "b": {"c": (2, 3)}},
])
def test_output_specs_keep_the_structure_compute_output_shape_returns(structure):
    class Shaped(Layer):
        def compute_output_shape(self, input_shape):
            return structure

    out = Shaped().compute_output_spec(KerasTensor((2, 3)))

    def kinds(value):
        if isinstance(value, KerasTensor):
            return value.shape
        if isinstance(value, dict):
            return {key: kinds(item) for key, item in value.items()}
        return type(value)(kinds(item) for item in value)

    assert kinds(out) == structure


def test_a_loss_added_while_a_model_infers_shapes_is_not_counted():
    class Penalty(Layer):
        def call(self, x):
            self.add_loss(np.sum(x))
            return x

    model = Sequential([Penalty()])  # built on its first call, by running Penalty on an example
    model(np.full((2,), 3.0, "float32"))
    assert model.losses == [6.0]
