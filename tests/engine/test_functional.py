"""Functional models: structure, nesting, dict I/O, sub-models, errors, scale, threads."""

import threading

import numpy as np
import pytest

from engine import Input, InputLayer, Layer, Model
from layers import Activation, Dense


def _mlp_block(units, name):
    x = Input(shape=(units,), name=f"{name}_in")
    return Model(x, Dense(units, activation="tanh", name=f"{name}_dense")(x), name=name)


def test_multi_input_multi_output_with_shared_layer():
    a = Input(shape=(4,), name="a")
    b = Input(shape=(4,), name="b")
    shared = Dense(3, name="shared")
    out1 = Dense(2, name="head1")(shared(a))
    out2 = Activation("sigmoid", name="head2")(shared(b))
    model = Model(inputs=[a, b], outputs=[out1, out2], name="two_heads")
    assert [l.name for l in model.layers] == ["a", "b", "shared", "head1", "head2"]
    xa, xb = np.random.rand(5, 4), np.random.rand(5, 4)
    y1, y2 = model([xa, xb])
    k, bias = shared.get_weights()
    ref_shared_b = xb.astype("float32") @ k + bias
    np.testing.assert_allclose(y2, 1 / (1 + np.exp(-ref_shared_b)), rtol=1e-5)
    assert y1.shape == (5, 2)
    assert model.get_layer("shared") is shared
    assert model.get_layer(index=2) is shared
    assert model.count_params() == (4 * 3 + 3) + (3 * 2 + 2)


def test_dict_inputs_and_outputs():
    a = Input(shape=(2,), name="a")
    b = Input(shape=(3,), name="b")
    total = Dense(1, name="from_a")(a) + Dense(1, name="from_b")(b)
    model = Model(inputs={"a": a, "b": b}, outputs={"total": total, "a_copy": a * 1.0})
    out = model({"b": np.ones((2, 3)), "a": np.zeros((2, 2))})
    assert set(out) == {"total", "a_copy"}
    np.testing.assert_array_equal(out["a_copy"], np.zeros((2, 2)))
    # A dict is matched by the model's keys; a list is taken in sorted-key order, with Keras' warning.
    with pytest.warns(UserWarning, match="The structure of `inputs` doesn't match the expected structure"):
        out_list = model([np.zeros((2, 2)), np.ones((2, 3))])
    np.testing.assert_array_equal(out_list["total"], out["total"])
    with pytest.raises(ValueError, match=r'Missing data for input "b" of model .*keys \[\'a\'\]. Expected the '
                                         r"following keys: \['a', 'b'\]"):
        model({"a": np.zeros((2, 2))})


def test_nesting_three_deep_runs_and_matches_flat_computation():
    inner = _mlp_block(4, "inner")
    x = Input(shape=(4,), name="mid_in")
    middle = Model(x, Dense(4, name="mid_dense")(inner(x)), name="middle")
    z = Input(shape=(4,), name="outer_in")
    outer = Model(z, Dense(2, name="top")(middle(z)), name="outer")
    y = Input(shape=(4,), name="root_in")
    root = Model(y, outer(y) * 2.0, name="root")
    data = np.random.rand(3, 4).astype("float32")
    h = np.tanh(data @ inner.get_layer("inner_dense").kernel.value + inner.get_layer("inner_dense").bias.value)
    h = h @ middle.get_layer("mid_dense").kernel.value + middle.get_layer("mid_dense").bias.value
    h = h @ outer.get_layer("top").kernel.value + outer.get_layer("top").bias.value
    np.testing.assert_allclose(root(data), 2.0 * h, rtol=1e-5)
    assert root.count_params() == 20 + 20 + 10
    assert [l.name for l in root.layers] == ["root_in", "outer", "multiply"]
    assert len(outer.inbound_nodes) == 1  # its call in root
    assert [w.path for w in root.trainable_weights][:2] == ["inner_dense/kernel", "inner_dense/bias"]


