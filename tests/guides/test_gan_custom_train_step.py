"""keras-io guide "Customizing what happens in fit()" (fchollet), its GAN section, rewritten
with ``import nodeweave as keras`` on a small synthetic MNIST.

The discriminator, the generator, and the ``GAN`` model (no ``call``, ``compile`` overridden
with two optimizers, latent vectors drawn with ``keras.random.normal`` from a
``SeedGenerator``, noisy labels from ``keras.random.uniform``, one tape per sub-model) are the
guide's. Changed: the guide's ``tf.GradientTape`` is ``engine.GradientTape``; the filters are
16 and 32 instead of 64 and 128, so the test runs in seconds.
"""

import numpy as np
import pytest

import nodeweave as keras
from engine import GradientTape
from nodeweave import layers, ops
from tests.guides import synthetic

latent_dim = 8


def build_discriminator():
    return keras.Sequential(
        [
            keras.Input(shape=(28, 28, 1)),
            layers.Conv2D(16, (3, 3), strides=(2, 2), padding="same"),
            layers.LeakyReLU(negative_slope=0.2),
            layers.Conv2D(32, (3, 3), strides=(2, 2), padding="same"),
            layers.LeakyReLU(negative_slope=0.2),
            layers.GlobalMaxPooling2D(),
            layers.Dense(1),
        ],
        name="discriminator",
    )


def build_generator():
    # We want to generate 128 coefficients to reshape into a 7x7x128 map
    return keras.Sequential(
        [
            keras.Input(shape=(latent_dim,)),
            layers.Dense(7 * 7 * 32),
            layers.LeakyReLU(negative_slope=0.2),
            layers.Reshape((7, 7, 32)),
            layers.Conv2DTranspose(32, (4, 4), strides=(2, 2), padding="same"),
            layers.LeakyReLU(negative_slope=0.2),
            layers.Conv2DTranspose(32, (4, 4), strides=(2, 2), padding="same"),
            layers.LeakyReLU(negative_slope=0.2),
            layers.Conv2D(1, (7, 7), padding="same", activation="sigmoid"),
        ],
        name="generator",
    )


class GAN(keras.Model):
    def __init__(self, discriminator, generator, latent_dim):
        super().__init__()
        self.discriminator = discriminator
        self.generator = generator
        self.latent_dim = latent_dim
        self.d_loss_tracker = keras.metrics.Mean(name="d_loss")
        self.g_loss_tracker = keras.metrics.Mean(name="g_loss")
        self.seed_generator = keras.random.SeedGenerator(1337)

    @property
    def metrics(self):
        return [self.d_loss_tracker, self.g_loss_tracker]

    def compile(self, d_optimizer, g_optimizer, loss_fn):
        super().compile()
        self.d_optimizer = d_optimizer
        self.g_optimizer = g_optimizer
        self.loss_fn = loss_fn

    def train_step(self, real_images):
        if isinstance(real_images, tuple):
            real_images = real_images[0]
        # Sample random points in the latent space
        batch_size = ops.shape(real_images)[0]
        random_latent_vectors = keras.random.normal(shape=(batch_size, self.latent_dim), seed=self.seed_generator)

        # Decode them to fake images
        generated_images = self.generator(random_latent_vectors)

        # Combine them with real images
        combined_images = ops.concatenate([generated_images, real_images], axis=0)

        # Assemble labels discriminating real from fake images
        labels = ops.concatenate([ops.ones((batch_size, 1)), ops.zeros((batch_size, 1))], axis=0)
        # Add random noise to the labels - important trick!
        labels += 0.05 * keras.random.uniform(ops.shape(labels), seed=self.seed_generator)

        # Train the discriminator
        with GradientTape() as tape:
            predictions = self.discriminator(combined_images)
            d_loss = self.loss_fn(labels, predictions)
        grads = tape.gradient(d_loss, self.discriminator.trainable_weights)
        self.d_optimizer.apply_gradients(zip(grads, self.discriminator.trainable_weights))

        # Sample random points in the latent space
        random_latent_vectors = keras.random.normal(shape=(batch_size, self.latent_dim), seed=self.seed_generator)

        # Assemble labels that say "all real images"
        misleading_labels = ops.zeros((batch_size, 1))

        # Train the generator (note that we should *not* update the weights
        # of the discriminator)!
        with GradientTape() as tape:
            predictions = self.discriminator(self.generator(random_latent_vectors))
            g_loss = self.loss_fn(misleading_labels, predictions)
        grads = tape.gradient(g_loss, self.generator.trainable_weights)
        self.g_optimizer.apply_gradients(zip(grads, self.generator.trainable_weights))

        # Update metrics and return their value.
        self.d_loss_tracker.update_state(d_loss)
        self.g_loss_tracker.update_state(g_loss)
        return {
            "d_loss": self.d_loss_tracker.result(),
            "g_loss": self.g_loss_tracker.result(),
        }


@pytest.mark.slow
def test_the_gan_trains_both_models_through_its_train_step():
    keras.utils.set_random_seed(0)
    (x_train, _), (x_test, _) = synthetic.mnist_load_data(num_train=64, num_test=32)
    all_digits = np.concatenate([x_train, x_test])
    all_digits = all_digits.astype("float32") / 255.0
    all_digits = np.reshape(all_digits, (-1, 28, 28, 1))

    discriminator, generator = build_discriminator(), build_generator()
    assert generator.output_shape == (None, 28, 28, 1)
    d_before = [w.copy() for w in discriminator.get_weights()]
    g_before = [w.copy() for w in generator.get_weights()]

    gan = GAN(discriminator=discriminator, generator=generator, latent_dim=latent_dim)
    gan.compile(
        d_optimizer=keras.optimizers.Adam(learning_rate=0.0003),
        g_optimizer=keras.optimizers.Adam(learning_rate=0.0003),
        loss_fn=keras.losses.BinaryCrossentropy(from_logits=True),
    )
    history = gan.fit(all_digits, epochs=4, batch_size=32, verbose=0)
    assert set(history.history) == {"d_loss", "g_loss"}
    assert all(np.isfinite(history.history["d_loss"] + history.history["g_loss"]))
    # The discriminator learns to tell the generator's images from the digits.
    assert history.history["d_loss"][-1] < history.history["d_loss"][0]
    assert all(not np.array_equal(b, a) for b, a in zip(d_before, discriminator.get_weights()))
    assert all(not np.array_equal(b, a) for b, a in zip(g_before, generator.get_weights()))
