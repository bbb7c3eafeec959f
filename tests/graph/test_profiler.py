"""profile: FLOPs and bytes per call, against counts made by hand."""

import xml.etree.ElementTree as ET

import numpy as np
import pytest

import layers as L
from engine import Input, Layer, Model
from engine.network.ops import Round
from engine.files.registry import _REGISTRY
from graph import profile
from layers import Activation, Dense
from tests.engine.test_saving_catalog import EXAMPLES, MODELS
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
    assert ("The total of FLOPs is a lower bound (≥ 0): 2 layer calls unknown (no formula, or a shape with an "
            "unknown size): d[0], act[0].") in str(result).splitlines()


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


def layer_flops(layer, *shapes, batch_size=2, dtype="float32"):
    """The FLOPs profile gives ``layer`` called on inputs of these sample shapes."""
    inputs = [Input(shape=s, dtype=dtype) for s in shapes]
    outputs = layer(inputs if len(inputs) > 1 else inputs[0])
    (row,) = [row for row in profile(Model(inputs, outputs), batch_size).rows if row["class_name"] != "InputLayer"]
    return row["flops"]


@pytest.mark.parametrize("layer, expected", [
    (L.Activation("tanh"), 2 * 4),  # one op per element, a tanh included
    (L.Activation("linear"), 0),
    (L.Activation("softmax"), 3 * 2 * 4),  # exp, sum, divide
    (L.ReLU(max_value=1.0), 2 * 4),
    (L.ELU(), 2 * 4),
    (L.LeakyReLU(0.1), 2 * 4),
    (L.PReLU(), 2 * 4),
    (Round(decimals=1), 2 * 4),
])
def test_activations_count_one_per_element(layer, expected):
    assert layer_flops(layer, (4,)) == expected


def test_softmax_and_masking_by_hand():
    assert layer_flops(L.Softmax(axis=1), (5, 3)) == 3 * 2 * 5 * 3
    assert layer_flops(L.Masking(), (5, 3)) == 2 * 2 * 5 * 3  # the comparison and its reduction


def test_normalizations_by_hand():
    # BatchNormalization at inference: one scale and one shift per element.
    assert layer_flops(L.BatchNormalization(), (6, 6, 2)) == 2 * (2 * 6 * 6 * 2)
    # 5 to standardize (mean's sum, subtract, square, variance's sum, multiply by 1/std), + scale + shift.
    assert layer_flops(L.LayerNormalization(), (5, 3)) == 2 * 5 * 3 * (5 + 1 + 1)
    assert layer_flops(L.LayerNormalization(center=False), (5, 3)) == 2 * 5 * 3 * (5 + 1)
    assert layer_flops(L.LayerNormalization(rms_scaling=True), (5, 3)) == 2 * 5 * 3 * (5 + 1)
    assert layer_flops(L.GroupNormalization(groups=2), (6, 6, 2)) == 2 * 6 * 6 * 2 * (5 + 1 + 1)
    assert layer_flops(L.UnitNormalization(), (4,)) == 2 * 4 * 3  # square, sum, multiply


def test_merges_by_hand():
    assert layer_flops(L.Add(), (4,), (4,), (4,)) == 2 * (2 * 4)  # two adds per output element
    assert layer_flops(L.Subtract(), (4,), (4,)) == 2 * 4
    assert layer_flops(L.Multiply(), (4,), (4,)) == 2 * 4
    assert layer_flops(L.Average(), (4,), (4,)) == 2 * (2 * 4)  # the add and the divide
    assert layer_flops(L.Maximum(), (4,), (4,)) == 2 * 4
    assert layer_flops(L.Minimum(), (4,), (4,)) == 2 * 4
    assert layer_flops(L.Concatenate(), (4,), (4,)) == 0
    # Dot: a (2, 1) output of 4 multiply-adds each; normalize adds square, sum, multiply per input element.
    assert layer_flops(L.Dot(axes=1), (4,), (4,)) == 2 * 1 * (2 * 4)
    assert layer_flops(L.Dot(axes=1, normalize=True), (4,), (4,)) == 2 * 1 * (2 * 4) + 3 * (2 * 4 + 2 * 4)
    assert layer_flops(L.Dot(axes=(1, 2)), (3, 5), (10, 3)) == 2 * 5 * 10 * (2 * 3)


def test_pooling_by_hand():
    assert layer_flops(L.MaxPooling2D(2), (6, 6, 2)) == (2 * 3 * 3 * 2) * (2 * 2)  # outputs x window taps
    assert layer_flops(L.AveragePooling1D(2), (5, 3)) == (2 * 2 * 3) * 2
    assert layer_flops(L.GlobalAveragePooling2D(), (6, 6, 2)) == 2 * 6 * 6 * 2  # one per input element
    assert layer_flops(L.GlobalMaxPooling1D(), (5, 3)) == 2 * 5 * 3


