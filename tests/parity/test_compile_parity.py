"""compile() as Keras 3 reads it: loss and metric aliases, losses, weights and
metrics laid over the outputs, weighted metrics, and models compiled without a
loss; evaluate's values and metrics_names compared with Keras on twin models."""

import keras
import numpy as np
import pytest
from keras.src.trainers.compile_utils import get_loss as keras_get_loss
from keras.src.trainers.compile_utils import get_metric as keras_get_metric

from engine import GradientTape, Input, Layer, Model
from engine.training import losses, metrics
from engine.training.compile_utils import _get_metric
from layers import Dense

RNG = np.random.default_rng(0)
X = RNG.normal(size=(8, 4)).astype("float32")
Y_A = np.eye(3, dtype="float32")[RNG.integers(0, 3, 8)]
Y_B = RNG.integers(0, 2, (8, 1)).astype("float32")
SAMPLE_WEIGHT = RNG.uniform(size=8).astype("float32")
TARGETS = {"list": [Y_A, Y_B], "dict": {"a": Y_A, "b": Y_B}, "single": Y_A}


def _twins(kind):
    """Our model and Keras' with the same layers and weights: one output ``a``
    (3 softmax units), or ``a`` and ``b`` (1 sigmoid unit) as a list or a dict."""
    x = Input((4,), name="x")
    a, b = Dense(3, activation="softmax", name="a")(x), Dense(1, activation="sigmoid", name="b")(x)
    kx = keras.Input((4,), name="x")
    ka = keras.layers.Dense(3, activation="softmax", name="a")(kx)
    kb = keras.layers.Dense(1, activation="sigmoid", name="b")(kx)
    ours, theirs = {"list": ([a, b], [ka, kb]), "dict": ({"a": a, "b": b}, {"a": ka, "b": kb}), "single": (a, ka)}[kind]
    model, twin = Model(x, ours), keras.Model(kx, theirs)
    twin.set_weights(model.get_weights())
    return model, twin


def _evaluate(model, y, compile_args, sample_weight):
    model.compile(optimizer="sgd", **compile_args)
    before = model.metrics_names
    logs = model.evaluate(X, y, sample_weight=sample_weight, verbose=0, return_dict=True)
    values = model.evaluate(X, y, sample_weight=sample_weight, verbose=0)
    return before, model.metrics_names, logs, np.atleast_1d(np.asarray(values, "float64"))


CASES = [
    ("single", {"loss": "mse", "metrics": ["acc", "mse", "MSE", "mape", "msle", "bce", "BCE", "mean_squared_error",
                                            "categorical_accuracy", "ACC", "Accuracy"]}),
    ("single", {"loss": "CE", "metrics": ["accuracy"], "weighted_metrics": ["accuracy", "mae"]}),
    ("single", {"loss": "categorical_crossentropy", "metrics": ["acc"], "weighted_metrics": ["acc"]}),
    ("single", {"loss": ["mse"], "metrics": [["acc", "mae"]]}),
    ("single", {"loss": {"a": "mse"}, "metrics": {"a": ["acc"]}}),
    ("single", {"loss": "mse", "loss_weights": [2.0]}),
    ("single", {"loss": "mse", "loss_weights": 2.0}),
    ("single", {"metrics": ["acc"]}),
    ("single", {}),
    ("list", {"loss": "mse"}),
    ("list", {"loss": "mse", "loss_weights": 0.5}),
    ("list", {"loss": ["mse", "mse"], "loss_weights": {"a": 1.0, "b": 0.5}}),
    ("list", {"loss": {"a": "mse", "b": "mse"}, "loss_weights": [1.0, 0.5]}),
    ("list", {"loss": [None, "bce"], "metrics": {"a": "acc"}}),
    ("list", {"loss": ["mse", "bce"], "metrics": [["acc"], "acc"]}),
    ("list", {"loss": ["mape", "msle"], "metrics": [["mape", "msle", "mae", "mse"], ["bce", "mse"]]}),
    ("list", {"loss": ["ce", "crossentropy"], "loss_weights": [0.3, 2], "metrics": [["acc"], ["acc"]],
              "weighted_metrics": [["acc", "mae"], ["mse"]]}),
    ("dict", {"loss": {"b": "bce"}}),
    ("dict", {"loss": ["mse", "bce"], "metrics": {"b": "acc"}}),
    ("dict", {"loss": "ce", "metrics": ["acc", "acc"]}),
    ("dict", {"loss": "ce", "metrics": {"a": "acc", "b": "acc"}, "weighted_metrics": {"a": "acc"}}),
]


