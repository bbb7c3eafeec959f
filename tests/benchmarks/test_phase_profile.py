"""The per-phase profile charges each timed method its own time, restores the methods, and covers the whole step."""

import itertools

import numpy as np
import pytest

from benchmarks import phase_profile
from benchmarks.phase_profile import PhaseTimer, by_type, leaf_layers, profile


class FakeLayer:
    """A layer whose forward runs its call; the fake clock ticks once per clock read and 10 ticks inside call."""

    def __init__(self, name, clock):
        self.name, self.clock = name, clock

    def call(self, x):
        self.clock.advance(10)
        return x

    def forward(self, x):
        self.clock.advance(1)
        return self.call(x), None

    def backward(self, cache, grad):
        self.clock.advance(3)
        return grad, {}


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def advance(self, ticks):
        self.now += ticks

    def __call__(self):
        return self.now


def test_a_method_that_runs_another_timed_one_is_charged_its_own_time_only(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(phase_profile.time, "process_time", clock)
    layer = FakeLayer("fake", clock)
    with PhaseTimer([layer], []) as timer:
        layer.forward(1)
        layer.backward(None, 1)
        layer.call(1)
    assert dict(timer.seconds) == {("fake", "FakeLayer", "forward"): 1, ("fake", "FakeLayer", "call"): 20,
                                   ("fake", "FakeLayer", "backward"): 3}
    assert not {"call", "forward", "backward"} & set(vars(layer))


def test_by_type_sums_layers_of_a_type_and_phase():
    rows = [{"type": "Conv2D", "phase": "forward", "seconds": 1.0}, {"type": "Conv2D", "phase": "forward", "seconds": 2.0},
            {"type": "Dense", "phase": "backward", "seconds": 1.0}]
    assert by_type(rows) == [{"type": "Conv2D", "phase": "forward", "seconds": 3.0, "share": 0.75},
                             {"type": "Dense", "phase": "backward", "seconds": 1.0, "share": 0.25}]


def test_profile_of_the_digits_cnn_has_every_layer_and_phase_and_adds_up_to_the_step():
    rows, per_step = profile("digits CNN", 2, 1, smoke=True)
    phases = {(row["layer"], row["phase"]) for row in rows}
    for name in ("stem", "stem_norm", "branch_3x3", "branch_1x1", "merge", "pool", "dropout", "hidden", "digit"):
        assert {(name, "forward"), (name, "backward")} <= phases
    assert any(row["phase"] == "update" and row["type"] == "Adam" for row in rows)
    assert rows[-1]["seconds"] <= rows[0]["seconds"]
    assert sum(row["share"] for row in rows) == pytest.approx(1.0)
    assert per_step > 0


def test_profile_of_the_gan_step_opens_both_models_and_times_the_inference_call():
    rows, _ = profile("GAN step", 2, 1, smoke=True)
    phases = {(row["layer"], row["phase"]) for row in rows}
    assert {("g_conv7x7", "call"), ("g_conv7x7", "forward"), ("g_conv7x7", "backward"), ("d_conv3x3_1", "backward"),
            ("g_adam", "update"), ("d_adam", "update")} <= phases


def test_leaf_layers_open_nested_models():
    from engine import Input, Model
    from layers import Dense

    x = Input(shape=(2,))
    inner = Model(x, Dense(2, name="inner_dense")(x))
    y = Input(shape=(2,))
    outer = Model(y, Dense(1, name="outer_dense")(inner(y)))
    assert [layer.name for layer in leaf_layers(outer)] == ["inner_dense", "outer_dense"]