@pytest.mark.parametrize("layer", [
    L.Dropout(0.5), L.SpatialDropout1D(0.3), L.GaussianDropout(0.3), L.GaussianNoise(0.1),
    L.ActivityRegularization(l1=0.1), L.Identity(), L.Reshape((-1, 3)), L.Flatten(), L.Permute((2, 1)),
    L.Cropping1D((1, 2)), L.ZeroPadding1D(2), L.UpSampling1D(2),
])
def test_inference_identities_and_data_movement_count_zero(layer):
    assert layer_flops(layer, (5, 3)) == 0


def test_embedding_repeat_and_nearest_upsampling_count_zero():
    assert layer_flops(L.Embedding(10, 3), (4,), dtype="int32") == 0
    assert layer_flops(L.RepeatVector(3), (4,)) == 0
    assert layer_flops(L.UpSampling2D(2), (2, 2, 1)) == 0
    # Bilinear: rows then columns, 2 taps (2 multiply-adds) per output of each pass.
    assert layer_flops(L.UpSampling2D(2, interpolation="bilinear"), (2, 2, 1), batch_size=1) == 4 * (4 * 2) + 4 * (
        4 * 4)


def test_convolutions_by_hand():
    # Conv2D: (2, 4, 4, 4) outputs, 3*3*2 multiply-adds each and the bias.
    assert layer_flops(L.Conv2D(4, 3), (6, 6, 2)) == 2 * 4 * 4 * 4 * (2 * 3 * 3 * 2 + 1)
    # Transposed: every input value times every tap and filter, then the bias on the (2, 12, 12, 3) output.
    assert layer_flops(L.Conv2DTranspose(3, 2, strides=2), (6, 6, 2)) == (
        2 * (2 * 6 * 6 * 2) * (2 * 2) * 3 + 2 * 12 * 12 * 3)
    assert layer_flops(L.Conv1DTranspose(2, 3, strides=2), (5, 3)) == 2 * (2 * 5 * 3) * 3 * 2 + 2 * 11 * 2
    # Depthwise: (2, 4, 4, 4) outputs, each 3*3 taps of one channel and the bias.
    assert layer_flops(L.DepthwiseConv2D(3, depth_multiplier=2), (6, 6, 2)) == 2 * 4 * 4 * 4 * (2 * 3 * 3 + 1)
    # Separable: depthwise over 2*4*4 positions x 2 channels x 9 taps, then pointwise 2 -> 3 and the bias.
    assert layer_flops(L.SeparableConv2D(3, 3), (6, 6, 2)) == (
        2 * (2 * 4 * 4) * 2 * (3 * 3) + (2 * 4 * 4 * 3) * (2 * 2 + 1))


def test_recurrent_layers_by_hand():
    # Per sample and step (batch 2, 5 steps, 3 features, 3 units): input and recurrent matmuls
    # 2 * (3 + 3) * gates * 3, the bias, then the cell's elementwise ops.
    assert layer_flops(L.SimpleRNN(3), (5, 3)) == 2 * 5 * (2 * 6 * 3 + 3 + (3 + 3))  # add, tanh
    # LSTM: 4 gate adds, 3 sigmoids, tanh(g), c = f*c + i*g (3), tanh(c), h = o*tanh(c).
    assert layer_flops(L.LSTM(3), (5, 3)) == 2 * 5 * (2 * 6 * 12 + 12 + (12 + 9 + 3 + 9 + 3 + 3))
    # GRU: adds into z, r, hh (3), the reset product, 2 sigmoids and a tanh, h = hh + z*(h - hh) (3).
    gru_cell = 3 * 3 + 3 + 3 * 3 + 3 * 3
    assert layer_flops(L.GRU(3, reset_after=False), (5, 3)) == 2 * 5 * (2 * 6 * 9 + 9 + gru_cell)
    assert layer_flops(L.GRU(3), (5, 3)) == 2 * 5 * (2 * 6 * 9 + 2 * 9 + gru_cell)  # two biases
    lstm = 2 * 5 * (2 * 6 * 12 + 12 + 39)
    assert layer_flops(L.Bidirectional(L.LSTM(3)), (5, 3)) == 2 * lstm  # concat merges for free
    assert layer_flops(L.Bidirectional(L.LSTM(3), merge_mode="ave"), (5, 3)) == 2 * lstm + 2 * (2 * 3)
    # TimeDistributed: the wrapped Dense on 2 * 5 slices.
    assert layer_flops(L.TimeDistributed(L.Dense(2)), (5, 3)) == (2 * 5) * 2 * (2 * 3 + 1)


def test_attention_by_hand():
    # 2 * 5 * 5 scores of 3 multiply-adds and a scale, a softmax (3 each), a weighted sum of 3 values.
    scores = 2 * 5 * 5
    assert layer_flops(L.Attention(use_scale=True), (5, 3), (5, 3)) == scores * (2 * 3 + 1) + 3 * scores + (
        scores * 2 * 3)
    # concat scores: per score and feature the add, the tanh and the sum, then the weight.
    assert layer_flops(L.Attention(score_mode="concat"), (5, 3), (5, 3)) == scores * (3 * 3 + 1) + 3 * scores + (
        scores * 2 * 3)