@pytest.mark.parametrize("weighted", [False, True], ids=["no sample weights", "sample weights"])
@pytest.mark.parametrize("kind, compile_args", CASES, ids=[f"{kind}-{args}" for kind, args in CASES])
def test_evaluate_and_metrics_names_match_keras(kind, compile_args, weighted):
    model, twin = _twins(kind)
    sample_weight = SAMPLE_WEIGHT if weighted else None
    ours = _evaluate(model, TARGETS[kind], compile_args, sample_weight)
    theirs = _evaluate(twin, TARGETS[kind], compile_args, sample_weight)
    assert ours[:2] == theirs[:2]
    assert ours[2].keys() == theirs[2].keys()
    np.testing.assert_allclose([ours[2][k] for k in theirs[2]], list(theirs[2].values()), rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(ours[3], theirs[3], rtol=2e-5, atol=1e-6)


BAD = [
    ("list", {"loss": "mse", "loss_weights": [1.0, 0.5]}, "`loss_weights` must match the number of losses"),
    ("list", {"loss": "mse", "loss_weights": {"a": 1.0, "b": 0.5}}, "`loss_weights` must match the number"),
    ("list", {"loss": {"a": "mse", "b": "mse", "c": "mse"}}, r"Expected keys \['a', 'b'\] in loss dict"),
    ("list", {"loss": {"b": "bce"}}, r"Expected keys \['a', 'b'\] in loss dict, .* outputs \['a'\] have no entry"),
    ("list", {"loss": ["mse", "bce", "mae"]}, "received 3 loss for a model with 2 outputs"),
    ("single", {"loss": {"z": "mse"}}, r"Expected keys \['a'\] in loss dict"),
    ("dict", {"loss": {"b": "bce", "c": "mse"}}, r"The path: \('c',\) in the `loss` argument, can't be found"),
    ("list", {"loss": ["mse", "bce"], "metrics": ["acc"]}, "Invalid `metrics`"),
    ("list", {"loss": ["mse", "bce"], "metrics": [["acc", "mae"]]}, "Invalid `metrics`"),
    ("list", {"loss": ["mse", "bce"], "metrics": "acc"}, "Expected `metrics` argument to be a list, tuple, or dict"),
    ("single", {"loss": "mse", "metrics": "mae"},
     r"Received instead: metrics='mae' .* Write metrics=\['mae'\]"),
]


@pytest.mark.parametrize("kind, compile_args, message", BAD, ids=[f"{k}-{a}" for k, a, _ in BAD])
def test_arguments_keras_refuses_raise_its_exception_type(kind, compile_args, message):
    model, twin = _twins(kind)
    with pytest.raises((ValueError, KeyError)) as theirs:
        _evaluate(twin, TARGETS[kind], compile_args, None)
    with pytest.raises(type(theirs.value), match=message):
        _evaluate(model, TARGETS[kind], compile_args, None)


@pytest.mark.parametrize("name", ["mse", "MSE", "mae", "MAE", "mape", "MAPE", "msle", "MSLE", "bce", "BCE", "kld",
                                  "KLD", "mean_squared_error", "mean_absolute_percentage_error",
                                  "mean_squared_logarithmic_error", "binary_crossentropy", "kl_divergence", "huber",
                                  "cosine_similarity", "MeanSquaredLogarithmicError", "MeanAbsolutePercentageError"])
def test_loss_names_compute_what_keras_computes(name):
    y_true = RNG.uniform(0.05, 1, (6, 3)).astype("float32")
    y_pred = RNG.uniform(0.05, 1, (6, 3)).astype("float32")
    np.testing.assert_allclose(float(losses.get(name)(y_true, y_pred)),
                               float(keras.losses.get(name)(y_true, y_pred).mean()), rtol=1e-6)


@pytest.mark.parametrize("name", ["huber_loss", "acc", "crossentropy"])
def test_names_keras_losses_do_not_know_are_refused(name):
    with pytest.raises(ValueError):
        keras.losses.get(name)
    with pytest.raises(ValueError, match=f"Unknown loss: '{name}'"):
        losses.get(name)


@pytest.mark.parametrize("name", ["acc", "kld", "huber", "mean_metric_wrapper"])
def test_names_keras_metrics_do_not_know_are_refused(name):
    with pytest.raises((ValueError, TypeError)):
        keras.metrics.get(name)
    with pytest.raises(ValueError, match=f"Unknown metric: '{name}'"):
        metrics.get(name)


SHAPES = [((8,), (8, 3)), ((8, 1), (8, 3)), ((8, 3), (8, 3)), ((8, 1), (8, 1)), ((8,), (8, 1)), ((8, 5), (8, 5, 3))]


@pytest.mark.parametrize("target_shape, output_shape", SHAPES)
@pytest.mark.parametrize("spec", ["acc", "ACC", "Accuracy", "accuracy"])
def test_accuracy_aliases_resolve_from_shapes_as_keras(spec, target_shape, output_shape):
    theirs = keras_get_metric(spec, np.zeros(target_shape), np.zeros(output_shape))
    ours = _get_metric(spec, target_shape, output_shape)
    assert (type(ours).__name__, ours.name) == (type(theirs).__name__, theirs.name)


@pytest.mark.parametrize("target_shape, output_shape", SHAPES)
@pytest.mark.parametrize("spec", ["ce", "CE", "crossentropy", "CrossEntropy"])
def test_crossentropy_aliases_resolve_from_shapes_as_keras(spec, target_shape, output_shape):
    y_true = np.zeros(target_shape, "float32")
    x = Input(output_shape[1:])
    model = Model(x, Dense(output_shape[-1])(x))
    model.compile(loss=spec)
    model.compiled_loss.check_targets([y_true], model)
    expected = keras_get_loss(spec, y_true, np.zeros(output_shape)).fn.__name__
    assert type(model.compiled_loss.losses[0]) is type(losses.get(expected))


def test_metrics_see_no_sample_weights_and_weighted_metrics_do():
    model, twin = _twins("single")
    for m in (model, twin):
        m.compile(optimizer="sgd", loss="categorical_crossentropy", metrics=["mae"], weighted_metrics=["mae"])
    ours = model.evaluate(X, Y_A, sample_weight=SAMPLE_WEIGHT, verbose=0, return_dict=True)
    unweighted = model.evaluate(X, Y_A, verbose=0, return_dict=True)
    assert ours["mae"] == pytest.approx(unweighted["mae"]) and ours["weighted_mae"] != pytest.approx(ours["mae"])
    assert ours == pytest.approx(twin.evaluate(X, Y_A, sample_weight=SAMPLE_WEIGHT, verbose=0, return_dict=True))


def test_class_weight_reaches_weighted_metrics_as_in_keras():
    model, twin = _twins("single")
    labels = Y_A.argmax(axis=-1)
    histories = []
    for m in (model, twin):
        m.compile(optimizer="sgd", loss="sparse_categorical_crossentropy", metrics=["acc"], weighted_metrics=["acc"])
        histories.append(m.fit(X, labels, class_weight={0: 0.2, 1: 1.0, 2: 3.0}, batch_size=8, epochs=1,
                               shuffle=False, verbose=0).history)
    assert histories[0].keys() == histories[1].keys() == {"loss", "acc", "weighted_acc"}
    for key in histories[1]:
        assert histories[0][key] == pytest.approx(histories[1][key], rel=1e-5)


class _Penalty(Layer):
    def call(self, inputs):
        self.add_loss(0.01 * np.sum(inputs ** 2))
        return inputs


class _KerasPenalty(keras.layers.Layer):
    def call(self, inputs):
        self.add_loss(0.01 * keras.ops.sum(inputs ** 2))
        return inputs


def test_a_model_whose_only_loss_is_add_loss_trains_on_it_as_keras_does():
    x, kx = Input((4,)), keras.Input((4,))
    model = Model(x, _Penalty()(Dense(3)(x)))
    twin = keras.Model(kx, _KerasPenalty()(keras.layers.Dense(3)(kx)))
    twin.set_weights(model.get_weights())
    results = []
    for m in (model, twin):
        m.compile(optimizer="sgd")
        history = m.fit(X, epochs=3, batch_size=4, shuffle=False, verbose=0).history
        results.append((history["loss"], m.evaluate(X, verbose=0), m.metrics_names))
    assert results[0][0] == pytest.approx(results[1][0], rel=1e-5)
    assert results[0][0][-1] < results[0][0][0]
    assert results[0][1] == pytest.approx(results[1][1], rel=1e-5) and results[0][2] == results[1][2] == ["loss"]


def test_a_model_compiled_without_loss_predicts_and_evaluates_but_does_not_fit():
    model, twin = _twins("single")
    for m in (model, twin):
        m.compile(optimizer="sgd")
    np.testing.assert_allclose(model.predict(X, verbose=0), twin.predict(X, verbose=0), rtol=1e-5, atol=1e-6)
    assert model.evaluate(X, verbose=0) == twin.evaluate(X, verbose=0) == 0.0
    assert model.evaluate(X, Y_A, verbose=0) == 0.0 and model.metrics_names == twin.metrics_names == ["loss"]
    # Keras' TensorFlow and PyTorch trainers raise this (its JAX trainer trains on a loss of 0).
    with pytest.raises(ValueError, match=r"No loss to compute\. Provide a `loss` argument in `compile\(\)`\. "
                                         r"Model '.*' has nothing to train on: it was compiled without loss="):
        model.fit(X, Y_A, verbose=0)
    model.compile(optimizer="sgd", loss="mse")
    with pytest.raises(ValueError, match=r"No loss to compute\. .* it received no targets \(y\)"):
        model.fit(X, verbose=0)


def test_train_on_batch_returns_values_in_keras_order():
    model, twin = _twins("list")
    for m in (model, twin):
        m.compile(optimizer="sgd", loss=["mse", "bce"], metrics=[["mae"], ["acc"]], weighted_metrics=[["mae"], []])
    ours = model.train_on_batch(X, [Y_A, Y_B], sample_weight=SAMPLE_WEIGHT)
    theirs = twin.train_on_batch(X, [Y_A, Y_B], sample_weight=SAMPLE_WEIGHT)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)
    assert model.metrics_names == twin.metrics_names == ["loss", "compile_metrics", "a_loss", "b_loss"]


