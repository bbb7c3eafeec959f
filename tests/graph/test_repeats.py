"""graph._repeats: the runs of identical chained blocks, against a brute-force reading of the
module's definition, and on ResNet50 and MobileNetV2."""

from itertools import pairwise

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graph._repeats as repeats
from engine import Input, Model
from engine.files.saving import model_from_json
from graph._repeats import find_runs, runs_by_container
from graph._walk import plan_of, walk
from layers import Activation, Add, Concatenate, Dense
from tests.graph.data.make_keras_applications import stored_json

# The reference: the module docstring's definition and scan, by brute force.


def reference_runs(calls, links, level):
    """``(start, period, blocks)`` per run, as the docstring of graph._repeats defines them."""
    n = len(calls)
    at = {id(call): i for i, call in enumerate(calls)}
    inputs = [[] for _ in calls]  # per call, in input order: (source position, or the source Call elsewhere, tensor)
    readers = [[] for _ in calls]  # per call: its readers' positions, None for a reader elsewhere
    for link in sorted(links, key=lambda link: link.reader[1]):
        source, target = at.get(id(link.source)), at.get(id(link.target))
        if target is not None:
            inputs[target].append((link.source if source is None else source, link.tensor._keras_history.tensor_index))
        if source is not None:
            readers[source].append(target)
    nodes = {}
    for call in calls:
        nodes.setdefault(id(call.layer), set()).add(id(call.node))
    kinds = [object() if level == "layer" and len(nodes[id(call.layer)]) > 1
             else (_described(call.layer), [t.shape for t in call.outputs], [t.shape for t in call.reads])
             for call in calls]

    def inside(source, block):
        return isinstance(source, int) and source in block

    def signature(block):
        return [(kinds[i], [(source - block.start, tensor) if inside(source, block) else "entry"
                            for source, tensor in inputs[i]]) for i in block]

    def entries(block):
        return {read for i in block for read in inputs[i] if not inside(read[0], block)}

    def is_run(blocks):
        identical = all(signature(block) == signature(blocks[0]) for block in blocks)
        one_entry = all(len(entries(block)) == 1 for block in blocks)
        entry_is_the_exit_before = all(source == block.start - 1 for block in blocks[1:] for source, _ in entries(block))
        only_exits_read_outside = all(r is not None and r in block for block in blocks for i in block[:-1]
                                      for r in readers[i])
        exits_read_by_the_next_block_only = all(r is not None and r in after for block, after in pairwise(blocks)
                                                for r in readers[block[-1]])
        return (identical and one_entry and entry_is_the_exit_before and only_exits_read_outside
                and exits_read_by_the_next_block_only)

    def blocks_from(start, period):
        """How many blocks of ``period`` calls from ``start`` form a run (1 when none does)."""
        blocks = [range(start, start + period)]
        while blocks[-1].stop + period <= n and is_run(blocks + [range(blocks[-1].stop, blocks[-1].stop + period)]):
            blocks.append(range(blocks[-1].stop, blocks[-1].stop + period))
        return len(blocks)

    def longest_from(start):
        best = (0, 0)
        for period in range(1, (n - start) // 2 + 1):
            blocks = blocks_from(start, period)
            if blocks >= 2 and blocks * period > best[0] * best[1]:
                best = (period, blocks)
        return best

    found, start = [], 0
    while start < n:
        period, blocks = longest_from(start)
        if not period:
            start += 1
            continue
        taken = (start, period, blocks)
        for later in range(start + 1, start + period):
            later_period, later_blocks = longest_from(later)
            if later_period * later_blocks >= taken[1] * taken[2]:
                taken = (later, later_period, later_blocks)
        found.append(taken)
        start = taken[0] + taken[1] * taken[2]
    return found


def _described(layer):
    """Class and config without the name; for a nested model, its calls' and their wiring."""
    if plan_of(layer) is not None:
        graph = walk(layer)
        at = {id(call): i for i, call in enumerate(graph.calls)}
        wiring = sorted((at[id(link.target)], link.reader[1], at[id(link.source)],
                         link.tensor._keras_history.tensor_index) for link in graph.links)
        return type(layer).__name__, [_described(call.layer) for call in graph.calls], wiring
    config = dict(layer.get_config())
    config.pop("name")
    return type(layer).__name__, repr(config)


def described(runs, calls):
    """``(start, period, blocks)`` per Run."""
    at = {id(call): i for i, call in enumerate(calls)}
    return [(at[id(run.blocks[0][0])], len(run.blocks[0]), len(run.blocks)) for run in runs]


def containers(graph, level):
    """Each container's drawn calls, as plot_model scans them."""
    sequences = {}
    for calls in graph.vertices(level).values():
        container = calls[0].container
        sequences.setdefault(None if container is None else container.key(level), []).append(calls[0])
    return sequences


def assert_runs_are_the_reference_runs(model):
    for expand_nested in (False, True):
        graph = walk(model, expand_nested=expand_nested)
        for level in ("layer", "node"):
            sequences = containers(graph, level)
            by_container = runs_by_container(graph, level)
            assert list(by_container) == list(sequences)
            for key, calls in sequences.items():
                expected = reference_runs(calls, graph.links, level)
                assert described(find_runs(calls, graph.links, level), calls) == expected, (expand_nested, level, key)
                assert described(by_container[key], calls) == expected


# Random models: a few kinds of blocks, in patterns that repeat, with the odd block changed.

BLOCKS = ["dense", "relu", "residual", "residual_after", "skip2", "skip3", "pair_added", "pair_second", "shared",
          "nested", "concatenated", "doubled"]


def build(program):
    """A model of Dense(4)-wide blocks, one per name in ``program``."""
    x = Input(shape=(4,), name="x")
    made, h = [x], x
    shared = Dense(4, name="shared")
    p = Input(shape=(4,))
    pair = Model(p, [Dense(4)(p), Dense(4, activation="relu")(p)], name="pair")  # a call with two outputs
    q = Input(shape=(4,))
    nested = Model(q, Dense(4)(Dense(4, activation="relu")(q)), name="nested")
    for block in program:
        if block == "dense":
            h = Dense(4)(h)
        elif block == "relu":
            h = Dense(4, activation="relu")(h)
        elif block == "residual":
            h = Add()([h, Dense(4)(Dense(4, activation="relu")(h))])
        elif block == "residual_after":
            h = Activation("relu")(Add()([Dense(4)(h), h]))
        elif block in ("skip2", "skip3"):  # reads a block's output from further back too
            h = Add()([Dense(4)(h), made[max(0, len(made) - int(block[-1]))]])
        elif block == "pair_added":
            h = Add()(list(pair(h)))
        elif block == "pair_second":
            h = Dense(4)(pair(h)[1])
        elif block == "shared":
            h = shared(h)
        elif block == "nested":
            h = nested(h)
        elif block == "concatenated":
            h = Dense(4)(Concatenate()([h, h]))
        elif block == "doubled":
            h = Add()([h, h])
        made.append(h)
    return Model(x, h, name="random")


@st.composite
def programs(draw, longest=24):
    pattern = draw(st.lists(st.sampled_from(BLOCKS), min_size=1, max_size=6))
    repeated = pattern * draw(st.integers(1, max(1, longest // len(pattern))))
    changes = draw(st.lists(st.tuples(st.integers(0, len(repeated) - 1), st.sampled_from(BLOCKS)), max_size=2))
    for index, block in changes:
        repeated[index] = block
    before = draw(st.lists(st.sampled_from(BLOCKS), max_size=2))
    after = draw(st.lists(st.sampled_from(BLOCKS), max_size=2))
    return before + repeated + after


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs())
def test_the_runs_found_are_the_reference_runs(program):
    assert_runs_are_the_reference_runs(build(program))


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(longest=12))
def test_hash_collisions_never_change_the_runs_found(program):
    """Every token hashed alike, so that any two blocks of a length collide: only the exact
    comparison that confirms each run keeps the runs right."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(repeats, "_token_hasher", lambda: lambda token: 0)
        assert_runs_are_the_reference_runs(build(program))


def test_blocks_longer_than_the_window_of_kinds_are_found():
    """Blocks of 16 calls (the window of kinds that must recur for a period that long), with
    shorter runs inside them (relu, relu) that a scan from their first call does not take."""
    program = ["residual"] * 7 + ["dense", "relu"] + ["pair_added", "residual_after"] * 4
    block = ["relu", "residual", "dense", "concatenated", "relu", "relu", "residual", "pair_second", "dense", "dense"]
    model = build(program + block * 3 + ["doubled"])
    assert_runs_are_the_reference_runs(model)
    graph = walk(model)
    calls = containers(graph, "node")[None]
    assert described(find_runs(calls, graph.links, "node"), calls) == [(1, 3, 7), (24, 5, 4), (44, 16, 3)]


def test_blocks_end_with_their_own_last_layer_after_a_block_alike_at_its_end():
    """``first`` is alike every block's last layer: the run from it is as long as the run from
    the next layer, which is taken."""
    x = Input(shape=(4,), name="x")
    h = Dense(4, name="first")(x)
    for i in range(3):
        h = Dense(4, name=f"b{i}")(Dense(4, activation="relu", name=f"a{i}")(h))
    graph = walk(Model(x, h))
    (run,) = find_runs(graph.calls, graph.links, "layer")
    assert [[call.layer.name for call in block] for block in run.blocks] == [["a0", "b0"], ["a1", "b1"], ["a2", "b2"]]


def test_runs_by_container_scans_the_boxes_it_is_given():
    """A layer range draws some of the top-level boxes: the runs are those among them."""
    x = Input(shape=(4,), name="x")
    h = x
    for i in range(6):
        h = Dense(4, name=f"d{i}")(h)
    graph = walk(Model(x, h))
    assert [len(run.blocks) for run in runs_by_container(graph, "layer")[None]] == [6]
    drawn = {key: calls for key, calls in graph.vertices("layer").items() if key not in ("x", "d0", "d1")}
    (run,) = runs_by_container(graph, "layer", drawn)[None]
    assert [[call.layer.name for call in block] for block in run.blocks] == [["d2"], ["d3"], ["d4"], ["d5"]]


def test_each_layer_signature_is_worked_out_once(monkeypatch):
    """A nested model called 40 times, inside a nested model called 3 times, is walked once."""
    x = Input(shape=(4,))
    inner = Model(x, Dense(4)(x), name="inner")
    y = Input(shape=(4,))
    h = y
    for _ in range(40):
        h = inner(h)
    middle = Model(y, h, name="middle")
    z = Input(shape=(4,))
    model = Model(z, middle(middle(middle(z))), name="outer")
    walked = []
    monkeypatch.setattr(repeats, "walk", lambda layer: walked.append(layer.name) or walk(layer))
    runs = runs_by_container(walk(model), "node")
    assert walked == ["middle", "inner"]
    assert [len(run.blocks) for run in runs[None]] == [3]
    walked.clear()
    runs = runs_by_container(walk(model, expand_nested=True, max_depth=1), "node")
    assert walked == ["inner"]
    assert [[len(run.blocks) for run in runs[key]] for key in runs] == [[], [40], [40], [40]]


# keras.applications, read from Keras' JSON


@pytest.fixture(scope="module")
def applications():
    """ResNet50 and MobileNetV2 as Keras builds them (weights=None, 32x32 inputs), from the stored configs."""
    return {name: model_from_json(stored_json(name)) for name in ("ResNet50", "MobileNetV2")}


def _titles(model, level):
    graph = walk(model)
    return [(len(run.blocks), run.blocks[0][0].layer.name, run.blocks[-1][-1].layer.name)
            for run in runs_by_container(graph, level)[None]]


@pytest.mark.slow
@pytest.mark.parametrize("level", ["layer", "node"])
def test_resnet50s_identity_blocks_are_runs_after_each_stages_conv_block(applications, level):
    assert _titles(applications["ResNet50"], level) == [
        (2, "conv2_block2_1_conv", "conv2_block3_out"), (3, "conv3_block2_1_conv", "conv3_block4_out"),
        (5, "conv4_block2_1_conv", "conv4_block6_out"), (2, "conv5_block2_1_conv", "conv5_block3_out")]
    graph = walk(applications["ResNet50"])
    (run, *_) = runs_by_container(graph, level)[None]
    before = graph.calls[graph.calls.index(run.blocks[0][0]) - 1]
    assert before.layer.name == "conv2_block1_out"  # the stage's conv block, with its projection shortcut
    assert [call.layer.name for call in run.blocks[0]] == [
        f"conv2_block2_{name}" for name in ("1_conv", "1_bn", "1_relu", "2_conv", "2_bn", "2_relu", "3_conv",
                                            "3_bn", "add", "out")]


@pytest.mark.slow
@pytest.mark.parametrize("level", ["layer", "node"])
def test_mobilenetv2s_residual_blocks_are_runs_after_each_stages_first_block(applications, level):
    assert _titles(applications["MobileNetV2"], level) == [
        (2, "block_4_expand", "block_5_add"), (3, "block_7_expand", "block_9_add"),
        (2, "block_11_expand", "block_12_add"), (2, "block_14_expand", "block_15_add")]
