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


def test_seed_generator_states_are_variables_but_not_weights():
    from engine.keras_random import SeedGenerator, normal

    class Noisy(Layer):
        def __init__(self):
            super().__init__()
            self.noise = {"a": SeedGenerator(11)}
            self.w = self.add_weight(shape=(2,), initializer="ones")

        def call(self, x):
            return x * self.w + normal(x.shape, seed=self.noise["a"])

    layer = Noisy()
    state = layer.noise["a"].state
    assert layer.weights == [layer.w]
    assert layer.variables == [layer.w, state] and layer.non_trainable_variables == [state]
    first = layer(np.zeros((1, 2), "float32"))
    assert state.numpy().tolist() == [11, 1]  # each draw advances the count
    assert not np.allclose(first, layer(np.zeros((1, 2), "float32")))


def test_sub_layers_in_dicts_are_tracked_with_their_weights():
    from layers import Dense

    class Branches(Layer):
        def __init__(self):
            super().__init__()
            self.branches = {"left": Dense(2), "right": Dense(3)}

        def call(self, x):
            return self.branches["left"](x), self.branches["right"](x)

    layer = Branches()
    layer(np.ones((1, 4), "float32"))
    assert layer._layers == [layer.branches["left"], layer.branches["right"]]
    assert len(layer.weights) == 4


def test_a_weight_added_in_call_after_build_is_refused_unless_unlocked():
    class Growing(Layer):
        def call(self, x):
            self.extra = self.add_weight(shape=(), initializer="zeros", name="extra")
            return x

    layer = Growing(name="growing")
    with pytest.raises(ValueError, match="cannot add new elements of state.*'growing'.*weight 'extra'"):
        layer(np.ones((1,), "float32"))
    layer._tracker.unlock()
    layer(np.ones((1,), "float32"))
    assert [v.name for v in layer.weights] == ["extra"]


def test_untracking_a_weight_removes_it_and_clears_the_attribute():
    layer = Layer()
    layer.w = layer.add_weight(shape=(2,), name="w")
    keep = layer.add_weight(shape=(3,), name="keep")
    layer.w = layer._untrack_variable(layer.w)
    assert layer.w is None and layer.weights == [keep]


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_trainable_must_be_a_boolean(value):
    from layers import Dense

    with pytest.raises(ValueError, match=f"Expected `trainable` argument to be a boolean, but got: {value!r}"):
        Dense(2, trainable=value)


def test_own_weight_lists_keep_how_weights_were_created_when_frozen():
    from layers import BatchNormalization

    layer = BatchNormalization(trainable=False)
    layer.build((None, 3))
    assert [v.name for v in layer._trainable_variables] == ["gamma", "beta"]
    assert [v.name for v in layer._non_trainable_variables] == ["moving_mean", "moving_variance"]
    assert layer.trainable_weights == []


def test_a_flag_given_by_position_is_refused_with_the_keyword_to_write():
    class Flagged(Layer):
        def call(self, x, invert):
            return -x if invert else x

    x = KerasTensor((2, 3))
    with pytest.raises(ValueError, match="Only input tensors may be passed as positional arguments.*Write invert=True"):
        Flagged()(x, True)
    assert Flagged()(x, invert=True).shape == (2, 3)


def test_build_gets_each_arguments_shape_by_name():
    class Pair(Layer):
        def build(self, right_shape, left_shape):
            self.seen = (left_shape, right_shape)

        def call(self, left, right=None):
            return left

    layer = Pair()
    layer(np.ones((2, 3), "float32"), right=np.ones((2, 5), "float32"))
    assert layer.seen == ((2, 3), (2, 5))
    absent = Pair()
    absent(np.ones((2, 3), "float32"))
    assert absent.seen == ((2, 3), None)


class _Unsuffixed(Layer):
    def build(self, left_shape, other):
        pass

    def call(self, left, right):
        return left


class _Unmatched(Layer):
    def build(self, left_shape, middle_shape):
        pass

    def call(self, left, right):
        return left


@pytest.mark.parametrize("cls, phrase", [
    (_Unsuffixed, "argument `other`, which does not end in `_shape`"),
    (_Unmatched, "`middle_shape`, but `call\\(\\)` does not have argument `middle`"),
])
def test_build_parameters_that_name_no_argument_are_refused(cls, phrase):
    with pytest.raises(ValueError, match=phrase):
        cls()(np.ones((1, 2), "float32"), np.ones((1, 2), "float32"))