def test_a_custom_train_step_updates_compile_metrics_as_in_the_keras_guide():
    class CustomModel(Model):
        def __init__(self):
            super().__init__()
            self.dense = Dense(3, activation="softmax")

        def call(self, x):
            return self.dense(x)

        def train_step(self, data):
            x, y = data
            with GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred)
            self.optimizer.apply(tape.gradient(loss, self.trainable_variables), self.trainable_variables)
            for metric in self.metrics:
                metric.update_state(loss) if metric.name == "loss" else metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    model = CustomModel()
    model.compile(optimizer="sgd", loss="categorical_crossentropy", metrics=["acc", "mae"])
    history = model.fit(X, Y_A, epochs=2, verbose=0).history
    assert set(history) == {"loss", "acc", "mae"}
    assert model.metrics_names == ["loss", "compile_metrics"]
    assert [type(m).__name__ for m in model.compiled_metrics.metrics] == ["CategoricalAccuracy", "MeanAbsoluteError"]


def test_a_list_of_losses_at_one_output_sums_them_as_in_keras():
    x = Input(shape=(3,), name="x")
    model = Model(x, [Dense(1, name="a")(x), Dense(1, activation="sigmoid", name="b")(x)])
    data = np.random.default_rng(0).random((8, 3)), [np.ones((8, 1)), np.zeros((8, 1))]
    model.compile(loss=["mse", "binary_crossentropy"])
    plain = model.evaluate(*data, verbose=0, return_dict=True)
    model.compile(loss=["mse", ["binary_crossentropy"]], loss_weights=[1.0, 1.0])
    assert model.evaluate(*data, verbose=0, return_dict=True) == pytest.approx(plain)
    model.compile(loss=["mse", "mse"])
    mse_b = model.evaluate(*data, verbose=0, return_dict=True)["b_loss"]
    model.compile(loss=["mse", ["binary_crossentropy", "mse"]])
    logs = model.evaluate(*data, verbose=0, return_dict=True)
    assert logs["loss"] == pytest.approx(plain["loss"] + mse_b)
    assert model.metrics_names == ["loss", "a_loss", "b_loss", "b_loss"]  # one mean per loss, named by output


