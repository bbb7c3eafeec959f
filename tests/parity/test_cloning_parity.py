"""clone_model as in Keras 3 (keras/src/models/cloning_test.py, rewritten for nodeweave), each model
built the same way in Keras and here, with results and errors compared."""

import keras
import numpy as np
import pytest

from engine import Functional, Input, Layer, Model, Sequential, clone_model
from layers import Conv1D, Dense, Dropout

RNG = np.random.default_rng(0)


def _mlp(lib, shared_layers=False):
    inputs = lib.Input(shape=(3,))
    x = lib.Dense(2)(inputs)
    if shared_layers:
        layer = lib.Dense(2, name="shared")
        x = layer(layer(x))
    return lib.Model(inputs, lib.Dense(2)(x))


def _cnn(lib, shared_layers=False):
    inputs = lib.Input(shape=(7, 3))
    x = lib.Conv1D(2, 2, padding="same")(inputs)
    if shared_layers:
        layer = lib.Conv1D(2, 2, padding="same", name="shared")
        x = layer(layer(x))
    return lib.Model(inputs, lib.Conv1D(2, 2, padding="same")(x))


def _sequential(lib, explicit_input=True, conv=False):
    model = lib.Sequential()
    if explicit_input:
        model.add(lib.Input(shape=(7, 3) if conv else (3,)))
    for _ in range(2):
        model.add(lib.Conv1D(2, 2, padding="same") if conv else lib.Dense(2))
    return model


def _nested_functional(lib):
    inputs = lib.Input(shape=(4,))
    x = _mlp(lib)(lib.Dense(3)(inputs))
    return lib.Model(inputs, lib.Dense(2)(x))


def _nested_sequential(lib):
    model = lib.Sequential()
    model.add(lib.Dense(2))
    model.add(_sequential(lib, explicit_input=False))
    model.add(lib.Dense(2))
    return model


def _doubly_nested_functional(lib):
    inputs = lib.Input(shape=(5,))
    x = _nested_functional(lib)(lib.Dense(4)(inputs))
    return lib.Model(inputs, lib.Dense(2)(x))


def _doubly_nested_sequential(lib):
    model = lib.Sequential()
    model.add(lib.Dense(3))
    model.add(_nested_sequential(lib))
    model.add(lib.Dense(2))
    return model


class _Ours:
    """Our classes under Keras' names, so one builder makes both models."""

    Input, Model, Sequential, Dense, Conv1D, Dropout = Input, Model, Sequential, Dense, Conv1D, Dropout
    clone = staticmethod(clone_model)


class _Theirs:
    Input, Model, Sequential = keras.Input, keras.Model, keras.Sequential
    Dense, Conv1D, Dropout = keras.layers.Dense, keras.layers.Conv1D, keras.layers.Dropout
    clone = staticmethod(keras.models.clone_model)


