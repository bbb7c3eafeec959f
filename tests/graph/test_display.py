"""Notebook displays of Models, Layers, Nodes and KerasTensors (graph/display.py)."""

import os
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import nbformat
import numpy as np
from nbclient import NotebookClient

from engine import Input, KerasTensor, Model
from engine.network import naming
from graph import summary_html, summary_text
from graph.display import MAX_PICTURE_POINTS
from graph.html_view import to_html
from layers import Concatenate, Dense
from tests.graph.zoo import nested_three_deep

SVG = "{http://www.w3.org/2000/svg}"


def _graph():
    """a -> proj -> shared[0] and b -> shared[1], both into cat; ``unrelated`` reads b."""
    a, b = Input(shape=(16,), name="a"), Input(shape=(8,), name="b")
    shared = Dense(8, name="shared")
    from_a, from_b = shared(Dense(8, name="proj")(a)), shared(b)
    cat = Concatenate(name="cat")([from_a, from_b])
    unrelated = Dense(3, name="unrelated")(b)
    return {"a": a, "b": b, "shared": shared, "from_b": from_b, "cat": cat, "unrelated": unrelated}


def _rows(html_text, caption):
    """The cell texts of the table with ``caption``, header row first."""
    root = ET.fromstring(html_text)
    table = next(t for t in root.iter("table") if t.findtext("caption") == caption)
    return [[cell.text for cell in row] for row in table.iter("tr")]


def _boxes(svg):
    """The boxes of an SVG drawn by dot (their titles) or by the built-in layout (their data-key)."""
    root = ET.fromstring(svg)
    return sorted(g.findtext(f"{SVG}title") if g.get("class") == "node" else g.get("data-key")
                  for g in root.iter(f"{SVG}g") if g.get("class") in ("node", "box"))


def _graph_state(layers):
    return [(list(layer.inbound_nodes), list(layer.outbound_nodes)) for layer in layers], dict(naming._counts)


def test_a_layer_shows_its_calls_and_weights():
    g = _graph()
    bundle = g["shared"]._repr_mimebundle_()
    assert bundle["text/plain"] == repr(g["shared"])
    root = ET.fromstring(bundle["text/html"])
    assert "".join(root.find("p").itertext()) == "shared (Dense): built, 72 params"
    assert _rows(bundle["text/html"], "Calls") == [
        ["Call", "Inputs", "Shapes", "Outputs"],
        ["shared[0]", "proj[0][0]", "(None, 8) → (None, 8)", "shared[0][0]"],
        ["shared[1]", "b[0][0]", "(None, 8) → (None, 8)", "shared[1][0]"],
    ]
    assert _rows(bundle["text/html"], "Weights") == [
        ["Path", "Shape", "Dtype", "Trainable"],
        ["shared/kernel", "(8, 8)", "float32", "Y"],
        ["shared/bias", "(8,)", "float32", "Y"],
    ]
    g["shared"].trainable = False
    assert [row[3] for row in _rows(g["shared"]._repr_mimebundle_()["text/html"], "Weights")[1:]] == ["N", "N"]


def test_an_unbuilt_layer_says_so():
    bundle = Dense(2, name="fresh")._repr_mimebundle_()
    root = ET.fromstring(bundle["text/html"])
    assert [" ".join(p.itertext()) for p in root.iter("p")] == [
        "fresh  (Dense): not built", "Calls : not called on symbolic tensors", "Weights : no weights"]


def test_a_node_shows_its_inbound_layers_and_indices():
    g = _graph()
    node = g["cat"]._keras_history.layer.inbound_nodes[0]
    bundle = node._repr_mimebundle_()
    assert bundle["text/plain"] == repr(node)
    assert "".join(ET.fromstring(bundle["text/html"]).find("p").itertext()) == "Node cat[0] (Concatenate): a call of layer cat"
    assert _rows(bundle["text/html"], "Inputs") == [
        ["Inbound layer", "Node index", "Tensor index", "Tensor", "Shape"],
        ["shared", "0", "0", "shared[0][0]", "(None, 8)"],
        ["shared", "1", "0", "shared[1][0]", "(None, 8)"],
    ]
    assert _rows(bundle["text/html"], "Outputs") == [["Tensor", "Shape", "Dtype"], ["cat[0][0]", "(None, 16)", "float32"]]
    input_node = g["a"]._keras_history.layer.inbound_nodes[0]
    assert "Inputs: none: an input node" in "".join(ET.fromstring(input_node._repr_mimebundle_()["text/html"]).itertext())


def test_a_tensor_draws_exactly_its_ancestry_and_leaves_the_graph_unchanged():
    g = _graph()
    layers = [t._keras_history.layer for t in (g["a"], g["b"], g["cat"], g["unrelated"])] + [g["shared"]]
    before = _graph_state(layers)
    bundle = g["cat"]._repr_mimebundle_()
    assert _graph_state(layers) == before
    assert _boxes(bundle["image/svg+xml"]) == ["a[0]", "b[0]", "cat[0]", "proj[0]", "shared[0]", "shared[1]"]
    assert bundle["text/plain"] == f"{g['cat']!r}\nmade by cat[0] (Concatenate), output 0"
    assert _boxes(g["from_b"]._repr_mimebundle_()["image/svg+xml"]) == ["b[0]", "shared[1]"]
    assert _boxes(g["a"]._repr_mimebundle_()["image/svg+xml"]) == ["a[0]"]


def test_a_tensor_from_a_nested_model_shows_the_call_of_the_model():
    model = nested_three_deep()
    x = Input(shape=(8,), name="outer_x")
    assert _boxes(model(x)._repr_mimebundle_()["image/svg+xml"]) == ["level1[0]", "outer_x[0]"]