def test_model_called_on_symbolic_tensor_becomes_one_node():
    block = _mlp_block(3, "block")
    x = Input(shape=(3,))
    y = block(block(x))
    assert y.shape == (None, 3)
    assert len(block.inbound_nodes) == 2
    model = Model(x, y)
    assert [step.layer for step in model.plan.steps] == [block, block]


def test_sub_model_from_intermediate_tensors():
    x = Input(shape=(3,), name="x")
    h1 = Dense(4, name="h1")(x)
    h2 = Dense(5, name="h2")(h1)
    out = Dense(1, name="out")(h2)
    full = Model(x, out)
    features = Model(x, h2)
    tail = Model(h1, out)
    data = np.random.rand(2, 3)
    np.testing.assert_allclose(tail(full.get_layer("h1")(data)), full(data), rtol=1e-6)
    assert [l.name for l in features.layers] == ["x", "h1", "h2"]
    # As in Keras, a model starting from an intermediate tensor starts from an Input of its own, and the
    # layers after it are called again on that Input (one more Node each); the original graph is untouched.
    assert [l.name for l in tail.layers] == ["h1CLONE", "h2", "out"]
    assert isinstance(tail.layers[0], InputLayer) and tail.inputs[0].shape == (None, 4)
    assert [len(full.get_layer(name).inbound_nodes) for name in ("h1", "h2", "out")] == [1, 2, 2]
    np.testing.assert_allclose(full(data), Model(x, out)(data), rtol=1e-6)


def test_sub_model_from_a_tensor_inside_a_nested_model():
    inner_in = Input(shape=(3,), name="inner_in")
    hidden = Dense(4, name="hidden")(inner_in)
    inner = Model(inner_in, Dense(2, name="inner_out")(hidden), name="inner")
    x = Input(shape=(3,), name="x")
    scaled = x * 3.0
    inner(scaled)
    # `hidden` lives in the inner graph; the model reaches it through inner's call on `scaled`.
    probe = Model(x, hidden)
    assert [step.layer.name for step in probe.plan.steps] == ["multiply", "hidden"]
    data = np.random.default_rng(0).random((2, 3)).astype("float32")
    np.testing.assert_allclose(probe(data), inner.get_layer("hidden")(data * np.float32(3.0)), rtol=1e-6)


def test_sub_model_reaches_inside_a_nested_model_called_several_times():
    inner_in = Input(shape=(3,), name="inner_in")
    hidden = Dense(4, name="hidden")(inner_in)
    inner = Model(inner_in, Dense(2, name="inner_out")(hidden), name="inner")
    inner(Input(shape=(3,), name="elsewhere"))  # a call no input of the probe reaches
    x = Input(shape=(3,), name="x")
    probe = Model(x, [hidden, inner(x - 1.0)])  # `hidden` is that of the one call x reaches
    data = np.random.default_rng(0).random((2, 3)).astype("float32")
    np.testing.assert_allclose(probe(data)[0], inner.get_layer("hidden")(data - np.float32(1.0)), rtol=1e-6)
    with pytest.raises(ValueError, match=r"Input 'inner_in' of nested model 'inner' is reached from the model inputs "
                                         r"\['x'\] through 2 calls of 'inner' \(inner\[\d\] on '.*', inner\[\d\] on"):
        Model(x, [hidden, inner(x * 2.0)])


def test_models_built_on_one_input_and_dropped_leave_nothing_behind():
    import gc
    import weakref

    x = Input(shape=(3,), name="x")
    y = Dense(2)(x)
    models = [weakref.ref(Model(x, y)) for _ in range(1000)]
    gc.collect()
    assert sum(ref() is not None for ref in models) == 0
    assert x._keras_history.layer.__dict__.keys() == Input(shape=(3,))._keras_history.layer.__dict__.keys()


