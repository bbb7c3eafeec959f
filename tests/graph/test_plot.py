"""plot_model and model_to_dot: the DOT graph's boxes, edges and clusters, and real renders."""

import io
import re
import shlex
import struct
import xml.etree.ElementTree as ET
from collections import Counter

import pytest

from engine import Input, Model
from graph import model_to_dot, plot_model
from layers import Dense
from tests.graph.zoo import nested_three_deep, zoo

_ID = r'"(?:[^"\\]|\\.)*"|[\w.]+'
_ATTRS = r'(?: \[(.*)\])?'


def parse_dot(source):
    """Boxes {id: (enclosing cluster or None, label)}, edges [(tail, head)], clusters {name: parent},
    and the other nodes: cluster titles and stand-ins for left-out layers {id: (cluster, label)}."""
    boxes, edges, clusters, others, open_clusters = {}, [], {}, {}, [None]
    for line in source.splitlines():
        line = line.strip()
        if match := re.fullmatch(rf"subgraph ({_ID}) {{", line):
            name = _unquote(match[1])
            clusters[name] = open_clusters[-1]
            open_clusters.append(name)
        elif line == "{":
            open_clusters.append(open_clusters[-1])  # a rank=same row: still the same cluster
        elif line == "}":
            open_clusters.pop()
        elif match := re.fullmatch(rf"({_ID}) -> ({_ID}){_ATTRS}", line):
            edges.append((_unquote(match[1]), _unquote(match[2])))
        elif match := re.fullmatch(rf"({_ID}) \[label=<(.*)>(.*)\]", line):
            name = _unquote(match[1])
            (others if "%/" in name else boxes)[name] = (open_clusters[-1], match[2])
    return boxes, edges, clusters, others


def _unquote(identifier):
    return identifier[1:-1] if identifier.startswith('"') else identifier


def node_edges(model, per_call):
    """The oracle: one edge per input tensor of each of the model's Nodes, from its _keras_history."""
    edges = Counter()
    for layer in model.layers:
        for index, node in enumerate(layer.inbound_nodes):
            for tensor in node.input_tensors:
                source, node_index, _ = tensor._keras_history
                if per_call:
                    edges[(f"{source.name}[{node_index}]", f"{layer.name}[{index}]")] += 1
                else:
                    edges[(source.name, layer.name)] += 1
    return edges


def test_one_box_per_layer_and_one_edge_per_tensor_read():
    model = zoo()
    boxes, edges, clusters, others = parse_dot(model_to_dot(model, show_shapes=True).source)
    assert set(boxes) == {layer.name for layer in model.layers}
    assert Counter(edges) == node_edges(model, per_call=False)
    assert Counter(edges)[("shared", "add")] == 2  # the two calls of the shared layer
    assert clusters == {} and others == {}
    assert boxes["level1"][1] == "<b>level1</b> (Functional)<br/>output: (None, 8)"


def test_each_shape_is_drawn_once_on_the_box_that_makes_it():
    """Not three times (the box "out:", the edge's label and the next box's "in:")."""
    x = Input(shape=(5,), name="x")
    y = Dense(3, name="c")(Dense(4, name="b")(Dense(7, name="a")(x)))
    source = model_to_dot(Model(x, y), show_shapes=True).source
    boxes, _, _, _ = parse_dot(source)
    for name, width in (("x", 5), ("a", 7), ("b", 4), ("c", 3)):
        assert source.count(f"(None, {width})") == 1
        assert boxes[name][1].endswith(f"<br/>output: (None, {width})")
    assert "label=" not in "".join(line for line in source.splitlines() if "->" in line)


def test_per_call_draws_one_box_per_node_and_indexes_only_shared_layers():
    model = zoo()
    boxes, edges, _, _ = parse_dot(model_to_dot(model, show_shapes=True, per_call=True).source)
    assert set(boxes) == {f"{layer.name}[{i}]" for layer in model.layers for i in range(len(layer.inbound_nodes))}
    assert Counter(edges) == node_edges(model, per_call=True)
    names = {key: re.match(r"<b>(.*?)</b>", label)[1] for key, (_, label) in boxes.items()}
    assert names == {key: key if key.startswith("shared") else key.removesuffix("[0]") for key in boxes}
    assert names["shared[1]"] == "shared[1]" and names["proj[0]"] == "proj"


