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


# ------------------------------------------------------- 2. fit(x) without y; models trained only by train_step
class AutoEncoder(Model):
    """Trained on x alone: its train_step receives the batch as fit got it, an array."""

    def __init__(self):
        super().__init__()
        self.encoder, self.decoder = Dense(2), Dense(4)
        self.received = []

    def call(self, x):
        return self.decoder(self.encoder(x))

    def train_step(self, data):
        self.received.append(type(data))
        with GradientTape() as tape:
            loss = ((self(data, training=True) - data) ** 2).mean()
        self.optimizer.apply(tape.gradient(loss, self.trainable_variables), self.trainable_variables)
        self._loss_tracker.update_state(loss)
        return {"loss": self._loss_tracker.result()}


def test_fit_without_targets_hands_train_step_the_inputs_alone():
    data = np.random.default_rng(1).normal(size=(64, 4)).astype("float32")
    model = AutoEncoder()
    model.compile(optimizer="adam")
    history = model.fit(data, batch_size=16, epochs=4, verbose=0)
    assert model.received == [np.ndarray] * 16
    assert history.history["loss"][-1] < history.history["loss"][0]


def test_train_step_receives_a_list_of_inputs_as_a_one_tuple_and_sample_weights_third():
    seen = []

    class Recorder(Model):
        def call(self, x):
            return x

        def train_step(self, data):
            seen.append(data)
            return {}

    model = Recorder()
    model.compile()
    model.fit([np.ones((4, 2)), np.zeros((4, 3))], batch_size=4, verbose=0)
    model.fit({"a": np.ones((4, 2))}, np.zeros(4), sample_weight=np.arange(4.0), batch_size=4, shuffle=False,
              verbose=0)
    first, (x, y, weights) = seen
    assert isinstance(first, tuple) and len(first) == 1 and [a.shape for a in first[0]] == [(4, 2), (4, 3)]
    assert set(x) == {"a"} and y.shape == (4,) and weights.tolist() == [0.0, 1.0, 2.0, 3.0]


class GAN(Model):
    """keras-io's GAN: two models as attributes, no call, compile overridden."""

    def __init__(self, discriminator, generator, latent_dim):
        super().__init__()
        self.discriminator, self.generator, self.latent_dim = discriminator, generator, latent_dim
        from engine.training.metrics import Mean

        self.d_loss_tracker, self.g_loss_tracker = Mean(name="d_loss"), Mean(name="g_loss")

    @property
    def metrics(self):
        return [self.d_loss_tracker, self.g_loss_tracker]

    def compile(self, d_optimizer, g_optimizer, loss_fn):
        super().compile()
        self.d_optimizer, self.g_optimizer, self.loss_fn = d_optimizer, g_optimizer, loss_fn

    def train_step(self, real):
        rng = np.random.default_rng(len(self.d_loss_tracker.__dict__))
        size = len(real)
        fake = self.generator(rng.normal(size=(size, self.latent_dim)).astype("float32"))
        images = np.concatenate([fake, real])
        labels = np.concatenate([np.ones((size, 1)), np.zeros((size, 1))]).astype("float32")
        with GradientTape() as tape:
            d_loss = self.loss_fn(labels, self.discriminator(images))
        weights = self.discriminator.trainable_weights
        self.d_optimizer.apply(tape.gradient(d_loss, weights), weights)
        with GradientTape() as tape:
            noise = rng.normal(size=(size, self.latent_dim)).astype("float32")
            g_loss = self.loss_fn(np.zeros((size, 1), "float32"), self.discriminator(self.generator(noise)))
        weights = self.generator.trainable_weights
        self.g_optimizer.apply(tape.gradient(g_loss, weights), weights)
        self.d_loss_tracker.update_state(d_loss)
        self.g_loss_tracker.update_state(g_loss)
        return {"d_loss": self.d_loss_tracker.result(), "g_loss": self.g_loss_tracker.result()}


