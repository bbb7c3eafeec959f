"""keras-io guide "Making new layers and models via subclassing" (fchollet), rewritten
for nodeweave.

Each section of the guide is one test. The code is the guide's with ``keras`` ->
``engine``, ``keras.layers`` -> ``layers``, ``keras.ops`` and ``keras.random`` -> NumPy,
MNIST -> ``tests.guides.synthetic``. Keras 3 is the oracle where the guide shows a result.
"""

import keras
import numpy as np

import engine
import engine.training.losses
import engine.training.metrics
import engine.training.optimizers
import engine.training.regularizers
import layers
from tests.guides import synthetic


class Linear(engine.Layer):
    """The guide's first layer: weights made in ``__init__`` with ``add_weight``."""

    def __init__(self, units=32, input_dim=32):
        super().__init__()
        self.w = self.add_weight(shape=(input_dim, units), initializer="random_normal", trainable=True)
        self.b = self.add_weight(shape=(units,), initializer="zeros", trainable=True)

    def call(self, inputs):
        return np.matmul(inputs, self.w) + self.b


def test_a_layer_holds_state_and_computation():
    x = np.ones((2, 2))
    linear_layer = Linear(4, 2)
    y = linear_layer(x)

    assert y.shape == (2, 4)
    np.testing.assert_allclose(y, x @ np.asarray(linear_layer.w) + np.asarray(linear_layer.b), rtol=1e-6)
    assert linear_layer.weights == [linear_layer.w, linear_layer.b]


class ComputeSum(engine.Layer):
    def __init__(self, input_dim):
        super().__init__()
        self.total = self.add_weight(initializer="zeros", shape=(input_dim,), trainable=False)

    def call(self, inputs):
        self.total.assign_add(np.sum(inputs, axis=0))
        return self.total


def test_layers_can_have_non_trainable_weights():
    x = np.ones((2, 2))
    my_sum = ComputeSum(2)
    y = my_sum(x)
    np.testing.assert_array_equal(y.numpy(), [2.0, 2.0])
    y = my_sum(x)
    np.testing.assert_array_equal(y.numpy(), [4.0, 4.0])

    assert len(my_sum.weights) == 1
    assert len(my_sum.non_trainable_weights) == 1
    assert my_sum.trainable_weights == []


class LazyLinear(engine.Layer):
    """The guide's ``Linear`` with weights deferred to ``build``."""

    def __init__(self, units=32):
        super().__init__()
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="random_normal", trainable=True)
        self.b = self.add_weight(shape=(self.units,), initializer="random_normal", trainable=True)

    def call(self, inputs):
        return np.matmul(inputs, self.w) + self.b


def test_weight_creation_deferred_until_the_input_shape_is_known():
    # At instantiation, we don't know on what inputs this is going to get called
    linear_layer = LazyLinear(32)
    assert linear_layer.weights == [] and not linear_layer.built

    # The layer's weights are created dynamically the first time the layer is called
    y = linear_layer(np.ones((2, 2)))
    assert y.shape == (2, 32)
    assert [w.shape for w in linear_layer.weights] == [(2, 32), (32,)]


class MLPBlock(engine.Layer):
    def __init__(self):
        super().__init__()
        self.linear_1 = LazyLinear(32)
        self.linear_2 = LazyLinear(32)
        self.linear_3 = LazyLinear(1)

    def call(self, inputs):
        x = self.linear_1(inputs)
        x = layers.activations.relu(x)
        x = self.linear_2(x)
        x = layers.activations.relu(x)
        return self.linear_3(x)


def test_layers_are_recursively_composable():
    mlp = MLPBlock()
    y = mlp(np.ones(shape=(3, 64)))  # The first call to the `mlp` will create the weights
    assert y.shape == (3, 1)
    assert len(mlp.weights) == 6
    assert len(mlp.trainable_weights) == 6

    x = np.random.rand(32, 64).astype("float32")
    inputs = engine.Input(shape=(64,))
    model = engine.Model(inputs, MLPBlock()(inputs))
    model.compile(optimizer="adam", loss="mse")
    history = model.fit(x, x[:, :1] * 2.0 - 1.0, epochs=5, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]


# A layer that creates an activity regularization loss
class ActivityRegularizationLayer(engine.Layer):
    def __init__(self, rate=1e-2):
        super().__init__()
        self.rate = rate

    def call(self, inputs):
        self.add_loss(self.rate * np.mean(inputs))
        return inputs