# --- outputs in a nested structure, losses over a part of it (Keras' CompileLoss) ---------------------------

def _sum_of_mae(mean_absolute_error):
    """A loss of several outputs at once: the sum of their mean absolute errors (flat in tree order)."""
    from engine import tree

    def structure_mae(y_true, y_pred):
        return sum(mean_absolute_error(t, p) for t, p in zip(tree.flatten(y_true), tree.flatten(y_pred)))
    return structure_mae


def _nested_twins():
    """Our model and Keras' with outputs ``{"p": (u, v), "w": w}`` (one sigmoid unit each), same weights."""
    def build(lib_input, dense, model_cls):
        x = lib_input((4,), name="x")
        u, v, w = (dense(1, activation="sigmoid", name=n)(x) for n in "uvw")
        return model_cls(x, {"p": (u, v), "w": w})
    model = build(Input, Dense, Model)
    twin = build(keras.Input, keras.layers.Dense, keras.Model)
    twin.set_weights(model.get_weights())
    return model, twin


NESTED_TARGETS = {"p": (RNG.uniform(size=(8, 1)).astype("float32"), RNG.uniform(size=(8, 1)).astype("float32")),
                  "w": RNG.uniform(size=(8, 1)).astype("float32")}


@pytest.mark.parametrize("weighted", [False, True], ids=["no loss weights", "loss weights"])
def test_losses_over_parts_of_nested_outputs_train_as_in_keras(weighted):
    model, twin = _nested_twins()
    results = []
    for m, lib in ((model, losses), (twin, keras.losses)):
        loss = {"p": [_sum_of_mae(lib.mean_absolute_error), (None, "mse")], "w": _sum_of_mae(lib.mean_absolute_error)}
        loss_weights = {"p": [0.25, (None, 3.0)], "w": 2.0} if weighted else None
        m.compile(optimizer=("sgd" if m is model else keras.optimizers.SGD(0.5)), loss=loss, loss_weights=loss_weights)
        if m is model:
            m.optimizer.learning_rate = 0.5
        logs = m.train_on_batch(X, NESTED_TARGETS, sample_weight=SAMPLE_WEIGHT, return_dict=True)
        evaluated = m.evaluate(X, NESTED_TARGETS, verbose=0, return_dict=True)
        results.append((logs, evaluated, m.get_weights()))
    (ours, ours_eval, our_weights), (theirs, their_eval, their_weights) = results
    assert sorted(ours) == sorted(theirs) == ["loss", "p/v_loss", "p_loss", "w_loss"]
    for key in theirs:
        assert ours[key] == pytest.approx(float(theirs[key]), rel=1e-5)
        assert ours_eval[key] == pytest.approx(float(their_eval[key]), rel=1e-5)
    for mine, keras_weight in zip(our_weights, their_weights):  # one step: the gradients of every loss agree
        np.testing.assert_allclose(mine, keras_weight, rtol=1e-5, atol=1e-6)


