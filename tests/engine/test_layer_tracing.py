"""Training without a hand-written backward: custom layers, layers made of layers,
subclassed models, function losses, add_loss, custom train steps and GradientTape loops."""

import numpy as np
import pytest

from engine import GradientTape, Input, Layer, Model, gradient_check, optimizers
from layers import Dense, Dropout, GlobalAveragePooling1D, LayerNormalization, MultiHeadAttention


class SimpleDense(Layer):  # seed 000, as written
    def __init__(self, units=32):
        super().__init__()
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="random_normal", trainable=True)
        self.b = self.add_weight(shape=(self.units,), initializer="random_normal", trainable=True)

    def call(self, inputs):
        return np.matmul(inputs, self.w) + self.b


class CountingDense(Dense):
    """A built-in layer that counts how often its hand-written backward runs."""

    backward_calls = 0

    def backward(self, cache, grad_outputs):
        CountingDense.backward_calls += 1
        return super().backward(cache, grad_outputs)


class Block(Layer):
    def __init__(self):
        super().__init__()
        self.d1 = CountingDense(6, activation="tanh")
        self.d2 = Dense(2)

    def call(self, x):
        return self.d2(self.d1(x)) + np.mean(x, axis=-1, keepdims=True)


class TransformerBlock(Layer):  # keras-io's text classification block
    def __init__(self, embed_dim, num_heads, ff_dim, rate=0.1):
        super().__init__()
        self.att = MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim)
        self.ffn1, self.ffn2 = Dense(ff_dim, activation="relu"), Dense(embed_dim)
        self.layernorm1, self.layernorm2 = LayerNormalization(epsilon=1e-6), LayerNormalization(epsilon=1e-6)
        self.dropout1, self.dropout2 = Dropout(rate), Dropout(rate)

    def call(self, inputs, training=False):
        attn_output = self.dropout1(self.att(inputs, inputs), training=training)
        out1 = self.layernorm1(inputs + attn_output)
        ffn_output = self.dropout2(self.ffn2(self.ffn1(out1)), training=training)
        return self.layernorm2(out1 + ffn_output)


class MLP(Model):
    def __init__(self):
        super().__init__()
        self.hidden = SimpleDense(16)
        self.out = Dense(1)

    def call(self, x):
        return self.out(np.tanh(self.hidden(x)))


def _regression(n=64, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4)).astype("float32")
    return x, (x @ rng.normal(size=(4, 1)) + 0.5).astype("float32")


def test_seed_simple_dense_trains_as_written_and_its_traced_gradient_matches_finite_differences():
    x, y = _regression()
    inputs = Input(shape=(4,))
    model = Model(inputs, SimpleDense(1)(inputs))
    model.compile(optimizer=optimizers.Adam(learning_rate=0.05), loss="mse")
    losses = model.fit(x, y, epochs=40, batch_size=16, verbose=0).history["loss"]
    assert losses[-1] < 0.2 * losses[0]
    report = gradient_check(SimpleDense(3), np.random.default_rng(1).normal(size=(2, 4)))
    assert report.max_error < 1e-6


def test_a_layer_made_of_layers_trains_each_built_in_layer_as_one_step():
    x = np.random.default_rng(2).normal(size=(5, 3))
    block = Block()
    report = gradient_check(block, x)
    assert report.max_error < 1e-6 and len(report.errors) == 5  # input, 2 x (kernel, bias)
    CountingDense.backward_calls = 0
    outputs, cache = block.forward(x.astype("float32"))
    block.backward(cache, np.ones_like(outputs))
    assert CountingDense.backward_calls == 1


