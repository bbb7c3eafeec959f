"""Model.get_state_tree / set_state_tree / metrics_variables (engine/network/state_tree.py)."""

import numpy as np
import pytest

from engine import Input, Model
from engine.training.optimizers import Adam
from layers import Dense


def _trained_model():
    x = Input(shape=(2,), name="features")
    model = Model(x, Dense(1, name="head")(Dense(3, name="hidden")(x)))
    model.compile(optimizer=Adam(name="opt"), loss="mse", metrics=["mae"])  # one name in every model
    model.fit(np.arange(8, dtype="float32").reshape(4, 2), np.ones((4, 1)), epochs=2, verbose=0)
    return model


def test_the_tree_nests_each_family_by_variable_path():
    model = _trained_model()
    state = model.get_state_tree()
    assert sorted(state) == ["metrics_variables", "non_trainable_variables", "optimizer_variables",
                             "trainable_variables"]
    assert state["trainable_variables"]["hidden"]["kernel"] is model.get_layer("hidden").kernel.value
    assert state["non_trainable_variables"] == {}
    adam = state["optimizer_variables"]["opt"]
    assert int(adam["iteration"]) == 2  # two epochs of one batch
    assert {"iteration", "learning_rate"} < set(adam)
    metrics = state["metrics_variables"]
    assert float(metrics["loss"]["count"]) == 4.0  # the running mean of the last epoch: 4 samples
    assert float(metrics["mae"]["total"]) > 0.0


def test_numpy_values_are_copies():
    model = _trained_model()
    kernel = model.get_state_tree(value_format="numpy_array")["trainable_variables"]["head"]["kernel"]
    kernel[...] = 7.0
    assert not np.any(model.get_layer("head").kernel.value == 7.0)


def test_set_state_tree_assigns_weights_optimizer_and_metric_state():
    model = _trained_model()
    model.set_state_tree({
        "trainable_variables": {"head": {"bias": [0.25]}},
        "optimizer_variables": {"opt": {"iteration": 10}},
        "metrics_variables": {"loss": {"total": 6.0, "count": 3.0}},
    })
    assert model.get_layer("head").bias.value.tolist() == [0.25]
    assert model.optimizer.iterations == 10
    assert model.metrics[0].result() == pytest.approx(2.0)
    by_path = {v.path: float(v.value) for v in model.metrics_variables}
    assert by_path["loss/total"] == 6.0 and by_path["loss/count"] == 3.0


def test_a_tree_round_trips_into_a_fresh_model():
    trained, fresh = _trained_model(), _trained_model()
    fresh.set_state_tree(trained.get_state_tree(value_format="numpy_array"))
    batch = np.ones((2, 2), "float32")
    np.testing.assert_array_equal(fresh.predict(batch, verbose=0), trained.predict(batch, verbose=0))


def test_duplicate_paths_and_bad_arguments_are_named():
    class TwoSameNames(Model):
        def __init__(self):
            super().__init__()
            self.first, self.second = Dense(2, name="twin"), Dense(2, name="twin")

        def call(self, x):
            return self.second(self.first(x))

    model = TwoSameNames()
    model(np.ones((1, 2)))
    with pytest.raises(ValueError, match="variable path is found twice in the model: 'twin/kernel'"):
        model.get_state_tree()
    model = _trained_model()
    with pytest.raises(ValueError, match="value_format"):
        model.get_state_tree(value_format="torch")
    with pytest.raises(ValueError, match="Unknown variable name: 'weights'"):
        model.set_state_tree({"weights": {}})
    with pytest.raises(ValueError, match="'head/gamma'.*not have"):
        model.set_state_tree({"trainable_variables": {"head": {"gamma": 1.0}}})
