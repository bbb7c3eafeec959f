"""to_networkx: graph nodes and edges against the model's Nodes, and networkx queries on them."""

from collections import Counter

import networkx as nx
import pytest

from engine import Input, Model, Sequential
from graph import to_networkx
from layers import Concatenate, Dense
from tests.graph.zoo import zoo


def node_edges(model, per_call):
    """The oracle: one edge per input tensor of each of the model's Nodes, from its _keras_history."""
    edges = Counter()
    for layer in model.layers:
        for index, node in enumerate(layer.inbound_nodes):
            for tensor in node.input_tensors:
                source, node_index, tensor_index = tensor._keras_history
                ends = (f"{source.name}[{node_index}]", f"{layer.name}[{index}]") if per_call else (
                    source.name, layer.name)
                edges[(*ends, node_index, tensor_index, str(tensor.shape))] += 1
    return edges


def edge_counter(G):
    return Counter((u, v, d["node_index"], d["tensor_index"], d["shape"]) for u, v, d in G.edges(data=True))


def test_layer_level_matches_the_model_nodes():
    model = zoo()
    G = to_networkx(model, parallel_edges=True)
    assert isinstance(G, nx.MultiDiGraph)
    assert list(G) == [layer.name for layer in model.layers]
    assert edge_counter(G) == node_edges(model, per_call=False)
    assert G.number_of_edges("shared", "add") == 2
    assert G.nodes["shared"] == {"name": "shared", "class_name": "Dense", "output_shapes": "(None, 8)",
                                 "params": 72, "trainable": True}
    assert G.nodes["level1"]["params"] == 144
    assert G.graph["name"] == "zoo"


def test_node_level_has_one_graph_node_per_call():
    model = zoo()
    G = to_networkx(model, level="node", parallel_edges=True)
    assert set(G) == {f"{layer.name}[{i}]" for layer in model.layers for i in range(len(layer.inbound_nodes))}
    assert edge_counter(G) == node_edges(model, per_call=True)
    assert G.nodes["shared[1]"]["node_index"] == 1
    assert G.nodes["shared[1]"]["name"] == "shared"


def test_expand_nested_uses_qualified_names_at_any_depth():
    G = to_networkx(zoo(), expand_nested=True)
    assert [n for n in G if "/" in n] == ["level1/x1", "level1/level2/x2", "level1/level2/level3/x3",
                                          "level1/level2/level3/d3", "level1/level2/d2", "level1/multiply"]
    assert "level1" not in G
    assert nx.shortest_path(G, "add", "score") == [
        "add", "level1/x1", "level1/level2/x2", "level1/level2/level3/x3", "level1/level2/level3/d3",
        "level1/level2/d2", "level1/multiply", "score"]
    # The edge out of the nested model starts at the inner layer that made the tensor.
    assert G.get_edge_data("level1/multiply", "score") == {
        "tensors": "level1/multiply[0][0]", "count": 1, "shape": "(None, 8)", "argument": "inputs"}
    nodes = to_networkx(zoo(), level="node", expand_nested=True)
    assert "level1[0]/level2[0]/level3[0]/d3[0]" in nodes
    assert nodes.nodes["level1[0]/level2[0]/level3[0]/d3[0]"]["name"] == "level1/level2/level3/d3"


def test_nested_model_called_twice_is_two_expansions_per_call_and_one_per_layer():
    x = Input(shape=(2,), name="x")
    block = Model(x, Dense(2, name="d")(x), name="block")
    z = Input(shape=(2,), name="z")
    model = Model(z, block(block(z)), name="twice")
    calls = to_networkx(model, level="node", expand_nested=True)
    assert list(calls.edges()) == [
        ("z[0]", "block[0]/x[0]"), ("block[0]/x[0]", "block[0]/d[0]"), ("block[0]/d[0]", "block[1]/x[0]"),
        ("block[1]/x[0]", "block[1]/d[0]")]
    assert nx.is_directed_acyclic_graph(calls)
    layers = to_networkx(model, expand_nested=True)
    assert Counter(to_networkx(model, expand_nested=True, parallel_edges=True).edges()) == Counter(
        {("z", "block/x"): 1, ("block/x", "block/d"): 1, ("block/d", "block/x"): 1})
    assert not nx.is_directed_acyclic_graph(layers)  # a layer called on its own output loops, as in Keras


