"""model.save("m.keras") writes an archive Keras 3 loads: same outputs, same parameter count."""

import io
import json
import os
import stat
import zipfile

import h5py
import keras
import numpy as np
import pytest

import engine.training.optimizers

from engine import Input, Layer, Model, Sequential, load_model
from engine.files.keras_format.writer import save_keras_model
import layers as L


def keras_round_trip(model, data, tmp_path, rtol=1e-5, atol=1e-6):
    """Saves ``model`` to .keras, loads it in Keras and compares outputs on ``data``."""
    path = tmp_path / "m.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    ours, theirs = model(data), loaded(data)
    if isinstance(ours, dict):
        assert set(ours) == set(theirs)
        pairs = [(ours[k], theirs[k]) for k in ours]
    elif isinstance(ours, (list, tuple)):
        pairs = list(zip(ours, theirs, strict=True))
    else:
        pairs = [(ours, theirs)]
    for got, want in pairs:
        np.testing.assert_allclose(np.asarray(want), np.asarray(got), rtol=rtol, atol=atol)
    assert loaded.count_params() == model.count_params()
    return loaded


def rand(*shape):
    return np.random.default_rng(0).normal(size=shape).astype("float32")


def perturb_batch_norm(model):
    """Moves every BatchNormalization's statistics off 0 and 1, so a file that
    loses them gives other outputs."""
    rng = np.random.default_rng(1)
    for layer in model.layers:
        if isinstance(layer, L.BatchNormalization):
            layer.moving_mean.assign(rng.normal(size=layer.moving_mean.shape).astype("float32"))
            layer.moving_variance.assign(rng.uniform(0.5, 2.0, size=layer.moving_variance.shape).astype("float32"))
            layer.gamma.assign(rng.uniform(0.5, 2.0, size=layer.gamma.shape).astype("float32"))


def test_dense_mlp(tmp_path):
    x = Input(shape=(6,))
    h = L.Dense(8, activation="relu", kernel_regularizer="l2", bias_constraint="non_neg")(x)
    h = L.Dropout(0.3)(h)
    model = Model(x, L.Dense(3, activation="softmax", use_bias=False)(h))
    keras_round_trip(model, rand(4, 6), tmp_path)


def test_cnn_with_batch_normalization(tmp_path):
    x = Input(shape=(10, 10, 3))
    h = L.Conv2D(4, 3, padding="same")(x)
    h = L.BatchNormalization()(h)
    h = L.ReLU()(h)
    h = L.MaxPooling2D(2)(h)
    h = L.Conv2D(5, 3, strides=2)(h)
    h = L.BatchNormalization(axis=-1, epsilon=1e-2, center=False)(h)
    h = L.GlobalAveragePooling2D()(h)
    model = Model(x, L.Dense(2)(h))
    perturb_batch_norm(model)
    keras_round_trip(model, rand(2, 10, 10, 3), tmp_path)


def test_shared_layers_at_different_depths(tmp_path):
    a, b = Input(shape=(4,), name="a"), Input(shape=(4,), name="b")
    shared = L.Dense(4, activation="tanh", name="shared")
    first = shared(a)
    twice = shared(shared(b))  # the same layer at two depths
    merged = L.Concatenate()([first, twice, L.Dense(2)(first)])
    model = Model([a, b], L.Dense(3)(merged))
    keras_round_trip(model, [rand(3, 4), rand(3, 4) + 1], tmp_path)


def test_nested_model_called_twice_with_dict_outputs(tmp_path):
    inner_in = Input(shape=(5,))
    inner = Model(inner_in, L.Dense(3, activation="relu")(L.Dense(4)(inner_in)), name="encoder")
    x, y = Input(shape=(5,), name="x"), Input(shape=(5,), name="y")
    ex, ey = inner(x), inner(y)
    outputs = {"difference": L.Subtract()([ex, ey]), "x_code": ex, "score": L.Dense(1)(L.Concatenate()([ex, ey]))}
    model = Model({"x": x, "y": y}, outputs)
    loaded = keras_round_trip(model, {"x": rand(2, 5), "y": rand(2, 5) * 2}, tmp_path)
    assert isinstance(loaded.get_layer("encoder"), keras.Model)


def test_nested_sequential_and_tuple_outputs(tmp_path):
    block = Sequential([Input(shape=(4,)), L.Dense(4), L.LayerNormalization()], name="block")
    x = Input(shape=(4,))
    h = block(block(x))
    model = Model(x, (h, L.Dense(2)(h)))
    keras_round_trip(model, rand(3, 4), tmp_path)


