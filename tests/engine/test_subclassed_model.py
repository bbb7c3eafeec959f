"""Keras' third API: a Model subclass with layers in attributes and a call()."""

import numpy as np
import pytest

from engine import Model, optimizers
from layers import Dense, Dropout


class MLP(Model):
    def __init__(self, hidden=8, **kwargs):
        super().__init__(**kwargs)
        self.hidden = Dense(hidden, activation="relu")
        self.dropout = Dropout(0.5)
        self.out = Dense(3, activation="softmax")

    def call(self, x, training=False):
        return self.out(self.dropout(self.hidden(x), training=training))


class TwoInputs(Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.branches = [Dense(4), Dense(4)]
        self.head = Dense(1)

    def call(self, inputs):
        return self.head(self.branches[0](inputs["a"]) + self.branches[1](inputs["b"]))


def _data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(20, 5)).astype("float32"), rng.integers(0, 3, size=20)


def test_compile_evaluate_and_predict_build_the_model_on_its_first_batch():
    x, y = _data()
    model = MLP()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    with pytest.raises(ValueError, match="Model 'mlp' has not run yet, so its output_names are not known"):
        model.output_names
    loss, accuracy = model.evaluate(x, y, batch_size=8, verbose=0)
    probabilities = model.predict(x, batch_size=8, verbose=0)
    assert probabilities.shape == (20, 3) and model.output_names == ["output_0"]
    np.testing.assert_allclose(probabilities, model(x), rtol=1e-6)
    expected = -np.mean(np.log(probabilities[np.arange(20), y]))
    np.testing.assert_allclose(loss, expected, rtol=1e-5)
    assert accuracy == pytest.approx(np.mean(probabilities.argmax(axis=1) == y))


def test_dict_inputs_pass_through_in_their_structure():
    rng = np.random.default_rng(1)
    inputs = {"a": rng.normal(size=(6, 2)), "b": rng.normal(size=(6, 3))}
    model = TwoInputs()
    model.compile(loss="mse")
    assert model.predict(inputs, batch_size=4, verbose=0).shape == (6, 1)
    assert model.evaluate(inputs, np.zeros((6, 1)), verbose=0) >= 0.0


def test_weights_are_saved_by_attribute_path_and_load_into_a_fresh_instance(tmp_path):
    x, _ = _data()
    model = TwoInputs()
    inputs = {"a": x[:, :2], "b": x[:, 2:]}
    expected = model.predict(inputs, verbose=0)
    model.save_weights(tmp_path / "two.npz")
    assert sorted(np.load(tmp_path / "two.npz").files) == [
        "branches/0/bias", "branches/0/kernel", "branches/1/bias", "branches/1/kernel", "head/bias", "head/kernel"]
    fresh = TwoInputs()  # other automatic layer names, same structure
    with pytest.raises(ValueError, match="has not been built yet, so it has no weights to load into"):
        fresh.load_weights(tmp_path / "two.npz")
    fresh(inputs)
    fresh.load_weights(tmp_path / "two.npz")
    np.testing.assert_array_equal(fresh.predict(inputs, verbose=0), expected)


def test_summary_lists_the_layers_and_their_parameters():
    model = MLP()
    model(np.ones((1, 5), "float32"))
    lines = []
    model.summary(print_fn=lines.append)
    text = "\n".join(lines)
    assert "dense (Dense)" in text and "dropout (Dropout)" in text and "Total params: 75" in text


def test_odd_inputs_are_refused_naming_the_model():
    model = MLP()
    with pytest.raises(ValueError, match="Input 0 of model 'mlp' expects float32 values .* dtype complex128"):
        model.predict(np.ones((2, 5), complex), verbose=0)


def test_a_two_input_subclassed_model_trains_and_reloads_by_structure(tmp_path):
    rng = np.random.default_rng(4)
    inputs = {"a": rng.normal(size=(64, 2)).astype("float32"), "b": rng.normal(size=(64, 3)).astype("float32")}
    target = inputs["a"][:, :1] - 2 * inputs["b"][:, 1:2]
    model = TwoInputs()
    model.compile(optimizer=optimizers.Adam(learning_rate=0.02), loss="mse")
    losses = model.fit(inputs, target, epochs=60, batch_size=16, verbose=0).history["loss"]
    assert losses[-1] < 0.3 * losses[0]
    model.save_weights(tmp_path / "two.npz")
    fresh = TwoInputs()
    fresh(inputs)
    fresh.load_weights(tmp_path / "two.npz")
    np.testing.assert_array_equal(fresh.predict(inputs, verbose=0), model.predict(inputs, verbose=0))


def test_saving_a_subclassed_model_whole_fails_at_save_time_and_says_what_to_do(tmp_path):
    model = MLP()
    model(np.ones((1, 5), "float32"))
    with pytest.raises(NotImplementedError, match=r"Model 'mlp' \(MLP\) is a subclassed model.*save_weights"):
        model.save(tmp_path / "mlp.nw")
    assert not list(tmp_path.iterdir())