def test_a_keras_io_transformer_block_written_as_one_custom_layer_trains():
    rng = np.random.default_rng(3)
    tokens = rng.normal(size=(96, 6, 8)).astype("float32")
    labels = (tokens[:, 0, 0] > 0).astype("int32")
    inputs = Input(shape=(6, 8))
    pooled = GlobalAveragePooling1D()(TransformerBlock(8, 2, 16)(inputs))
    model = Model(inputs, Dense(2, activation="softmax")(pooled))
    model.compile(optimizer=optimizers.Adam(learning_rate=0.01), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    history = model.fit(tokens, labels, epochs=12, batch_size=16, verbose=0).history
    assert history["loss"][-1] < 0.5 * history["loss"][0] and history["accuracy"][-1] > 0.8


def test_a_subclassed_model_fits_and_its_weights_reload_into_a_fresh_instance(tmp_path):
    x, y = _regression()
    model = MLP()
    model.compile(optimizer=optimizers.Adam(learning_rate=0.02), loss="mse")
    losses = model.fit(x, y, epochs=30, batch_size=16, verbose=0).history["loss"]
    assert losses[-1] < 0.2 * losses[0]
    model.save_weights(tmp_path / "mlp.npz")
    fresh = MLP()
    fresh(x[:1])
    fresh.load_weights(tmp_path / "mlp.npz")
    np.testing.assert_array_equal(fresh.predict(x, verbose=0), model.predict(x, verbose=0))


def test_losses_and_metrics_written_as_functions():
    def squared(y_true, y_pred):
        return np.mean((y_pred - y_true) ** 2, axis=-1)

    x, y = _regression()
    inputs = Input(shape=(4,))
    model = Model(inputs, Dense(1)(inputs))
    model.compile(optimizer="sgd", loss=squared, metrics=[squared, "mse"])
    outputs = model.predict(x, verbose=0)
    traced = model.compiled_loss.losses[0].gradient(y, outputs)
    np.testing.assert_allclose(traced, 2 * (outputs - y) / y.size, rtol=1e-5)
    history = model.fit(x, y, epochs=5, verbose=0).history
    assert history["loss"][-1] < history["loss"][0]
    np.testing.assert_allclose(history["squared"], history["mse"], rtol=1e-5)
    model.compile(optimizer="sgd", loss=lambda y_true, y_pred: np.abs(y_pred - y_true))
    assert model.fit(x, y, epochs=2, verbose=0).history["loss"][0] > 0


def test_add_loss_reaches_losses_the_training_loss_and_the_gradient():
    class Penalized(Layer):
        def call(self, inputs):
            self.add_loss(0.5 * np.sum(inputs ** 2))
            return inputs

    inputs = Input(shape=(2,))
    model = Model(inputs, Penalized()(Dense(2, kernel_initializer="ones", bias_initializer="zeros")(inputs)))
    x = np.array([[1.0, 2.0]], "float32")
    model(x)
    assert model.get_layer(index=2).losses == [pytest.approx(0.5 * 2 * 9.0)]
    model.compile(optimizer="sgd", loss="mse")
    logged = model.train_on_batch(x, np.zeros((1, 2), "float32"))
    assert logged == pytest.approx(9.0 + 9.0)  # mse of [3, 3], plus the added 9
    outputs, tape = model.plan.forward([x])
    _, weight_grads = model.plan.backward(tape, [np.zeros_like(outputs[0])])
    kernel = model.get_layer(index=1).kernel
    np.testing.assert_allclose(weight_grads[kernel], x.T @ outputs[0], rtol=1e-6)  # d(0.5 |h|^2)/dW = x^T h


def test_an_overridden_train_step_with_gradient_tape_trains():
    class CustomModel(MLP):
        steps = 0

        def train_step(self, data):
            x, y = data
            with GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred)
            self.optimizer.apply(tape.gradient(loss, self.trainable_variables), self.trainable_variables)
            CustomModel.steps += 1
            for metric in self.metrics:
                metric.update_state(loss) if metric.name == "loss" else metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    x, y = _regression()
    model = CustomModel()
    model.compile(optimizer=optimizers.Adam(learning_rate=0.02), loss="mse", metrics=["mae"])
    history = model.fit(x, y, epochs=20, batch_size=16, verbose=0).history
    assert CustomModel.steps == 80 and set(history) == {"loss", "mae"}  # named as compile() received it, as Keras
    assert history["loss"][-1] < 0.3 * history["loss"][0]


