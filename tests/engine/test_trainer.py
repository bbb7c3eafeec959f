"""compile / fit / evaluate / predict: behaviour on small problems, and against Keras 3."""

import re

import numpy as np
import pytest

from engine import Input, Model, Sequential
from engine.utils import set_random_seed
from engine.training.optimizers import adam
from layers import BatchNormalization, Conv2D, Dense, Flatten, GlobalAveragePooling2D
from tests.layers.oracle import keras


def _xor():
    x = np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 16, "float32")
    return x, np.logical_xor(x[:, 0], x[:, 1]).astype("float32")[:, None]


def test_xor_is_learned_by_an_mlp():
    set_random_seed(0)
    x, y = _xor()
    inputs = Input(shape=(2,))
    model = Model(inputs, Dense(1, activation="sigmoid")(Dense(8, activation="tanh")(inputs)))
    model.compile(optimizer=_adam(0.02), loss="binary_crossentropy", metrics=["accuracy"])
    history = model.fit(x, y, epochs=150, batch_size=8, verbose=0)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]
    assert history.history["accuracy"][-1] == 1.0
    assert len(history.history["loss"]) == 150


def test_linear_regression_recovers_known_weights():
    set_random_seed(1)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(256, 3)).astype("float32")
    y = x @ np.array([[2.0], [-1.0], [0.5]], "float32") + 3.0
    model = Sequential([Input(shape=(3,)), Dense(1)])
    model.compile(optimizer=_sgd(0.1), loss="mse")
    model.fit(x, y, epochs=60, batch_size=32, verbose=0)
    kernel, bias = model.get_weights()
    np.testing.assert_allclose(kernel.ravel(), [2.0, -1.0, 0.5], atol=1e-3)
    np.testing.assert_allclose(bias, [3.0], atol=1e-3)


def _adam(rate):
    from engine.training.optimizers import Adam

    return Adam(learning_rate=rate)


def _sgd(rate):
    from engine.training.optimizers import SGD

    return SGD(learning_rate=rate)


def _two_headed():
    a = Input(shape=(3,), name="a")
    b = Input(shape=(2,), name="b")
    h = Dense(4, activation="relu", name="h")(a) + Dense(4, name="hb")(b)
    return Model({"a": a, "b": b}, {"score": Dense(1, name="score")(h), "label": Dense(3, activation="softmax", name="label")(h)})


def test_multi_input_multi_output_fit_with_dicts_and_loss_weights():
    set_random_seed(2)
    model = _two_headed()
    model.compile(optimizer="adam", loss={"score": "mse", "label": "sparse_categorical_crossentropy"},
                  loss_weights={"score": 0.5, "label": 2.0}, metrics={"label": ["accuracy"]})
    rng = np.random.default_rng(1)
    x = {"a": rng.normal(size=(40, 3)), "b": rng.normal(size=(40, 2))}
    y = {"score": rng.normal(size=(40, 1)), "label": rng.integers(0, 3, size=(40,))}
    history = model.fit(x, y, epochs=2, batch_size=8, verbose=0, validation_split=0.25)
    assert set(history.history) == {"loss", "label_loss", "score_loss", "label_accuracy", "val_loss",
                                    "val_label_loss", "val_score_loss", "val_label_accuracy"}
    logs = model.evaluate(x, y, verbose=0, return_dict=True)
    assert logs["loss"] == pytest.approx(0.5 * logs["score_loss"] + 2.0 * logs["label_loss"], rel=1e-5)


def _keras_twin(model):
    x = keras.Input(shape=(3,))
    twin = keras.Model(x, keras.layers.Dense(3, activation="softmax")(keras.layers.Dense(4, activation="tanh")(x)))
    twin.set_weights(model.get_weights())
    return twin


def _classifier():
    x = Input(shape=(3,))
    return Model(x, Dense(3, activation="softmax")(Dense(4, activation="tanh")(x)))


