"""graph.diff: layers matched by their place in the graph, what was added, removed and
changed, at any depth, the numeric mode, the displays and ``nodeweave diff``."""

import gzip
import json
import re

import numpy as np
import pytest

from engine import Input, Model, Sequential, clone_model, model_from_json
from engine.network.qualified_names import layer_paths
from graph import ModelDiff, diff
from graph.cli import main
from layers import Add, Dense, LeakyReLU, ReLU
from tests.graph.data.make_keras_vgg import PATH as VGG_PATH


@pytest.fixture(scope="module")
def vgg():
    with gzip.open(VGG_PATH, "rt", encoding="utf-8") as file:
        configs = json.load(file)["configs"]
    return {name: model_from_json(json.dumps(config)) for name, config in configs.items()}


def chain(units, name=None):
    """Dense layers of these widths in a chain, named ``d0``, ``d1``..."""
    x = y = Input(shape=(3,), name="x")
    for i, width in enumerate(units):
        y = Dense(width, name=f"d{i}")(y)
    return Model(x, y, name=name)


def nested(width=4, extra=None):
    """``x -> block(inner: mid -> [extra] -> back) -> sum(x, .) -> head``."""
    inner_x = Input(shape=(8,), name="ix")
    h = Dense(width, name="mid")(inner_x)
    if extra is not None:
        h = extra(h)
    block = Model(inner_x, Dense(8, name="back")(h), name="block")
    x = Input(shape=(8,), name="x")
    return Model(x, Dense(2, name="head")(Add(name="sum")([x, block(x)])), name="outer")


def test_vgg16_to_vgg19_adds_exactly_the_fourth_convolutions(vgg):
    found = diff(vgg["VGG16"], vgg["VGG19"])
    assert found.added == ["block3_conv4", "block4_conv4", "block5_conv4"]
    assert found.removed == [] and not found.is_empty
    # The pools after them read the new convolutions; nothing else changed.
    assert found.changed == ["block3_pool", "block4_pool", "block5_pool"]
    assert found.changes["block3_pool"].inputs == {
        "block3_pool[0]": (["block3_conv3[0][0]"], ["block3_conv4[0][0]"])}
    assert found.renamed == {"input_layer": "input_layer_1"}  # matched by position, not name
    backwards = diff(vgg["VGG19"], vgg["VGG16"])
    assert backwards.removed == ["block3_conv4", "block4_conv4", "block5_conv4"] and backwards.added == []


def test_a_model_and_its_clone_do_not_differ(vgg):
    for model in (vgg["VGG16"], nested(), chain([4, 2])):
        found = diff(model, clone_model(model))
        assert found.is_empty and found.renamed == {} and found.outputs is None
        assert str(found).endswith("no differences")


def test_layers_inserted_and_removed_under_automatic_names():
    def dense_chain(relu_after=None):
        x = y = Input(shape=(3,))
        for i, width in enumerate((4, 4, 2)):
            y = Dense(width)(y)
            if i == relu_after:
                y = ReLU()(y)
        return Model(x, y)

    a, b = dense_chain(), dense_chain(relu_after=1)  # b is built later: every name differs from a's
    found = diff(a, b)
    inserted = b.layers[3].name
    after = b.layers[4].name  # the Dense after the ReLU reads it: a connection changed
    assert found.added == [inserted] and found.removed == [] and found.changed == [after]
    assert found.changes[after].inputs == {f"{after}[0]": ([f"{a.layers[2].name}[0][0]"], [f"{inserted}[0][0]"])}
    assert list(found.renamed) == [layer.name for layer in a.layers]
    assert list(found.renamed.values()) == [b.layers[i].name for i in (0, 1, 2, 4)]
    assert diff(b, a).removed == [inserted] and diff(b, a).added == []


def test_a_layer_inserted_before_one_of_the_same_class_is_the_one_added():
    x = Input(shape=(3,), name="x")
    a = Model(x, Dense(2, name="d")(x))
    x = Input(shape=(3,), name="x")
    b = Model(x, Dense(2, name="d")(Dense(5, name="h")(x)))
    found = diff(a, b)
    assert found.added == ["h"] and found.changed == ["d"]
    assert found.changes["d"].inputs == {"d[0]": (["x[0][0]"], ["h[0][0]"])}
    assert found.changes["d"].weights == {"kernel": ((3, 2), (5, 2))}