def test_a_gradient_tape_loop_equals_fit_on_the_same_data():
    x, y = _regression(32)

    def model_and_optimizer():
        inputs = Input(shape=(4,))
        model = Model(inputs, Dense(1, kernel_initializer="ones")(SimpleDense(3)(inputs)))
        model.set_weights([np.full(w.shape, 0.1 * (i + 1), "float32") for i, w in enumerate(model.get_weights())])
        return model, optimizers.SGD(learning_rate=0.05)

    fitted, optimizer = model_and_optimizer()
    fitted.compile(optimizer=optimizer, loss="mse")
    fitted.fit(x, y, epochs=3, batch_size=32, shuffle=False, verbose=0)
    looped, optimizer = model_and_optimizer()
    looped.compile(optimizer=optimizer, loss="mse")
    for _ in range(3):
        with GradientTape() as tape:
            loss = looped.compute_loss(y=y, y_pred=looped(x, training=True))
        optimizer.apply_gradients(zip(tape.gradient(loss, looped.trainable_variables), looped.trainable_variables))
    for mine, theirs in zip(looped.get_weights(), fitted.get_weights()):
        np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-7)


def test_an_untraceable_function_in_a_loss_names_the_loss_and_the_ways_out():
    def sorted_error(y_true, y_pred):
        return np.sort(y_pred - y_true, axis=-1)[..., 0]

    inputs = Input(shape=(2,))
    model = Model(inputs, Dense(2)(inputs))
    model.compile(optimizer="sgd", loss=sorted_error)
    with pytest.raises(NotImplementedError, match=r"numpy.sort cannot be traced in loss 'sorted_error': it has no "
                                                  r"derivative rule\. Use a supported NumPy function"):
        model.fit(np.ones((4, 2)), np.ones((4, 2)), verbose=0)


def test_activity_regularizers_reach_losses_and_train_inside_custom_layers():
    dense = Dense(2, activity_regularizer="l2", kernel_initializer="ones")
    x = np.ones((4, 3), "float32")
    dense(x)
    assert dense.losses == [pytest.approx(0.01 * 72 / 4)]  # outputs of 3, 8 of them, per sample

    class Wrapper(Layer):
        def __init__(self):
            super().__init__()
            self.inner = Dense(2, activity_regularizer="l2", kernel_initializer="ones")

        def call(self, inputs):
            return self.inner(inputs) * 0.0

    wrapper = Wrapper()
    outputs, cache = wrapper.forward(x)
    assert cache.activity_loss == pytest.approx(0.18)
    _, weight_grads = wrapper.backward(cache, np.zeros_like(outputs))
    np.testing.assert_allclose(weight_grads[wrapper.inner.bias], [0.06, 0.06], rtol=1e-6)  # 2 * 0.01 * 3 * 4 / 4


def test_evaluate_counts_each_batch_added_losses_once():
    class Penalized(Layer):
        def call(self, inputs):
            self.add_loss(np.sum(inputs ** 2))
            return inputs

    inputs = Input(shape=(2,))
    model = Model(inputs, Penalized()(inputs))
    model.compile(loss="mse")
    x = np.ones((8, 2), "float32")
    first = model.evaluate(x, x, batch_size=2, verbose=0)
    assert first == pytest.approx(4.0) and model.evaluate(x, x, batch_size=2, verbose=0) == first
    model.predict(x, batch_size=2, verbose=0)
    assert model.losses == [pytest.approx(4.0)]  # the last batch's