def test_sample_weight_and_class_weight_change_the_loss_as_keras_does():
    model = _classifier()
    twin = _keras_twin(model)
    rng = np.random.default_rng(3)
    x = rng.normal(size=(24, 3)).astype("float32")
    y = rng.integers(0, 3, size=(24,))
    weights = rng.uniform(0.1, 2.0, size=(24,)).astype("float32")
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    twin.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    ours = model.evaluate(x, y, sample_weight=weights, batch_size=24, verbose=0)
    theirs = twin.evaluate(x, y, sample_weight=weights, batch_size=24, verbose=0)
    assert ours == pytest.approx(theirs, rel=1e-5)
    class_weight = {0: 0.2, 1: 1.0, 2: 3.0}
    ours = model.train_on_batch(x, y, class_weight=class_weight)
    theirs = twin.train_on_batch(x, y, class_weight=class_weight)
    assert ours == pytest.approx(float(theirs), rel=1e-5)
    for mine, keras_weight in zip(model.get_weights(), twin.get_weights()):
        np.testing.assert_allclose(mine, np.asarray(keras_weight), rtol=1e-5, atol=1e-6)


def test_train_test_and_predict_on_batch_match_fit_machinery():
    model = _classifier()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    x = np.random.default_rng(4).normal(size=(8, 3))
    y = np.array([0, 1, 2, 0, 1, 2, 0, 1])
    loss, accuracy = model.test_on_batch(x, y)
    assert 0.0 <= accuracy <= 1.0 and loss > 0
    before = model.get_weights()
    model.train_on_batch(x, y)
    assert not np.array_equal(before[0], model.get_weights()[0])
    np.testing.assert_array_equal(model.predict_on_batch(x), model(x))
    np.testing.assert_allclose(model.predict(x, batch_size=3, verbose=0), model(x), rtol=1e-6)
    assert set(model.test_on_batch(x, y, return_dict=True)) == {"loss", "accuracy"}


def test_frozen_layers_keep_their_weights_bit_for_bit():
    set_random_seed(5)
    x = Input(shape=(3,))
    frozen = Dense(4, name="frozen")
    norm = BatchNormalization(name="norm")
    model = Model(x, Dense(1, name="head")(norm(frozen(x))))
    frozen.trainable = False
    norm.trainable = False
    model.compile(optimizer="adam", loss="mse")
    before = [w.copy() for w in frozen.get_weights() + norm.get_weights()]
    head_before = model.get_layer("head").get_weights()[0].copy()
    rng = np.random.default_rng(0)
    model.fit(rng.normal(size=(32, 3)), rng.normal(size=(32, 1)), epochs=2, verbose=0)
    for old, new in zip(before, frozen.get_weights() + norm.get_weights()):
        np.testing.assert_array_equal(old, new)  # moving statistics included: frozen BN uses them
    assert not np.array_equal(head_before, model.get_layer("head").get_weights()[0])


def test_regularizer_losses_are_added_to_the_total():
    x = Input(shape=(2,))
    model = Model(x, Dense(1, kernel_regularizer="l2", name="d")(x))
    model.compile(optimizer="sgd", loss="mse")
    data, target = np.ones((4, 2)), np.zeros((4, 1))
    plain = float(np.mean((model(data) - target) ** 2))
    assert model.evaluate(data, target, verbose=0) == pytest.approx(plain + sum(model.losses), rel=1e-6)


def test_a_nan_loss_is_reported_in_the_logs_and_stops_with_terminate_on_nan():
    from engine.training.callbacks import TerminateOnNaN

    model = _classifier()
    model.compile(optimizer="sgd", loss="mse")
    x = np.ones((8, 3))
    y = np.full((8, 3), np.nan)
    history = model.fit(x, y, epochs=3, batch_size=4, verbose=0)
    assert len(history.history["loss"]) == 3 and np.isnan(history.history["loss"][-1])
    history = model.fit(x, y, epochs=3, batch_size=4, verbose=0, callbacks=[TerminateOnNaN()])
    assert len(history.history["loss"]) == 1


def test_an_exception_during_the_update_leaves_no_weight_half_updated(monkeypatch):
    model = _classifier()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    x, y = np.ones((4, 3)), np.zeros(4)
    model.train_on_batch(x, y)
    before = model.get_weights()
    slots = [v.value for v in model.optimizer.variables]
    calls = []
    original = adam.take_joined

    def failing_take(variables, new):  # the weights and their momentums take new values, then the interrupt
        calls.append(variables)
        original(variables, new)
        if len(calls) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(adam, "take_joined", failing_take)
    with pytest.raises(KeyboardInterrupt):
        model.train_on_batch(x, y)
    for old, new in zip(before, model.get_weights()):
        np.testing.assert_array_equal(old, new)
    for old, variable in zip(slots, model.optimizer.variables):
        np.testing.assert_array_equal(old, variable.value)