def test_a_list_of_losses_over_a_tuple_of_outputs_gives_each_the_whole_tuple_or_its_part():
    x = Input((4,), name="x")
    model = Model(x, (Dense(1, name="u")(x), Dense(1, name="v")(x)))
    y = (np.zeros((8, 1)), np.ones((8, 1)))
    seen = []

    def whole(y_true, y_pred):
        seen.append((type(y_true).__name__, type(y_pred).__name__))
        return _sum_of_mae(losses.mean_absolute_error)(y_true, y_pred)

    model.compile(optimizer="sgd", loss=[whole, ("mse", "mae")])
    logs = model.evaluate(X, y, verbose=0, return_dict=True)
    assert seen == [("tuple", "tuple")]
    assert sorted(logs) == ["loss", "u_loss", "u_v_loss", "v_loss"]
    assert logs["loss"] == pytest.approx(logs["u_v_loss"] + logs["u_loss"] + logs["v_loss"], rel=1e-6)
    u, v = model.predict(X, verbose=0)
    assert logs["u_v_loss"] == pytest.approx(np.abs(u).mean() + np.abs(v - 1).mean(), rel=1e-5)
    seen.clear()
    model.compile(loss=(whole, ("mse", "mae")))  # the outputs' own container: ``whole`` gets u, v gets two losses
    logs = model.evaluate(X, y, verbose=0, return_dict=True)
    assert seen == [("ndarray", "ndarray")]
    assert model.metrics_names == ["loss", "u_loss", "v_loss", "v_loss"]
    assert logs["loss"] == pytest.approx(np.abs(u).mean() + np.mean((v - 1) ** 2) + np.abs(v - 1).mean(), rel=1e-5)
    model.compile(loss=("mse", "mse", "mse"))
    with pytest.raises(KeyError, match=r"The path: \(2,\) .* received 3 loss for a model with 2 outputs"):
        model.evaluate(X, y, verbose=0)
    model.compile(loss=["mse", "mse", "mse"])  # a list where the outputs are a tuple: each loss gets both
    with pytest.raises(ValueError, match=r"'mean_squared_error' at path \(\) .* applies to several outputs"):
        model.evaluate(X, y, verbose=0)