def test_per_call_names_the_calls_of_a_nested_model_called_twice_and_not_its_layers():
    inner = nested_three_deep()
    x = Input(shape=(8,), name="x")
    model = Model(x, inner(inner(x)), name="twice")
    boxes, _, clusters, others = parse_dot(model_to_dot(model, per_call=True, expand_nested=True).source)
    assert {c for c, parent in clusters.items() if parent is None} == {"cluster_level1[0]", "cluster_level1[1]"}
    assert others["title%/level1[1]"][1] == "<b>level1[1]</b> (Functional)"
    assert boxes["level1[1]/level2[0]/d2[0]"][1] == "<b>d2</b> (Dense)"


def test_a_shared_layers_parameters_are_shown_on_its_first_box_only():
    model = zoo()
    boxes, _, _, _ = parse_dot(model_to_dot(model, per_call=True, show_params=True).source)
    assert boxes["shared[0]"][1].endswith("<br/>params: 72")
    assert boxes["shared[1]"][1].endswith("<br/>params: shared with shared[0]")
    drawn = [int(m) for _, label in boxes.values() for m in re.findall(r"params: ([\d,]+)", label.replace(",", ""))]
    assert sum(drawn) == model.count_params()


@pytest.mark.parametrize("per_call, keys, names", [
    (False, ("dense", "inner/dense"), ("dense", "dense")),
    (True, ("dense[1]", "inner[0]/dense[0]"), ("dense[1]", "dense[0]")),
])
def test_a_layer_drawn_inside_an_expanded_model_and_outside_it_counts_its_parameters_once(per_call, keys, names):
    x = Input(shape=(4,), name="x")
    dense = Dense(4, name="dense")
    inner = Model(x, dense(x), name="inner")
    z = Input(shape=(4,), name="z")
    model = Model(z, [dense(z), inner(z)], name="outer")
    boxes, _, _, _ = parse_dot(model_to_dot(model, expand_nested=True, per_call=per_call, show_params=True).source)
    params = sorted(boxes[key][1].split("<br/>")[-1] for key in keys)
    assert params[0] == "params: 20" and params[1] in {f"params: shared with {name}" for name in names}
    assert [label.split("<br/>")[-1] for _, label in boxes.values()].count("params: 20") == 1


def test_show_trainable_marks_only_layers_with_weights():
    model = zoo()
    model.get_layer("proj").trainable = False
    boxes, _, _, _ = parse_dot(model_to_dot(model, show_trainable=True).source)
    marks = {key: label.split("<br/>")[1:] for key, (_, label) in boxes.items()}
    assert marks == {layer.name: ([] if not layer.weights else ["non-trainable"] if layer.name == "proj"
                                  else ["trainable"]) for layer in model.layers}
    assert marks["add"] == [] and marks["a"] == [] and marks["level1"] == ["trainable"]


def test_expand_nested_draws_clusters_three_deep_with_edges_into_the_inner_layers():
    boxes, edges, clusters, others = parse_dot(model_to_dot(zoo(), expand_nested=True).source)
    assert clusters == {"cluster_level1": None, "cluster_level1/level2": "cluster_level1",
                        "cluster_level1/level2/level3": "cluster_level1/level2"}
    assert {key: cluster for key, (cluster, _) in boxes.items() if cluster} == {
        "level1/x1": "cluster_level1",
        "level1/multiply": "cluster_level1",
        "level1/level2/x2": "cluster_level1/level2",
        "level1/level2/d2": "cluster_level1/level2",
        "level1/level2/level3/x3": "cluster_level1/level2/level3",
        "level1/level2/level3/d3": "cluster_level1/level2/level3",
    }
    assert others == {"title%/level1": ("cluster_level1", "<b>level1</b> (Functional)"),
                      "title%/level1/level2": ("cluster_level1/level2", "<b>level2</b> (Functional)"),
                      "title%/level1/level2/level3": ("cluster_level1/level2/level3", "<b>level3</b> (Functional)")}
    assert "level1" not in boxes
    assert sorted(edges) == sorted([
        ("a", "proj"), ("proj", "shared"), ("b", "shared"), ("shared", "add"), ("shared", "add"),
        ("add", "level1/x1"), ("level1/x1", "level1/level2/x2"),
        ("level1/level2/x2", "level1/level2/level3/x3"),
        ("level1/level2/level3/x3", "level1/level2/level3/d3"),
        ("level1/level2/level3/d3", "level1/level2/d2"), ("level1/level2/d2", "level1/multiply"),
        ("level1/multiply", "score"), ("level1/multiply", "multiply_1"), ("shared", "multiply_1"),
        ("multiply_1", "get_item"),
    ])


