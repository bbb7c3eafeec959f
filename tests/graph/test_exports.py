"""to_mermaid and to_model_explorer: the boxes and edges of to_networkx, read back by the real
Mermaid parser and loaded into Model Explorer's published dataclasses.

Both oracles are fetched by the tests themselves, once, into pytest's cache folder
(``.pytest_cache``): Mermaid and jsdom from the npm registry (run on the machine's Node.js), and
``model_explorer/graph_builder.py`` from the ``ai-edge-model-explorer`` wheel on PyPI. That module
holds only dataclasses; the package around it is not installed, as it brings a web server and a
100 MB converter for other formats, and has no wheel for some platforms.
"""

import dataclasses
import importlib.util
import json
import shutil
import subprocess
import sys
import warnings
import zipfile
from collections import Counter

import dacite
import pytest

from engine import Input, Model
from graph import profile, to_networkx
from graph.mermaid import MAX_TEXT_SIZE, to_mermaid
from graph.model_explorer import save_model_explorer, to_model_explorer
from layers import LSTM, Dense, add
from tests.graph.zoo import nested_three_deep, zoo

MERMAID_PACKAGES = {"mermaid": "11.17.2", "jsdom": "29.1.1"}
MODEL_EXPLORER = ("ai-edge-model-explorer", "0.1.34")

# Reads Mermaid texts (a JSON list on stdin) with Mermaid's own parser and prints, per text, what the
# flowchart holds: boxes by id with the text each shows (entity codes decoded, read as HTML, a <br> as a
# newline), edges, subgraphs with their members, the direction; or the parse error.
PARSE_SCRIPT = r"""
import { JSDOM } from "jsdom";
const { window } = new JSDOM("<!DOCTYPE html><body></body>");
globalThis.window = window;
globalThis.document = window.document;
const { default: mermaid } = await import("mermaid");
const shown = (text) => {
  const element = document.createElement("div");
  element.innerHTML = text.replace(/ﬂ°°/g, "&#").replace(/ﬂ°/g, "&").replace(/¶ß/g, ";").replace(/<br\s*\/?>/gi, "\n");
  return element.textContent;
};
let input = "";
for await (const chunk of process.stdin) input += chunk;
const results = [];
for (const text of JSON.parse(input)) {
  try {
    await mermaid.parse(text);
    const db = (await mermaid.mermaidAPI.getDiagramFromText(text)).db;
    results.push({
      boxes: Object.fromEntries([...db.getVertices().values()].map((vertex) => [vertex.id, shown(vertex.text)])),
      edges: db.getEdges().map((edge) => [edge.start, edge.end]),
      subgraphs: db.getSubGraphs().map((subgraph) => [subgraph.id, shown(subgraph.title), subgraph.nodes]),
      direction: db.getDirection(),
    });
  } catch (error) {
    results.push({ error: String(error.message ?? error) });
  }
}
process.stdout.write(JSON.stringify(results));
"""


@pytest.fixture(scope="session")
def mermaid_parse(request):
    """A function from Mermaid texts to what Mermaid's parser reads in each (see PARSE_SCRIPT)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.fail("The Mermaid checks run Mermaid's own parser on Node.js, which is not on PATH: install "
                    "Node.js 20 or later and npm (`apt-get install nodejs npm`).")
    folder = request.config.cache.mkdir("mermaid-parser")
    if _npm_versions(folder) != MERMAID_PACKAGES:
        (folder / "package.json").write_text(json.dumps({"private": True, "dependencies": MERMAID_PACKAGES}))
        install = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--loglevel=error"], check=False, cwd=folder,
                                 capture_output=True, text=True, timeout=600)
        assert install.returncode == 0, f"npm install of {MERMAID_PACKAGES} failed:\n{install.stderr}"
    (folder / "parse.mjs").write_text(PARSE_SCRIPT, encoding="utf-8")

    def parse(texts):
        run = subprocess.run([node, "parse.mjs"], check=False, cwd=folder, input=json.dumps(texts), capture_output=True,
                             text=True, timeout=300)
        assert run.returncode == 0, run.stderr
        return json.loads(run.stdout)

    return parse


def _npm_versions(folder):
    versions = {}
    for package in MERMAID_PACKAGES:
        manifest = folder / "node_modules" / package / "package.json"
        if manifest.exists():
            versions[package] = json.loads(manifest.read_text())["version"]
    return versions


@pytest.fixture(scope="session")
def graph_builder(request):
    """``model_explorer.graph_builder`` as published on PyPI, read alone from its wheel."""
    name, version = MODEL_EXPLORER
    folder = request.config.cache.mkdir("model-explorer")
    module_file = folder / f"graph_builder-{version}.py"
    if not module_file.exists():
        download = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                                   "--dest", str(folder), f"{name}=={version}"],
                                  check=False, capture_output=True, text=True, timeout=300)
        assert download.returncode == 0, f"pip download {name}=={version} failed:\n{download.stderr}"
        wheel = next(folder.glob(f"{name.replace('-', '_')}-{version}-*.whl"))
        with zipfile.ZipFile(wheel) as archive:
            module_file.write_bytes(archive.read("model_explorer/graph_builder.py"))
    spec = importlib.util.spec_from_file_location("published_model_explorer_graph_builder", module_file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # where its dataclasses' string annotations are resolved
    spec.loader.exec_module(module)
    return module


def nested_twice_with_states():
    """A nested model called twice (node level expands it twice), a nested model of two inputs, a
    shared layer, and an LSTM's three outputs read by one Add (tensor indices 0, 1, 2)."""
    inner_x = Input(shape=(4,), name="inner_x")
    block = Model(inner_x, Dense(4, activation="relu", name="inner_dense")(inner_x), name="block")
    left, right = Input(shape=(4,), name="left"), Input(shape=(4,), name="right")
    pair = Model([left, right], add([left, right], name="pair_add"), name="pair")
    sequence = Input(shape=(5, 3), name="sequence")
    output, state_h, state_c = LSTM(4, return_state=True, name="lstm")(sequence)
    summed = add([output, state_h, state_c])
    shared = Dense(4, name="shared")
    return Model(sequence, pair([shared(block(block(summed))), shared(summed)]), name="twice")