def test_a_model_without_call_trains_through_its_train_step_with_its_own_compile():
    from engine import Sequential, optimizers
    from engine.training import losses

    discriminator = Sequential([Input(shape=(4,)), Dense(8, activation="relu"), Dense(1, activation="sigmoid")])
    generator = Sequential([Input(shape=(3,)), Dense(8, activation="relu"), Dense(4)])
    before = [w.numpy().copy() for w in discriminator.weights + generator.weights]
    gan = GAN(discriminator, generator, latent_dim=3)
    gan.compile(d_optimizer=optimizers.Adam(1e-3), g_optimizer=optimizers.Adam(1e-3),
                loss_fn=losses.BinaryCrossentropy())
    history = gan.fit(np.random.default_rng(2).normal(size=(64, 4)).astype("float32"), batch_size=16, epochs=2,
                      verbose=0)
    assert sorted(history.history) == ["d_loss", "g_loss"] and len(history.history["d_loss"]) == 2
    after = [w.numpy() for w in discriminator.weights + generator.weights]
    assert all(not np.array_equal(a, b) for a, b in zip(before, after))
    with pytest.raises(NotImplementedError):
        gan(np.ones((1, 4)))  # it still has no call of its own


# ------------------------------------------------------- 3. overridden compute_loss, test_step, predict_step
def _softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    return np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)


class Distiller(Model):
    """Keras 3's knowledge distillation example: the default train_step and test_step use its compute_loss."""

    def __init__(self, student, teacher):
        super().__init__()
        self.student, self.teacher = student, teacher

    def compile(self, optimizer, metrics, student_loss_fn, distillation_loss_fn, alpha=0.1, temperature=3):
        super().compile(optimizer=optimizer, metrics=metrics)
        self.student_loss_fn, self.distillation_loss_fn = student_loss_fn, distillation_loss_fn
        self.alpha, self.temperature = alpha, temperature

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, allow_empty=False):
        teacher_pred = self.teacher(x, training=False)
        student_loss = self.student_loss_fn(y, y_pred)
        distillation_loss = self.distillation_loss_fn(
            _softmax(teacher_pred / self.temperature), _softmax(y_pred / self.temperature)) * self.temperature ** 2
        return self.alpha * student_loss + (1 - self.alpha) * distillation_loss

    def call(self, x):
        return self.student(x)


def _classes(samples=96):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(samples, 6)).astype("float32")
    return x, (x[:, :3].argmax(axis=1)).astype("int64")


def test_the_default_train_and_test_steps_use_an_overridden_compute_loss():
    from engine import Sequential
    from engine.training import losses
    from engine.training.metrics import SparseCategoricalAccuracy

    x, y = _classes()
    teacher = Sequential([Input(shape=(6,)), Dense(3)])
    teacher.compile(optimizer="adam", loss=losses.SparseCategoricalCrossentropy(from_logits=True))
    teacher.fit(x, y, epochs=20, batch_size=16, verbose=0)
    student = Sequential([Input(shape=(6,)), Dense(3)])
    distiller = Distiller(student=student, teacher=teacher)
    distiller.compile(optimizer="adam", metrics=[SparseCategoricalAccuracy()],
                      student_loss_fn=losses.SparseCategoricalCrossentropy(from_logits=True),
                      distillation_loss_fn=losses.KLDivergence(), alpha=0.1, temperature=3)
    calls = []
    distiller.compute_loss = _counting(distiller.compute_loss, calls)
    history = distiller.fit(x, y, epochs=5, batch_size=16, verbose=0)
    assert len(calls) == 30 and history.history["loss"][-1] < history.history["loss"][0]
    assert sorted(history.history) == ["loss", "sparse_categorical_accuracy"]
    loss, accuracy = distiller.evaluate(x, y, verbose=0)
    assert len(calls) == 30 + 3  # evaluate's default test_step called it too, once per batch of 32
    expected = distiller.compute_loss(x=x, y=y, y_pred=distiller(x))
    np.testing.assert_allclose(loss, float(expected), rtol=1e-4)
    assert accuracy == pytest.approx(np.mean(distiller.predict(x, verbose=0).argmax(axis=1) == y))


def _counting(method, calls):
    def counted(*args, **kwargs):
        calls.append(1)
        return method(*args, **kwargs)

    return counted


def test_an_overridden_compute_loss_on_a_functional_subclass_trains_its_weights():
    class Weighted(Model):
        def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None):
            return 10.0 * ((y_pred - y) ** 2).mean()

    inputs = Input(shape=(4,))
    model = Weighted(inputs, Dense(1)(inputs))
    model.compile(optimizer="sgd", loss="mae")  # the override decides the loss, not the compiled one
    x, y = _regression()
    before = model.evaluate(x, y, verbose=0)
    np.testing.assert_allclose(before, 10.0 * np.mean((model.predict(x, verbose=0) - y) ** 2), rtol=1e-5)
    model.fit(x, y, epochs=3, batch_size=16, verbose=0)
    assert model.evaluate(x, y, verbose=0) < before