class OuterLayer(engine.Layer):
    def __init__(self):
        super().__init__()
        self.activity_reg = ActivityRegularizationLayer(1e-2)

    def call(self, inputs):
        return self.activity_reg(inputs)


def test_add_loss_collects_losses_of_the_last_call():
    layer = OuterLayer()
    assert len(layer.losses) == 0  # No losses yet since the layer has never been called

    _ = layer(np.zeros((1, 1)))
    assert len(layer.losses) == 1  # We created one loss value

    # `layer.losses` gets reset at the start of each __call__
    _ = layer(np.ones((1, 1)))
    assert len(layer.losses) == 1  # This is the loss created during the call above
    np.testing.assert_allclose(layer.losses[0], 1e-2)


class OuterLayerWithKernelRegularizer(engine.Layer):
    def __init__(self):
        super().__init__()
        self.dense = layers.Dense(32, kernel_regularizer=engine.training.regularizers.l2(1e-3))

    def call(self, inputs):
        return self.dense(inputs)


def test_losses_include_weight_regularization_of_inner_layers():
    layer = OuterLayerWithKernelRegularizer()
    _ = layer(np.zeros((1, 1)))

    # This is `1e-3 * sum(layer.dense.kernel ** 2)`, created by the `kernel_regularizer` above.
    assert len(layer.losses) == 1
    np.testing.assert_allclose(layer.losses[0], 1e-3 * np.sum(np.asarray(layer.dense.kernel) ** 2), rtol=1e-5)


def test_add_loss_is_added_to_the_compiled_loss_in_fit():
    inputs = engine.Input(shape=(3,))
    outputs = ActivityRegularizationLayer()(inputs)
    model = engine.Model(inputs, outputs)
    x, y = np.random.random((2, 3)), np.random.random((2, 3))

    # If there is a loss passed in `compile`, the regularization losses get added to it
    model.compile(optimizer="adam", loss="mse")
    history = model.fit(x, y, verbose=0)
    np.testing.assert_allclose(history.history["loss"][0], np.mean((x - y) ** 2) + 1e-2 * np.mean(x), rtol=1e-5)

    # It's also possible not to pass any loss in `compile`, since the model already has a
    # loss to minimize, via the `add_loss` call during the forward pass!
    model.compile(optimizer="adam")
    history = model.fit(x, y, verbose=0)
    np.testing.assert_allclose(history.history["loss"][0], 1e-2 * np.mean(x), rtol=1e-5)


def test_activity_regularization_trains_the_layers_below():
    inputs = engine.Input(shape=(4,))
    hidden = layers.Dense(8)(inputs)
    outputs = layers.Dense(1)(ActivityRegularizationLayer(rate=1.0)(hidden))
    model = engine.Model(inputs, outputs)
    model.compile(optimizer=engine.training.optimizers.SGD(0.05))  # only the add_loss penalty to minimise
    x = np.random.rand(16, 4).astype("float32")
    history = model.fit(x, np.zeros((16, 1)), epochs=5, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]


class SerializableLinear(engine.Layer):
    def __init__(self, units=32):
        super().__init__()
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="random_normal", trainable=True)
        self.b = self.add_weight(shape=(self.units,), initializer="random_normal", trainable=True)

    def call(self, inputs):
        return np.matmul(inputs, self.w) + self.b

    def get_config(self):
        return {"units": self.units}


class NamedLinear(engine.Layer):
    def __init__(self, units=32, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="random_normal", trainable=True)
        self.b = self.add_weight(shape=(self.units,), initializer="random_normal", trainable=True)

    def call(self, inputs):
        return np.matmul(inputs, self.w) + self.b

    def get_config(self):
        config = super().get_config()
        config.update({"units": self.units})
        return config


def test_layers_serialize_through_get_config():
    # Now you can recreate the layer from its config:
    layer = SerializableLinear(64)
    config = layer.get_config()
    assert config == {"units": 64}
    new_layer = SerializableLinear.from_config(config)
    assert new_layer.units == 64

    layer = NamedLinear(64, name="projection")
    config = layer.get_config()
    new_layer = NamedLinear.from_config(config)
    assert (new_layer.name, new_layer.units) == ("projection", 64)

    class KerasNamedLinear(keras.layers.Layer):
        def __init__(self, units=32, **kwargs):
            super().__init__(**kwargs)
            self.units = units

        def get_config(self):
            config = super().get_config()
            config.update({"units": self.units})
            return config

    assert set(config) == set(KerasNamedLinear(64).get_config())  # name, trainable, dtype, units


