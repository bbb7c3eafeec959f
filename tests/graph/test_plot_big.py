"""plot_model on big graphs: layer_range, max_depth, collapse_repeats, and bitmaps too large for graphviz."""

import struct

import pytest
from keras.src.utils.summary_utils import get_layer_index_bound_by_layer_name  # Keras' layer_range rule

from engine import Input, Model
from graph import model_to_dot, plot_model
from graph.cli import main
from layers import Activation, Add, BatchNormalization, Concatenate, Conv2D, Dense, GlobalAveragePooling2D
from tests.graph.test_plot import parse_dot
from tests.graph.zoo import zoo


def resnet(blocks, activations=None):
    """A stem, ``blocks`` residual blocks of 7 layers each (named ``b{i}_...``), a pooled head."""
    activations = activations or ["relu"] * blocks
    x = Input(shape=(8, 8, 3), name="image")
    h = Conv2D(4, 3, padding="same", name="stem")(x)
    for i, activation in enumerate(activations):
        r = Conv2D(4, 3, padding="same", name=f"b{i}_conv1")(h)
        r = Activation(activation, name=f"b{i}_act")(BatchNormalization(name=f"b{i}_bn1")(r))
        r = BatchNormalization(name=f"b{i}_bn2")(Conv2D(4, 3, padding="same", name=f"b{i}_conv2")(r))
        h = Activation("relu", name=f"b{i}_out")(Add(name=f"b{i}_add")([h, r]))
    return Model(x, Dense(10, name="logits")(GlobalAveragePooling2D(name="pool")(h)), name="resnet")


def drawn(model, **options):
    boxes, edges, clusters, others = parse_dot(model_to_dot(model, **options).source)
    return boxes, edges, clusters, others


# layer_range


class _Named:
    def __init__(self, name):
        self.name = name


@pytest.mark.parametrize("layer_range", [("stem", "b0_out"), ("b1_conv1", "b1_add"), (r"b\d_bn", "b1_"),
                                         ("b1_out", "stem"), ("b0_conv1", "b0_conv1"), ("image", ".*"),
                                         ["b1", "logits"]])
def test_layer_range_draws_the_layers_keras_would_pick(layer_range):
    """Keras' rule: from the first name matching the start to the last matching the end (re.match), swapped
    when reversed; its own function picks the indices."""
    model = resnet(2)
    order = ["image", "stem"] + [f"b{i}_{n}" for i in range(2) for n in ("conv1", "bn1", "act", "conv2", "bn2",
                                                                         "add", "out")] + ["pool", "logits"]
    assert [call.layer.name for call in model.plan.steps] == order[1:]
    low, high = get_layer_index_bound_by_layer_name([_Named(name) for name in order], layer_range)
    boxes, edges, _, others = drawn(model, layer_range=layer_range)
    assert sorted(boxes) == sorted(order[low:high])
    assert all(source in boxes or source in others for source, _ in edges)


def test_an_edge_from_a_layer_left_out_starts_at_a_muted_stand_in_naming_it():
    model = resnet(3)
    dot = model_to_dot(model, show_shapes=True, layer_range=("b1_conv1", "b1_out"))
    boxes, edges, _, others = parse_dot(dot.source)
    assert others == {"from%/b0_out": (None, "from b0_out<br/>(None, 8, 8, 4)")}
    assert sorted(edge for edge in edges if edge[0] in others) == [("from%/b0_out", "b1_add"),
                                                                    ("from%/b0_out", "b1_conv1")]
    assert '"from%/b0_out" -> b1_conv1 [color=gray40 style=dashed]' in dot.source
    assert ("b1_out", "b2_conv1") not in edges and "b2_conv1" not in boxes


def test_layer_range_keeps_an_expanded_nested_model_whole():
    boxes, _, clusters, _ = drawn(zoo(), expand_nested=True, layer_range=("add", "score"))
    assert set(clusters) == {"cluster_level1", "cluster_level1/level2", "cluster_level1/level2/level3"}
    assert {key for key in boxes if "/" not in key} == {"add", "score"}
    assert "level1/level2/level3/d3" in boxes


@pytest.mark.parametrize("layer_range, keras_says, we_say", [
    (("stem",), "must be a list or tuple of length 2", r"two layer names .* received \('stem',\) of length 1"),
    (("stem", "pool", "logits"), "must be a list or tuple of length 2", r"of length 3"),
    (("stem", 3), "should contain string type only", r"must hold two strings, .* received \('stem', 3\)"),
    (("stem", "nothing"), "do not match the layer names", r"matches no layer of model 'resnet': no layer name "
                                                          r"starts with a match of 'nothing' \(re.match\)"),
    (("stme", "pool"), "do not match the layer names", r"Did you mean 'stem'\? Its layers, in execution order: "
                                                       r"image, stem, b0_conv1"),
])
def test_a_bad_layer_range_is_refused_where_keras_refuses_it(layer_range, keras_says, we_say):
    model = resnet(1)
    names = [_Named(name) for name in ("image", "stem", "b0_conv1", "pool")]
    with pytest.raises(ValueError, match=keras_says):
        get_layer_index_bound_by_layer_name(names, layer_range)
    with pytest.raises(ValueError, match=we_say):
        model_to_dot(model, layer_range=layer_range)