def test_evaluate_and_validation_use_an_overridden_test_step_and_predict_a_predict_step():
    class Custom(StepModel):
        def test_step(self, data):
            x, y = data
            return {"max_error": float(np.abs(self(x) - y).max())}

        def predict_step(self, data):
            return {"doubled": 2 * self(data), "sign": np.sign(self(data))}

    inputs = Input(shape=(4,))
    model = Custom(inputs, Dense(1)(inputs))
    model.compile(optimizer="sgd", loss="mse")
    x, y = _regression()
    error = float(np.abs(model(x) - y).max())
    # One batch: evaluate returns the last batch's value of a custom test_step's number (as Keras).
    assert model.evaluate(x, y, batch_size=len(x), verbose=0) == pytest.approx(error)
    assert model.evaluate(x, y, batch_size=len(x), verbose=0, return_dict=True) == {"max_error": pytest.approx(error)}
    history = model.fit(x, y, validation_data=(x, y), epochs=2, batch_size=16, verbose=0)
    assert sorted(history.history) == ["loss", "val_max_error"]
    predicted = model.predict(x, batch_size=10, verbose=0)
    assert sorted(predicted) == ["doubled", "sign"] and predicted["doubled"].shape == (64, 1)
    np.testing.assert_allclose(predicted["doubled"], 2 * model(x), rtol=1e-6)


# ------------------------------------------------------- 4. validation in fit calls the on_test_* hooks
def test_validation_in_fit_calls_the_test_hooks_between_the_last_batch_and_the_epoch_end():
    from engine.training.callbacks import Callback

    events = []

    class Recorder(Callback):
        def on_train_batch_end(self, batch, logs=None):
            events.append(("train_batch", batch))

        def on_test_begin(self, logs=None):
            events.append(("test_begin",))

        def on_test_batch_begin(self, batch, logs=None):
            events.append(("test_batch_begin", batch))

        def on_test_batch_end(self, batch, logs=None):
            events.append(("test_batch_end", batch, sorted(logs)))

        def on_test_end(self, logs=None):
            events.append(("test_end", sorted(logs)))

        def on_epoch_end(self, epoch, logs=None):
            events.append(("epoch_end", sorted(logs)))

    inputs = Input(shape=(4,))
    model = Model(inputs, Dense(1)(inputs))
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    x, y = _regression(40)
    model.fit(x, y, validation_split=0.5, batch_size=10, epochs=1, callbacks=[Recorder()], verbose=0)
    assert events == [
        ("train_batch", 0), ("train_batch", 1), ("test_begin",),
        ("test_batch_begin", 0), ("test_batch_end", 0, ["loss", "mae"]),
        ("test_batch_begin", 1), ("test_batch_end", 1, ["loss", "mae"]),
        ("test_end", ["loss", "mae"]), ("epoch_end", ["loss", "mae", "val_loss", "val_mae"]),
    ]


# ------------------------------------------------------- 9. Keras' key phrases in our messages
def test_errors_carry_the_phrases_keras_tests_match_with_keras_exception_types():
    from engine import Node, Sequential
    from layers import Dot, Subtract

    a, b, c = (Input(shape=(4,)) for _ in range(3))
    for layer, inputs in ((Subtract(), [a, b, c]), (Subtract(), [a]), (Dot(axes=1), [a, b, c])):
        with pytest.raises(ValueError, match=rf"A `{type(layer).__name__}` layer should be called on exactly 2 "
                                             r"inputs\. Layer .* expects at (most|least) 2 inputs"):
            layer(inputs)
    for model in (Model(), Model(a, Dense(2)(a)), Sequential([Dense(2)])):
        with pytest.raises(AttributeError, match="`Model.layers` attribute is reserved"):
            model.layers = [Dense(4)]
    with pytest.raises(ValueError, match="operation outputs must be tensors"):
        Node(Dense(2), call_args=(a,), call_kwargs={}, outputs=np.ones((2, 3)))