class CustomDropout(engine.Layer):
    def __init__(self, rate, **kwargs):
        super().__init__(**kwargs)
        self.rate = rate

    def call(self, inputs, training=None):
        if training:
            keep = np.random.random(inputs.shape) >= self.rate
            return np.where(keep, inputs / (1 - self.rate), 0.0)
        return inputs


def test_privileged_training_argument():
    layer = CustomDropout(0.5)
    x = np.ones((200, 10), dtype="float32")
    np.testing.assert_array_equal(layer(x), x)
    dropped = layer(x, training=True)
    assert set(np.unique(dropped)) == {0.0, 2.0}

    # fit() calls the layer with training=True, predict() with training=False.
    inputs = engine.Input(shape=(10,))
    model = engine.Model(inputs, layers.Dense(1)(CustomDropout(0.5)(inputs)))
    np.testing.assert_allclose(model.predict(x, verbose=0), model.predict(x, verbose=0))
    assert not np.allclose(model(x, training=True), model(x, training=True))
    data = np.random.rand(64, 10).astype("float32")
    model.compile(optimizer=engine.training.optimizers.Adam(0.01), loss="mse")
    history = model.fit(data, data.sum(axis=1, keepdims=True), epochs=10, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]


def test_privileged_mask_argument():
    """Masks made by ``Embedding(mask_zero=True)`` reach the ``mask`` argument of later layers."""

    class MaskedMean(engine.Layer):
        def call(self, inputs, mask=None):
            weights = np.asarray(mask, dtype=inputs.dtype)[..., None]
            return np.sum(inputs * weights, axis=1) / np.maximum(np.sum(weights, axis=1), 1.0)

    inputs = engine.Input(shape=(None,), dtype="int32")
    embedded = layers.Embedding(10, 3, mask_zero=True)(inputs)
    model = engine.Model(inputs, MaskedMean()(embedded))
    padded = np.array([[1, 2, 0, 0], [1, 2, 3, 4]])
    table = model.layers[1].get_weights()[0]
    np.testing.assert_allclose(model(padded)[0], table[[1, 2]].mean(axis=0), rtol=1e-6)

    # The Masking layer: all-zero timesteps are skipped by the LSTM after it.
    masked = engine.Sequential([engine.Input(shape=(4, 2)), layers.Masking(mask_value=0.0), layers.LSTM(3)])
    steps = np.array([[[1.0, 2.0], [3.0, 4.0], [0.0, 0.0], [0.0, 0.0]]], dtype="float32")
    lstm = masked.layers[-1]
    np.testing.assert_allclose(masked(steps), lstm(steps[:, :2]), rtol=1e-6)


class ResNetBlock(engine.Layer):
    """The block the guide's ``ResNet`` sketch assumes: two convolutions and a shortcut."""

    def __init__(self, filters=8, **kwargs):
        super().__init__(**kwargs)
        self.conv_1 = layers.Conv2D(filters, 3, padding="same", activation="relu")
        self.conv_2 = layers.Conv2D(filters, 3, padding="same")
        self.shortcut = layers.Conv2D(filters, 1)

    def call(self, inputs):
        x = self.conv_2(self.conv_1(inputs))
        return layers.activations.relu(x + self.shortcut(inputs))


class ResNet(engine.Model):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.block_1 = ResNetBlock()
        self.block_2 = ResNetBlock()
        self.global_pool = layers.GlobalAveragePooling2D()
        self.classifier = layers.Dense(num_classes)

    def call(self, inputs):
        x = self.block_1(inputs)
        x = self.block_2(x)
        x = self.global_pool(x)
        return self.classifier(x)