def test_config_class_and_weight_shape_changes():
    found = diff(chain([4, 2], name="a"), chain([8, 2], name="b"))
    change = found.changes["d0"]
    assert found.changed == ["d0", "d1"] and found.added == found.removed == []
    assert change.config == {"units": (4, 8)}
    assert change.weights == {"kernel": ((3, 4), (3, 8)), "bias": ((4,), (8,))}
    assert found.changes["d1"].config == {} and found.changes["d1"].weights == {"kernel": ((4, 2), (8, 2))}
    # A layer replaced by one of another class, in place: changed, not removed and added.
    replaced = diff(nested(extra=ReLU(name="act")), nested(extra=LeakyReLU(name="act")))
    assert replaced.changed == ["block/act"] and replaced.changes["block/act"].class_name == ("ReLU", "LeakyReLU")
    assert replaced.added == replaced.removed == []


def test_nested_models_are_compared_inside_with_qualified_paths():
    b = nested(width=6, extra=ReLU(name="act"))
    found = diff(nested(), b)
    assert found.added == ["block/act"] and found.removed == []
    assert found.changed == ["block/mid", "block/back"]
    assert found.changes["block/back"].inputs == {"block/back[0]": (["block/mid[0][0]"], ["block/act[0][0]"])}
    assert set(found.added + found.changed) <= set(layer_paths(b))
    assert "+ block/act (ReLU)" in str(found) and "    units: 4 -> 6" in str(found)


def test_a_shared_layer_whose_second_call_reads_another_tensor():
    def two_calls(second_reads_first_output):
        x = Input(shape=(4,), name="x")
        shared = Dense(4, name="shared")
        y = shared(x)
        z = shared(y if second_reads_first_output else x)
        return Model(x, Add(name="sum")([y, z]))

    found = diff(two_calls(False), two_calls(True))
    assert found.changed == ["shared"] and found.added == found.removed == []
    assert found.changes["shared"].inputs == {"shared[1]": (["x[0][0]"], ["shared[0][0]"])}


def test_outputs_that_are_other_tensors_are_a_difference():
    x = Input(shape=(3,), name="x")
    hidden = Dense(4, name="hidden")(x)
    out = Dense(2, name="out")(hidden)
    found = diff(Model(x, out), Model(x, [out, hidden]))
    assert found.outputs == (["out[0][0]"], ["out[0][0]", "hidden[0][0]"]) and not found.is_empty
    assert found.added == found.removed == found.changed == []


def test_the_first_layer_whose_outputs_differ_comes_first():
    model = nested()
    copy = clone_model(model)
    copy.set_weights(model.get_weights())
    data = np.random.default_rng(0).normal(size=(4, 8)).astype("float32")
    assert diff(model, copy, data=data).first_disagreement is None
    with_nan = data.copy()
    with_nan[0, 0] = np.nan  # NaN in both models' outputs: they agree
    assert set(diff(model, copy, data=with_nan).output_differences.values()) == {0.0}
    kernel = copy.get_layer("block/back").kernel
    kernel.assign(kernel.value + 0.01)
    found = diff(model, copy, data=data)
    assert found.is_empty  # same architecture: only the values differ
    assert list(found.output_differences)[:4] == ["block/back", "block", "sum", "head"]
    assert found.first_disagreement == "block/back"
    assert set(found.output_differences) == set(layer_paths(copy))
    assert found.output_differences["block/mid"] == 0 and found.output_differences["x"] == 0
    expected = np.abs(model.get_layer("block/back").kernel.value - kernel.value).max()
    assert found.output_differences["block/back"] > expected  # 0.01 per weight, summed over 4 inputs
    assert "outputs first differ at block/back" in str(found)


def test_data_is_given_as_the_models_take_it():
    def two_inputs():
        a, b = Input(shape=(2,), name="a"), Input(shape=(3,), name="b")
        return Model({"a": a, "b": b}, Dense(1, name="out")(Add(name="sum")([Dense(3, name="da")(a), b])))

    first, second = two_inputs(), two_inputs()
    second.set_weights(first.get_weights())
    data = {"b": np.ones((2, 3), "float32"), "a": np.zeros((2, 2), "float32")}  # by key, not by order
    found = diff(first, second, data=data)
    assert found.first_disagreement is None and found.output_differences["out"] == 0
    with pytest.raises(ValueError, match="shape"):
        diff(first, second, data={"a": np.ones((2, 3), "float32"), "b": np.ones((2, 3), "float32")})