def residual_stack(blocks=3):
    """A Dense, then ``blocks`` identical residual blocks of three calls, then a head."""
    x = Input(shape=(8,), name="x")
    h = Dense(8, name="stem")(x)
    for index in range(blocks):
        branch = Dense(8, activation="relu", name=f"block{index}_a")(h)
        h = add([h, Dense(8, name=f"block{index}_b")(branch)], name=f"block{index}_add")
    return Model(x, Dense(2, name="head")(h), name="residual")


MODELS = {"zoo": zoo, "nested_three_deep": nested_three_deep, "nested_twice_with_states": nested_twice_with_states,
          "residual_stack": residual_stack}


def _degrees(boxes, edges):
    """The sorted (in, out) degree of every box: the graph's shape, whatever the boxes are called."""
    into, out = Counter(target for _, target in edges), Counter(source for source, _ in edges)
    return sorted((into[box], out[box]) for box in boxes)


@pytest.mark.slow
def test_mermaid_has_the_boxes_and_edges_of_to_networkx(mermaid_parse):
    cases = [(name, per_call, expand_nested) for name in MODELS for per_call in (False, True)
             for expand_nested in (False, True)]
    texts, graphs = [], []
    for name, per_call, expand_nested in cases:
        model = MODELS[name]()
        texts.append(to_mermaid(model, show_shapes=True, show_params=True, per_call=per_call,
                                expand_nested=expand_nested))
        graphs.append(to_networkx(model, level="node" if per_call else "layer", expand_nested=expand_nested,
                                  parallel_edges=True))
    for case, parsed, G in zip(cases, mermaid_parse(texts), graphs):
        assert "error" not in parsed, (case, parsed)
        assert len(parsed["boxes"]) == G.number_of_nodes(), case
        assert len(parsed["edges"]) == G.number_of_edges(), case
        assert _degrees(parsed["boxes"], parsed["edges"]) == _degrees(G.nodes, G.edges()), case


@pytest.mark.slow
def test_mermaid_labels_show_names_as_they_are(mermaid_parse):
    names = ['quote"d', "#quot;", "<b>bold<br>", "end", "style:<x>;", "100%", "a&amp;b", "naïve ×2", "it's"]
    x = Input(shape=(2,), name="graph")
    h = x
    for name in names:
        h = Dense(2, name=name)(h)
    model = Model(x, h, name="odd_names")
    parsed, = mermaid_parse([to_mermaid(model, show_shapes=True)])
    assert "error" not in parsed, parsed
    expected = {f"{name} ({type(layer).__name__})\noutput: {layer.output.shape}"
                for name, layer in ((layer.name, layer) for layer in model.layers)}
    assert set(parsed["boxes"].values()) == expected
    assert all(box.isidentifier() for box in parsed["boxes"])