def test_masked_lstm(tmp_path):
    tokens = Input(shape=(6,), dtype="int32")
    h = L.Embedding(10, 4, mask_zero=True)(tokens)
    h = L.LSTM(5, return_sequences=True)(h)
    model = Model(tokens, L.LSTM(3)(h))
    data = np.array([[1, 2, 3, 0, 0, 0], [4, 5, 6, 7, 8, 9]], dtype="int32")
    keras_round_trip(model, data, tmp_path)


def test_sequential(tmp_path):
    model = Sequential([Input(shape=(8,)), L.Dense(6, activation="relu"), L.BatchNormalization(), L.Dense(2)])
    perturb_batch_norm(model)
    loaded = keras_round_trip(model, rand(4, 8), tmp_path)
    assert isinstance(loaded, keras.Sequential)


def test_operator_layers_become_keras_op_nodes(tmp_path):
    x, y = Input(shape=(3, 4), name="x"), Input(shape=(3, 4), name="y")
    outputs = [x + 3.0, x * y, 2.0 - x, x / (abs(y) + 1.0), -x, x ** 2.0, x @ y.reshape((-1, 4, 3)),
               x[:, 0], x[:, 1:, None, ...].squeeze(2), round(x, 1), x * np.arange(4, dtype="float32")]
    model = Model([x, y], outputs)
    keras_round_trip(model, [rand(2, 3, 4), rand(2, 3, 4)], tmp_path)
    config = json.loads(zipfile.ZipFile(tmp_path / "m.keras").read("config.json"))
    adds = [entry for entry in config["config"]["layers"] if entry["class_name"] == "Add"]
    assert {entry["module"] for entry in adds} == {"keras.src.ops.numpy"}
    assert sorted(entry["inbound_nodes"][0]["args"][1] for entry in adds) == [1.0, 3.0]


def test_gru_and_bidirectional(tmp_path):
    x = Input(shape=(5, 3))
    h = L.Bidirectional(L.GRU(4, return_sequences=True))(x)
    h = L.Bidirectional(L.LSTM(2), merge_mode="sum")(h)
    model = Model(x, L.Dense(2)(h))
    keras_round_trip(model, rand(2, 5, 3), tmp_path)


def test_multi_head_attention(tmp_path):
    query, value = Input(shape=(4, 6)), Input(shape=(5, 6))
    attended = L.MultiHeadAttention(num_heads=2, key_dim=3)(query, value)
    # (Keras 3.15 on jax fails on its own for value_dim != key_dim, so both keep key_dim)
    self_attended = L.MultiHeadAttention(num_heads=3, key_dim=2, use_bias=False)(attended, attended)
    model = Model([query, value], self_attended)
    keras_round_trip(model, [rand(2, 4, 6), rand(2, 5, 6)], tmp_path)


def test_depthwise_and_separable_convolutions(tmp_path):
    x = Input(shape=(9, 9, 3))
    h = L.DepthwiseConv2D(3, depth_multiplier=2, padding="same")(x)
    h = L.SeparableConv2D(4, 3, strides=2, activation="relu")(h)
    model = Model(x, L.Flatten()(h))
    keras_round_trip(model, rand(2, 9, 9, 3), tmp_path)


def test_weight_file_layout_is_keras(tmp_path):
    """Groups are named by class in Keras' layer order, not by layer name."""
    x = Input(shape=(3,))
    model = Model(x, L.Dense(2, name="second")(L.Dense(4, name="first")(x)))
    model.save(tmp_path / "m.keras")
    with zipfile.ZipFile(tmp_path / "m.keras") as archive:
        assert sorted(archive.namelist()) == ["config.json", "metadata.json", "model.weights.h5"]
        metadata = json.loads(archive.read("metadata.json"))
        archive.extract("model.weights.h5", tmp_path)
    assert metadata["keras_version"].startswith("3.")
    with h5py.File(tmp_path / "model.weights.h5") as weights:
        assert weights["layers/dense/vars/0"].shape == (3, 4)
        assert weights["layers/dense_1/vars/0"].shape == (4, 2)
        assert weights["layers/dense/vars"].attrs["name"] == "first"


def test_the_nw_format_is_unchanged(tmp_path):
    x = Input(shape=(3,))
    model = Model(x, L.Dense(2)(x))
    model.save(tmp_path / "m.nw")
    with zipfile.ZipFile(tmp_path / "m.nw") as archive:
        assert "weights.npz" in archive.namelist()
    np.testing.assert_allclose(load_model(tmp_path / "m.nw")(rand(1, 3)), model(rand(1, 3)))


