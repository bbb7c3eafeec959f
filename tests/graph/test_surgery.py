"""graph/surgery.py: edits return a new model replayed from the original's plan. On ResNet50 and
EfficientNetB0 built from Keras' configs (tests/graph/data/keras_applications.json.gz): a
BatchNormalization after every Conv2D runs and trains, removing every Dropout leaves inference
outputs unchanged to 0, a layer is replaced inside a nested model; untouched layers are the same
objects with bit-identical weights, shared layers stay shared, the original is left intact, and
the results round-trip through .nw and .keras."""

import gzip
import json

import numpy as np
import pytest

from engine import Input, Model, Sequential, load_model, model_from_json
from engine.training.optimizers import SGD
from engine.network.qualified_names import layer_paths
from graph import insert_after, insert_before, remove, replace, replace_pattern, rewire
from layers import Activation, Add, BatchNormalization, Conv2D, Dense, Dropout, ReLU
from tests.graph.data.make_keras_applications import PATH, SIZES
from tests.graph.zoo import zoo


@pytest.fixture(scope="module")
def configs():
    with gzip.open(PATH, "rt", encoding="utf-8") as file:
        return json.load(file)["configs"]


@pytest.fixture(scope="module")
def resnet50(configs):
    return model_from_json(json.dumps(configs["ResNet50"]))


def _images(name, batch=2, seed=0):
    size = SIZES[name]
    return np.random.default_rng(seed).uniform(0, 1, (batch, size, size, 3)).astype("float32")


def _weights(model):
    return {id(variable): np.array(variable.numpy(), copy=True) for variable in model.weights}


def _assert_same_weights(model, before):
    assert set(before) == {id(variable) for variable in model.weights}
    for variable in model.weights:
        assert np.array_equal(variable.numpy(), before[id(variable)]), variable.path


def _readers(plan, tensor):
    """The layers of the steps of ``plan`` that read ``tensor``."""
    slot = plan.slot_of[id(tensor)]
    return [step.layer for step in plan.steps if slot in step.in_slots]


def _small_residual(name="small_residual"):
    """A stem and two residual blocks of 8 channels: Conv-BN-ReLU, Conv-BN, Add, ReLU."""
    x = Input(shape=(8, 8, 3), name="image")
    h = ReLU(name="stem_relu")(BatchNormalization(name="stem_bn")(Conv2D(8, 3, padding="same", name="stem")(x)))
    for block in range(2):
        y = ReLU()(BatchNormalization()(Conv2D(8, 3, padding="same", name=f"block{block}_a")(h)))
        y = BatchNormalization()(Conv2D(8, 3, padding="same", name=f"block{block}_b")(y))
        h = ReLU()(Add()([h, y]))
    return Model(x, h, name=name)