def test_losses_and_metrics_that_miss_the_outputs_raise_in_fit_not_compile():
    model, _ = _twins("dict")
    model.compile(optimizer="sgd", loss={"a": "mse", "c": "mse"})
    with pytest.raises(KeyError, match=r"The path: \('c',\) in the `loss` argument, can't be found in either the "
                                       r"model's output .* received loss for outputs \['c'\]"):
        model.fit(X, TARGETS["dict"], verbose=0)
    list_model, _ = _twins("list")
    list_model.compile(optimizer="sgd", loss={"a": "mse", "z": "mse"})
    with pytest.raises(ValueError, match=r"Expected keys \['a', 'b'\] in loss dict.* outputs \['z'\]"):
        list_model.evaluate(X, TARGETS["list"], verbose=0)
    list_model.compile(optimizer="sgd", loss="mse", metrics={"z": ["mae"]})
    with pytest.raises(ValueError, match=r"(?s)Invalid `metrics`.*'z'"):
        list_model.evaluate(X, TARGETS["list"], verbose=0)


def test_an_overridden_compute_loss_may_give_the_losses_more_outputs_than_the_model_has():
    class Doubled(Model):
        def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None):
            return super().compute_loss(x=x, y=y, y_pred=[y_pred, y_pred], sample_weight=sample_weight)

    x = Input((4,), name="x")
    model = Doubled(x, Dense(1, activation="sigmoid", name="out")(x))
    model.compile(optimizer="sgd", loss=["mse", "binary_crossentropy"])
    history = model.fit(X, (Y_B, Y_B), epochs=2, batch_size=8, verbose=0).history
    assert sorted(history) == ["binary_crossentropy_loss", "loss", "mean_squared_error_loss"]
    assert history["loss"][0] == pytest.approx(history["mean_squared_error_loss"][0]
                                               + history["binary_crossentropy_loss"][0], rel=1e-6)
    assert history["loss"][1] < history["loss"][0]


def test_loss_weights_by_output_name_follow_the_names_not_their_sorted_order():
    x = Input((4,), name="x")
    model = Model(x, [Dense(1, name="z")(x), Dense(1, name="a")(x)])
    model.compile(loss=["mse", "mae"], loss_weights={"z": 1.0, "a": 0.0})
    logs = model.evaluate(X, [Y_B, Y_B], verbose=0, return_dict=True)
    assert logs["loss"] == pytest.approx(logs["z_loss"]) and logs["a_loss"] > 0


def test_one_loss_and_nested_metrics_over_nested_outputs_match_keras():
    model, twin = _nested_twins()
    logs = []
    for m in (model, twin):
        m.compile(optimizer="sgd", loss="mse", metrics={"p": [["mae"], ["mse"]], "w": ["mae"]})
        logs.append(m.evaluate(X, NESTED_TARGETS, sample_weight=SAMPLE_WEIGHT, verbose=0, return_dict=True))
    ours, theirs = logs
    assert sorted(ours) == sorted(theirs) == ["loss", "p/u_loss", "p/v_loss", "u_mae", "v_mse", "w_loss", "w_mae"]
    assert ours == pytest.approx({key: float(value) for key, value in theirs.items()}, rel=1e-5)


def test_compute_loss_refuses_targets_that_do_not_match_the_predictions():
    model, _ = _twins("list")
    model.compile(optimizer="sgd", loss=["mse", "bce"])
    outputs = model.predict(X, verbose=0)
    with pytest.raises(ValueError, match=r"y_true and y_pred have different structures: .* received 1 target array\(s\) "
                                         r"for 2 prediction\(s\)"):
        model.compute_loss(y=Y_B, y_pred=outputs)
    assert float(model.compute_loss(y=[None, Y_B], y_pred=outputs)) == pytest.approx(
        float(losses.BinaryCrossentropy()(Y_B, outputs[1])), rel=1e-6)


def test_compute_loss_reads_targets_by_output_name_for_list_outputs():
    x = Input((4,), name="x")
    model = Model(x, [Dense(1, name="z")(x), Dense(1, activation="sigmoid", name="a")(x)])
    model.compile(optimizer="sgd", loss=["mse", "bce"])
    outputs = model.predict(X, verbose=0)
    targets = [RNG.normal(size=(8, 1)).astype("float32"), Y_B]
    by_position = float(model.compute_loss(y=targets, y_pred=outputs))
    assert float(model.compute_loss(y={"a": targets[1], "z": targets[0]}, y_pred=outputs)) == pytest.approx(by_position)