def test_written_atomically_with_the_umask(tmp_path):
    x = Input(shape=(3,))
    model = Model(x, L.Dense(2)(x))
    previous = os.umask(0o027)
    try:
        model.save(tmp_path / "m.keras")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(os.stat(tmp_path / "m.keras").st_mode) == 0o640
    assert os.listdir(tmp_path) == ["m.keras"]


def test_a_failed_save_keeps_the_previous_file(tmp_path):
    x = Input(shape=(3,))
    Model(x, L.Dense(2)(x)).save(tmp_path / "m.keras")
    before = (tmp_path / "m.keras").read_bytes()
    y = Input(shape=(3,))
    with pytest.raises(ValueError, match="Lambda"):
        Model(y, L.Lambda(lambda t: t * 2)(y)).save(tmp_path / "m.keras")
    assert (tmp_path / "m.keras").read_bytes() == before
    assert os.listdir(tmp_path) == ["m.keras"]


def test_lambda_is_refused_by_name(tmp_path):
    x = Input(shape=(3,))
    model = Model(x, L.Lambda(lambda t: t * 2, name="doubler")(x))
    with pytest.raises(ValueError, match=r"Layer 'doubler' is a Lambda layer: .*register_serializable"):
        model.save(tmp_path / "m.keras")


def test_subclassed_model_is_refused(tmp_path):
    class Tiny(Model):
        def __init__(self):
            super().__init__()
            self.dense = L.Dense(2)

        def call(self, inputs):
            return self.dense(inputs)

    model = Tiny()
    model(rand(1, 3))
    with pytest.raises(NotImplementedError, match="subclassed model"):
        save_keras_model(model, tmp_path / "m.keras")


def test_extension_is_checked(tmp_path):
    x = Input(shape=(3,))
    with pytest.raises(ValueError, match=r"must be written to a \.keras file; received path '.*m\.zip'"):
        save_keras_model(Model(x, L.Dense(2)(x)), tmp_path / "m.zip")


def two_branch_model(optimizer, loss="mse", metrics=("mae",), fit=True):
    """A compiled model whose branches Keras orders otherwise than the calls
    were made, trained two steps when ``fit``."""
    x = Input(shape=(4,))
    left = L.Dense(3, name="left")(L.Dense(5, name="deep")(x))
    right = L.Dense(3, name="right")(x)
    model = Model(x, L.Add()([left, right]))
    model.compile(optimizer=optimizer, loss=loss, metrics=list(metrics))
    if fit:
        model.fit(rand(8, 4), rand(8, 3), batch_size=4, epochs=1, verbose=0)
    return model


@pytest.mark.parametrize("optimizer", ["adam", "rmsprop", "sgd"])
def test_compiled_model_keeps_its_optimizer_state(optimizer, tmp_path):
    model = two_branch_model(optimizer)
    loaded = keras_round_trip(model, rand(2, 4), tmp_path)
    assert type(loaded.optimizer).__name__ == type(model.optimizer).__name__
    assert len(loaded.optimizer.variables) == len(model.optimizer.variables)
    for theirs, ours in zip(loaded.optimizer.variables, model.optimizer.variables):
        np.testing.assert_allclose(np.asarray(theirs), ours.value, rtol=1e-6)
    assert int(np.asarray(loaded.optimizer.iterations)) == 2
    loaded.fit(rand(4, 4), rand(4, 3), verbose=0)  # Keras trains on from there


def test_compiled_with_our_loss_function_and_a_schedule(tmp_path):
    import engine.training.losses
    import engine.training.metrics
    import engine.training.optimizers

    schedule = engine.training.optimizers.schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.9)
    model = two_branch_model(engine.training.optimizers.Adam(schedule), loss=engine.training.losses.mean_squared_error,
                             metrics=[engine.training.metrics.MeanAbsoluteError()])
    loaded = keras_round_trip(model, rand(2, 4), tmp_path)
    assert isinstance(loaded.optimizer._learning_rate, keras.optimizers.schedules.ExponentialDecay)
    assert loaded.optimizer._learning_rate.get_config()["decay_rate"] == 0.9
    assert loaded.loss == "mean_squared_error"
    loaded.fit(rand(4, 4), rand(4, 3), verbose=0)