@pytest.mark.slow
def test_mermaid_subgraphs_hold_the_nested_models_and_the_runs(mermaid_parse):
    nested = to_mermaid(zoo(), expand_nested=True)
    limited = to_mermaid(zoo(), expand_nested=True, max_depth=1, rankdir="LR")
    blocks = 3
    model = residual_stack(blocks)
    collapsed = to_mermaid(model, collapse_repeats=True)
    nested, limited, collapsed = mermaid_parse([nested, limited, collapsed])

    def members(parsed, title):
        subgraph = next(s for s in parsed["subgraphs"] if s[1].startswith(title))
        return {parsed["boxes"].get(member, member).split(" ")[0] for member in subgraph[2]}

    assert sorted(title for _, title, _ in nested["subgraphs"]) == ["level1 (Functional)", "level2 (Functional)",
                                                                      "level3 (Functional)"]
    assert members(nested, "level3") == {"x3", "d3"}
    assert "level2" not in {title.split(" ")[0] for _, title, _ in limited["subgraphs"]}
    assert "level2" in {text.split(" ")[0] for text in limited["boxes"].values()}
    assert limited["direction"] == "LR" and nested["direction"] == "TB"
    run, = collapsed["subgraphs"]
    assert run[1] == f"×{blocks}  block0_a … block{blocks - 1}_add"
    assert members(collapsed, f"×{blocks}") == {"block0_a", "block0_b", "block0_add"}
    calls_per_block = 3
    assert len(collapsed["boxes"]) == len(model.layers) - (blocks - 1) * calls_per_block


def test_mermaid_options_are_checked():
    model = zoo()
    with pytest.raises(ValueError, match=r"to_mermaid expects rankdir in \('TB', 'LR', 'BT', 'RL'\), received 'UP'"):
        to_mermaid(model, rankdir="UP")
    with pytest.raises(ValueError, match="expand_nested is False. Pass expand_nested=True as well"):
        to_mermaid(model, max_depth=1)


