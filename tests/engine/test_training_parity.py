"""Keras 3's training API as scripts use it (issue #26, item 4): a Model subclass built functionally,
fit without targets, models trained only through train_step, overridden compute_loss / test_step /
predict_step, validation callbacks, nested output structures, a lazily built Sequential, masks on
eager outputs."""

import copy
import pickle

import numpy as np
import pytest

from engine import GradientTape, Input, Model, load_model
from layers import Dense


class StepModel(Model):
    """The "customizing what happens in fit" guide's model: its own train_step, no call."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.steps_run = 0

    def train_step(self, data):
        x, y = data
        with GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(y=y, y_pred=y_pred)
        self.optimizer.apply(tape.gradient(loss, self.trainable_variables), self.trainable_variables)
        self.steps_run += 1
        for metric in self.metrics:
            metric.update_state(loss) if metric.name == "loss" else metric.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


def _regression(samples=64, features=4):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(samples, features)).astype("float32")
    return x, x @ rng.normal(size=(features, 1)).astype("float32")


# ------------------------------------------------------- 1. a subclass built functionally
def test_a_model_subclass_called_with_inputs_and_outputs_is_a_functional_model_running_its_train_step():
    x = Input(shape=(4,), name="x")
    model = StepModel(x, Dense(1, name="out")(x))
    assert isinstance(model, StepModel) and type(model).__name__ == "StepModel"
    assert model.name == "step_model" and [layer.name for layer in model.layers] == ["x", "out"]
    assert model.steps_run == 0  # the subclass's __init__ ran after the graph was made
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    data, targets = _regression()
    history = model.fit(data, targets, batch_size=16, epochs=5, verbose=0)
    assert model.steps_run == 20
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert sorted(history.history) == ["loss", "mae"]
    assert model.predict(data[:3], verbose=0).shape == (3, 1)


def test_a_subclass_that_builds_its_graph_in_init_and_calls_super_with_it():
    class Builder(Model):
        def __init__(self, units, **kwargs):
            inputs = Input(shape=(3,))
            super().__init__(inputs, Dense(units)(inputs), **kwargs)

    model = Builder(5, name="builder")
    assert isinstance(model, Builder) and model.name == "builder"
    assert model(np.ones((2, 3))).shape == (2, 5)
    assert model.plan.outputs[0].shape == (None, 5)


def test_the_functional_variant_is_made_once_per_subclass_and_keeps_plain_subclassing_unchanged():
    class Plain(Model):
        def __init__(self):
            super().__init__()
            self.dense = Dense(2)

        def call(self, inputs):
            return self.dense(inputs)

    x = Input(shape=(3,))
    first, second = StepModel(x, Dense(1)(x)), StepModel(inputs=x, outputs=Dense(1)(x))
    assert type(first) is type(second)
    assert not hasattr(type(Plain()), "plan")  # a subclass called without inputs and outputs stays subclassed


def test_a_functional_subclass_saves_loads_pickles_and_copies_as_its_class(tmp_path):
    x = Input(shape=(4,), name="x")
    model = StepModel(x, Dense(2, name="out")(x), name="stepper")
    data = np.ones((3, 4), "float32")
    copies = [copy.deepcopy(model), pickle.loads(pickle.dumps(model))]
    for suffix in ("nw", "keras"):
        path = str(tmp_path / f"model.{suffix}")
        model.save(path)
        copies.append(load_model(path, custom_objects={"StepModel": StepModel}))
    for twin in copies:
        assert isinstance(twin, StepModel) and twin.name == "stepper" and twin.steps_run == 0
        np.testing.assert_allclose(twin(data), model(data), rtol=1e-6)