def test_a_layer_range_that_is_no_regular_expression_says_how_to_match_a_name():
    with pytest.raises(ValueError, match=r"'b0_\[' is not a valid regular expression .* re.escape"):
        model_to_dot(resnet(1), layer_range=("b0_[", "pool"))


# max_depth


def test_max_depth_stops_expanding_nested_models_at_that_depth():
    model = zoo()
    _, _, clusters, _ = drawn(model, expand_nested=True)
    assert len(clusters) == 3
    boxes, edges, clusters, _ = drawn(model, expand_nested=True, max_depth=1)
    assert clusters == {"cluster_level1": None}
    assert boxes["level1/level2"] == ("cluster_level1", "<b>level2</b> (Functional)")
    assert ("level1/x1", "level1/level2") in edges and ("level1/level2", "level1/multiply") in edges
    _, _, clusters, _ = drawn(model, expand_nested=True, max_depth=2)
    assert clusters == {"cluster_level1": None, "cluster_level1/level2": "cluster_level1"}
    assert drawn(model, expand_nested=True, max_depth=3)[2] == drawn(model, expand_nested=True)[2]


@pytest.mark.parametrize("max_depth", [0, -1, 1.5, True, "2"])
def test_max_depth_must_be_a_positive_integer(max_depth):
    with pytest.raises(ValueError, match=rf"max_depth must be a positive integer .* received {max_depth!r}"):
        model_to_dot(zoo(), expand_nested=True, max_depth=max_depth)


def test_max_depth_without_expand_nested_is_refused_not_ignored():
    with pytest.raises(ValueError, match=r"max_depth=1 limits how deep expand_nested .* Pass expand_nested=True"):
        model_to_dot(zoo(), max_depth=1)


# collapse_repeats


@pytest.mark.parametrize("per_call", [False, True])
def test_identical_residual_blocks_are_drawn_once_with_their_count(per_call):
    model = resnet(4)
    boxes, edges, clusters, others = drawn(model, collapse_repeats=True, per_call=per_call, show_params=True)
    key = (lambda name: f"{name}[0]") if per_call else (lambda name: name)
    block = ["conv1", "bn1", "act", "conv2", "bn2", "add", "out"]
    assert set(boxes) == {key(name) for name in ["image", "stem", "pool", "logits"] + [f"b0_{n}" for n in block]}
    assert clusters == {"cluster_run%25/0": None}
    per_block = sum(model.get_layer(f"b0_{name}").count_params() for name in block)
    assert others == {"title%/run%25/0": ("cluster_run%25/0",
                                          f"<b>×4</b>  b0_conv1 … b3_out<br/>params: {4 * per_block:,} in all")}
    assert {box: cluster for box, (cluster, _) in boxes.items() if cluster} == {
        key(f"b0_{name}"): "cluster_run%25/0" for name in block}
    assert (key("stem"), key("b0_conv1")) in edges and (key("stem"), key("b0_add")) in edges
    assert (key("b0_out"), key("pool")) in edges  # the last block's exit, drawn by the first block's
    assert len(edges) == 3 + 8  # into the run (2), out of it (1), the 8 edges inside one block
    assert not [edge for edge in edges if edge[0] == edge[1]]


def test_only_blocks_alike_in_every_config_are_collapsed():
    boxes, _, clusters, others = drawn(resnet(5, ["relu", "relu", "gelu", "relu", "relu"]), collapse_repeats=True)
    assert sorted(label for _, label in others.values()) == ["<b>×2</b>  b0_conv1 … b1_out",
                                                           "<b>×2</b>  b3_conv1 … b4_out"]
    assert {f"b2_{name}" for name in ("conv1", "act", "out")} <= set(boxes)
    assert "b1_conv1" not in boxes and "b4_conv1" not in boxes


def test_a_stack_of_dense_layers_collapses_where_shapes_and_configs_agree():
    """Names never matter; the shapes read do: d1 reads 16 features, d2 and d3 read 8."""
    x = Input(shape=(16,), name="x")
    h = x
    for i, units in enumerate([8, 8, 8, 4, 4], start=1):
        h = Dense(units, name=f"d{i}")(h)
    boxes, edges, _, others = drawn(Model(x, h), collapse_repeats=True)
    assert [label for _, label in others.values()] == ["<b>×2</b>  d2 … d3"]
    assert set(boxes) == {"x", "d1", "d2", "d4", "d5"}
    assert sorted(edges) == [("d1", "d2"), ("d2", "d4"), ("d4", "d5"), ("x", "d1")]