def _layout(dot):
    """graphviz's layout of ``dot``: node boxes {name: (x0, y0, x1, y1)} and edge points [(tail, head, points)]."""
    boxes, edges = {}, []
    for line in dot.pipe(format="plain", quiet=True).decode().splitlines():
        fields = shlex.split(line)
        if fields[0] == "node":
            x, y, width, height = map(float, fields[2:6])
            boxes[fields[1]] = (x - width / 2, y - height / 2, x + width / 2, y + height / 2)
        elif fields[0] == "edge":
            count = int(fields[3])
            points = [tuple(map(float, fields[4 + 2 * i:6 + 2 * i])) for i in range(count)]
            edges.append((fields[1], fields[2], points))
    return boxes, edges


def _bezier(points, steps=20):
    """Points along graphviz's cubic B-spline pieces (control points p0, p1, p2, p3, p4, ...)."""
    for i in range(0, len(points) - 3, 3):
        (x0, y0), (x1, y1), (x2, y2), (x3, y3) = points[i:i + 4]
        for step in range(steps + 1):
            t = step / steps
            a, b, c, d = (1 - t) ** 3, 3 * t * (1 - t) ** 2, 3 * t * t * (1 - t), t ** 3
            yield a * x0 + b * x1 + c * x2 + d * x3, a * y0 + b * y1 + c * y2 + d * y3


@pytest.mark.parametrize("rankdir", ["TB", "LR"])
def test_no_edge_crosses_a_cluster_title(rankdir):
    """The edge into an expanded model once crossed its title, drawn by graphviz as the cluster's label."""
    dot = model_to_dot(zoo(), expand_nested=True, show_shapes=True, rankdir=rankdir)
    boxes, edges = _layout(dot)
    titles = {name: box for name, box in boxes.items() if name.startswith("title%/")}
    assert len(titles) == 3
    into_clusters = [points for tail, head, points in edges if head.endswith(("/x1", "/x2", "/x3"))]
    assert len(into_clusters) == 3
    for _, _, points in edges:
        for x, y in _bezier(points):
            for x0, y0, x1, y1 in titles.values():
                assert not (x0 < x < x1 and y0 < y < y1)


def test_labels_show_what_is_asked():
    dot = model_to_dot(zoo(), show_shapes=True, show_dtype=True, show_layer_activations=True,
                       show_trainable=True, show_params=True, rankdir="LR", dpi=120)
    boxes, _, _, _ = parse_dot(dot.source)
    assert boxes["shared"][1] == ("<b>shared</b> (Dense)<br/>output: (None, 8)<br/>dtype: float32"
                                  "<br/>activation: relu<br/>trainable<br/>params: 72")
    assert boxes["get_item"][1] == "<b>get_item</b> (GetItem)<br/>output: (None, 4)<br/>dtype: float32<br/>params: 0"
    assert "activation" not in boxes["add"][1]
    assert "rankdir=LR" in dot.source and "dpi=120" in dot.source
    bare, _, _, _ = parse_dot(model_to_dot(zoo(), show_layer_names=False).source)
    assert bare["proj"][1] == "<b>Dense</b>"


def test_names_with_colons_stay_whole_boxes():
    x = Input(shape=(2,), name="in:put")
    boxes, edges, _, _ = parse_dot(model_to_dot(Model(x, Dense(1, name="a:b")(x))).source)
    assert set(boxes) == {"in%3Aput", "a%3Ab"}
    assert edges == [("in%3Aput", "a%3Ab")]