def test_batch_normalization_after_every_conv2d_of_resnet50_runs_and_trains(configs):
    model = model_from_json(json.dumps(configs["ResNet50"]))
    images = _images("ResNet50")
    before, expected = _weights(model), model.predict(images, verbose=0)
    convs = [layer for layer in model.layers if isinstance(layer, Conv2D)]

    new = insert_after(model, Conv2D, lambda old: BatchNormalization(name=old.name + "_extra_bn"))

    assert len(convs) == 53 and len(new.layers) == len(model.layers) + 53
    for conv in convs:
        assert new.get_layer(conv.name) is conv
        conv_output = [s for s in new.plan.steps if s.layer is conv][0].node.output_tensors[0]
        assert [layer.name for layer in _readers(new.plan, conv_output)] == [conv.name + "_extra_bn"]
    assert all(new.get_layer(layer.name) is layer for layer in model.layers[1:])  # all but the new Input
    _assert_same_weights(model, before)
    assert np.array_equal(model.predict(images, verbose=0), expected)  # the original is intact
    assert len(model.layers) == len(model.plan.layers) == 177

    # Clipped: training-mode BatchNormalization over a batch of 2 with 1x1 maps (the last stage at 32x32) can
    # return gradients of 1e8 and more, which an unclipped step turns into weights whose inference overflows.
    new.compile(optimizer=SGD(1e-3, clipnorm=1.0), loss="categorical_crossentropy")
    extra = new.get_layer("conv1_conv_extra_bn")
    gamma = extra.gamma.numpy().copy()
    history = new.fit(images, np.eye(1000, dtype="float32")[[3, 7]], epochs=1, batch_size=2, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    assert not np.array_equal(extra.gamma.numpy(), gamma)
    assert np.isfinite(new.predict(images, verbose=0)).all()


def test_removing_every_dropout_leaves_inference_outputs_unchanged(configs):
    model = model_from_json(json.dumps(configs["EfficientNetB0"]))
    images = _images("EfficientNetB0")
    dropouts = [path for path, layer in layer_paths(model).items() if isinstance(layer, Dropout)]

    new = remove(model, Dropout)

    assert len(dropouts) == 10
    assert not any(isinstance(layer, Dropout) for layer in layer_paths(new).values())
    assert len(new.layers) == len(model.layers) - 10
    assert np.array_equal(new.predict(images, verbose=0), model.predict(images, verbose=0))


def test_layer_replaced_inside_a_nested_model(resnet50):
    x = Input(shape=(32, 32, 3), name="x")
    head = Dense(2, name="head")
    outer = Model(x, head(resnet50(x)), name="outer")
    images = _images("ResNet50")
    before, expected = _weights(outer), outer.predict(images, verbose=0)
    old_conv = resnet50.get_layer("conv1_conv")

    new = replace(outer, "resnet50/conv1_conv", lambda old: Conv2D.from_config(old.get_config()))

    new_conv = new.get_layer("resnet50/conv1_conv")
    assert new_conv is not old_conv and new_conv.get_config() == old_conv.get_config()
    assert new.get_layer("resnet50") is not resnet50 and new.get_layer("head") is head
    assert resnet50.get_layer("conv1_conv") is old_conv  # the original nested model is intact
    kept = [layer for layer in resnet50.layers[1:] if layer is not old_conv]  # all but its Input and conv1_conv
    assert all(new.get_layer("resnet50/" + layer.name) is layer for layer in kept)
    _assert_same_weights(outer, before)
    new_conv.set_weights(old_conv.get_weights())
    assert np.array_equal(new.predict(images, verbose=0), expected)


@pytest.mark.slow
def test_resnet50_with_batch_normalizations_round_trips_through_nw_and_keras(resnet50, tmp_path):
    images = _images("ResNet50")
    new = insert_after(resnet50, Conv2D, lambda old: BatchNormalization())
    for variable in new.weights:  # the new normalizations off their initial values
        if variable.path.endswith("moving_variance"):
            variable.assign(np.random.default_rng(1).uniform(0.5, 1.5, variable.shape).astype("float32"))
    expected = new.predict(images, verbose=0)
    for name in ("bn.nw", "bn.keras"):
        new.save(tmp_path / name)
        loaded = load_model(tmp_path / name)
        assert [layer.name for layer in loaded.layers] == [layer.name for layer in new.layers]
        assert np.array_equal(loaded.predict(images, verbose=0), expected)


def test_replace_pattern_conv_batchnorm_relu():
    model = _small_residual()
    images = np.random.default_rng(0).normal(size=(2, 8, 8, 3)).astype("float32")
    matched_convs = [model.get_layer(name) for name in ("stem", "block0_a", "block1_a")]

    new = replace_pattern(model, lambda t: ReLU()(BatchNormalization()(Conv2D(1, 1)(t))),
                          lambda t: Conv2D(8, 3, padding="same", activation="relu")(t))

    names = [layer.name for layer in new.layers]
    assert not any(layer in new.layers for layer in matched_convs)
    assert "block0_b" in names and "block1_b" in names  # Conv-BN-Add is not the pattern
    assert sum(isinstance(layer, BatchNormalization) for layer in new.layers) == 2
    fused = [layer for layer in new.layers if isinstance(layer, Conv2D) and layer.get_config()["activation"] == "relu"]
    assert len(fused) == 3 and new.predict(images, verbose=0).shape == (2, 8, 8, 8)
    stem_input = [step for step in new.plan.steps if step.layer is fused[0]][0].node.input_tensors[0]
    assert stem_input is new.inputs[0]


def test_replace_pattern_inside_a_nested_model():
    inner = _small_residual("inner")
    x = Input(shape=(8, 8, 3), name="x")
    outer = Model(x, Dense(2, name="head")(inner(x)), name="outer")
    new = replace_pattern(outer, lambda t: BatchNormalization()(Conv2D(1, 1)(t)), lambda t: Conv2D(8, 1)(t))
    assert new.get_layer("head") is outer.get_layer("head") and new.get_layer("inner") is not inner
    assert not any(isinstance(layer, BatchNormalization) for layer in new.get_layer("inner").layers)
    assert sum(isinstance(layer, BatchNormalization) for layer in inner.layers) == 5


def test_replace_pattern_leaves_matches_whose_inner_tensors_are_read_elsewhere():
    x = Input(shape=(4,), name="x")
    normalized = BatchNormalization(name="bn")(Dense(4, name="dense")(x))
    model = Model(x, [ReLU(name="relu")(normalized), Dense(1, name="side")(normalized)])
    with pytest.raises(ValueError, match=r"pattern <lambda> \(Dense -> BatchNormalization -> ReLU\) matched nothing"):
        replace_pattern(model, lambda t: ReLU()(BatchNormalization()(Dense(1)(t))), lambda t: Dense(4)(t))
    new = replace_pattern(model, lambda t: BatchNormalization()(Dense(1)(t)), lambda t: Dense(4, name="fused")(t))
    assert [layer.name for layer in new.layers] == ["x", "fused", "relu", "side"]


def test_replace_pattern_inside_resnet50(resnet50):
    new = replace_pattern(resnet50, lambda t: Activation("relu")(BatchNormalization()(t)), lambda t: ReLU()(t))
    assert sum(isinstance(layer, ReLU) for layer in new.layers) == 33  # the stem's and two per block
    assert sum(isinstance(layer, BatchNormalization) for layer in new.layers) == 53 - 33
    assert new.predict(_images("ResNet50"), verbose=0).shape == (2, 1000)


def test_shared_layers_stay_one_layer():
    model = zoo()
    shared = model.get_layer("shared")
    new = insert_after(model, "proj", Dense(8, name="extra"))
    assert new.get_layer("shared") is shared
    assert sum(step.layer is shared for step in new.plan.steps) == 2
    assert len(new.weights) == len(model.weights) + 2

    replaced = replace(model, "shared", Dense(8, name="shared2"))
    assert sum(step.layer.name == "shared2" for step in replaced.plan.steps) == 2
    one_call = replace(model, "shared[1]", Dense(8, name="other"))
    assert [step.layer.name for step in one_call.plan.steps].count("shared") == 1
    assert "other" in [layer.name for layer in one_call.layers]


def test_nested_models_are_rebuilt_only_where_they_change(tmp_path):
    model = zoo()
    level1 = model.get_layer("level1")
    data = [np.ones((3, 16), "float32"), np.ones((3, 8), "float32")]
    expected = model.predict(data, verbose=0)

    deep = replace(model, "level1/level2/level3/d3", lambda old: Dense.from_config(old.get_config()))
    assert deep.get_layer("level1") is not level1 and deep.get_layer("level1/level2/level3") is not level1.get_layer(
        "level2/level3")
    assert deep.get_layer("level1/level2/d2") is level1.get_layer("level2/d2")
    assert deep.get_layer("proj") is model.get_layer("proj")
    deep.get_layer("level1/level2/level3/d3").set_weights([np.full((8, 8), 0.5, "float32"), np.ones(8, "float32")])
    changed = deep.predict(data, verbose=0)
    for name in ("deep.nw", "deep.keras"):
        deep.save(tmp_path / name)
        loaded = load_model(tmp_path / name)
        assert list(layer_paths(loaded)) == list(layer_paths(deep))
        for got, want in zip(loaded.predict(data, verbose=0), changed):
            assert np.array_equal(got, want)

    shallow = insert_after(model, "score", Dense(1, name="calibrate"))
    assert shallow.get_layer("level1") is level1
    for got, want in zip(model.predict(data, verbose=0), expected):
        assert np.array_equal(got, want)


def test_a_frozen_nested_model_stays_frozen_and_its_layers_keep_their_flags():
    model = zoo()
    level1 = model.get_layer("level1")
    level1.trainable = False
    level1.get_layer("level2/d2").trainable = True
    new = insert_after(model, "level1/level2/d2", Dense(8, name="extra"))
    assert not new.get_layer("level1").trainable and not new.get_layer("level1/level2").trainable
    assert level1.get_layer("level2/d2").trainable and not level1.get_layer("level2/level3/d3").trainable
    extra = new.get_layer("level1/level2/extra")
    assert {id(v) for v in new.trainable_weights} == {id(v) for v in model.trainable_weights + extra.weights}


def test_surgery_inside_a_sequential_model():
    backbone_input = Input(shape=(6,), name="features")
    backbone = Model(backbone_input, Dense(4, name="mid")(Dropout(0.3, name="drop")(backbone_input)),
                     name="backbone")
    model = Sequential([Input(shape=(6,)), backbone, Dense(2, name="head")], name="classifier")
    data = np.random.default_rng(0).normal(size=(3, 6)).astype("float32")

    new = remove(model, "backbone/drop")

    assert [path for path in layer_paths(new) if "drop" in path] == []
    assert new.get_layer("head") is model.get_layer("head")
    assert np.array_equal(new.predict(data, verbose=0), model.predict(data, verbose=0))


def test_insert_before_and_after_an_input():
    x = Input(shape=(3,), name="x")
    model = Model(x, Dense(2, name="head")(Dense(4, name="body")(x)))
    assert [layer.name for layer in insert_before(model, "head[0]", Dropout(0.5, name="drop")).layers] == [
        "x", "body", "drop", "head"]
    scaled = insert_after(model, "x", Dense(3, name="scale"))
    assert [layer.name for layer in scaled.layers] == ["x", "scale", "body", "head"]


def test_rewire_skips_and_reorders():
    x = Input(shape=(4,), name="x")
    h = Dense(4, name="h")(x)
    model = Model(x, Add(name="skip")([Dense(4, name="f")(h), h]))
    data = np.random.default_rng(0).normal(size=(3, 4)).astype("float32")
    skipped = rewire(model, "f[0][0]", h)
    assert [layer.name for layer in skipped.layers] == ["x", "h", "skip"]
    assert np.allclose(skipped.predict(data, verbose=0), 2 * model.get_layer("h")(data))

    # g comes after f in the plan's order, and f is rewired to read g's output.
    a = Dense(4, name="a")(x)
    f, g = Dense(4, name="f"), Dense(4, name="g")
    model = Model(x, Add(name="sum")([f(a), g(x)]))
    new = rewire(model, "a[0][0]", "g[0][0]")
    assert np.allclose(new.predict(data, verbose=0), f(g(data)) + g(data), atol=1e-6)
    assert "a" not in [layer.name for layer in new.layers]

    # The residual branch dropped: the readers of the branch's output (the last Add) read the shortcut.
    model = _small_residual()
    last_add = [step for step in model.plan.steps if isinstance(step.layer, Add)][-1]
    shortcut, branch = last_add.node.input_tensors
    dropped = rewire(model, branch, shortcut)
    assert "block1_a" not in [layer.name for layer in dropped.layers]
    images = np.random.default_rng(0).normal(size=(2, 8, 8, 3)).astype("float32")
    before_block = Model(model.inputs, shortcut).predict(images, verbose=0)
    assert np.allclose(dropped.predict(images, verbose=0), np.maximum(2 * before_block, 0), atol=1e-6)


def test_errors_name_the_places_and_say_what_to_do(resnet50):
    with pytest.raises(ValueError, match=r"Cannot remove 'conv1_conv\[0\]' \(Conv2D\) of model 'resnet50': its input "
                                         r"has shape \(None, 38, 38, 3\) .* output of shape \(None, 16, 16, 64\)"):
        remove(resnet50, "conv1_conv")
    with pytest.raises(ValueError, match=r"the class Dropout matched no layer of model 'resnet50'"):
        remove(resnet50, Dropout)
    with pytest.raises(ValueError, match=r"matched 53 layers \('conv1_conv', 'conv2_block1_0_conv'.* would be "
                                         r"shared by all of them by accident.*lambda old: BatchNormalization"):
        insert_after(resnet50, Conv2D, BatchNormalization())
    with pytest.raises(ValueError, match=r"Cannot remove 'conv2_block1_add\[0\]' \(Add\).*takes 2 tensors"):
        remove(resnet50, "conv2_block1_add")
    with pytest.raises(ValueError, match=r"No layer 'conv1_cnv' in model 'resnet50'. Closest: 'conv1_conv'"):
        remove(resnet50, "conv1_cnv")
    with pytest.raises(ValueError, match=r"names the Input 'input_layer_2' of model 'resnet50'.*only insert_after"):
        replace(resnet50, resnet50.inputs[0].name, Dense(3))
    with pytest.raises(TypeError, match=r"a layer class or a predicate on layers. Received 3"):
        remove(resnet50, 3)
    with pytest.raises(TypeError, match=r"instance or a factory `lambda old: NewLayer"):
        insert_after(resnet50, "conv1_conv", BatchNormalization)


def test_errors_for_ambiguous_names_and_impossible_rewires():
    def block(name):
        t = Input(shape=(4,), name=f"{name}_in")
        return Model(t, Dense(4, name="dense")(t), name=name)

    x = Input(shape=(4,), name="x")
    model = Model(x, block("left")(x) + block("right")(x), name="two")
    with pytest.raises(ValueError, match=r"'dense' is ambiguous in model 'two': 2 layers have that name "
                                         r"\('left/dense', 'right/dense'\)"):
        insert_after(model, "dense", ReLU())
    assert "right/relu" not in layer_paths(insert_after(model, "left/dense", ReLU(name="relu")))
    with pytest.raises(ValueError, match=r"different models \(nested model 'left' and the outer model\)"):
        rewire(model, "left/dense[0][0]", "x")
    with pytest.raises(ValueError, match=r"'add\[0\]\[0\]' is computed from 'left\[0\]\[0\]''s readers"):
        rewire(model, "left[0][0]", "add[0][0]")
    with pytest.raises(ValueError, match=r"shape \(None, 4\) .* shape \(None, 1\)"):
        rewire(Model(x, Dense(1, name="one")(x)), "x", "one[0][0]")


def test_a_layer_that_no_longer_fits_is_named():
    model = _small_residual()
    with pytest.raises(ValueError, match=r"layer batch_normalization\S* is incompatible.*\(None, 8, 8, 4\)") as caught:
        replace(model, "block0_a", Conv2D(4, 3, padding="same"))
    assert "graph surgery rebuilt model 'small_residual'" in "".join(caught.value.__notes__)
