"""summary_text and summary: the Keras table, row by row."""

import pytest

from engine import Input, Model, Sequential
from graph import summary, summary_text
from layers import Dense
from tests.graph.zoo import zoo

EXPANDED_ZOO = """\
Model: "zoo"
┏━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━┓
┃ Layer (type)           ┃ Output Shape        ┃      Param # ┃ Connected to       ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━┩
│ a (InputLayer)         │ (None, 16)          │            0 │ -                  │
├────────────────────────┼─────────────────────┼──────────────┼────────────────────┤
│ b (InputLayer)         │ (None, 8)           │            0 │ -                  │
├────────────────────────┼─────────────────────┼──────────────┼────────────────────┤
│ proj (Dense)           │ (None, 8)           │          136 │ a[0][0]            │
├────────────────────────┼─────────────────────┼──────────────┼────────────────────┤
│ shared[0] (Dense)      │ (None, 8)           │           72 │ proj[0][0]         │
├────────────────────────┼─────────────────────┼──────────────┼────────────────────┤
│ shared[1] (Dense)      │ (None, 8)           │     (shared) │ b[0][0]            │
├────────────────────────┼─────────────────────┼──────────────┼────────────────────┤
│ add (BinaryOp)         │ (None, 8)           │            0 │ shared[0][0],      │
│                        │                     │              │ shared[1][0]       │
├────────────────────────┼─────────────────────┼──────────────┼────────────────────┤
│ level1 (Functional)    │ (None, 8)           │          144 │ add[0][0]          │
├────────────────────────┼─────────────────────┼──────────────┼────────────────────┤
│ level1/x1 (InputLayer) │ (None, 8)           │            0 │ -                  │
├────────────────────────┼─────────────────────┼──────────────┼────────────────────┤
│ level1/level2          │ (None, 8)           │          144 │ level1/x1[0][0]    │
│ (Functional)           │                     │              │                    │
├────────────────────────┼─────────────────────┼──────────────┼────────────────────┤
│ level1/level2/x2       │ (None, 8)           │            0 │ -                  │
│ (InputLayer)           │                     │              │                    │
├────────────────────────┼─────────────────────┼──────────────┼────────────────────┤
│ level1/level2/level3   │ (None, 8)           │           72 │ level1/level2/     │
│ (Functional)           │                     │              │ x2[0][0]           │
├────────────────────────┼─────────────────────┼──────────────┼────────────────────┤
│ level1/level2/level3/  │ (None, 8)           │            0 │ -                  │
│ x3 (InputLayer)        │                     │              │                    │
├────────────────────────┼─────────────────────┼──────────────┼────────────────────┤
│ level1/level2/level3/  │ (None, 8)           │           72 │ level1/level2/     │
│ d3 (Dense)             │                     │              │ level3/x3[0][0]    │
├────────────────────────┼─────────────────────┼──────────────┼────────────────────┤
│ level1/level2/d2       │ (None, 8)           │           72 │ level1/level2/     │
│ (Dense)                │                     │              │ level3[0][0]       │
├────────────────────────┼─────────────────────┼──────────────┼────────────────────┤
│ level1/multiply        │ (None, 8)           │            0 │ level1/            │
│ (BinaryOp)             │                     │              │ level2[0][0]       │
├────────────────────────┼─────────────────────┼──────────────┼────────────────────┤
│ score (Dense)          │ (None, 1)           │            9 │ level1[0][0]       │
├────────────────────────┼─────────────────────┼──────────────┼────────────────────┤
│ multiply_1 (BinaryOp)  │ (None, 8)           │            0 │ level1[0][0],      │
│                        │                     │              │ shared[1][0]       │
├────────────────────────┼─────────────────────┼──────────────┼────────────────────┤
│ get_item (GetItem)     │ (None, 4)           │            0 │ multiply_1[0][0]   │
└────────────────────────┴─────────────────────┴──────────────┴────────────────────┘
 Total params: 361 (1.41 KB)
 Trainable params: 361 (1.41 KB)
 Non-trainable params: 0 (0.00 B)"""


def test_branches_sharing_and_nesting_line_by_line():
    # proj 16*8+8, shared 8*8+8 (once for its two calls), d3 and d2 8*8+8, score 8+1: 361 float32s.
    lines = summary_text(zoo(), line_length=84, expand_nested=True).splitlines()
    assert lines == EXPANDED_ZOO.splitlines()
    assert {len(line) for line in lines[1:-3]} == {84}


def test_nested_model_is_one_row_unless_expanded():
    lines = summary_text(zoo(), line_length=84).splitlines()
    rows = [line for line in lines if line.startswith("│ ") and not line.startswith("│  ")]
    assert [row.split("│")[1].strip() for row in rows] == [
        "a (InputLayer)", "b (InputLayer)", "proj (Dense)", "shared[0] (Dense)", "shared[1] (Dense)",
        "add (BinaryOp)", "level1 (Functional)", "score (Dense)", "multiply_1 (BinaryOp)", "get_item (GetItem)",
    ]


