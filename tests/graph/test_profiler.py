"""profile: FLOPs and bytes per call, against counts made by hand."""

import numpy as np
import pytest

from engine import Input, Model
from graph import profile
from layers import Activation, Dense
from tests.graph.zoo import nested_three_deep


def mlp():
    x = Input(shape=(10,), name="x")
    hidden = Dense(32, activation="relu", name="hidden")(x)
    logits = Dense(5, use_bias=False, name="logits")(hidden)
    return Model(x, logits, name="mlp")


def test_dense_mlp_flops_and_bytes_by_hand():
    result = profile(mlp(), batch_size=4)
    assert [row["node"] for row in result.rows] == ["x[0]", "hidden[0]", "logits[0]"]
    # hidden: 4*32 outputs, each 10 multiply-adds (2 FLOPs) and a bias add; logits: 4*5 outputs, 32 multiply-adds.
    assert [row["flops"] for row in result.rows] == [0, 4 * 32 * (2 * 10 + 1), 4 * 5 * 2 * 32]
    assert [row["activation_bytes"] for row in result.rows] == [4 * 10 * 4, 4 * 32 * 4, 4 * 5 * 4]
    assert [row["weight_bytes"] for row in result.rows] == [0, (10 * 32 + 32) * 4, 32 * 5 * 4]
    assert result.totals == {"flops": 2688 + 1280, "activation_bytes": 160 + 512 + 80, "weight_bytes": 2048}
    assert result.uncounted == {"flops": [], "activation_bytes": []}
    assert profile(mlp()).totals["flops"] == (2688 + 1280) // 4


def test_operator_layers_by_hand():
    x = Input(shape=(6,), name="x")
    y = (-(x @ np.ones((6, 3), "float32")) * 0.5 + x[:, :3]) - x[:, 3:]
    rows = profile(Model(x, y, name="ops"), batch_size=2).rows
    assert [(row["class_name"], row["flops"]) for row in rows] == [
        ("InputLayer", 0),
        ("BinaryOp", 2 * 6 * (2 * 3)),  # matmul: 6 multiply-adds per output element
        ("Negative", 2 * 3),
        ("BinaryOp", 2 * 3),  # multiply by 0.5
        ("GetItem", 0),
        ("BinaryOp", 2 * 3),  # add
        ("GetItem", 0),
        ("BinaryOp", 2 * 3),  # subtract
    ]


def test_unknown_formulas_and_sizes_are_none_not_guesses():
    x = Input(shape=(None, 4), name="seq")
    y = Activation("tanh", name="act")(Dense(2, name="d")(x))
    result = profile(Model(x, y, name="m"), batch_size=3)
    by_node = {row["node"]: row for row in result.rows}
    assert by_node["act[0]"]["flops"] is None
    assert by_node["d[0]"]["flops"] is None  # the time axis has no size
    assert by_node["d[0]"]["activation_bytes"] is None
    assert by_node["d[0]"]["weight_bytes"] == (4 * 2 + 2) * 4
    assert result.uncounted == {"flops": ["d[0]", "act[0]"], "activation_bytes": ["seq[0]", "d[0]", "act[0]"]}
    assert "The total of FLOPs leaves out (no formula, or a shape with an unknown size): d[0], act[0]." in str(
        result).splitlines()


def test_nested_models_are_counted_through_their_layers_and_shared_weights_once():
    inner = nested_three_deep()
    z = Input(shape=(8,), name="z")
    model = Model(z, inner(inner(z)), name="twice")
    result = profile(model, batch_size=1)
    assert [row["node"] for row in result.rows] == [
        "z[0]",
        "level1[0]/level2[0]/level3[0]/d3[0]", "level1[0]/level2[0]/d2[0]", "level1[0]/multiply[0]",
        "level1[1]/level2[0]/level3[0]/d3[0]", "level1[1]/level2[0]/d2[0]", "level1[1]/multiply[0]",
    ]
    assert [row["flops"] for row in result.rows] == [0, 136, 136, 8, 136, 136, 8]
    assert [row["weight_bytes"] for row in result.rows] == [0, 288, 288, 0, 0, 0, 0]


def test_text_table_and_batch_size_check():
    text = str(profile(mlp(), batch_size=4))
    assert text.splitlines() == [
        'Profile of model "mlp", batch size 4',
        "node       class       FLOPs  activation bytes  weight bytes",
        "---------  ----------  -----  ----------------  ------------",
        "x[0]       InputLayer      0               160             0",
        "hidden[0]  Dense       2,688               512         1,408",
        "logits[0]  Dense       1,280                80           640",
        "total                  3,968               752         2,048",
        "Activations 752.00 B, weights 2.00 KB.",
    ]
    with pytest.raises(ValueError, match="profile expects batch_size to be a positive int, received 0"):
        profile(mlp(), batch_size=0)