def test_the_model_class_trains_and_saves_weights(tmp_path):
    images = np.random.rand(16, 8, 8, 3).astype("float32")
    labels = (images.mean(axis=(1, 2)).argmax(axis=1)).astype("int64")
    resnet = ResNet(num_classes=3)
    resnet.compile(optimizer="adam", loss=engine.training.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = resnet.fit(images, labels, epochs=4, batch_size=8, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert len(resnet.layers) == 4

    resnet.save_weights(str(tmp_path / "resnet.weights.npz"))
    restored = ResNet(num_classes=3)
    restored(images[:1])
    restored.load_weights(str(tmp_path / "resnet.weights.npz"))
    np.testing.assert_allclose(restored.predict(images, verbose=0), resnet.predict(images, verbose=0), rtol=1e-5)


class Sampling(engine.Layer):
    """Uses (z_mean, z_log_var) to sample z, the vector encoding a digit."""

    def call(self, inputs):
        z_mean, z_log_var = inputs
        batch = np.shape(z_mean)[0]
        dim = np.shape(z_mean)[1]
        epsilon = np.random.normal(size=(batch, dim))
        return z_mean + np.exp(0.5 * z_log_var) * epsilon


class Encoder(engine.Layer):
    """Maps MNIST digits to a triplet (z_mean, z_log_var, z)."""

    def __init__(self, latent_dim=32, intermediate_dim=64, name="encoder", **kwargs):
        super().__init__(name=name, **kwargs)
        self.dense_proj = layers.Dense(intermediate_dim, activation="relu")
        self.dense_mean = layers.Dense(latent_dim)
        self.dense_log_var = layers.Dense(latent_dim)
        self.sampling = Sampling()

    def call(self, inputs):
        x = self.dense_proj(inputs)
        z_mean = self.dense_mean(x)
        z_log_var = self.dense_log_var(x)
        z = self.sampling((z_mean, z_log_var))
        return z_mean, z_log_var, z


class Decoder(engine.Layer):
    """Converts z, the encoded digit vector, back into a readable digit."""

    def __init__(self, original_dim, intermediate_dim=64, name="decoder", **kwargs):
        super().__init__(name=name, **kwargs)
        self.dense_proj = layers.Dense(intermediate_dim, activation="relu")
        self.dense_output = layers.Dense(original_dim, activation="sigmoid")

    def call(self, inputs):
        x = self.dense_proj(inputs)
        return self.dense_output(x)


class VariationalAutoEncoder(engine.Model):
    """Combines the encoder and decoder into an end-to-end model for training."""

    def __init__(self, original_dim, intermediate_dim=64, latent_dim=32, name="autoencoder", **kwargs):
        super().__init__(name=name, **kwargs)
        self.original_dim = original_dim
        self.encoder = Encoder(latent_dim=latent_dim, intermediate_dim=intermediate_dim)
        self.decoder = Decoder(original_dim, intermediate_dim=intermediate_dim)

    def call(self, inputs):
        z_mean, z_log_var, z = self.encoder(inputs)
        reconstructed = self.decoder(z)
        # Add KL divergence regularization loss.
        kl_loss = -0.5 * np.mean(z_log_var - np.square(z_mean) - np.exp(z_log_var) + 1)
        self.add_loss(kl_loss)
        return reconstructed


def mnist_vectors():
    (x_train, _), _ = synthetic.mnist_load_data(num_train=256, num_test=0)
    return x_train.reshape(len(x_train), 784).astype("float32") / 255


def test_vae_trained_with_fit():
    x_train = mnist_vectors()
    vae = VariationalAutoEncoder(784, 64, 32)
    optimizer = engine.training.optimizers.Adam(learning_rate=1e-3)
    vae.compile(optimizer, loss=engine.training.losses.MeanSquaredError())
    history = vae.fit(x_train, x_train, epochs=3, batch_size=64, verbose=0)

    assert history.history["loss"][-1] < history.history["loss"][0]
    reconstructed = vae.predict(x_train[:8], verbose=0)
    assert reconstructed.shape == (8, 784)
    assert len(vae.losses) == 1  # the KL term of the last call
    assert [layer.name for layer in vae.layers] == ["encoder", "decoder"]


def test_vae_trained_with_a_custom_loop():
    """The guide's earlier training loop, with ``engine.GradientTape`` for ``tf.GradientTape``."""
    x_train = mnist_vectors()
    vae = VariationalAutoEncoder(784, 64, 32)
    optimizer = engine.training.optimizers.Adam(learning_rate=1e-3)
    mse_loss_fn = engine.training.losses.MeanSquaredError()
    loss_metric = engine.training.metrics.Mean()

    epoch_means = []
    for _ in range(2):  # epochs
        loss_metric.reset_state()
        for step in range(0, len(x_train), 64):
            x_batch_train = x_train[step:step + 64]
            with engine.GradientTape() as tape:
                reconstructed = vae(x_batch_train)
                # Compute reconstruction loss
                loss = mse_loss_fn(x_batch_train, reconstructed)
                loss += sum(vae.losses)  # Add KLD regularization loss
            grads = tape.gradient(loss, vae.trainable_weights)
            optimizer.apply_gradients(zip(grads, vae.trainable_weights))
            loss_metric(loss)
        epoch_means.append(float(loss_metric.result()))

    assert epoch_means[-1] < epoch_means[0]