def test_training_flag_reaches_every_layer_including_nested():
    seen = []

    class Spy(Layer):
        def compute_output_shape(self, input_shape):
            return input_shape

        def call(self, inputs, training=False):
            seen.append(training)
            return inputs

    x = Input(shape=(2,))
    inner = Model(x, Spy()(x))
    z = Input(shape=(2,))
    outer = Model(z, Spy()(inner(z)))
    outer(np.zeros((1, 2)), training=True)
    outer(np.zeros((1, 2)))
    assert seen == [True, True, False, False]


def test_unreachable_output_names_the_missing_input_and_the_layers_between():
    a = Input(shape=(2,), name="a")
    b = Input(shape=(2,), name="b")
    h = Dense(2, name="from_a")(a)
    out = Dense(1, name="joined")(h + Dense(2, name="from_b")(b))
    with pytest.raises(ValueError) as info:
        Model(a, out)
    assert str(info.value) == (
        "Output tensor 'joined[0][0]' (from layer 'joined') is not reachable from the model inputs ['a']: it "
        "depends on input 'b' (layer 'b') through b -> from_b -> add -> joined, and that input is not one of "
        "them. Add 'b' to the model's inputs, or build the output from the given inputs.")
    with pytest.raises(ValueError, match=r"\['a'\]: it is input 'b' \(layer 'b'\) itself, which is not one of them"):
        Model(a, [h, b])
    with pytest.raises(ValueError, match=r"^Output with path `1` is not connected to `inputs` of model 'pair'\. "
                                         r"Output tensor 'b' \(from layer 'b'\)"):
        Model(a, [h, b], name="pair")
    with pytest.raises(ValueError, match=r"^Output with path `scores.joined` is not connected"):
        Model(a, {"scores": {"hidden": h, "joined": out}})


def test_unreachable_output_through_nested_models_names_them_on_the_path():
    first = Model(inner := Input(shape=(6,), name="first_in"), Dense(3, name="d1")(inner), name="first")
    second = Model(inner := Input(shape=(3,), name="second_in"), Dense(2, name="d2")(inner), name="second")
    with pytest.raises(ValueError, match="it depends on input 'stray' \\(layer 'stray'\\) through stray -> first -> "
                                         "second, and that input is not one of them. Add 'stray'"):
        Model(Input(shape=(6,), name="given"), second(first(Input(shape=(6,), name="stray"))))


def test_duplicate_layer_names_are_rejected():
    x = Input(shape=(2,))
    y = Dense(2, name="twin")(Dense(2, name="twin")(x))
    with pytest.raises(ValueError, match='The name "twin" is used 2 times in model .* All layer names should be unique'):
        Model(x, y)


def test_non_symbolic_model_inputs_are_rejected():
    with pytest.raises(ValueError, match="All `inputs` values must be KerasTensors .* received ndarray"):
        Model(np.zeros((1, 2)), Input(shape=(2,)))
    with pytest.raises(ValueError, match="All `outputs` values must be KerasTensors .* received str: 'out'"):
        Model({"a": Input(shape=(2,))}, "out")


def test_wrong_number_or_shape_of_arrays_at_call_time():
    a, b = Input(shape=(2,), name="a"), Input(shape=(3,), name="b")
    model = Model([a, b], Dense(1)(a) + Dense(1)(b), name="pair")
    with pytest.raises(ValueError, match=r"Model 'pair' expects 2 input\(s\) \['a', 'b'\], but it received 1"):
        model(np.zeros((1, 2)))
    keyed = Model({"left": a, "right": b}, Dense(1)(a) + Dense(1)(b), name="keyed")
    with pytest.raises(ValueError, match=r"Model 'keyed' expects 2 named input\(s\) with keys \['left', 'right'\], "
                                         r"but it received 1"):
        keyed(np.zeros((1, 2)))
    with pytest.raises(ValueError, match=r"Input 1 \('b'\) of model 'pair' is incompatible with the model: expected shape=\(None, 3\), found shape=\(1, 4\)"):
        model([np.zeros((1, 2)), np.zeros((1, 4))])
    with pytest.raises(ValueError, match=r"expected shape=\(None, 2\), found shape=\(None, 3\)"):
        model(Input(shape=(5,)) if False else [Input(shape=(3,)), Input(shape=(3,))])


