"""keras-io example "Variational AutoEncoder" (fchollet), rewritten with
``import nodeweave as keras`` on a small synthetic MNIST.

The ``Sampling`` layer (``keras.random.normal`` with a ``SeedGenerator``), the encoder and
decoder, and the ``VAE`` model with its loss trackers and custom ``train_step`` (KL plus
reconstruction loss written with ``keras.ops``) are the example's. Changed: the example's
``tf.GradientTape`` (it runs on the TensorFlow backend) is nodeweave's
``engine.GradientTape``, which ``nodeweave`` does not re-export (``keras`` has no tape of its
own either).
"""

import numpy as np

import nodeweave as keras
from engine import GradientTape
from nodeweave import layers, ops
from tests.guides import synthetic


class Sampling(layers.Layer):
    """Uses (z_mean, z_log_var) to sample z, the vector encoding a digit."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.seed_generator = keras.random.SeedGenerator(1337)

    def call(self, inputs):
        z_mean, z_log_var = inputs
        batch = ops.shape(z_mean)[0]
        dim = ops.shape(z_mean)[1]
        epsilon = keras.random.normal(shape=(batch, dim), seed=self.seed_generator)
        return z_mean + ops.exp(0.5 * z_log_var) * epsilon


latent_dim = 2


def build_encoder():
    encoder_inputs = keras.Input(shape=(28, 28, 1))
    x = layers.Conv2D(32, 3, activation="relu", strides=2, padding="same")(encoder_inputs)
    x = layers.Conv2D(64, 3, activation="relu", strides=2, padding="same")(x)
    x = layers.Flatten()(x)
    x = layers.Dense(16, activation="relu")(x)
    z_mean = layers.Dense(latent_dim, name="z_mean")(x)
    z_log_var = layers.Dense(latent_dim, name="z_log_var")(x)
    z = Sampling()([z_mean, z_log_var])
    return keras.Model(encoder_inputs, [z_mean, z_log_var, z], name="encoder")


def build_decoder():
    latent_inputs = keras.Input(shape=(latent_dim,))
    x = layers.Dense(7 * 7 * 64, activation="relu")(latent_inputs)
    x = layers.Reshape((7, 7, 64))(x)
    x = layers.Conv2DTranspose(64, 3, activation="relu", strides=2, padding="same")(x)
    x = layers.Conv2DTranspose(32, 3, activation="relu", strides=2, padding="same")(x)
    decoder_outputs = layers.Conv2DTranspose(1, 3, activation="sigmoid", padding="same")(x)
    return keras.Model(latent_inputs, decoder_outputs, name="decoder")


class VAE(keras.Model):
    def __init__(self, encoder, decoder, **kwargs):
        super().__init__(**kwargs)
        self.encoder = encoder
        self.decoder = decoder
        self.total_loss_tracker = keras.metrics.Mean(name="total_loss")
        self.reconstruction_loss_tracker = keras.metrics.Mean(name="reconstruction_loss")
        self.kl_loss_tracker = keras.metrics.Mean(name="kl_loss")

    @property
    def metrics(self):
        return [
            self.total_loss_tracker,
            self.reconstruction_loss_tracker,
            self.kl_loss_tracker,
        ]

    def train_step(self, data):
        with GradientTape() as tape:
            z_mean, z_log_var, z = self.encoder(data)
            reconstruction = self.decoder(z)
            reconstruction_loss = ops.mean(
                ops.sum(
                    keras.losses.binary_crossentropy(data, reconstruction),
                    axis=(1, 2),
                )
            )
            kl_loss = -0.5 * (1 + z_log_var - ops.square(z_mean) - ops.exp(z_log_var))
            kl_loss = ops.mean(ops.sum(kl_loss, axis=1))
            total_loss = reconstruction_loss + kl_loss
        grads = tape.gradient(total_loss, self.trainable_weights)
        self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
        self.total_loss_tracker.update_state(total_loss)
        self.reconstruction_loss_tracker.update_state(reconstruction_loss)
        self.kl_loss_tracker.update_state(kl_loss)
        return {
            "loss": self.total_loss_tracker.result(),
            "reconstruction_loss": self.reconstruction_loss_tracker.result(),
            "kl_loss": self.kl_loss_tracker.result(),
        }


def mnist_digits():
    (x_train, _), (x_test, _) = synthetic.mnist_load_data(num_train=96, num_test=32)
    digits = np.concatenate([x_train, x_test], axis=0)
    return np.expand_dims(digits, -1).astype("float32") / 255


def test_the_sampling_layer_draws_around_z_mean_with_its_own_seed():
    z_mean = np.zeros((2000, 2), "float32")
    z_log_var = np.log(np.full((2000, 2), 4.0, "float32"))
    z = keras.ops.convert_to_numpy(Sampling()([z_mean, z_log_var]))
    assert abs(z.mean()) < 0.1 and abs(z.std() - 2.0) < 0.1
    np.testing.assert_array_equal(z, keras.ops.convert_to_numpy(Sampling()([z_mean, z_log_var])))


def test_the_vae_trains_through_its_train_step_and_its_losses_fall():
    keras.utils.set_random_seed(0)
    encoder, decoder = build_encoder(), build_decoder()
    assert [tuple(shape) for shape in encoder.output_shape] == [(None, 2)] * 3
    assert decoder.output_shape == (None, 28, 28, 1)

    vae = VAE(encoder, decoder)
    vae.compile(optimizer=keras.optimizers.Adam())
    history = vae.fit(mnist_digits(), epochs=4, batch_size=32, verbose=0)
    assert set(history.history) == {"loss", "reconstruction_loss", "kl_loss"}
    losses = history.history["loss"]
    assert losses[-1] < losses[0]
    assert history.history["reconstruction_loss"][-1] < history.history["reconstruction_loss"][0]

    z_mean, _, _ = vae.encoder.predict(mnist_digits()[:8], verbose=0)
    assert z_mean.shape == (8, latent_dim)
    digits = vae.decoder.predict(np.array([[0.0, 0.0], [1.0, -1.0]], "float32"), verbose=0)
    assert digits.shape == (2, 28, 28, 1) and ((0 <= digits) & (digits <= 1)).all()