@pytest.mark.parametrize("problem, message", [
    ({"x": np.ones((5, 3)), "y": np.zeros(4)}, r"Data cardinality is ambiguous: 'x' sizes: \[5\]; 'y' sizes: \[4\]"),
    ({"x": np.ones((5, 3)), "y": np.array([0, 1, 2, 3, 0])}, r"labels must be in \[0, 3\); received label 3"),
    ({"x": {"wrong": np.ones((5, 3))}, "y": np.zeros(5)}, r"expects inputs named \['input_layer'\]; received keys \['wrong'\]"),
])
def test_bad_training_data_fails_before_any_weight_changes(problem, message):
    model = _classifier()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    before = model.get_weights()
    with pytest.raises(ValueError, match=message):
        model.fit(**problem, verbose=0)
    for old, new in zip(before, model.get_weights()):
        np.testing.assert_array_equal(old, new)


def test_compile_errors():
    model = _two_headed()
    data = {"a": np.ones((2, 3)), "b": np.ones((2, 2))}, {"score": np.ones((2, 1)), "label": np.zeros(2)}
    model.compile(loss={"scroe": "mse"})  # as in Keras, the losses meet the outputs in fit or evaluate
    with pytest.raises(ValueError, match=r"received loss for outputs \['scroe'\], but model .* has no such output. "
                                         r"Its outputs are \['label', 'score'\]"):
        model.evaluate(*data, verbose=0)
    model.compile(loss=["mse", "mse", "mse"])  # for a dict of outputs: each loss would get both outputs
    with pytest.raises(ValueError, match=r"The loss 'mean_squared_error' at path \(\) .* applies to several outputs"):
        model.fit(*data, verbose=0)
    with pytest.raises(RuntimeError, match=r"You must call compile\(\) on model .* before fit\(\)"):
        _classifier().fit(np.ones((2, 3)), np.zeros(2))


def test_verbose_modes(capsys):
    model = _classifier()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    x, y = np.ones((8, 3)), np.zeros(8)
    model.fit(x, y, epochs=2, batch_size=4, verbose=0)
    assert capsys.readouterr() == ("", "")
    model.fit(x, y, epochs=2, batch_size=4, verbose=2)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[0].startswith("Epoch 1/2 - ")
    assert "ms/step - accuracy: " in lines[0] and " - loss: " in lines[0]  # Keras sorts its logs
    model.fit(x, y, epochs=2, batch_size=4, verbose=1)  # captured output is no terminal: the same lines
    ones = capsys.readouterr()
    assert [line.split(" - ", 1)[0] for line in ones.out.splitlines()] == ["Epoch 1/2", "Epoch 2/2"]
    assert ones.err == "" and "ms/step - accuracy: " in ones.out  # the live bar: tests/engine/test_progress.py


def test_a_metric_with_a_value_per_class_shows_their_mean_and_logs_them_all(capsys):
    from engine.training.metrics import F1Score

    model = _classifier()
    x, y = np.random.default_rng(0).standard_normal((8, 3)), np.eye(3)[np.arange(8) % 3]
    model.compile(optimizer="adam", loss="categorical_crossentropy", metrics=[F1Score()])
    history = model.fit(x, y, epochs=1, batch_size=4, verbose=2)
    scores = history.history["f1_score"][0]
    assert np.shape(scores) == (3,)
    assert f"f1_score: {np.mean(scores):.4f}" in capsys.readouterr().out
    model.fit(x, y, epochs=1, batch_size=4, verbose=1)  # the mean too
    _loss, per_class = model.evaluate(x, y, verbose=1)
    assert np.shape(per_class) == (3,) and f"f1_score: {np.mean(per_class):.4f}" in capsys.readouterr().out


