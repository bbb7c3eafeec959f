"""The GAN step of keras-io's "customizing what happens in fit", in Keras 3 on
TensorFlow's CPU backend: issue 29's yardstick for ``training_steps``' "GAN step".

TensorFlow is not one of nodeweave's dependencies (nor of its ``bench`` extra), so
this script imports neither nodeweave nor the harness: run it with an interpreter
that has ``tensorflow-cpu`` and ``keras`` 3, for example::

    python3 -m venv /tmp/tf && /tmp/tf/bin/pip install tensorflow-cpu
    NODEWEAVE_BENCH_THREADS=1 /tmp/tf/bin/python -m benchmarks.gan_keras_tf  # in the checkout

The models and the step are the guide's (``GAN.train_step`` with two
``tf.GradientTape``s, run by ``fit``, as a ``tf.function``), at batch 64 on
uniform 28x28x1 images, with the same Adam(3e-4) as ``training_steps.GanStep``.
``NODEWEAVE_BENCH_THREADS=1`` (the default) holds TensorFlow's intra- and
inter-op pools to one thread each; ``all`` leaves TensorFlow's defaults. It
prints one JSON line: the seconds per step of each epoch of ``STEPS`` steps
and their median without the first epoch (which traces and compiles the step).
"""

import json
import os
import time

THREADS = os.environ.get("NODEWEAVE_BENCH_THREADS", "1")
os.environ["KERAS_BACKEND"] = "tensorflow"
if THREADS != "all":
    for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[variable] = THREADS

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from keras import layers  # noqa: E402

LATENT, BATCH, STEPS, EPOCHS = 128, 64, 8, 4


def gan_models():
    """(generator, discriminator) as in the guide."""
    discriminator = keras.Sequential([
        keras.Input(shape=(28, 28, 1)), layers.Conv2D(64, 3, strides=2, padding="same"),
        layers.LeakyReLU(negative_slope=0.2), layers.Conv2D(128, 3, strides=2, padding="same"),
        layers.LeakyReLU(negative_slope=0.2), layers.GlobalMaxPooling2D(), layers.Dense(1)], name="discriminator")
    generator = keras.Sequential([
        keras.Input(shape=(LATENT,)), layers.Dense(7 * 7 * 128), layers.LeakyReLU(negative_slope=0.2),
        layers.Reshape((7, 7, 128)), layers.Conv2DTranspose(128, 4, strides=2, padding="same"),
        layers.LeakyReLU(negative_slope=0.2), layers.Conv2DTranspose(128, 4, strides=2, padding="same"),
        layers.LeakyReLU(negative_slope=0.2), layers.Conv2D(1, 7, padding="same", activation="sigmoid")],
        name="generator")
    return generator, discriminator


class GAN(keras.Model):
    """The guide's GAN: ``train_step`` trains the discriminator, then the generator through it."""

    def __init__(self, generator, discriminator):
        super().__init__()
        self.generator, self.discriminator = generator, discriminator
        self.seed_generator = keras.random.SeedGenerator(1337)

    def compile(self, d_optimizer, g_optimizer, loss_fn):
        super().compile()
        self.d_optimizer, self.g_optimizer, self.loss_fn = d_optimizer, g_optimizer, loss_fn

    def train_step(self, real_images):
        batch = tf.shape(real_images)[0]
        noise = keras.random.normal(shape=(batch, LATENT), seed=self.seed_generator)
        combined = tf.concat([self.generator(noise), real_images], axis=0)
        labels = tf.concat([tf.ones((batch, 1)), tf.zeros((batch, 1))], axis=0)
        labels += 0.05 * tf.random.uniform(tf.shape(labels))
        with tf.GradientTape() as tape:
            d_loss = self.loss_fn(labels, self.discriminator(combined))
        grads = tape.gradient(d_loss, self.discriminator.trainable_weights)
        self.d_optimizer.apply_gradients(zip(grads, self.discriminator.trainable_weights))
        noise = keras.random.normal(shape=(batch, LATENT), seed=self.seed_generator)
        with tf.GradientTape() as tape:
            g_loss = self.loss_fn(tf.zeros((batch, 1)), self.discriminator(self.generator(noise)))
        grads = tape.gradient(g_loss, self.generator.trainable_weights)
        self.g_optimizer.apply_gradients(zip(grads, self.generator.trainable_weights))
        return {"d_loss": d_loss, "g_loss": g_loss}


class EpochSeconds(keras.callbacks.Callback):
    """Seconds per step of each epoch."""

    def __init__(self):
        super().__init__()
        self.per_step = []

    def on_epoch_begin(self, epoch, logs=None):
        self.start = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        self.per_step.append((time.perf_counter() - self.start) / STEPS)


def main():
    if THREADS != "all":
        tf.config.threading.set_intra_op_parallelism_threads(int(THREADS))
        tf.config.threading.set_inter_op_parallelism_threads(int(THREADS))
    images = np.random.default_rng(0).uniform(size=(BATCH * STEPS, 28, 28, 1)).astype("float32")
    gan = GAN(*gan_models())
    gan.compile(keras.optimizers.Adam(3e-4), keras.optimizers.Adam(3e-4),
                keras.losses.BinaryCrossentropy(from_logits=True))
    timer = EpochSeconds()
    gan.fit(tf.data.Dataset.from_tensor_slices(images).batch(BATCH).cache(), epochs=EPOCHS, verbose=0,
            callbacks=[timer])
    print(json.dumps({"tensorflow": tf.__version__, "keras": keras.__version__, "threads": THREADS,
                      "seconds_per_step": timer.per_step, "median": float(np.median(timer.per_step[1:]))}))


if __name__ == "__main__":
    main()