# ------------------------------------------------------- 8. _keras_mask on eager outputs
def test_eager_outputs_carry_their_mask_and_stay_arrays_in_every_other_way():
    from layers import LSTM, Embedding, Masking

    tokens = np.array([[3, 4, 0, 0], [1, 0, 0, 0]])
    expected = np.array([[True, True, False, False], [True, False, False, False]])
    embedded = Embedding(10, 3, mask_zero=True)(tokens)
    masked = Masking()(np.tile(tokens[..., None], (1, 1, 5)).astype("float32"))
    for output in (embedded, masked):
        np.testing.assert_array_equal(output._keras_mask, expected)
        plain = np.asarray(output)
        assert isinstance(output, np.ndarray) and type(plain) is np.ndarray
        np.testing.assert_array_equal(output, plain)
        assert type(output * 2) is np.ndarray and type(output[0]) is np.ndarray and type(output.sum()) is np.float32
        assert type(pickle.loads(pickle.dumps(output))) is np.ndarray
        np.testing.assert_array_equal(pickle.loads(pickle.dumps(output)), plain)
    assert not hasattr(Dense(2)(np.ones((2, 3))), "_keras_mask")  # no mask: a plain array
    lstm = LSTM(2)
    np.testing.assert_allclose(lstm(embedded), lstm(np.asarray(embedded), mask=expected), rtol=1e-6)
    assert not np.allclose(lstm(embedded), lstm(np.asarray(embedded)))  # the carried mask reached the LSTM


# ------------------------------------------------------- 6. a Sequential built lazily
def test_a_sequential_without_input_is_built_by_build_a_call_or_fit_and_shows_a_summary_before():
    from engine import Functional, Sequential

    lines = []
    model = Sequential([Dense(4, name="hidden"), Dense(1, name="out")], name="lazy")
    model.summary(print_fn=lines.append)  # Keras prints an unbuilt model too
    assert model._functional is None and not model.built and "hidden" in "\n".join(lines)
    with pytest.raises(AttributeError, match="has no defined input shape yet"):
        model.input_shape
    model.build((None, 3))
    graph = model._functional
    assert type(graph) is Functional and graph.layers[1:] == model.layers and model.output_shape == (None, 1)
    np.testing.assert_allclose(graph(np.ones((2, 3))), model(np.ones((2, 3))))
    for build in (lambda m: m(np.ones((2, 5))),
                  lambda m: (m.compile(optimizer="sgd", loss="mse"), m.fit(np.ones((4, 5)), np.ones((4, 1)), verbose=0))):
        later = Sequential([Dense(1)])
        build(later)
        assert later.built and later.input_shape == (None, 5) and type(later._functional) is Functional


# ------------------------------------------------------- 5. nested output structures in compile
def test_a_dict_of_tuples_and_a_namedtuple_of_outputs_compile_and_train_with_losses_in_their_structure():
    import collections

    x = Input(shape=(3,))
    model = Model(x, {"a": (Dense(1, name="a0")(x), Dense(2, name="a1")(x)), "b": Dense(1, name="b")(x)})
    model.compile(optimizer="sgd", loss={"a": ("mse", "mae"), "b": "mse"}, metrics={"a": (["mae"], None), "b": None})
    data = np.random.default_rng(4).normal(size=(16, 3)).astype("float32")
    targets = {"a": (np.ones((16, 1)), np.zeros((16, 2))), "b": np.ones((16, 1))}
    history = model.fit(data, targets, epochs=3, batch_size=8, verbose=0)
    assert sorted(history.history) == ["a/a0_loss", "a/a1_loss", "a0_mae", "b_loss", "loss"]
    assert history.history["loss"][-1] < history.history["loss"][0]
    predicted = model.predict(data, verbose=0)
    logs = model.evaluate(data, targets, verbose=0, return_dict=True)
    np.testing.assert_allclose(logs["a/a1_loss"], np.abs(predicted["a"][1]).mean(), rtol=1e-5)

    Pair = collections.namedtuple("Pair", ["first", "second"])
    model = Model(x, Pair(Dense(1, name="first")(x), Dense(2, name="second")(x)))
    assert type(model(data)) is Pair and type(model.predict(data, verbose=0)) is Pair
    model.compile(optimizer="sgd", loss=Pair("mse", "mae"))
    history = model.fit(data, Pair(np.ones((16, 1)), np.zeros((16, 2))), epochs=2, batch_size=8, verbose=0)
    assert sorted(history.history) == ["first_loss", "loss", "second_loss"]
