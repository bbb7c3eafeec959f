"""plot_model without graphviz's dot: the built-in layout (graph/_layout.py), its SVG, PNG and PDF,
static_svg, and node_data colouring on both paths."""

import html
import shutil
import struct
import xml.etree.ElementTree as ET
from collections import Counter

import numpy as np
import pytest

from engine import Input, Model, model_from_json
from graph import model_to_dot, plot_model, to_networkx
from graph._node_data import fill_colour
from graph.plot import static_layout, static_svg
from layers import Dense
from tests.graph.data.make_keras_applications import SIZES, stored_json
from tests.graph.test_plot import parse_dot
from tests.graph.test_plot_big import resnet
from tests.graph.zoo import nested_three_deep, zoo

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def no_dot(tmp_path, monkeypatch):
    """A PATH without graphviz's dot."""
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert shutil.which("dot") is None


def twice():
    """A nested model called twice: at layer level its layers loop back on themselves."""
    inner = nested_three_deep()
    x = Input(shape=(8,), name="x")
    return Model(x, inner(inner(x)), name="twice")


def self_loop():
    """A layer fed its own output: an edge from a box to itself at layer level."""
    x = Input(shape=(4,), name="x")
    square = Dense(4, name="square")
    return Model(x, square(square(x)), name="self_loop")


def two_outputs_nested():
    """A nested model whose outputs are an inner layer read inside too, and its last layer."""
    xi = Input(shape=(4,), name="xi")
    h = Dense(4, name="h")(xi)
    inner = Model(xi, [h, Dense(4, name="o")(h)], name="inner")
    z = Input(shape=(4,), name="z")
    a, b = inner(z)
    return Model(z, [Dense(4, name="after")(a), b], name="two_outputs")


CASES = {
    "zoo": (zoo, {"show_shapes": True}),
    "zoo nested per call": (zoo, {"expand_nested": True, "per_call": True, "show_params": True}),
    "zoo nested LR": (zoo, {"expand_nested": True, "rankdir": "LR", "show_dtype": True}),
    "zoo nested BT": (zoo, {"expand_nested": True, "rankdir": "BT"}),
    "zoo nested RL": (zoo, {"expand_nested": True, "rankdir": "RL", "show_layer_activations": True}),
    "twice by layer": (twice, {"expand_nested": True}),
    "twice by call": (twice, {"expand_nested": True, "per_call": True}),
    "self loop": (self_loop, {}),
    "two outputs nested": (two_outputs_nested, {"expand_nested": True, "show_shapes": True}),
    "resnet collapsed": (lambda: resnet(4), {"collapse_repeats": True, "show_params": True}),
    "resnet range": (lambda: resnet(3), {"layer_range": ("b1_conv1", "b1_out"), "show_shapes": True}),
}


def _key(dot_id):
    """The walk key of a DOT id (graph/_dot.py escapes ``%`` and ``:``)."""
    return dot_id.replace("%3A", ":").replace("%25", "%")


def _svg_edges(svg):
    root = ET.fromstring(svg)
    return Counter((g.get("data-source"), g.get("data-target")) for g in root.iter(f"{SVG}g") if g.get("class") == "edge")


def _svg_labels(svg):
    """Each box's label as graphviz's HTML-like label text (bold runs in <b>, lines joined by <br/>)."""
    labels = {}
    for g in ET.fromstring(svg).iter(f"{SVG}g"):
        if g.get("class") in ("box", "cluster"):
            lines = ["".join(f"<b>{html.escape(run.text)}</b>" if run.get("font-weight") == "bold"
                             else html.escape(run.text) for run in text.iter(f"{SVG}tspan"))
                     for text in g.iter(f"{SVG}text")]
            labels[g.get("data-key")] = "<br/>".join(lines)
    return labels


def _meet(a, b):
    return a.x < b.x + b.width and b.x < a.x + a.width and a.y < b.y + b.height and b.y < a.y + a.height


def _inside(a, b):
    return b.x <= a.x and b.y <= a.y and a.x + a.width <= b.x + b.width and a.y + a.height <= b.y + b.height


def assert_laid_out_cleanly(scene, layout):
    """No two boxes (or cluster titles) overlap; each lies inside the frames of its clusters and
    outside every other frame; frames that do not nest do not overlap; every edge has a line."""
    rects = [(key, rect, scene.boxes[key].cluster) for key, rect in layout.boxes.items()]
    rects += [(f"title of {key}", rect, key) for key, rect in layout.titles.items()]
    for i, (a, rect_a, _) in enumerate(rects):
        for b, rect_b, _ in rects[i + 1:]:
            assert not _meet(rect_a, rect_b), f"{a} overlaps {b}"

    def around(cluster):
        chain = []
        while cluster is not None:
            chain.append(cluster)
            cluster = scene.clusters[cluster].parent
        return chain

    for key, rect, cluster in rects:
        mine = around(cluster)
        for frame_key, frame in layout.clusters.items():
            if frame_key in mine:
                assert _inside(rect, frame), f"{key} sticks out of its cluster {frame_key}"
            else:
                assert not _meet(rect, frame), f"{key} lies in the frame of {frame_key}, which is not its cluster"
    frames = list(layout.clusters.items())
    for i, (a, frame_a) in enumerate(frames):
        for b, frame_b in frames[i + 1:]:
            if a not in around(b) and b not in around(a):
                assert not _meet(frame_a, frame_b), f"clusters {a} and {b} overlap"
    assert len(layout.edges) == len(scene.edges) and all(len(line) >= 2 for line in layout.edges)
    assert 0 <= min(r.x for r in layout.boxes.values()) and max(r.x + r.width for r in layout.boxes.values()) <= \
        layout.width