def test_function_losses_per_output_in_a_dict_and_a_list():
    def absolute(y_true, y_pred):
        return np.mean(np.abs(y_pred - y_true), axis=-1)

    def squared(y_true, y_pred):
        return np.mean((y_pred - y_true) ** 2, axis=-1)

    x, y = _regression()
    inputs = Input(shape=(4,))
    outputs = {"a": Dense(1, name="a")(inputs), "b": Dense(1, name="b")(inputs)}
    model = Model(inputs, outputs)
    model.compile(optimizer=optimizers.Adam(learning_rate=0.05), loss={"a": absolute, "b": squared})
    history = model.fit(x, {"a": y, "b": 2 * y}, epochs=20, verbose=0).history
    assert set(history) == {"loss", "a_loss", "b_loss"} and history["loss"][-1] < 0.5 * history["loss"][0]
    listed = Model(inputs, [Dense(1)(inputs), Dense(1)(inputs)])
    listed.compile(optimizer="sgd", loss=[absolute, squared], loss_weights=[1.0, 0.5])
    total, first, second = listed.evaluate(x, [y, y], verbose=0)
    assert total == pytest.approx(first + 0.5 * second, rel=1e-5)


class DropoutBlock(Layer):
    """A layer made of layers whose call takes no ``training`` (the keras-io TransformerBlock's habit)."""

    def __init__(self):
        super().__init__()
        self.dense = Dense(8)
        self.dropout = Dropout(0.5, seed=1)

    def call(self, x):
        return self.dropout(self.dense(x))


def test_training_reaches_layers_called_inside_a_layer_whose_call_does_not_take_it():
    block, x = DropoutBlock(), np.ones((4, 3), "float32")
    inference = block(x)
    np.testing.assert_array_equal(block(x, training=False), inference)
    assert np.any(block(x, training=True) == 0.0) and not np.any(inference == 0.0)
    inputs = Input(shape=(3,))
    model = Model(inputs, DropoutBlock()(inputs))
    assert np.any(model(x, training=True) == 0.0)  # through the model's plan
    np.testing.assert_array_equal(model.predict(x, verbose=0), model(x))


class KLPenalty(Layer):
    def call(self, x):
        self.add_loss(0.5 * np.mean(np.square(x)))
        return x


def test_losses_under_a_gradient_tape_are_differentiable_and_hold_the_last_call_only():
    inputs = Input(shape=(3,))
    model = Model(inputs, KLPenalty()(Dense(2, kernel_regularizer="l2")(inputs)))
    kernel, x = model.layers[1].kernel, np.ones((4, 3), "float32")
    for _ in range(3):
        with GradientTape() as tape:
            model(x)
            losses = model.losses
            total = sum(losses)
        assert len(losses) == 2  # the added loss of this call and the kernel's penalty, not earlier calls'
        (grad,) = tape.gradient(total, [kernel])
        y = x @ kernel.value + model.layers[1].bias.value
        expected = x.T @ (y / y.size) + 2 * 0.01 * kernel.value
        np.testing.assert_allclose(grad, expected, rtol=1e-5)
    assert all(isinstance(loss, float) for loss in model.losses)  # floats outside a tape


def test_added_losses_count_in_a_tape_gradient_only_when_the_target_holds_them():
    inputs = Input(shape=(3,))
    dense = Dense(2)
    model = Model(inputs, KLPenalty()(dense(inputs)))
    x = np.ones((4, 3), "float32")
    with GradientTape() as tape:
        target = np.sum(model(x))
    (grad,) = tape.gradient(target, [dense.kernel])
    np.testing.assert_allclose(grad, x.T @ np.ones((4, 2), "float32"))  # d(sum of outputs)/d kernel only
    with GradientTape() as tape:
        target = np.sum(model(x)) + 3.0 * sum(model.losses)
    (grad,) = tape.gradient(target, [dense.kernel])
    y = x @ dense.kernel.value + dense.bias.value
    np.testing.assert_allclose(grad, x.T @ (np.ones((4, 2)) + 3.0 * y / y.size), rtol=1e-5)


def test_float64_data_is_cast_under_a_gradient_tape_as_in_an_eager_call():
    inputs = Input(shape=(3,))
    model = Model(inputs, Dense(2)(inputs))
    x = np.ones((4, 3))  # float64
    with GradientTape():
        taped = model(x)
    assert model(x).dtype == np.asarray(taped.value).dtype == np.float32