def test_outputs_of_other_shapes_differ_infinitely():
    found = diff(chain([4, 2]), chain([8, 2]), data=np.ones((2, 3), "float32"))
    assert found.output_differences["d0"] == np.inf and found.first_disagreement == "d0"


def test_sequential_models_and_models_without_a_graph():
    a = Sequential([Input(shape=(3,)), Dense(4, name="d"), Dense(2, name="o")])
    b = Sequential([Input(shape=(3,)), Dense(4, name="d"), ReLU(name="r"), Dense(2, name="o")])
    assert diff(a, b).added == ["r"]
    with pytest.raises(ValueError, match=r"model 'unbuilt' \(Sequential\) has none: .*\(model.build\(input_shape\)\)"):
        diff(a, Sequential([Dense(2)], name="unbuilt"))


def test_repr_html_is_a_table_of_the_differences(vgg):
    page = diff(vgg["VGG16"], vgg["VGG19"])._repr_html_()
    rows = re.findall(r"<tr style=\"background:#\w+\"><td>(\w+)</td><td><code>([\w/]+)</code>", page)
    assert rows == [("added", "block3_conv4"), ("added", "block4_conv4"), ("added", "block5_conv4"),
                    ("changed", "block3_pool"), ("changed", "block4_pool"), ("changed", "block5_pool")]
    assert "no differences" in diff(vgg["VGG16"], vgg["VGG16"])._repr_html_()


def test_plot_draws_both_models_with_the_differences_coloured(tmp_path):
    found = diff(nested(), nested(width=6, extra=ReLU(name="act")))
    found.plot(tmp_path / "diff.dot")
    source = (tmp_path / "diff.dot").read_text()
    fills = {(side, key): colour for side, key, colour in
             re.findall(r'"(\w)%25/([\w/]+)" \[[^\]]*fillcolor="(#\w+)"', source)}
    orange, green = "#ffd28a", "#b7e4b0"
    assert fills == {("a", "block/mid"): orange, ("a", "block/back"): orange, ("b", "block/mid"): orange,
                     ("b", "block/act"): green, ("b", "block/back"): orange}
    assert "added" in source and "changed: units, kernel, bias" in source
    assert "before: outer" in source and "after: outer" in source
    found.plot(tmp_path / "diff.svg")
    assert (tmp_path / "diff.svg").read_text().count("<svg") >= 1
    with pytest.raises(ValueError, match=r"cannot write '.*diff\.xyz'"):
        found.plot(tmp_path / "diff.xyz")
    # A nested model added: its inner boxes are green.
    x = Input(shape=(8,), name="x")
    grown = diff(Model(x, Dense(2, name="head")(x)), nested())
    assert grown.added == ["block", "sum"]
    grown.plot(tmp_path / "grown.dot")
    source = (tmp_path / "grown.dot").read_text()
    assert dict(re.findall(r'"b%25/([\w/]+)" \[[^\]]*fillcolor="(#\w+)"', source)) == {
        "block/ix": green, "block/mid": green, "block/back": green, "sum": green, "head": orange}


def test_command_line_diff_of_saved_files(tmp_path, capsys):
    chain([4, 2]).save(tmp_path / "a.nw")
    chain([4, 5, 2]).save(tmp_path / "b.keras")
    assert main(["diff", str(tmp_path / "a.nw"), str(tmp_path / "b.keras"), "--plot",
                 str(tmp_path / "d.svg")]) == 0
    printed = capsys.readouterr().out
    assert "+ d2 (Dense)" in printed and "~ d1 (Dense)" in printed and "    units: 2 -> 5" in printed
    assert printed.endswith(f"wrote {tmp_path / 'd.svg'}\n") and (tmp_path / "d.svg").stat().st_size > 0


def test_model_diff_is_exported():
    assert isinstance(diff(chain([2]), chain([2])), ModelDiff)


def test_a_model_edited_by_surgery_differs_by_the_layers_inserted_only():
    from graph import insert_after
    from layers import Activation, BatchNormalization, Conv2D

    image = Input(shape=(8, 8, 3), name="image")
    h = Activation("relu", name="stem_relu")(BatchNormalization(name="stem_bn")(Conv2D(4, 3, name="stem_conv")(image)))
    model = Model(image, Conv2D(2, 1, name="head")(h))
    edited = insert_after(model, Conv2D, lambda old: BatchNormalization(name=f"{old.name}_bn"))
    changes = diff(model, edited)
    assert changes.added == ["stem_conv_bn", "head_bn"]
    assert changes.removed == [] and changes.renamed == {} and changes.changed == ["stem_bn"]