def test_a_loss_keras_cannot_name_is_written_uncompiled(tmp_path):
    def my_loss(y_true, y_pred):
        return ((y_true - y_pred) ** 2).mean(axis=-1)

    model = two_branch_model("adam", loss=my_loss)
    with pytest.warns(UserWarning, match=r"Model '.*' is written to the \.keras file uncompiled: .*my_loss"):
        model.save(tmp_path / "m.keras")
    assert not keras.saving.load_model(tmp_path / "m.keras").compiled
    with zipfile.ZipFile(tmp_path / "m.keras") as archive, \
            h5py.File(io.BytesIO(archive.read("model.weights.h5"))) as weights:
        assert "optimizer" not in weights  # no optimizer to read Adam's moments into


class ScaleBody:
    """A user's own layer: one weight, one config argument (a mixin for ours and Keras' Layer)."""

    def __init__(self, factor=1.0, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def build(self, input_shape):
        self.gamma = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="gamma")

    def call(self, inputs):
        return inputs * self.gamma * self.factor

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


class Scale(ScaleBody, Layer):
    """Ours."""


def keras_scale():
    """Scale's Keras twin. Keras names a layer's weight group after its class
    (``layers/scale``), so the twin must share the class name."""

    class Scale(ScaleBody, keras.layers.Layer):
        pass

    return Scale


def test_a_users_layer_loads_in_keras_through_custom_objects(tmp_path):
    x = Input(shape=(3,))
    scale = Scale(factor=2.0)
    model = Model(x, L.Dense(2)(scale(x)))
    scale.gamma.assign(np.array([1.0, -2.0, 3.0], "float32"))
    path = tmp_path / "m.keras"
    model.save(path)
    entry = json.loads(zipfile.ZipFile(path).read("config.json"))["config"]["layers"][1]
    assert (entry["class_name"], entry["registered_name"], entry["config"]["factor"]) == ("Scale", "Scale", 2.0)
    loaded = keras.saving.load_model(path, custom_objects={"Scale": keras_scale()})
    np.testing.assert_allclose(np.asarray(loaded(rand(2, 3))), model(rand(2, 3)), rtol=1e-5, atol=1e-6)


def test_tensors_in_keyword_arguments_and_several_outputs(tmp_path):
    """An RNN's initial_state= and MultiHeadAttention's keywords are written as
    Keras records them; layers taking tensors in several arguments are built by
    Keras when it replays their call."""
    x = Input(shape=(5, 3))
    _, state_h, state_c = L.LSTM(4, return_state=True)(x)
    h = L.LSTM(4, return_sequences=True)(x, initial_state=[state_h, state_c])
    attended, scores = L.MultiHeadAttention(2, 2)(h, h, use_causal_mask=True, return_attention_scores=True)
    model = Model(x, [attended, scores, state_c])
    keras_round_trip(model, rand(2, 5, 3), tmp_path)


def test_sequential_without_input_and_frozen_layers(tmp_path):
    model = Sequential([L.Dense(4, trainable=False), L.Dense(2)])
    model(rand(1, 3))
    loaded = keras_round_trip(model, rand(2, 3), tmp_path)
    assert [layer.trainable for layer in loaded.layers] == [False, True]


def test_unused_input_and_an_input_as_output(tmp_path):
    x, unused = Input(shape=(4,)), Input(shape=(2,))
    model = Model([x, unused], [L.Dense(3)(x), x])
    keras_round_trip(model, [rand(2, 4), rand(2, 2)], tmp_path)


def test_optimizer_state_follows_keras_order_of_a_branching_graph(tmp_path):
    x = Input(shape=(4,))
    direct = L.Dense(3)(L.Dense(4, trainable=False)(x))  # a frozen layer has no slots
    deep = L.Dense(3)(L.Dense(5)(L.Dense(5)(x)))  # Keras lists this deeper branch's first layer first
    model = Model(x, L.Add()([direct, deep]))
    model.compile(optimizer=engine.training.optimizers.Adam(amsgrad=True), loss="mse")
    model.fit(rand(4, 4), rand(4, 3), batch_size=2, verbose=0)
    loaded = keras_round_trip(model, rand(2, 4), tmp_path)
    assert [v.path for v in loaded.trainable_variables] != [v.path for v in model.trainable_weights]
    # Both name a slot after its weight's path and its kind (dense_1_kernel_velocity_hat).
    ours = {variable.name: variable.value for variable in model.optimizer.variables}
    theirs = {variable.name: np.asarray(variable) for variable in loaded.optimizer.variables}
    assert set(ours) == set(theirs) and len(theirs) == 2 + 3 * 8
    for name, value in theirs.items():
        np.testing.assert_allclose(value, ours[name], rtol=1e-6, err_msg=name)