def test_inputs_are_cast_to_the_input_dtype():
    x = Input(shape=(2,))
    model = Model(x, Dense(1)(x))
    assert model(np.ones((1, 2), dtype="float64")).dtype == np.float32


def test_eager_run_frees_intermediates_after_their_last_reader():
    x = Input(shape=(2,), name="x")
    a = Dense(2, name="a")(x)
    b = Dense(2, name="b")(a)
    c = Dense(2, name="c")(b + a)
    model = Model(x, [c, a])
    steps = {s.layer.name: s for s in model.plan.steps}
    slot = model.plan.slot_of
    assert slot[id(b)] in steps["add"].free_slots  # b dies once the add has read it
    assert slot[id(a)] not in sum((s.free_slots for s in model.plan.steps), ())  # a is an output
    assert slot[id(x)] in steps["a"].free_slots


def test_a_100000_layer_chain_builds_and_runs():
    x = Input(shape=(1,))
    y = x
    for _ in range(100_000):
        y = y + 1.0
    model = Model(x, y)
    assert len(model.plan.steps) == 100_000
    assert model(np.zeros((2, 1)))[0, 0] == pytest.approx(100_000.0)


def test_eight_threads_get_the_same_results_as_sequential_calls():
    x = Input(shape=(16,))
    h = Dense(32, activation="relu")(x)
    model = Model(x, Dense(8, activation="softmax")(h + Dense(32)(x)))
    batches = [np.random.default_rng(i).normal(size=(64, 16)) for i in range(8)]
    expected = [model(b) for b in batches]
    results = [None] * 8
    barrier = threading.Barrier(8)

    def work(i):
        barrier.wait()
        for _ in range(20):
            results[i] = model(batches[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for got, want in zip(results, expected):
        np.testing.assert_array_equal(got, want)


def test_get_layer_errors():
    x = Input(shape=(2,))
    model = Model(x, Dense(1, name="d")(x))
    with pytest.raises(ValueError, match=r"No such layer: 'e' in model .* Existing layers are: \['input_layer', 'd'\]"):
        model.get_layer("e")
    with pytest.raises(ValueError, match="retrieve layer at index 5 but model .* only has 2 layers"):
        model.get_layer(index=5)
    with pytest.raises(ValueError, match="Provide either a layer name or a layer index"):
        model.get_layer()



def test_the_batch_axis_of_an_input_with_a_batch_shape_is_not_checked_as_in_keras():
    from tests.layers.oracle import keras

    theirs_inputs = keras.Input(batch_shape=(16, 5))
    theirs = keras.Model(theirs_inputs, keras.layers.Dense(2)(theirs_inputs))
    inputs = Input(batch_shape=(16, 5))
    model = Model(inputs, Dense(2)(inputs))
    for each in (theirs, model):
        assert np.asarray(each.predict(np.ones((32, 5), "float32"), batch_size=32, verbose=0)).shape == (32, 2)
    with pytest.raises(ValueError, match=r"expected shape=\(16, 5\), found shape=\(32, 4\)"):
        model(np.ones((32, 4), "float32"))


def test_a_mismatched_input_structure_warns_on_eager_calls_only():
    # As in Keras: the structure check warns when data runs through the model; building a bigger
    # graph on symbolic inputs of another structure only keeps the keys the model has.
    import warnings

    a = Input(shape=(3,), name="a")
    model = Model({"a": a}, Dense(2, name="d")(a))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert model({"a": np.ones((2, 3)), "extra": np.ones((2, 1))}).shape == (2, 2)
        assert model({"a": Input(shape=(3,)), "extra": Input(shape=(1,))}).shape == (None, 2)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1 and messages[0].startswith("The structure of `inputs` doesn't match"), messages
    assert "The keys ['extra'] match no input of the model" in messages[0]