def test_a_block_read_from_outside_the_chain_ends_its_run():
    """d2's output is read by d3 and by the Add: d2 must be the last block of a run."""
    x = Input(shape=(4,), name="x")
    d = [x]
    for i in range(1, 5):
        d.append(Dense(4, name=f"d{i}")(d[-1]))
    model = Model(x, Add(name="add")([d[2], d[4]]))
    boxes, edges, _, others = drawn(model, collapse_repeats=True)
    assert sorted(label for _, label in others.values()) == ["<b>×2</b>  d1 … d2", "<b>×2</b>  d3 … d4"]
    assert sorted(edges) == [("d1", "add"), ("d1", "d3"), ("d3", "add"), ("x", "d1")]


def test_blocks_with_a_second_input_from_outside_are_not_a_chain():
    x = Input(shape=(4,), name="x")
    h = x
    for i in range(3):
        h = Concatenate(name=f"cat{i}")([Dense(4, name=f"d{i}")(h), x])  # each block reads x too
    boxes, _, clusters, _ = drawn(Model(x, h), collapse_repeats=True)
    assert clusters == {} and len(boxes) == 7


def test_a_shared_layer_drawn_as_one_box_is_never_part_of_a_run():
    x = Input(shape=(4,), name="x")
    shared = Dense(4, name="shared")
    model = Model(x, shared(shared(shared(x))))
    assert drawn(model, collapse_repeats=True)[2] == {}  # one box with a loop: nothing to collapse
    _, _, clusters, others = drawn(model, collapse_repeats=True, per_call=True)
    assert [label for _, label in others.values()] == ["<b>×3</b>  shared[0] … shared[2]"]


# bitmaps too large for graphviz


def _tall_chain(length=500):
    x = Input(shape=(2,), name="x")
    h = x
    for _ in range(length):
        h = Dense(2)(h)
    return Model(x, h, name="tall")


def _png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_a_png_too_tall_for_graphviz_is_written_as_svg_with_a_warning_and_nothing_on_stderr(tmp_path, capfd):
    """graphviz shrank a 500-box chain into a strip 32,767 pixels tall and said so on stderr."""
    model = _tall_chain()
    with pytest.warns(UserWarning) as caught:
        plot_model(model, to_file=str(tmp_path / "tall.png"), show_shapes=True)
    assert not (tmp_path / "tall.png").exists()
    assert (tmp_path / "tall.svg").read_text().lstrip().startswith("<?xml")
    message = str(caught[0].message)
    assert message.startswith("plot_model: model 'tall' at dpi 96 would be ")
    assert ("past the 32,767 that graphviz can draw as PNG (it would shrink the picture until it is "
            f"unreadable), so it was written as SVG to {str(tmp_path / 'tall.svg')!r} instead of "
            f"{str(tmp_path / 'tall.png')!r}. For a bitmap, draw fewer boxes (collapse_repeats=True") in message
    height = int(message.split(" x ")[1].split(" pixels")[0].replace(",", ""))
    assert height > 32767
    fitting_dpi = int(message.split("pass dpi=")[1].split(" ")[0])
    assert capfd.readouterr().err == ""

    plot_model(model, to_file=str(tmp_path / "fits.png"), show_shapes=True, dpi=fitting_dpi)
    width, height = _png_size(tmp_path / "fits.png")
    assert 32767 - 400 < height <= 32767  # the dpi suggested is the largest that fits, not a squeezed one
    plot_model(model, to_file=str(tmp_path / "collapsed.png"), show_shapes=True, collapse_repeats=True)
    assert _png_size(tmp_path / "collapsed.png")[1] < 1000
    assert capfd.readouterr().err == ""


def test_the_cli_plots_with_the_big_graph_options(tmp_path, capsys):
    path = tmp_path / "resnet.nw"
    resnet(3).save(path)
    target = tmp_path / "resnet.dot"
    main(["plot", str(path), "-o", str(target), "--collapse-repeats", "--layer-range", "stem", "b2_out"])
    boxes, _, _, others = parse_dot(target.read_text())
    assert set(boxes) == {"stem"} | {f"b0_{n}" for n in ("conv1", "bn1", "act", "conv2", "bn2", "add", "out")}
    assert "<b>×3</b>  b0_conv1 … b2_out" in [label for _, label in others.values()]
    assert capsys.readouterr().out == f"wrote {target}\n"
    with pytest.raises(SystemExit) as stopped:
        main(["plot", str(path), "-o", str(target), "--max-depth", "2"])
    assert stopped.value.code == 2  # an argparse error, in the CLI's own words
    assert "--max-depth 2 says how many levels of nested models --expand-nested expands" in capsys.readouterr().err
