"""graph.extract and predict(outputs=) / model(x, outputs=): any part of a model, by tensor or qualified name."""

import numpy as np
import pytest

from engine import Input, Model, Sequential, load_model
from engine.network.requested_outputs import requested_plan
from graph import extract, to_networkx
from graph.plot import static_svg
from layers import Conv2D, Dense, GlobalAveragePooling2D, add


def _rng_data(*shape):
    return np.random.default_rng(0).normal(size=shape).astype("float32")


@pytest.fixture
def classifier():
    """keras-team/keras #16123: a functional backbone inside a Sequential, and the backbone's tensors."""
    image = Input(shape=(8, 8, 3), name="image")
    conv1 = Conv2D(4, 3, padding="same", activation="relu", name="conv1")(image)
    conv2 = Conv2D(6, 3, padding="same", activation="relu", name="conv2")(conv1)
    backbone = Model(image, Conv2D(8, 3, padding="same", name="conv3")(conv2), name="backbone")
    model = Sequential([backbone, GlobalAveragePooling2D(name="gap"), Dense(3, name="head")], name="classifier")
    # The oracle: the backbone's own sub-model, built from its own calls before anything is extracted.
    return model, backbone, Model(image, [conv1, conv2]), conv2


@pytest.fixture
def two_towers():
    """One Dense layer called on two inputs: shared[0] reads a, shared[1] reads b."""
    a, b = Input(shape=(3,), name="a"), Input(shape=(3,), name="b")
    shared = Dense(4, name="shared")
    out = Dense(2, name="top")(add([shared(a), shared(b)], name="sum"))
    return Model([a, b], out, name="towers"), shared


def test_backbone_intermediate_inside_sequential(classifier):
    model, backbone, oracle, conv2 = classifier
    x = _rng_data(5, 8, 8, 3)
    expected = oracle(x)[1]
    part = extract(model, outputs="backbone/conv2[0][0]")
    # The backbone stays a nested model of the same name, holding the same layers, up to conv2.
    assert [type(layer).__name__ for layer in part.layers] == ["InputLayer", "Functional"]
    assert part.get_layer("backbone/conv2") is backbone.get_layer("conv2")
    assert [layer.name for layer in part.get_layer("backbone").layers] == ["image", "conv1", "conv2"]
    np.testing.assert_array_equal(part(x), expected)
    np.testing.assert_array_equal(model.predict(x, outputs="backbone/conv2[0][0]"), expected)
    np.testing.assert_array_equal(model.predict(x, outputs=conv2, batch_size=2), expected)
    np.testing.assert_array_equal(model(x, outputs="backbone/conv2"), expected)  # a layer path: its only call
    # The original model is unchanged, and its layers gained no calls (the backbone's are reused).
    assert [len(layer.inbound_nodes) for layer in backbone.layers] == [1, 1, 1, 1]
    assert len(model.plan.steps) == 3


def test_intermediate_and_final_outputs_together(classifier, tmp_path):
    model, backbone, oracle, _ = classifier
    x = _rng_data(4, 8, 8, 3)
    part = extract(model, outputs={"features": "backbone/conv1[0][0]", "logits": "head[0][0]"})
    values = part(x)
    np.testing.assert_array_equal(values["features"], oracle(x)[0])
    np.testing.assert_allclose(values["logits"], model(x), rtol=1e-6)
    # One backbone call computes both: its layers appear once, inside it.
    assert [layer.name for layer in part.layers][1:] == ["backbone", "gap", "head"]
    assert part.get_layer("backbone/conv3") is backbone.get_layer("conv3")
    predicted = model.predict(x, outputs={"features": "backbone/conv1[0][0]", "logits": "head"})
    assert sorted(predicted) == ["features", "logits"]
    np.testing.assert_array_equal(predicted["features"], values["features"])
    np.testing.assert_allclose(predicted["logits"], values["logits"], rtol=1e-6)
    for suffix in ("nw", "keras"):
        path = tmp_path / f"part.{suffix}"
        part.save(path)
        loaded = load_model(path)
        assert loaded.get_layer("backbone/conv1").get_config() == backbone.get_layer("conv1").get_config()
        np.testing.assert_allclose(loaded(x)["logits"], values["logits"], rtol=1e-6)
        np.testing.assert_array_equal(loaded(x)["features"], values["features"])