@pytest.mark.parametrize("case", CASES)
def test_boxes_do_not_overlap_and_clusters_hold_their_own_boxes(case):
    build, options = CASES[case]
    assert_laid_out_cleanly(*static_layout(build(), **options))


@pytest.mark.parametrize("case", CASES)
def test_the_built_in_drawing_has_dots_labels_and_every_edge(case, no_dot):
    build, options = CASES[case]
    model = build()
    boxes, edges, _, others = parse_dot(model_to_dot(model, **options).source)
    svg = static_svg(model, **options)
    labels = _svg_labels(svg)
    assert {_key(dot_id): labels[_key(dot_id)] for dot_id in boxes} == \
        {_key(dot_id): label for dot_id, (_, label) in boxes.items()}
    for prefix in ("from%/", "title%/"):  # the stand-ins for layers left out, and the clusters' titles
        drawn = {_key(dot_id.removeprefix(prefix)): label for dot_id, (_, label) in others.items()
                 if dot_id.startswith(prefix)}
        assert {key: labels[key] for key in drawn} == drawn
    assert _svg_edges(svg) == Counter((_key(source.removeprefix("from%/")), _key(target)) for source, target in edges)


@pytest.mark.parametrize("model, per_call", [(zoo, False), (zoo, True), (twice, False), (twice, True),
                                             (self_loop, False)])
def test_every_edge_of_to_networkx_is_drawn(model, per_call, no_dot):
    model = model()
    level = "node" if per_call else "layer"
    svg = static_svg(model, per_call=per_call, expand_nested=True)
    G = to_networkx(model, level=level, expand_nested=True, parallel_edges=True)
    oracle = Counter((source, target) for source, target in G.edges())
    assert _svg_edges(svg) == oracle


@pytest.mark.parametrize("rankdir, forward", [("TB", lambda a, b: a.y + a.height <= b.y),
                                              ("BT", lambda a, b: b.y + b.height <= a.y),
                                              ("LR", lambda a, b: a.x + a.width <= b.x),
                                              ("RL", lambda a, b: b.x + b.width <= a.x)])
def test_edges_run_in_the_direction_asked_for(rankdir, forward):
    scene, layout = static_layout(zoo(), expand_nested=True, show_shapes=True, rankdir=rankdir)
    for edge in scene.edges:
        assert forward(layout.boxes[edge.source], layout.boxes[edge.target]), (edge, rankdir)


