"""One qualified name for every layer, call and tensor, the same in every view: summary,
to_networkx, plot_model's scene, the HTML viewer's data, page and search, and ``nodeweave
inspect``; and every name a view prints resolves with get_layer / get_node / get_tensor."""

import networkx as nx
import pytest

from engine import Input, Model, Sequential
from engine.network.qualified_names import layer_paths
from graph import summary_text, to_networkx
from graph._scene import build_scene
from graph._walk import walk
from graph.cli import main
from graph.html_view import view_data
from layers import Dense, add
from tests.graph.test_html_view import browser, open_page  # noqa: F401  (the browser fixture)
from tests.graph.zoo import zoo


def twin_towers():
    """Two nested towers holding layers of the same names, one a Sequential holding a
    functional model (three deep), and a shared layer called twice."""
    def tower(name):
        x = Input(shape=(4,), name="x")
        return Model(x, Dense(4, name="dense")(Dense(4, name="hidden")(x)), name=name)

    right = Sequential([Input(shape=(4,), name="right_in"), tower("core"), Dense(4, name="dense")], name="right")
    a = Input(shape=(4,), name="a")
    shared = Dense(4, name="shared")
    return Model(a, add([tower("left")(shared(a)), right(shared(a))], name="sum"), name="towers")


MODELS = {"zoo": zoo, "twin_towers": twin_towers}


def _plain(name):
    """A row's or box's name without its call index: ``shared[1]`` is layer ``shared``."""
    return name.rsplit("[", 1)[0] if name.endswith("]") else name


def _summary_names(model):
    lines = summary_text(model, expand_nested=True, line_length=250).splitlines()
    return [line.split("│")[1].strip().rsplit(" (", 1)[0] for line in lines if line.startswith("│")]


@pytest.mark.parametrize("name", MODELS)
def test_summary_networkx_scene_and_viewer_name_layers_alike_and_the_names_resolve(name):
    model = MODELS[name]()
    paths = layer_paths(model)
    summary_names = list(dict.fromkeys(_plain(row) for row in _summary_names(model)))
    assert summary_names == list(paths)
    assert [layer["key"] for layer in view_data(model)["layers"]] == list(paths)
    drawn = [path for path, layer in paths.items() if not isinstance(layer, Model)]  # expanded models are frames
    G = to_networkx(model, expand_nested=True)
    assert list(G) == drawn and [G.nodes[key]["name"] for key in G] == drawn
    assert list(build_scene(walk(model, expand_nested=True)).boxes) == drawn
    for path in paths:
        assert model.get_layer(path) is paths[path]


@pytest.mark.parametrize("name", MODELS)
def test_every_call_and_tensor_a_view_names_is_the_real_object(name):
    model = MODELS[name]()
    graph = walk(model, expand_nested=True)
    calls = to_networkx(model, level="node", expand_nested=True)
    for call in graph.calls:
        if not call.expanded:
            assert model.get_node(call.node_key) is call.node  # the views' keys, "level1[0]/level2[0]/d2[0]"
        assert model.get_node(f"{call.layer_key}[{call.node_index}]") is call.node  # the contract's names
    assert set(calls) == {call.node_key for call in graph.calls if not call.expanded}
    per_tensor = to_networkx(model, expand_nested=True, parallel_edges=True)
    for source, target, data in per_tensor.edges(data=True):
        tensor = model.get_tensor(data["tensor"])
        assert tensor._keras_history.layer is model.get_layer(source)
    G = to_networkx(model, expand_nested=True)
    for source, target, data in G.edges(data=True):
        assert data["count"] == len(data["tensors"].split("; ")) == per_tensor.number_of_edges(source, target)


def test_the_same_layer_names_in_two_nested_models_stay_apart_everywhere():
    model = twin_towers()
    G = to_networkx(model, expand_nested=True)
    assert {"left/dense", "right/core/dense", "right/dense"} <= set(G)
    assert nx.shortest_path(G, "a", "sum") == ["a", "shared", "left/x", "left/hidden", "left/dense", "sum"]
    assert model.get_layer("left/dense") is not model.get_layer("right/core/dense")
    assert G.edges["right/core/dense", "right/dense"]["tensors"] == "right/core/dense[0][0]"
    rows = _summary_names(model)
    assert rows.count("right/core/dense") == 1 and rows.count("left/dense") == 1
    assert "shared[0]" in rows and "shared[1]" in rows


def test_plot_names_the_first_box_of_a_shared_layer_by_its_path():
    x = Input(shape=(4,), name="x")
    dense = Dense(4, name="dense")
    inner = Model(x, dense(x), name="inner")
    z = Input(shape=(4,), name="z")
    model = Model(z, [inner(z), dense(z)], name="outer")  # drawn inside inner first, then outside it
    scene = build_scene(walk(model, expand_nested=True), show_params=True)
    assert scene.boxes["inner/dense"].label[-1] == (("params: 20", False),)
    assert scene.boxes["dense"].label[-1] == (("params: shared with inner/dense", False),)


def test_inspect_lists_and_takes_paths(tmp_path, capsys):
    model = twin_towers()
    path = tmp_path / "towers.nw"
    model.save(path)
    main(["inspect", str(path)])
    out = capsys.readouterr().out.splitlines()
    assert [line.rsplit(" (", 1)[0] for line in out if not line.startswith("  ")] == list(layer_paths(model))
    main(["inspect", str(path), "--layer", "right/core/dense"])
    assert capsys.readouterr().out.splitlines() == [
        "right/core/dense (Dense)", "  call 0: inbound right/core/hidden[0][0]", "  outbound: -"]
    main(["inspect", str(path), "--layer", "shared"])
    assert capsys.readouterr().out.splitlines() == [
        "shared (Dense)", "  call 0: inbound a[0][0]", "  call 1: inbound a[0][0]", "  outbound: left, right"]
    with pytest.raises(SystemExit, match=r"has no layer 'core/dense'\. Did you mean 'right/core/dense'"):
        main(["inspect", str(path), "--layer", "core/dense"])


def test_the_viewer_finds_a_layer_by_its_path_and_its_card_shows_it(browser, tmp_path):  # noqa: F811
    page = open_page(browser, tmp_path, twin_towers())
    search = page.driver.find_element("css selector", ".nwv-search")
    search.send_keys("core/dense")
    search.send_keys("\n")
    page.wait("return document.querySelector('.nwv-current') !== null")
    assert page.run("return document.querySelector('.nwv-count').textContent") == "1 of 1"
    assert page.run("return document.querySelector('.nwv-current').dataset.key") == "right/core/dense"
    assert "path\tright/core/dense" in page.card()