def test_mermaid_warns_past_what_mermaid_draws():
    x = h = Input(shape=(2,), name="x")
    for _ in range(100):
        h = Dense(2)(h)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        text = to_mermaid(Model(x, h), show_shapes=True)
    # Names only grow longer (dense_99, dense_100), so as many layers again as fit make the text too long.
    for _ in range(MAX_TEXT_SIZE * 101 // len(text)):
        h = Dense(2)(h)
    with pytest.warns(UserWarning, match=r"Mermaid flowchart of model 'long' is [\d,]+ characters long, and "
                                         r"Mermaid draws at most 50,000 .* collapse_repeats=True"):
        to_mermaid(Model(x, h, name="long"), show_shapes=True)


@pytest.mark.parametrize("name", MODELS)
def test_model_explorer_nodes_and_edges_are_to_networkx_s(name):
    model = MODELS[name]()
    nodes = to_model_explorer(model)["graphs"][0]["nodes"]
    G = to_networkx(model, level="node", expand_nested=True, parallel_edges=True)
    assert [node["id"] for node in nodes] == list(G.nodes)
    edges = Counter((edge["sourceNodeId"], node["id"], int(edge["sourceNodeOutputId"]))
                    for node in nodes for edge in node["incomingEdges"])
    assert edges == Counter((source, target, data["tensor_index"]) for source, target, data in G.edges(data=True))
    for node in nodes:
        inputs = sorted(int(edge["targetNodeInputId"]) for edge in node["incomingEdges"])
        assert inputs == list(range(len(inputs))), node["id"]
        attrs = {item["key"]: item["value"] for item in node["attrs"]}
        assert attrs["name"] == G.nodes[node["id"]]["name"] and node["label"] == G.nodes[node["id"]]["class_name"]
        assert attrs["output_shapes"] == G.nodes[node["id"]]["output_shapes"]
        shapes = [{item["key"]: item["value"] for item in output["attrs"]}["shape"] for output in node["outputsMetadata"]]
        for _, _, data in G.out_edges(node["id"], data=True):
            assert shapes[data["tensor_index"]] == data["shape"]


@pytest.mark.slow
@pytest.mark.parametrize("name", MODELS)
def test_model_explorer_json_loads_into_the_published_dataclasses(name, graph_builder):
    collection = json.loads(json.dumps(to_model_explorer(MODELS[name]())))
    loaded = dacite.from_dict(graph_builder.GraphCollection, collection, config=dacite.Config(strict=True))
    assert _as_written(dataclasses.asdict(loaded), collection) == collection
    with pytest.raises(dacite.UnexpectedDataError):  # the check is strict: a field it does not know fails
        broken = json.loads(json.dumps(collection))
        broken["graphs"][0]["nodes"][0]["incoming_edges"] = []
        dacite.from_dict(graph_builder.GraphCollection, broken, config=dacite.Config(strict=True))


def _as_written(loaded, written):
    """``loaded`` without the fields that ``written`` leaves to their defaults."""
    if isinstance(written, dict):
        return {key: _as_written(loaded[key], value) for key, value in written.items()}
    if isinstance(written, list):
        return [_as_written(item, value) for item, value in zip(loaded, written)]
    return loaded


def test_model_explorer_namespaces_are_the_nested_models_and_the_runs():
    model = zoo()
    nodes = to_model_explorer(model)["graphs"][0]["nodes"]
    G = to_networkx(model, level="node", expand_nested=True)
    for node in nodes:  # a call's namespace is the path of the nested models around it
        assert node["namespace"] == G.nodes[node["id"]]["name"].rpartition("/")[0]
    twice = {node["id"]: node["namespace"] for node in to_model_explorer(nested_twice_with_states())["graphs"][0]["nodes"]}
    assert twice["block[0]/inner_dense[0]"] == "block[0]" and twice["block[1]/inner_dense[0]"] == "block[1]"
    blocks = 3
    collection = to_model_explorer(residual_stack(blocks))
    graph = collection["graphs"][0]
    run = f"block0_a_x{blocks}"
    in_run = [node["id"] for node in graph["nodes"] if node["namespace"] == run]
    assert in_run == [f"block{index}_{part}[0]" for index in range(blocks) for part in ("a", "b", "add")]
    assert graph["groupNodeAttributes"][run]["blocks"] == str(blocks)
    flat = to_model_explorer(residual_stack(blocks), collapse_repeats=False)["graphs"][0]
    assert {node["namespace"] for node in flat["nodes"]} == {""} and run not in flat["groupNodeAttributes"]


def test_model_explorer_attributes_count_params_once_and_flops_as_profile():
    model = nested_twice_with_states()
    nodes = to_model_explorer(model)["graphs"][0]["nodes"]
    attrs = {node["id"]: {item["key"]: item["value"] for item in node["attrs"]} for node in nodes}
    shared = model.get_layer("shared")
    assert attrs["shared[0]"]["params"] == str(shared.count_params())
    assert attrs["shared[1]"]["params"] == "shared with shared[0]"
    assert attrs["lstm[0]"]["units"] == "4" and attrs["lstm[0]"]["return_state"] == "True"
    assert "name" not in {key for key in attrs["lstm[0]"] if key != "name"}
    for row in profile(model).rows:
        assert attrs[row["node"]]["flops"] == str(row["flops"])
    lstm = next(node for node in nodes if node["id"] == "lstm[0]")
    assert [item["attrs"] for item in lstm["outputsMetadata"]] == [
        [{"key": "shape", "value": str(tensor.shape)}, {"key": "dtype", "value": tensor.dtype}]
        for tensor in model.get_layer("lstm").output]


def test_save_model_explorer_writes_the_collection(tmp_path):
    model = zoo()
    path = tmp_path / "zoo.json"
    save_model_explorer(model, path)
    assert json.loads(path.read_text(encoding="utf-8")) == to_model_explorer(model)


def test_model_explorer_splits_big_groups_into_sections_of_consecutive_calls():
    x = h = Input(shape=(2,), name="x")
    calls = 250  # past 2 sections of Model Explorer's largest group here, 100
    for index in range(calls - 1):
        h = Dense(2, name=f"d{index}")(h) if index % 2 else Dense(2, activation="relu", name=f"d{index}")(h)
    graph = to_model_explorer(Model(x, h), collapse_repeats=False)["graphs"][0]
    namespaces = [node["namespace"] for node in graph["nodes"]]
    sections = list(dict.fromkeys(namespaces))
    assert len(sections) == -(-calls // 100) and all(name.endswith(f"_of_{len(sections)}") for name in sections)
    assert all(Counter(namespaces)[name] <= 100 for name in sections)
    assert namespaces == sorted(namespaces, key=sections.index), "a section holds consecutive calls"
    first, last = graph["nodes"][0]["id"], graph["nodes"][namespaces.index(sections[1]) - 1]["id"]
    assert graph["groupNodeAttributes"][sections[0]] == {"first": first, "last": last}
    model = residual_stack(blocks=calls)  # one run of 250 blocks: its group is split, the model's is not
    graph = to_model_explorer(model)["graphs"][0]
    inside = Counter(node["namespace"] for node in graph["nodes"])
    assert {namespace.partition("/")[0] for namespace in inside if namespace} == {f"block0_a_x{calls}"}
    assert max(inside.values()) <= 100 and len(inside) == 1 + -(-calls * 3 // 100)