@pytest.mark.parametrize("case", ["zoo nested per call", "resnet collapsed", "two outputs nested"])
def test_plot_model_writes_png_svg_and_pdf_without_dot(case, tmp_path, no_dot):
    build, options = CASES[case]
    model = build()
    scene, layout = static_layout(model, **options)
    for extension in ("png", "svg", "pdf"):
        dot = plot_model(model, to_file=str(tmp_path / f"m.{extension}"), dpi=96, **options)
        assert dot.source == model_to_dot(model, **options).source  # the returned graph is the same as with dot
    png = (tmp_path / "m.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pixels = struct.unpack(">II", png[16:24])
    assert all(abs(drawn - size * 96 / 72) <= 2 for drawn, size in zip(pixels, (layout.width, layout.height)))
    assert _svg_edges((tmp_path / "m.svg").read_text()) == Counter((e.source, e.target) for e in scene.edges)
    pdf = (tmp_path / "m.pdf").read_bytes()
    assert pdf.startswith(b"%PDF-") and f"/MediaBox [0 0 {layout.width:.2f} {layout.height:.2f}]".encode() in pdf


def test_the_png_shows_the_boxes_where_the_layout_puts_them(tmp_path, no_dot):
    """Pixels, not only structure: a box's border is dark, its inside is its fill colour."""
    from PIL import Image

    model = zoo()
    plot_model(model, to_file=str(tmp_path / "zoo.png"), dpi=72, node_data={"proj": 10.0, "score": 0.0})
    scene, layout = static_layout(model, node_data={"proj": 10.0, "score": 0.0})
    image = np.asarray(Image.open(tmp_path / "zoo.png").convert("RGB")).astype(int)
    for key in ("proj", "score", "b"):
        rect = layout.boxes[key]
        fill = scene.boxes[key].fill or "#ffffff"
        inside = image[round(rect.y + 3), round(rect.x + 8)]
        assert tuple(inside) == tuple(int(fill[i:i + 2], 16) for i in (1, 3, 5)), key
        top_border = image[int(rect.y) - 1:int(rect.y) + 2, round(rect.x + 10)]
        assert top_border.max(axis=1).min() < 128, key


def test_other_formats_without_dot_say_what_can_be_drawn(tmp_path, no_dot):
    with pytest.raises(RuntimeError) as error:
        plot_model(zoo(), to_file=str(tmp_path / "zoo.gif"))
    message = str(error.value)
    assert "the graphviz `dot` program was not found on PATH, and without it plot_model draws only .png, .svg, .pdf" \
        in message
    assert "apt-get install graphviz" in message and not (tmp_path / "zoo.gif").exists()


def test_a_bitmap_too_big_is_written_as_svg_with_a_warning(tmp_path, no_dot):
    model = resnet(12)
    with pytest.warns(UserWarning, match=r"past the 32,767 that plot_model draws as PNG .* written as SVG to "):
        plot_model(model, to_file=str(tmp_path / "tall.png"), dpi=600)
    assert not (tmp_path / "tall.png").exists()
    assert _svg_edges((tmp_path / "tall.svg").read_text()) == Counter(to_networkx(model, parallel_edges=True).edges())


def test_text_is_escaped_and_the_svg_is_well_formed(no_dot):
    name = '<b>&"odd\'<b>'
    x = Input(shape=(2,), name="x")
    svg = static_svg(Model(x, Dense(1, name=name)(x)), show_shapes=True)
    assert "<b>&" not in svg
    assert _svg_labels(svg)[name].startswith(f"<b>{html.escape(name)}</b>")


def test_with_dot_the_pictures_are_dots(tmp_path):
    """Where dot is installed nothing changes: plot_model's file and static_svg are dot's drawing."""
    assert shutil.which("dot"), "graphviz's dot is needed here (the test command installs it)"
    model = zoo()
    plot_model(model, to_file=str(tmp_path / "zoo.svg"), show_shapes=True, expand_nested=True)
    drawn = model_to_dot(model, show_shapes=True, expand_nested=True).pipe(format="svg").decode()
    assert (tmp_path / "zoo.svg").read_text() == drawn
    assert static_svg(model, show_shapes=True, expand_nested=True) == drawn
    assert 'class="node"' in drawn and 'class="box"' not in drawn


def test_node_data_colours_boxes_on_one_scale_with_a_legend(no_dot):
    model = zoo()
    boxes, _, _, others = parse_dot(model_to_dot(model, node_data="params").source)
    source = model_to_dot(model, node_data="params").source
    counts = {layer.name: layer.count_params() for layer in model.layers}
    low, high = min(counts.values()), max(counts.values())
    for name, count in counts.items():
        assert f'{name} [label=<{boxes[name][1]}> fillcolor="{fill_colour(count, low, high)}" ' \
               'style="rounded,filled"]' in source
    assert "legend%/" in others or '"legend%/" [label=<<table' in source
    scene, layout = static_layout(model, node_data="params")
    assert {key: box.fill for key, box in scene.boxes.items()} == \
        {name: fill_colour(count, low, high) for name, count in counts.items()}
    assert scene.legend.title == "parameters" and layout.legend is not None
    assert not any(_meet(layout.legend, rect) for rect in layout.boxes.values())
    svg = static_svg(model, node_data="params")
    legend = next(g for g in ET.fromstring(svg).iter(f"{SVG}g") if g.get("class") == "legend")
    assert [r.get("fill") for r in legend.iter(f"{SVG}rect")][1:] == [colour for _, colour in scene.legend.stops]


def test_node_data_of_the_users_colours_only_the_boxes_it_names(no_dot):
    scene, _ = static_layout(zoo(), node_data={"proj": 3.0, "score": 30.0})
    assert {key for key, box in scene.boxes.items() if box.fill} == {"proj", "score"}
    assert scene.boxes["score"].fill == fill_colour(30, 3, 30) != scene.boxes["proj"].fill
    with pytest.raises(ValueError, match="'projj'.*The closest are 'proj'"):
        static_svg(zoo(), node_data={"projj": 1})


def test_static_svg_takes_no_dpi():
    with pytest.raises(TypeError, match="dpi"):
        static_svg(zoo(), dpi=96)


@pytest.mark.parametrize("name", list(SIZES))
def test_the_applications_are_drawn_without_dot(name, tmp_path, no_dot):
    """The 14 keras.applications architectures, read from Keras' stored configs."""
    model = model_from_json(stored_json(name))
    options = {"show_shapes": True}
    scene, layout = static_layout(model, **options)
    assert_laid_out_cleanly(scene, layout)
    plot_model(model, to_file=str(tmp_path / f"{name}.svg"), **options)
    assert _svg_edges((tmp_path / f"{name}.svg").read_text()) == Counter(to_networkx(model, parallel_edges=True).edges())
    plot_model(model, to_file=str(tmp_path / f"{name}.png"), dpi=24, **options)
    assert (tmp_path / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