# ------------------------------------------------- empty data, batch sizes, target shapes
def test_predict_on_zero_samples_returns_empty_outputs_shaped_like_the_model_call():
    model = _two_headed()
    empty = {"a": np.zeros((0, 3), "float32"), "b": np.zeros((0, 2), "float32")}
    outputs = model.predict(empty, verbose=0)
    assert {k: (v.shape, v.dtype) for k, v in outputs.items()} == {
        "score": ((0, 1), np.float32), "label": ((0, 3), np.float32)}
    x = keras.Input(shape=(3,))
    twin = keras.Model(x, keras.layers.Dense(3)(x))
    assert tuple(twin(np.zeros((0, 3), "float32")).shape) == (0, 3)  # Keras' call (its predict crashes)


def test_fit_evaluate_and_train_on_batch_refuse_zero_samples_and_change_no_weight():
    model = _classifier()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    before = model.get_weights()
    x, y = np.zeros((0, 3)), np.zeros((0,))
    for call, name in ((lambda: model.fit(x, y, verbose=0), r"fit\(\)"),
                       (lambda: model.evaluate(x, y, verbose=0), r"evaluate\(\)"),
                       (lambda: model.train_on_batch(x, y), r"train_on_batch\(\)"),
                       (lambda: model.fit(np.ones((4, 3)), np.zeros(4), validation_data=(x, y), verbose=0),
                        r"The validation_data of fit\(\)")):
        with pytest.raises(ValueError, match=rf"^{name} of model '{model.name}' received 0 samples \(the data is "
                                             r"empty along axis 0\)\. Pass at least one sample"):
            call()
    for old, new in zip(before, model.get_weights()):
        np.testing.assert_array_equal(old, new)


def test_test_on_batch_of_zero_samples_gives_zero_loss_and_metrics_as_keras_does():
    model = _classifier()
    twin = _keras_twin(model)
    for m in (model, twin):
        m.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    x, y = np.zeros((0, 3), "float32"), np.zeros((0, 3), "float32")
    assert model.test_on_batch(x, y) == [float(v) for v in twin.test_on_batch(x, y)] == [0.0, 0.0]


@pytest.mark.parametrize("method", ["fit", "evaluate", "predict"])
def test_batch_size_is_checked_before_any_work(method):
    model = _classifier()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    data = (np.ones((4, 3)),) if method == "predict" else (np.ones((4, 3)), np.zeros(4))
    run = getattr(model, method)
    with pytest.raises(ValueError, match=r"batch_size must be a positive integer \(or None for the default 32\); "
                                         r"received batch_size=0\."):
        run(*data, batch_size=0, verbose=0)
    with pytest.raises(TypeError, match=r"received batch_size=2\.5 of type float"):
        run(*data, batch_size=2.5, verbose=0)
    run(*data, batch_size=None, verbose=0)  # Keras' default, 32


def test_none_batch_size_means_32_samples_per_step():
    from engine.training.callbacks import Callback

    seen = Callback()
    model = _classifier()
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    model.fit(np.ones((40, 3)), np.zeros(40), batch_size=None, verbose=0, callbacks=[seen])
    assert seen.params["steps"] == 2 and seen.params["batch_size"] == 32


TARGET_CASES = [  # (loss class, output shape, target shape): Keras' loss objects accept or refuse each pair
    ("MeanSquaredError", (1,), ()), ("MeanSquaredError", (2,), (1,)), ("MeanSquaredError", (2,), (2, 1)),
    ("MeanSquaredError", (1,), (4,)), ("MeanSquaredError", (2,), ()), ("MeanSquaredError", (2,), (3,)),
    ("MeanAbsoluteError", (2,), ()), ("Huber", (2,), ()), ("CosineSimilarity", (2,), ()), ("KLDivergence", (2,), ()),
    ("BinaryCrossentropy", (1,), ()), ("BinaryCrossentropy", (2,), ()), ("BinaryCrossentropy", (2,), (1,)),
    ("CategoricalCrossentropy", (3,), ()), ("CategoricalCrossentropy", (3,), (1,)),
    ("CategoricalCrossentropy", (3,), (3,)), ("SparseCategoricalCrossentropy", (3,), ()),
    ("SparseCategoricalCrossentropy", (3,), (1,)), ("SparseCategoricalCrossentropy", (3,), (3,)),
]