def test_dot_file_needs_no_dot_program(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` on PATH
    path = tmp_path / "zoo.dot"
    dot = plot_model(zoo(), to_file=str(path), expand_nested=True)
    assert path.read_text() == dot.source


def test_without_dot_a_format_only_dot_draws_says_so_and_how_to_install_it(tmp_path, monkeypatch):
    """PNG, SVG and PDF are drawn by the built-in layout (tests/graph/test_static_layout.py); a GIF needs dot."""
    monkeypatch.setenv("PATH", str(tmp_path))
    path = tmp_path / "zoo.gif"
    with pytest.raises(RuntimeError) as error:
        plot_model(zoo(), to_file=str(path))
    message = str(error.value)
    assert "plot_model cannot render model 'zoo'" in message
    assert "the graphviz `dot` program was not found on PATH" in message
    assert "without it plot_model draws only .png, .svg, .pdf" in message
    for command in ("apt-get install graphviz", "brew install graphviz", "conda install graphviz"):
        assert command in message
    assert "to_file='model.dot'" in message
    assert not path.exists()


def test_unknown_extension_and_rankdir_are_refused(tmp_path):
    with pytest.raises(ValueError, match=r"'nope' is not a graphviz output format. Use .png, .svg, .pdf"):
        plot_model(zoo(), to_file=str(tmp_path / "zoo.nope"))
    with pytest.raises(ValueError, match=r"rankdir in \('TB', 'LR', 'BT', 'RL'\), received 'up'"):
        model_to_dot(zoo(), rankdir="up")


def test_render_nested_multi_output_model_to_png_and_svg(tmp_path):
    model = zoo()
    png, svg = tmp_path / "zoo.png", tmp_path / "zoo.svg"
    plot_model(model, to_file=str(png), show_shapes=True, expand_nested=True)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert width > 50 and height > 50

    plot_model(model, to_file=str(svg), show_shapes=True, expand_nested=True)
    root = ET.parse(svg).getroot()
    groups = root.iter("{http://www.w3.org/2000/svg}g")
    titles = [g.find("{http://www.w3.org/2000/svg}title").text for g in groups if g.get("class") == "node"]
    assert len(titles) == 17  # 8 top-level layers, 6 inside the three nested models, their 3 titles
    assert {"score", "get_item", "level1/level2/level3/d3"} <= set(titles)


SVG = "{http://www.w3.org/2000/svg}"


def _chain():
    x = Input(shape=(3,), name="x")
    return Model(x, Dense(1, name="out")(Dense(4, name="hidden")(Dense(4, name="first")(x))))


def _drawn_extent(svg_text):
    """(width, height) the SVG declares in pt, its viewBox size, the scale of its
    drawing, and the y range of its last box (``out``) in the viewBox."""
    root = ET.fromstring(svg_text)
    size = tuple(float(root.get(side).removesuffix("pt")) for side in ("width", "height"))
    view = tuple(float(v) for v in root.get("viewBox").split()[2:])
    graph = next(g for g in root.iter(f"{SVG}g") if g.get("class") == "graph")
    scale = float(re.search(r"scale\(([\d.]+)", graph.get("transform")).group(1))
    shift_y = float(re.search(r"translate\([\d.]+ ([\d.]+)\)", graph.get("transform")).group(1))
    box = next(g for g in root.iter(f"{SVG}g") if g.get("class") == "node" and g.find(f"{SVG}title").text == "out")
    ys = [float(y) for y in re.findall(r"-?[\d.]+,(-?[\d.]+)", box.find(f"{SVG}path").get("d"))]
    return size, view, scale, (min(ys) + shift_y, max(ys) + shift_y)


@pytest.mark.parametrize("how", ["notebook", "plot_model svg", "returned graph", "plot_model svg at dpi 200"])
def test_an_svg_is_drawn_whole_wherever_it_is_shown(how, tmp_path):
    """graphviz 2.43 draws an SVG at dpi 96 scaled by 96/72 inside an unscaled viewBox, so a
    browser showed its top-left 75% only (the output layer never appeared)."""
    model = _chain()
    if how == "notebook":
        text = model._repr_mimebundle_()["image/svg+xml"]
    elif how == "returned graph":  # what a notebook shows for plot_model's return value
        text = plot_model(model, to_file=str(tmp_path / "m.png")).pipe(format="svg").decode()
    else:
        path = tmp_path / "m.svg"
        plot_model(model, to_file=str(path), **({"dpi": 200} if how.endswith("200") else {}))
        text = path.read_text()
    size, view, scale, (top, bottom) = _drawn_extent(text)
    assert size == view and scale == 1.0
    assert 0 <= top < bottom <= view[1]  # the last box lies inside the picture


def test_a_real_svg_renderer_draws_the_notebook_svg_as_graphviz_draws_the_png():
    """cairosvg draws the notebook's SVG; it must match graphviz's own PNG of the
    graph at 72 dpi (same size, same picture up to font smoothing), and the rows
    of the last box must hold its outline and text."""
    import cairosvg
    import numpy as np
    from PIL import Image

    model = _chain()
    text = model._repr_mimebundle_()["image/svg+xml"]
    drawn = Image.open(io.BytesIO(cairosvg.svg2png(bytestring=text.encode()))).convert("L")
    reference = Image.open(io.BytesIO(model_to_dot(model, show_shapes=True).pipe(format="png"))).convert("L")
    assert drawn.size == reference.size
    ink, reference_ink = np.asarray(drawn) < 128, np.asarray(reference) < 128
    # The same rows and columns hold ink (the glyphs differ a little: two font renderers).
    assert (ink.any(axis=1) == reference_ink.any(axis=1)).mean() > 0.95
    assert (ink.any(axis=0) == reference_ink.any(axis=0)).mean() > 0.95
    _, view, _, (top, bottom) = _drawn_extent(text)
    assert ink[int(top * drawn.height / view[1]):int(bottom * drawn.height / view[1])].any()