def test_second_call_of_a_shared_layer(two_towers):
    model, shared = two_towers
    xa, xb = _rng_data(6, 3), _rng_data(6, 3) + 1
    part = extract(model, inputs="b", outputs="shared[1][0]")
    assert part.plan.steps[0].node is shared.inbound_nodes[1]  # exactly that call
    np.testing.assert_allclose(part(xb), shared(xb), rtol=1e-6)
    np.testing.assert_allclose(model.predict([xa, xb], outputs=["shared[1][0]", "shared[0][0]"])[0],
                               shared(xb), rtol=1e-6)
    np.testing.assert_allclose(model([xa, xb], outputs=("shared[0][0]",))[0], shared(xa), rtol=1e-6)
    with pytest.raises(ValueError, match=r"'shared' of model 'towers' is ambiguous.*'shared\[0\]', 'shared\[1\]'"):
        model.predict([xa, xb], outputs="shared")


def test_cut_after_a_shared_call_calls_that_layer_again(two_towers):
    model, shared = two_towers
    xa, xb = _rng_data(3, 3), _rng_data(3, 3) - 1
    part = extract(model, inputs=["shared[0][0]", "b"], outputs="top[0][0]")
    assert part.input_names == ["shared_0_0", "b"]
    assert part.inputs[0].shape == (None, 4) and part.inputs[0].dtype == "float32"
    assert part.get_layer("shared") is shared and part.get_layer("top") is model.get_layer("top")
    np.testing.assert_allclose(part([shared(xa), xb]), model([xa, xb]), rtol=1e-6)


def test_input_in_the_middle_trains_plots_and_saves(tmp_path):
    x = Input(shape=(5,), name="x")
    h1 = Dense(8, activation="relu", name="h1")(x)
    h2 = Dense(8, activation="relu", name="h2")(h1)
    model = Model(x, Dense(2, name="out")(h2), name="mlp")
    data = _rng_data(10, 5)
    tail = extract(model, inputs="h1[0][0]")
    assert tail.input_names == ["h1_0_0"] and [layer.name for layer in tail.layers] == ["h1_0_0", "h2", "out"]
    hidden = model.predict(data, outputs="h1")
    np.testing.assert_allclose(tail(hidden), model(data), rtol=1e-6)
    # Trains: the shared layers' weights change in the original model too.
    before = model.get_layer("h2").kernel.numpy().copy()
    tail.compile(optimizer="sgd", loss="mse")
    tail.fit(hidden, np.ones((10, 2), "float32"), epochs=2, verbose=0)
    assert not np.array_equal(before, model.get_layer("h2").kernel.numpy())
    np.testing.assert_allclose(tail(hidden), model(data), rtol=1e-6)
    # Plots (its graph) and saves.
    svg = static_svg(tail, show_shapes=True)
    assert "<svg" in svg and all(name in svg for name in ("h1_0_0", "h2", "out", "(None, 8)"))
    assert set(to_networkx(tail).edges) == {("h1_0_0", "h2"), ("h2", "out")}
    for suffix in ("nw", "keras"):
        tail.save(tmp_path / f"tail.{suffix}")
        np.testing.assert_allclose(load_model(tmp_path / f"tail.{suffix}")(hidden), tail(hidden), rtol=1e-6)


def test_cut_inside_a_nested_model(classifier):
    model, backbone, oracle, _ = classifier
    x = _rng_data(2, 8, 8, 3)
    part = extract(model, inputs="backbone/conv1[0][0]", outputs="backbone/conv3[0][0]")
    assert part.input_names == ["backbone_conv1_0_0"]
    np.testing.assert_allclose(part(oracle(x)[0]), backbone(x), rtol=1e-5)
    with pytest.raises(ValueError, match=r"input 'backbone/conv1\[0\]\[0\]' is inside nested model 'backbone'.*"
                                         r"extract\(model.get_layer\('backbone'\)"):
        extract(model, inputs="backbone/conv1[0][0]")