class ExampleModel(Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.d1 = Dense(2)
        self.d2 = Dense(2)

    def call(self, x):
        return self.d2(self.d1(x))


def _flat_layers(model):
    """``model`` and every layer below it, depth first (Keras' ``_flatten_layers``)."""
    found = [model]
    for layer in model.layers:
        found += _flat_layers(layer) if hasattr(layer, "layers") else [layer]
    return found


def _assert_same_outputs(first, second, x):
    for a, b in zip(np.atleast_1d(first(x)), np.atleast_1d(second(x))):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("make, shape", [
    (lambda: _mlp(_Ours), (2, 3)),
    (lambda: _cnn(_Ours, shared_layers=True), (2, 7, 3)),
    (lambda: _sequential(_Ours), (2, 3)),
    (lambda: _sequential(_Ours, explicit_input=False), (2, 3)),
    (lambda: ExampleModel(), (2, 3)),
])
def test_clone_with_copied_weights_computes_the_same(make, shape):
    x = RNG.random(shape).astype("float32")
    model = make()
    clone = clone_model(model)
    model(x)
    clone(x)
    assert type(clone) is type(model)
    assert all(a is not b for a, b in zip(clone.weights, model.weights))
    clone.set_weights(model.get_weights())
    _assert_same_outputs(model, clone, x)


@pytest.mark.parametrize("make", [_mlp, _cnn, _sequential])
def test_custom_clone_function_renames_every_layer_but_inputs(make):
    def clone_function(layer):
        config = layer.get_config()
        config["name"] = f"{config['name']}_custom"
        return layer.__class__.from_config(config)

    for lib in (_Theirs, _Ours):
        model = make(lib)
        clone = lib.clone(model, clone_function=clone_function)
        pairs = [(l1, l2) for l1, l2 in zip(model.layers, clone.layers) if not type(l1).__name__ == "InputLayer"]
        assert pairs and all(l2.name == f"{l1.name}_custom" for l1, l2 in pairs)


@pytest.mark.parametrize("make", [
    lambda lib: _cnn(lib),
    lambda lib: _sequential(lib, conv=True),
    lambda lib: _sequential(lib, explicit_input=False, conv=True),
])
def test_input_tensors_keep_the_structure(make):
    x = RNG.random((2, 7, 3)).astype("float32")
    model = make(_Ours)
    model(x)
    clone = clone_model(model, input_tensors=model.inputs[0])
    assert len(clone.inputs) == len(model.inputs) == 1 and len(clone.outputs) == len(model.outputs) == 1
    assert clone.inputs[0] is model.inputs[0]
    assert clone.output_shape == model.output_shape


def test_shared_layers_stay_shared():
    for lib in (_Theirs, _Ours):
        clone = lib.clone(_mlp(lib, shared_layers=True))
        assert len(clone.layers) == 4
    shared = clone.get_layer("shared")
    assert len(shared.inbound_nodes) == 2


def test_structured_inputs_and_outputs():
    for lib, kt in ((_Theirs, keras.KerasTensor), (_Ours, None)):
        x, y = lib.Input((3,)), lib.Input((3,))
        z1 = x + y
        inputs, outputs = dict(x=x, y=y), dict(z1=z1, z2=lib.Dense(5)(z1))
        model = lib.Model(inputs, outputs)
        for clone in (lib.clone(model), lib.clone(model, input_tensors=inputs)):
            assert isinstance(clone.input, dict) and set(clone.input) == {"x", "y"}
            assert isinstance(clone.output, dict) and set(clone.output) == {"z1", "z2"}
        with pytest.raises(ValueError, match="`input_tensors` must have the same structure as model.input"):
            lib.clone(model, input_tensors=(x, y))


def test_call_function_inserts_layers_around_reused_ones():
    def call_function(layer, *args, **kwargs):
        out = layer(*args, **kwargs)
        if isinstance(layer, (Dense, keras.layers.Dense)):
            out = (Dropout if isinstance(layer, Dense) else keras.layers.Dropout)(0.5)(out)
        return out

    x = RNG.random((2, 3)).astype("float32")
    for lib, dropout in ((_Theirs, keras.layers.Dropout), (_Ours, Dropout)):
        model = _mlp(lib)
        clone = lib.clone(model, clone_function=lambda layer: layer, call_function=call_function)
        assert len(model.layers) == 3 and len(clone.layers) == 5
        assert isinstance(clone.layers[2], dropout) and isinstance(clone.layers[4], dropout)
        assert clone.layers[1] is model.layers[1]
    _assert_same_outputs(model, clone, x)


def test_recursive_clones_inner_models_layer_by_layer():
    def call_function(layer, *args, **kwargs):
        out = layer(*args, **kwargs)
        return Dropout(0.5)(out) if isinstance(layer, Dense) else out

    model = _nested_functional(_Ours)
    clone = clone_model(model, clone_function=lambda layer: layer, call_function=call_function, recursive=True)
    assert len(_flat_layers(model)) == 8 and len(_flat_layers(clone)) == 12  # as Keras' _flatten_layers counts
    assert isinstance(clone.layers[3].layers[2], Dropout) and isinstance(clone.layers[3].layers[4], Dropout)
    x = RNG.random((2, 4)).astype("float32")
    _assert_same_outputs(model, clone, x)

    def flagging_clone(layer):
        layer = layer.__class__.from_config(layer.get_config())
        layer.flag = True
        return layer

    for make, width in ((_nested_sequential, 3), (_doubly_nested_functional, 5), (_doubly_nested_sequential, 5)):
        model = make(_Ours)
        clone = clone_model(model, clone_function=flagging_clone, recursive=True)
        x = RNG.random((2, width)).astype("float32")
        model(x)
        clone(x)
        clone.set_weights(model.get_weights())
        _assert_same_outputs(model, clone, x)
        pairs = [(a, b) for a, b in zip(_flat_layers(model), _flat_layers(clone)) if isinstance(b, Dense)]
        assert pairs and all(not hasattr(a, "flag") and b.flag for a, b in pairs)


def test_without_recursive_inner_models_go_to_clone_function_whole():
    seen = []

    def clone_function(layer):
        seen.append(type(layer).__name__)
        return layer.__class__.from_config(layer.get_config())

    clone_model(_nested_functional(_Ours), clone_function=clone_function)
    assert seen == ["Dense", "Functional", "Dense"]


def test_compiled_model_clone_is_compiled():
    for lib in (_Theirs, _Ours):
        model = lib.Sequential([lib.Input((3,)), lib.Dense(5, activation="relu"), lib.Dense(1, activation="sigmoid")])
        model.compile(optimizer="adam", loss="binary_crossentropy")
        clone = lib.clone(model)
        assert clone.optimizer is not model.optimizer and type(clone.optimizer) is type(model.optimizer)
    clone.fit(np.ones((4, 3), "float32"), np.ones((4, 1), "float32"), verbose=0)


def test_errors_as_keras_raises_them():
    for lib in (_Theirs, _Ours):
        with pytest.raises(ValueError, match="`call_function` argument is not supported with Sequential"):
            lib.clone(_sequential(lib), call_function=lambda layer, *a, **k: layer(*a, **k))
        with pytest.raises(ValueError, match="must contain a single tensor"):
            lib.clone(_sequential(lib), input_tensors=[lib.Input((3,)), lib.Input((3,))])
        with pytest.raises(TypeError, match="not callable"):
            lib.clone(_mlp(lib), clone_function="not callable")
        with pytest.raises(ValueError, match="All entries in `input_tensors` must be KerasTensors"):
            lib.clone(_mlp(lib), input_tensors=np.ones((2, 3)))
    subclassed = ExampleModel()
    with pytest.raises(ValueError, match="only supported for Sequential models or Functional models"):
        clone_model(subclassed, clone_function=lambda layer: layer)


def test_functional_subclass_keeps_its_class():
    class Tagged(Functional):
        pass

    x = Input((3,))
    model = Tagged(x, Dense(2)(x), name="tagged")
    clone = clone_model(model)
    assert type(clone) is Tagged and clone.name == "tagged"


class Doubler(Layer):
    def call(self, inputs):
        return inputs * 2.0


def test_custom_layers_and_functional_intermediate_inputs():
    x = Input((3,))
    hidden = Dense(4)(x)
    model = Model(x, Doubler()(hidden))
    clone = clone_model(model)
    assert isinstance(clone.layers[-1], Doubler) and clone.layers[-1] is not model.layers[-1]
    tail = Model(hidden, Doubler()(hidden))
    new_input = Input((4,))
    tail_clone = clone_model(tail, input_tensors=new_input)
    assert tail_clone.inputs[0] is new_input
    np.testing.assert_array_equal(tail_clone(np.ones((1, 4), "float32")), np.full((1, 4), 2.0, "float32"))


def test_a_graph_with_dict_io_shared_layers_nested_models_ops_and_tensor_kwargs():
    from layers import MultiHeadAttention, SimpleRNN

    a, b = Input((3,), name="a"), Input((3,), name="b")
    shared = Dense(4, name="shared")
    inner_in = Input((4,))
    inner = Model(inner_in, Dense(2)(inner_in), name="inner")
    merged = shared(a) + shared(b) * 2.0
    query, value, sequence, state = Input((5, 4)), Input((6, 4)), Input((5, 3)), Input((4,))
    model = Model(
        {"a": a, "b": b, "q": query, "v": value, "s": sequence, "h": state},
        {"deep": inner(merged), "slice": merged[:, :2],
         "attention": MultiHeadAttention(num_heads=2, key_dim=2)(query, value),
         "rnn": SimpleRNN(4)(sequence, initial_state=state)})
    data = {"a": RNG.random((2, 3)), "b": RNG.random((2, 3)), "q": RNG.random((2, 5, 4)), "v": RNG.random((2, 6, 4)),
            "s": RNG.random((2, 5, 3)), "h": RNG.random((2, 4))}
    for recursive in (False, True):
        clone = clone_model(model, recursive=recursive)
        assert [layer.name for layer in clone.layers] == [layer.name for layer in model.layers]
        assert len(clone.get_layer("shared").inbound_nodes) == 2
        assert clone.get_layer("inner") is not inner
        clone.set_weights(model.get_weights())
        expected = model(data)
        for key, value in clone(data).items():
            np.testing.assert_allclose(value, expected[key], rtol=1e-6, atol=1e-6)


def _squared_error(y_true, y_pred):
    return np.mean(np.square(y_true - y_pred))


def test_a_model_compiled_with_function_losses_and_metrics_clones_compiled():
    inputs = Input(shape=(3,))
    model = Model(inputs, Dense(1)(inputs))
    model.compile(optimizer="sgd", loss=_squared_error, metrics=[_squared_error])
    clone = clone_model(model)  # its compile config names the function, which no registry holds
    history = clone.fit(np.ones((4, 3), "float32"), np.ones((4, 1), "float32"), epochs=2, verbose=0)
    assert sorted(history.history) == ["_squared_error", "loss"]
    assert clone.optimizer is not model.optimizer
