"""node_data: the numbers boxes are coloured by, and the colour scale."""

import pytest

from engine import Input, Model
from graph import profile
from graph._node_data import fill_colour, legend_stops, node_values
from graph._walk import walk
from layers import Dense


def nested():
    x = Input(shape=(3,), name="x")
    inner = Model(x, Dense(4, name="d")(x), name="inner")
    y = Input(shape=(3,), name="y")
    shared = Dense(4, name="shared")
    h = shared(inner(y))
    return Model(y, Dense(2, name="o")(shared(h)), name="outer")


@pytest.mark.parametrize("expand_nested", [False, True])
@pytest.mark.parametrize("level", ["layer", "node"])
def test_flops_of_the_boxes_add_up_to_the_profile_total(level, expand_nested):
    model = nested()
    _, values = node_values(model, walk(model, expand_nested), "flops", level)
    assert sum(values.values()) == profile(model).totals["flops"]


def test_a_shared_layer_is_one_box_at_layer_level_and_its_weights_count_once():
    model = nested()
    _, layer_level = node_values(model, walk(model), "weight_bytes", "layer")
    _, node_level = node_values(model, walk(model), "weight_bytes", "node")
    assert layer_level["shared"] == (4 * 4 + 4) * 4
    assert (node_level["shared[0]"], node_level["shared[1]"]) == ((4 * 4 + 4) * 4, 0)  # as profile counts them
    _, flops = node_values(model, walk(model), "flops", "layer")
    assert flops["shared"] == 2 * (2 * 4 * 4 + 4)  # two calls, each its multiply-adds and bias


def test_a_mapping_names_layers_and_calls_and_an_inner_layer_colours_its_closed_model():
    model = nested()
    mapping = {"inner/d": 5, "shared[1]": 7, "o": 2}
    assert node_values(model, walk(model), mapping, "node")[1] == {"inner[0]": 5.0, "shared[1]": 7.0, "o[0]": 2.0}
    assert node_values(model, walk(model, True), mapping, "layer")[1] == {"inner/d": 5.0, "shared": 7.0, "o": 2.0}


def test_unknown_names_and_keys_are_refused_with_the_closest_keys():
    model = nested()
    with pytest.raises(ValueError, match=r"'params', 'flops'.*received 'flop'"):
        node_values(model, walk(model), "flop", "layer")
    with pytest.raises(ValueError, match=r"'sharde'.*closest are 'shared'"):
        node_values(model, walk(model), {"sharde": 1}, "layer")
    with pytest.raises(ValueError, match=r"node_data\['o'\] must be a finite number"):
        node_values(model, walk(model), {"o": float("nan")}, "layer")


def test_the_scale_runs_light_to_dark_and_the_legend_spans_it():
    assert fill_colour(0, 0, 1000) == "#ffffcc" and fill_colour(1000, 0, 1000) == "#fc4e2a"
    middle = fill_colour(31, 0, 1000)  # log10(32) is half of log10(1001)
    assert middle not in ("#ffffcc", "#fc4e2a")
    stops = legend_stops(0, 1000)
    assert [value for value, _ in stops][0::4] == [0.0, 1000.0]
    assert [colour for _, colour in stops] == [fill_colour(value, 0, 1000) for value, _ in stops]
    assert fill_colour(-1, -1, 1) == "#ffffcc" and fill_colour(0, -1, 1) != "#ffffcc"