def test_unreachable_output_says_which_input_to_add():
    x = Input(shape=(4,), name="x")
    mid = Dense(4, name="mid")(x)
    model = Model(x, add([Dense(4, name="after")(mid), x], name="skip"), name="residual")
    with pytest.raises(ValueError, match=r"Cannot extract from model 'residual' the part starting at inputs "
                                         r"\('mid\[0\]\[0\]'\).*depends on input 'x'.*Add 'x'"):
        extract(model, inputs="mid[0][0]")
    part = extract(model, inputs=["mid[0][0]", "x"])
    data = _rng_data(3, 4)
    np.testing.assert_allclose(part([model.predict(data, outputs="mid"), data]), model(data), rtol=1e-6)


def test_unknown_names_list_the_closest_paths(classifier):
    model, *_ = classifier
    with pytest.raises(ValueError, match=r"No tensor 'backbone/conv9' in model 'classifier'\. Closest: "
                                         r"'backbone/conv3\[0\]\[0\]'"):
        extract(model, outputs="backbone/conv9")
    with pytest.raises(ValueError, match=r"No tensor 'backbone/cnv2\[0\]\[0\]'.*'backbone/conv2\[0\]\[0\]'"):
        model.predict(_rng_data(1, 8, 8, 3), outputs=["backbone/cnv2[0][0]"])
    with pytest.raises(TypeError, match=r"Expected a KerasTensor or a qualified name.*received int: 3"):
        extract(model, outputs=3)


def test_outputs_keep_their_structure_and_plans_are_reused(two_towers):
    model, shared = two_towers
    data = [_rng_data(2, 3), _rng_data(2, 3)]
    one = model(data, outputs="sum")
    assert isinstance(one, np.ndarray) and one.shape == (2, 4)
    listed = model.predict(data, outputs=["a", "top"])
    assert isinstance(listed, list) and [v.shape for v in listed] == [(2, 3), (2, 2)]
    np.testing.assert_allclose(listed[1], model(data), rtol=1e-6)
    nested = model(data, outputs={"sum": "sum[0][0]", "pair": ("shared[0][0]", "shared[1][0]")})
    assert isinstance(nested["pair"], tuple) and nested["sum"].shape == (2, 4)
    assert requested_plan(model, ["a", "top"]) is requested_plan(model, ["a", "top"])
    # Only the steps the request needs run: shared[0] alone.
    assert [repr(step).split(":")[0] for step in requested_plan(model, "shared[0][0]").steps] == ["shared[0]"]


def test_a_sequential_model_rebuilt_by_add_gets_a_new_plan():
    model = Sequential([Input(shape=(3,)), Dense(4, name="first")])
    before = requested_plan(model, "first")
    model.add(Dense(2, name="second"))
    assert requested_plan(model, "first") is not before
    assert model.predict(np.ones((2, 3)), outputs="second").shape == (2, 2)


def test_outputs_is_refused_where_it_cannot_work(two_towers):
    model, _ = two_towers
    with pytest.raises(ValueError, match=r"on symbolic tensors, extract a model first: graph.extract"):
        model([Input(shape=(3,)), Input(shape=(3,))], outputs="sum")

    class Subclassed(Model):
        def __init__(self):
            super().__init__()
            self.dense = Dense(2)

        def call(self, inputs):
            return self.dense(inputs)

    with pytest.raises(ValueError, match=r"outputs= needs a functional or Sequential model.*subclassed"):
        Subclassed().predict(np.ones((2, 3)), outputs="dense")
    with pytest.raises(ValueError, match=r"extract\(\) takes a functional or Sequential model"):
        extract(Subclassed())