def test_users_can_query_and_save_the_graph(tmp_path):
    G = to_networkx(zoo())
    assert nx.is_directed_acyclic_graph(G)
    assert nx.ancestors(G, "score") == {"a", "b", "proj", "shared", "add", "level1"}
    assert nx.descendants(G, "b") == {"shared", "add", "level1", "score", "multiply_1", "get_item"}
    assert nx.shortest_path(G, "a", "get_item") == ["a", "proj", "shared", "multiply_1", "get_item"]
    assert [n for n in nx.topological_sort(G) if G.out_degree(n) == 0] == ["score", "get_item"]
    path = tmp_path / "zoo.graphml"
    nx.write_graphml(to_networkx(zoo(), level="node", expand_nested=True), path)
    loaded = nx.read_graphml(path)
    assert loaded.nodes["level1[0]/level2[0]/d2[0]"] == {
        "name": "level1/level2/d2", "class_name": "Dense", "output_shapes": "(None, 8)", "params": 72,
        "trainable": True, "node_index": 0}
    assert loaded.number_of_edges() == 15


def test_unknown_level_and_unbuilt_models_are_refused():
    with pytest.raises(ValueError, match=r"to_networkx expects level in \('layer', 'node'\), received 'call'"):
        to_networkx(zoo(), level="call")
    with pytest.raises(ValueError, match=r"Sequential model 'later' has no input shape yet.*model.build"):
        to_networkx(Sequential([Dense(2)], name="later"))
    with pytest.raises(ValueError, match=r"Expected a functional model .* received Dense 'lonely'"):
        to_networkx(Dense(2, name="lonely"))


def test_edges_name_the_argument_they_feed_so_parallel_edges_differ():
    from layers import Concatenate, MultiHeadAttention

    query, value, key = Input(shape=(4, 8), name="q"), Input(shape=(6, 8), name="v"), Input(shape=(6, 8), name="k")
    attended = MultiHeadAttention(2, 4, name="mha")(query, value, key=key)
    merged = Concatenate(name="cat")([attended, query, query])  # q feeds cat twice: two parallel edges
    G = to_networkx(Model([query, value, key], Dense(2, name="out")(merged)), parallel_edges=True)
    fed = sorted((source, target, data["argument"]) for source, target, data in G.edges(data=True))
    assert fed == [("cat", "out", "inputs"), ("k", "mha", "key"), ("mha", "cat", "inputs[0]"),
                   ("q", "cat", "inputs[1]"), ("q", "cat", "inputs[2]"), ("q", "mha", "query"), ("v", "mha", "value")]


def two_towers():
    """Two inputs through one shared two-layer encoder, concatenated: parallel edges on every encoder link."""
    a, b = Input(shape=(3,), name="a"), Input(shape=(3,), name="b")
    first, second = Dense(4, name="enc1"), Dense(4, name="enc2")
    merged = Concatenate(name="cat")([second(first(a)), second(first(b))])
    return Model([a, b], Dense(1, name="head")(merged), name="towers")


def test_path_queries_give_each_path_once_and_edges_list_the_tensors_they_stand_for():
    model = two_towers()
    G = to_networkx(model)
    assert type(G) is nx.DiGraph
    paths = [path for source in ("a", "b") for path in nx.all_simple_paths(G, source, "head")]
    assert paths == [["a", "enc1", "enc2", "cat", "head"], ["b", "enc1", "enc2", "cat", "head"]]
    assert G.edges["enc2", "cat"] == {"tensors": "enc2[0][0]; enc2[1][0]", "count": 2, "shape": "(None, 4)",
                                      "argument": "inputs[0]; inputs[1]"}
    for name in G.edges["enc2", "cat"]["tensors"].split("; "):
        assert model.get_tensor(name) in model.get_layer("cat").inbound_nodes[0].input_tensors
    per_tensor = to_networkx(model, parallel_edges=True)
    assert len(list(nx.all_simple_paths(per_tensor, "a", "head"))) == 4  # one per combination of parallel edges
    assert per_tensor.number_of_edges() == 7 and G.number_of_edges() == 5
    assert sorted(d["tensor"] for _, _, d in per_tensor.edges("enc1", data=True)) == ["enc1[0][0]", "enc1[1][0]"]
    calls = to_networkx(model, level="node")
    assert [path for path in nx.all_simple_paths(calls, "a[0]", "head[0]")] == [
        ["a[0]", "enc1[0]", "enc2[0]", "cat[0]", "head[0]"]]