def test_a_tensor_made_directly_shows_text_only():
    tensor = KerasTensor((None, 3), name="loose")
    assert tensor._repr_mimebundle_() == {"text/plain": f"{tensor!r}\nmade directly: no layer call made it"}


def test_without_dot_tensors_and_models_are_drawn_by_the_built_in_layout(monkeypatch):
    g = _graph()
    with_dot = _boxes(g["cat"]._repr_mimebundle_()["image/svg+xml"])
    model_with_dot = _boxes(Model(g["b"], g["unrelated"])._repr_mimebundle_()["image/svg+xml"])
    monkeypatch.setenv("PATH", "/nonexistent")
    assert _boxes(g["cat"]._repr_mimebundle_()["image/svg+xml"]) == with_dot
    bundle = Model(g["b"], g["unrelated"])._repr_mimebundle_()
    assert set(bundle) == {"text/html", "image/svg+xml", "text/plain"}
    assert _boxes(bundle["image/svg+xml"]) == model_with_dot == ["b", "unrelated"]


def test_a_big_model_shows_a_bounded_picture_and_a_view_that_starts_closed():
    """MobileNetV2 drawn whole by dot is about 15,000 pixels tall."""
    from engine import model_from_json
    from graph.html_view import BUDGET, view_data
    from tests.graph.data.make_keras_applications import stored_json

    model = model_from_json(stored_json("MobileNetV2"))
    bundle = model._repr_mimebundle_()
    size = re.search(r'<svg[^>]*?\swidth="([\d.]+)pt" height="([\d.]+)pt"', bundle["image/svg+xml"])
    assert max(float(size.group(1)), float(size.group(2))) <= MAX_PICTURE_POINTS
    assert 'style="height:600px"' in bundle["text/html"]
    for level in view_data(model)["levels"].values():
        items, shown, groups = level["items"], 0, [0]
        while groups:  # count what the open groups show: boxes and closed groups
            children = items[groups.pop()]["children"]
            shown += len(children)
            groups.extend(c for c in children if isinstance(items[c], dict) and items[c]["open"])
        assert 0 < shown <= BUDGET


def test_user_strings_are_escaped():
    name = '<script>alert("x")&'
    layer = Dense(2, name=name)
    y = layer(Input(shape=(3,), name="x"))
    for bundle in (layer._repr_mimebundle_(), layer.inbound_nodes[0]._repr_mimebundle_()):
        assert "<script>" not in bundle["text/html"]
        assert name in "".join(ET.fromstring(bundle["text/html"]).itertext())
    assert "<script>" not in y._repr_mimebundle_()["image/svg+xml"]
    assert _boxes(y._repr_mimebundle_()["image/svg+xml"]) == [f"{name}[0]", "x[0]"]


def test_summary_html_holds_the_summary_rows():
    g = _graph()
    model = Model([g["a"], g["b"]], g["cat"], name="<m>")
    text = summary_html(model)
    root = ET.fromstring(text)
    rows = [[cell.text for cell in row] for row in root.iter("tr")]
    lines = summary_text(model).splitlines()
    assert rows[0] == ["Layer (type)", "Output Shape", "Param #", "Connected to"]
    assert rows[1:] == [
        ["a (InputLayer)", "(None, 16)", "0", "-"],
        ["b (InputLayer)", "(None, 8)", "0", "-"],
        ["proj (Dense)", "(None, 8)", "136", "a[0][0]"],
        ["shared[0] (Dense)", "(None, 8)", "72", "proj[0][0]"],
        ["shared[1] (Dense)", "(None, 8)", "(shared)", "b[0][0]"],
        ["cat (Concatenate)", "(None, 16)", "0", "shared[0][0], shared[1][0]"],
    ]
    assert [p.text for p in root.iter("p")][1:] == [line.strip() for line in lines[-3:]]
    assert "&lt;m&gt;" in text


def test_a_model_shows_its_interactive_view_with_its_picture_beside_it():
    g = _graph()
    model = Model(g["b"], g["unrelated"], name="m")
    bundle = model._repr_mimebundle_()
    assert set(bundle) == {"text/html", "image/svg+xml", "text/plain"}
    assert bundle["text/html"] == to_html(model)
    assert _boxes(bundle["image/svg+xml"]) == ["b", "unrelated"]
    assert bundle["text/plain"] == summary_text(model)


def test_a_called_subclassed_model_shows_its_summary_text():
    """It is built but has no graph of calls to draw (model_to_dot would raise)."""

    class Tiny(Model):
        def __init__(self):
            super().__init__(name="tiny")
            self.dense = Dense(2)

        def call(self, x):
            return self.dense(x)

    model = Tiny()
    model(np.ones((1, 3)))
    assert model._repr_mimebundle_() == {"text/plain": summary_text(model)}


NOTEBOOK_CELLS = [
    """from engine import Input, Model
from layers import Dense
x = Input(shape=(3,), name="x")
dense = Dense(2, name="d")
y = dense(x)
model = Model(x, y, name="m")""",
    "model", "dense", "dense.inbound_nodes[0]", "y",
]


def test_a_notebook_shows_each_object_as_its_rich_type(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in NOTEBOOK_CELLS])
    NotebookClient(notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    shown = [sorted(cell.outputs[0].data) for cell in notebook.cells[1:]]
    assert shown == [["image/svg+xml", "text/html", "text/plain"], ["text/html", "text/plain"],
                     ["text/html", "text/plain"], ["image/svg+xml", "text/plain"]]
    assert "d[0]" in notebook.cells[4].outputs[0].data["image/svg+xml"]