@pytest.mark.parametrize("loss, output_shape, target_shape", TARGET_CASES)
def test_target_shapes_are_refused_up_front_exactly_where_keras_losses_refuse_them(loss, output_shape, target_shape):
    n = 5
    y = np.random.default_rng(0).integers(0, 2, size=(n,) + target_shape).astype("float32")
    y_pred = np.full((n,) + output_shape, 0.5, "float32")
    try:
        getattr(keras.losses, loss)()(y, y_pred)  # the loss object compile() uses, which aligns ranks
        keras_accepts = True
    except (ValueError, TypeError):
        keras_accepts = False
    x = Input(shape=(4,), name="x")
    model = Model(x, Dense(output_shape[0], activation="sigmoid", name="head")(x), name="net")
    model.compile(optimizer="sgd", loss=loss)
    if keras_accepts:
        model.compiled_loss.check_targets([y], model)
    else:
        with pytest.raises(ValueError, match=rf"^Targets for output 'head' of model 'net' do not fit its loss '.+': "
                                             rf"expected shape .* for an output of shape \(None, {output_shape[0]}\), "
                                             rf"but received targets of shape {re.escape(str(y.shape))}\. \w"):
            model.fit(np.ones((n, 4)), y, verbose=0)


def test_target_shape_errors_say_what_to_do():
    x = Input(shape=(4,), name="x")
    model = Model(x, Dense(2, name="head")(x), name="net")
    data = np.ones((6, 4))
    model.compile(optimizer="sgd", loss="mse")
    with pytest.raises(ValueError, match=r"loss 'mean_squared_error': expected shape \(6, 2\) \(a trailing axis of 1 "
                                         r"may be added or dropped\) for an output of shape \(None, 2\), but received "
                                         r"targets of shape \(6,\)\. Targets of shape \(6,\) look like integer class "
                                         r"labels: for 2 classes use loss='sparse_categorical_crossentropy'"):
        model.fit(data, np.zeros(6), verbose=0)
    model.compile(optimizer="sgd", loss="categorical_crossentropy")
    with pytest.raises(ValueError, match=r"These look like integer class labels: use "
                                         r"loss='sparse_categorical_crossentropy', or one-hot encode them"):
        model.evaluate(data, np.zeros((6, 1)), verbose=0)
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    with pytest.raises(ValueError, match=r"expected shape \(6,\) or \(6, 1\) \(one integer class index per sample\) .* "
                                         r"For one-hot labels use loss='categorical_crossentropy'"):
        model.train_on_batch(data, np.eye(2)[np.zeros(6, int)])
    with pytest.raises(ValueError, match=r"Targets for output 'head' of model 'net'"):
        model.test_on_batch(data, np.zeros((6, 3)))


@pytest.mark.parametrize("loss, noun", [("sparse_categorical_crossentropy", "labels"),
                                         ("categorical_crossentropy", "labels"), ("mse", "targets")])
def test_a_forgotten_flatten_is_blamed_on_the_output_and_the_advice_fixes_it(loss, noun):
    images, labels = np.ones((16, 8, 8, 1), "float32"), np.zeros(16)
    x = Input(shape=(8, 8, 1), name="image")
    features = Conv2D(4, 3, name="conv")(x)
    model = Model(x, Dense(3, activation="softmax", name="head")(features), name="cnn")
    model.compile(optimizer="sgd", loss=loss)
    with pytest.raises(ValueError) as error:
        model.fit(images, labels, verbose=0)
    message = str(error.value)
    assert message.startswith(f"The output shape of model 'cnn' does not fit its {noun}: output 'head' has shape "
                              f"(None, 6, 6, 3), for which loss ")
    assert f"but received {noun} of shape (16,). The output has more axes than the {noun}: it comes from layer " \
           "'head' (Dense) applied to an input of shape (None, 6, 6, 4). To predict one " in message
    assert message.endswith("per sample, add a Flatten or GlobalAveragePooling2D layer before the last Dense layer.")
    assert "Reshape" not in message
    for fix in (Flatten(), GlobalAveragePooling2D()):  # either advised layer makes the same labels fit
        fixed = Model(x, Dense(3, activation="softmax")(fix(features)))
        fixed.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
        assert len(fixed.fit(images, labels, verbose=0).history["loss"]) == 1