def test_multi_head_attention_by_hand():
    # Batch 2, 5 query and 5 value steps of 3 features, 2 heads of size 2.
    projection = (2 * 5) * (2 * 2) * (2 * 3 + 1)  # rows x (heads * size) x (multiply-adds + bias)
    scale = (2 * 5) * (2 * 2)
    scores = 2 * 2 * 5 * 5
    attention = scores * 2 * 2 + 3 * scores + scores * 2 * 2  # q k^T, softmax, weights @ v
    output = (2 * 5 * 3) * (2 * (2 * 2) + 1)
    mha = L.MultiHeadAttention(num_heads=2, key_dim=2)
    assert layer_flops(mha, (5, 3), (5, 3)) == 3 * projection + scale + attention + output


def test_transformer_block_total_is_the_sum_of_hand_counts():
    x = Input(shape=(4, 6), name="x")
    attended = L.MultiHeadAttention(num_heads=2, key_dim=3, name="mha")(x, x)
    first = L.LayerNormalization(name="ln1")(L.Add(name="add1")([x, L.Dropout(0.1, name="drop")(attended)]))
    hidden = L.Dense(8, activation="relu", name="ff1")(first)
    block = L.LayerNormalization(name="ln2")(L.Add(name="add2")([first, L.Dense(6, name="ff2")(hidden)]))
    result = profile(Model(x, block, name="block"), batch_size=2)
    scores = 2 * 2 * 4 * 4
    expected = {
        "x[0]": 0,
        "mha[0]": 3 * (2 * 4) * (2 * 3) * (2 * 6 + 1) + (2 * 4) * (2 * 3)  # q, k, v projections, q's scale
        + scores * 2 * 3 + 3 * scores + scores * 2 * 3  # q k^T, softmax, weights @ v
        + (2 * 4 * 6) * (2 * 2 * 3 + 1),  # output projection
        "drop[0]": 0,
        "add1[0]": 2 * 4 * 6,
        "ln1[0]": 2 * 4 * 6 * (5 + 2),
        "ff1[0]": 2 * 4 * 8 * (2 * 6 + 1),
        "ff2[0]": 2 * 4 * 6 * (2 * 8 + 1),
        "add2[0]": 2 * 4 * 6,
        "ln2[0]": 2 * 4 * 6 * (5 + 2),
    }
    assert {row["node"]: row["flops"] for row in result.rows} == expected
    assert result.totals["flops"] == sum(expected.values()) == 3504 + 48 + 336 + 832 + 816 + 48 + 336
    assert result.uncounted["flops"] == []
    assert "≥" not in str(result)


def test_every_registered_layer_has_a_flops_figure():
    builtin = sorted(name for name in _REGISTRY if ">" not in name and name not in MODELS)
    unknown = []
    for name in builtin:
        factory, shapes, dtype = EXAMPLES[name]
        inputs = [Input(shape=s, dtype=dtype) for s in shapes]
        outputs = factory()(inputs if len(inputs) > 1 else inputs[0])
        (row,) = [r for r in profile(Model(inputs, outputs)).rows if r["class_name"] != "InputLayer"]
        assert row["flops"] is None or (isinstance(row["flops"], int) and row["flops"] >= 0), name
        if row["flops"] is None:
            unknown.append(name)
    assert unknown == ["Lambda"]  # an arbitrary Python function: unknown by design, and said so


class Doubling(Layer):
    def call(self, inputs):
        return inputs * 2.0


def custom_model():
    x = Input(shape=(3,), name="x")
    return Model(x, Doubling(name="my_layer")(Dense(4, name="d")(x)), name="custom")


def test_a_layer_without_formula_makes_the_total_a_lower_bound():
    result = profile(custom_model(), batch_size=2)
    assert result.uncounted["flops"] == ["my_layer[0]"]
    assert result.totals["flops"] == 2 * 4 * (2 * 3 + 1)
    lines = str(result).splitlines()
    assert lines[-4:] == [
        "my_layer[0]  Doubling        ?                32             0",
        "total                     ≥ 56                88            64",
        "Activations 88.00 B, weights 64.00 B.",
        ("The total of FLOPs is a lower bound (≥ 56): 1 layer call unknown (no formula, or a shape with an "
         "unknown size): my_layer[0]."),
    ]
    assert repr(result) == str(result)


def test_html_table_has_the_text_columns_and_the_lower_bound():
    result = profile(custom_model(), batch_size=2)
    root = ET.fromstring(f"<div>{result._repr_html_()}</div>")
    table = root.find("table")
    assert table.find("caption").text == 'Profile of model "custom", batch size 2'
    assert [th.text for th in table.find("thead/tr")] == ["node", "class", "FLOPs", "activation bytes", "weight bytes"]
    assert [[td.text for td in tr] for tr in table.find("tbody")] == [
        ["x[0]", "InputLayer", "0", "24", "0"],
        ["d[0]", "Dense", "56", "32", "64"],
        ["my_layer[0]", "Doubling", "?", "32", "0"],
    ]
    assert [th.text for th in table.find("tfoot/tr")] == ["total", None, "≥ 56", "88", "64"]
    assert [p.text for p in root.findall("p")] == str(result).splitlines()[-2:]