def test_an_input_given_as_none_is_left_out_of_a_symbolic_call():
    from layers import Dense

    class Optional(Layer):
        def __init__(self):
            super().__init__()
            self.dense = Dense(2)

        def call(self, xs):
            return self.dense(xs[0]) if xs[1] is None else self.dense(xs[0]) + self.dense(xs[1])

    layer = Optional()
    assert layer([KerasTensor((3, 4)), None]).shape == (3, 2)
    assert len(layer.weights) == 2


def test_unbuilt_layers_explain_only_the_attributes_build_makes():
    from layers import Dense

    layer = Dense(2, name="later")
    with pytest.raises(AttributeError, match="has no attribute 'kernel' yet: weights are created in build"):
        layer.kernel
    with pytest.raises(AttributeError, match="'Dense' object has no attribute 'kernels'$"):
        layer.kernels


def test_compute_output_shape_not_written_says_so_in_keras_words():
    layer = Layer(name="plain")
    with pytest.raises(NotImplementedError, match="does not have a `compute_output_shape` method implemented"):
        layer.compute_output_shape((None, 2))


def test_ops_random_is_keras_random():
    from nodeweave import ops, random

    assert ops.random.uniform is random.uniform
    assert ops.random.normal((2, 3), seed=1).shape == (2, 3)


def test_layers_list_the_metrics_they_and_their_sub_layers_hold():
    from engine.training.metrics import Mean, MeanSquaredError

    inner = Holder(Scale())
    inner.error = MeanSquaredError(name="inner_error")
    outer = Holder(inner)
    outer.average = Mean(name="outer_mean")
    assert [metric.name for metric in outer.metrics] == ["outer_mean", "inner_error"]
    assert [v.path for v in outer.metrics_variables] == ["outer_mean/total", "outer_mean/count",
                                                         "inner_error/total", "inner_error/count"]


def test_a_seed_generator_hands_out_its_state_and_advances():
    from engine.keras_random import SeedGenerator

    generator = SeedGenerator(5)
    assert generator.next().tolist() == [5, 0] and generator.next().tolist() == [5, 1]
    assert generator.state.numpy().tolist() == [5, 2] and not generator.state.trainable
    with pytest.raises(ValueError, match="has no seed: it draws from the global generator"):
        SeedGenerator().next()


def test_a_stateless_call_returns_the_new_state_and_keeps_the_layers_own():
    from layers import BatchNormalization

    layer = BatchNormalization(momentum=0.5)
    x = np.arange(6, dtype="float32").reshape(3, 2)
    layer(x)  # built
    before = [v.numpy().copy() for v in layer.variables]
    values = [np.full(v.shape, 2.0, "float32") for v in layer.trainable_variables]
    outputs, state = layer.stateless_call(values, [v.numpy() for v in layer.non_trainable_variables], x,
                                          training=True)
    assert all(np.array_equal(a, v.numpy()) for a, v in zip(before, layer.variables))
    assert np.allclose(state[0], 0.5 * before[2] + 0.5 * x.mean(axis=0))  # the moving mean after one step
    assert np.allclose(outputs.mean(axis=0), 2.0)  # normalized, times gamma=2, plus beta=2
    with pytest.raises(ValueError, match="must be a list of tensors corresponding 1:1"):
        layer.stateless_call(values[:1], [], x)


def test_freezing_a_layer_sets_its_weights_trainable_flags_and_keeps_their_order():
    from layers import BatchNormalization, Dense

    class Block(Layer):
        def __init__(self):
            super().__init__()
            self.dense, self.norm = Dense(2), BatchNormalization()

        def call(self, x):
            return self.norm(self.dense(x))

    block = Block()
    block(np.ones((2, 3), "float32"))
    order = [v.path for v in block.weights]
    block.trainable = False
    assert not block.dense.kernel.trainable and block.trainable_weights == []
    assert [v.path for v in block.weights] == order
    block.trainable = True
    assert block.dense.kernel.trainable and not block.norm.moving_mean.trainable  # made non-trainable: stays so
    assert len(block.trainable_weights) == 4 and [v.path for v in block.weights] == order