def test_an_output_with_more_axes_than_labels_per_step_asks_for_the_labels_axes():
    x = Input(shape=(5, 4, 2), name="frames")
    model = Model(x, Dense(3, name="head")(x), name="tagger")
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    with pytest.raises(ValueError, match=r"^The output shape of model 'tagger' does not fit its labels: output 'head' "
                                         r"has shape \(None, 5, 4, 3\), .* received labels of shape \(6, 5\)\. The "
                                         r"output has more axes than the labels: it comes from layer 'head' \(Dense\) "
                                         r"applied to an input of shape \(None, 5, 4, 2\)\. Change the model so that "
                                         r"its output has the labels' axes, or give labels of shape \(6, 5, 4\) or "):
        model.fit(np.ones((6, 5, 4, 2)), np.zeros((6, 5)), verbose=0)


def test_reshaping_the_labels_is_advised_only_when_they_hold_the_values_the_output_needs():
    x = Input(shape=(4,), name="x")
    model = Model(x, Dense(3, activation="softmax", name="head")(x), name="net")
    model.compile(optimizer="sgd", loss="categorical_crossentropy")
    data, one_hot = np.ones((6, 4)), np.eye(3)[np.arange(6) % 3]
    with pytest.raises(ValueError, match=r"received targets of shape \(6, 1, 3\)\. Reshape the labels to \(6, 3\)\.$"):
        model.fit(data, one_hot[:, None, :], verbose=0)
    model.fit(data, one_hot[:, None, :].reshape(6, 3), verbose=0)  # the advice works
    with pytest.raises(ValueError, match=r"received targets of shape \(6, 4\)\. Give labels of shape \(6, 3\), or "
                                         r"change the model so that its output fits labels of shape \(6, 4\) \(the "
                                         r"output comes from layer 'head' \(Dense\) applied to an input of shape "
                                         r"\(None, 4\)\)\.$"):
        model.fit(data, np.eye(4)[np.arange(6) % 4], verbose=0)


def test_inputs_of_different_batch_sizes_raise_one_error_naming_the_model_and_the_inputs():
    a, b = Input(shape=(2,), name="a"), Input(shape=(3,), name="b")
    model = Model([a, b], Dense(1, name="out")(Dense(2)(a) + Dense(2)(b)), name="pair")
    model.compile(optimizer="sgd", loss="mse")
    xs = [np.ones((3, 2)), np.ones((4, 3))]
    message = r"^Model 'pair' received inputs with different batch sizes: \{'a': 3, 'b': 4\}\. Every input holds the"
    for call in (lambda: model(xs), lambda: model({"a": xs[0], "b": xs[1]}), lambda: model.predict(xs, verbose=0),
                 lambda: model.fit(xs, np.ones((3, 1)), verbose=0)):
        with pytest.raises(ValueError, match=message):
            call()


def test_a_metric_object_used_before_starts_afresh_in_evaluate_as_in_keras():
    from engine.training.metrics import TruePositives

    x, y = np.random.default_rng(0).standard_normal((30, 3)), np.eye(3)[np.arange(30) % 3]
    used = TruePositives()
    used.update_state(np.ones((9, 1)), np.ones((9, 1)))  # 9 counted before compile
    model = _classifier()
    model.compile(loss="categorical_crossentropy", metrics=[used])
    fresh = TruePositives()
    fresh.update_state(y, model.predict(x, verbose=0))
    assert model.evaluate(x, y, verbose=0, return_dict=True)["true_positives"] == float(fresh.result())


def test_fit_and_evaluate_take_an_optional_input_given_as_none():
    from engine import Layer

    class AddIfGiven(Layer):
        def call(self, x, extra=None):
            return x if extra is None else x + extra

    x, extra = Input(shape=(2,), name="x"), Input(shape=(2,), name="a_extra", optional=True)
    model = Model({"x": x, "a_extra": extra}, Dense(2)(AddIfGiven()(x, extra)))
    model.compile(loss="mse", optimizer="sgd")
    data = {"x": np.ones((4, 2)), "a_extra": None}  # the optional input comes first in sorted order
    history = model.fit(data, np.ones((4, 2)), batch_size=2, epochs=1, verbose=0)
    assert len(history.history["loss"]) == 1
    assert model.evaluate(data, np.ones((4, 2)), verbose=0) == pytest.approx(model.evaluate(
        {"x": np.ones((4, 2)), "a_extra": np.zeros((4, 2))}, np.ones((4, 2)), verbose=0))