def test_chain_has_no_connected_to_column_and_trainable_column_marks_frozen_layers():
    model = Sequential([Input(shape=(4,)), Dense(3, name="hidden"), Dense(2, name="out")], name="chain")
    model.get_layer("out").trainable = False
    lines = summary_text(model, line_length=73, show_trainable=True).splitlines()
    assert lines[2] == "┃ Layer (type)             ┃ Output Shape       ┃   Param # ┃ Trainable ┃"  # 27, 21, 12, 13
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in lines if line.startswith("│")]
    assert rows == [["hidden (Dense)", "(None, 3)", "15", "Y"], ["out (Dense)", "(None, 2)", "8", "N"]]
    assert lines[-3:] == [" Total params: 23 (92.00 B)", " Trainable params: 15 (60.00 B)",
                          " Non-trainable params: 8 (32.00 B)"]


def test_unbuilt_sequential_lists_its_layers_instead_of_raising():
    model = Sequential([Dense(3, name="first"), Dense(2, name="second")], name="later")
    lines = summary_text(model).splitlines()
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in lines if line.startswith("│")]
    assert rows == [["first (Dense)", "?", "0 (unbuilt)"], ["second (Dense)", "?", "0 (unbuilt)"]]
    assert lines[-3] == " Total params: 0 (0.00 B)"
    assert len(lines[1]) == 88  # Keras' width for a chain of layers


def test_summary_sends_each_line_to_print_fn():
    x = Input(shape=(3,), name="x")
    model = Model(x, Dense(2, name="d")(x), name="tiny")
    lines = []
    summary(model, print_fn=lines.append)
    assert lines == summary_text(model).split("\n")
    assert lines[0] == 'Model: "tiny"'


def test_positions_absolute_or_relative_and_errors_that_explain():
    x = Input(shape=(3,), name="x")
    model = Model(x, Dense(2, name="d")(x), name="tiny")
    assert summary_text(model, line_length=50, positions=[0.5, 0.8, 1.0]) == summary_text(
        model, positions=[25, 40, 50])
    with pytest.raises(ValueError, match=r"model 'tiny' has 3 columns .* so positions needs 3 column end "
                                         r"positions; received 2: \[0.5, 1.0\]"):
        summary_text(model, positions=[0.5, 1.0])
    with pytest.raises(ValueError, match=r"every column at least 4 characters wide.* widths \[10, 2, 7\]"):
        summary_text(model, positions=[10, 12, 20])


def _names(text):
    """The first cell of each row of a summary's table, its wrapped lines joined."""
    rows, current = [], []
    for line in text.splitlines():
        if line.startswith(("├", "└")) and current:
            rows.append(" ".join(current))
            current = []
        elif line.startswith("│"):
            cell = line.split("│")[1].strip()
            if cell:
                current.append(cell)
    return rows


def test_collapse_repeats_lists_a_run_by_its_first_block_and_one_row_for_the_others():
    from tests.graph.test_plot_big import resnet

    model = resnet(4)
    block = ["conv1 (Conv2D)", "bn1 (BatchNormalization)", "act (Activation)", "conv2 (Conv2D)",
             "bn2 (BatchNormalization)", "add (Add)", "out (Activation)"]
    assert _names(summary_text(model, collapse_repeats=True)) == [
        "image (InputLayer)", "stem (Conv2D)", *(f"b0_{row}" for row in block),
        "⋮ ×4 in all: b1_conv1 … b3_out", "pool (GlobalAveragePooling2D)", "logits (Dense)"]
    full = summary_text(model)
    assert len(_names(full)) == 2 + 4 * len(block) + 2
    later = sum(model.get_layer(f"b{i}_{name}").count_params() for i in (1, 2, 3)
                for name in ("conv1", "bn1", "conv2", "bn2"))
    run_row = next(line for line in summary_text(model, collapse_repeats=True).splitlines() if "⋮ ×4" in line)
    assert [cell.strip() for cell in run_row.split("│")[2:5]] == ["(None, 8, 8, 4)", f"{later:,}", "like the first block"]
    assert full.splitlines()[-3:] == summary_text(model, collapse_repeats=True).splitlines()[-3:]  # the same totals


def test_collapse_repeats_inside_an_expanded_nested_model_names_its_layers_by_path():
    from tests.graph.test_plot_big import resnet

    x = Input(shape=(8, 8, 3), name="outer_image")
    outer = Model(x, resnet(3)(x), name="outer")
    names = _names(summary_text(outer, expand_nested=True, collapse_repeats=True))
    inner = outer.layers[1].name
    assert f"⋮ ×3 in all: {inner}/b1_conv1 … {inner}/b2_out" in names
    assert f"{inner}/b0_conv1 (Conv2D)" in names
    assert not any(name.startswith(f"{inner}/b1_") for name in names)