def test_optimizer_state_that_no_longer_fits_the_weights_is_left_out_with_a_warning(tmp_path):
    x = Input(shape=(4,))
    frozen = L.Dense(5, trainable=False)
    model = Model(x, L.Add()([L.Dense(3)(x), L.Dense(3)(frozen(x))]))
    model.compile(optimizer="adam", loss="mse")
    model.fit(rand(4, 4), rand(4, 3), verbose=0)
    frozen.trainable = True  # the optimizer has no slots for it
    with pytest.warns(UserWarning, match="state of optimizer 'adam' is not written .* trainable weights changed"):
        model.save(tmp_path / "m.keras")
    loaded = keras.saving.load_model(tmp_path / "m.keras")
    np.testing.assert_allclose(np.asarray(loaded(rand(2, 4))), model(rand(2, 4)), rtol=1e-5, atol=1e-6)


def test_a_layer_shared_by_the_model_and_a_nested_model_is_saved_once(tmp_path):
    """Where Keras met it first, as Keras writes it (Keras 3.15 cannot load
    such a graph back itself: "Output with path `` is not connected")."""
    shared = L.Dense(3, name="shared")
    inner_in = Input(shape=(3,))
    inner = Model(inner_in, L.Dense(3)(shared(inner_in)), name="inner")
    x = Input(shape=(3,))
    Model(x, inner(shared(x))).save(tmp_path / "m.keras")
    with zipfile.ZipFile(tmp_path / "m.keras") as archive:
        archive.extract("model.weights.h5", tmp_path)
    datasets = []
    with h5py.File(tmp_path / "model.weights.h5") as weights:
        weights.visititems(lambda name, item: datasets.append(name) if isinstance(item, h5py.Dataset) else None)
    assert sorted(datasets) == ["layers/dense/vars/0", "layers/dense/vars/1",
                                "layers/functional/layers/dense_1/vars/0", "layers/functional/layers/dense_1/vars/1"]


class Block(Layer):
    """A user's layer made of layers, as in the keras-io Transformer guide."""

    def __init__(self, units=4, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.att = L.MultiHeadAttention(num_heads=2, key_dim=units)
        self.ffn = Sequential([L.Dense(units, activation="relu"), L.Dense(units)])
        self.norms = [L.LayerNormalization(), L.LayerNormalization()]

    def build(self, input_shape):
        self.scale = self.add_weight(shape=(self.units,), initializer="ones", name="scale")

    def call(self, inputs):
        h = self.norms[0](inputs + self.att(inputs, inputs))
        return self.norms[1](h + self.ffn(h)) * self.scale

    def get_config(self):
        return {**super().get_config(), "units": self.units}


def keras_block():
    """Block's Keras twin, with the same class and attribute names."""

    class Block(keras.layers.Layer):
        def __init__(self, units=4, **kwargs):
            super().__init__(**kwargs)
            self.units = units
            self.att = keras.layers.MultiHeadAttention(num_heads=2, key_dim=units)
            self.ffn = keras.Sequential([keras.layers.Dense(units, activation="relu"), keras.layers.Dense(units)])
            self.norms = [keras.layers.LayerNormalization(), keras.layers.LayerNormalization()]

        def build(self, input_shape):
            self.scale = self.add_weight(shape=(self.units,), initializer="ones", name="scale")

        def call(self, inputs):
            h = self.norms[0](inputs + self.att(inputs, inputs))
            return self.norms[1](h + self.ffn(h)) * self.scale

        def get_config(self):
            return {**super().get_config(), "units": self.units}

    return Block


def test_a_users_layer_made_of_layers(tmp_path):
    x = Input(shape=(5, 4))
    model = Model(x, L.GlobalAveragePooling1D()(Block()(x)))
    rng = np.random.default_rng(2)
    for weight in model.weights:
        weight.assign(rng.uniform(0.5, 1.5, size=weight.shape).astype("float32"))
    path = tmp_path / "m.keras"
    model.save(path)
    loaded = keras.saving.load_model(path, custom_objects={"Block": keras_block()})
    np.testing.assert_allclose(np.asarray(loaded(rand(2, 5, 4))), model(rand(2, 5, 4)), rtol=1e-5, atol=1e-5)
    assert loaded.count_params() == model.count_params()
