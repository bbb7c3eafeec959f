"""Small stand-ins for the datasets the keras-io guides download (no network here).

Each returns arrays of the same per-sample shapes and dtypes as the Keras loader it
replaces, with labels that depend on the inputs, so a model can learn them and its
training loss falls within a few epochs.
"""

import numpy as np


def _prototype_images(num_samples, image_shape, num_classes, seed):
    """uint8 images: one random prototype per class, blended with noise."""
    rng = np.random.default_rng(seed)
    prototypes = rng.uniform(0, 255, size=(num_classes,) + image_shape)
    labels = rng.integers(0, num_classes, size=num_samples)
    noise = rng.uniform(0, 255, size=(num_samples,) + image_shape)
    images = 0.7 * prototypes[labels] + 0.3 * noise
    return images.astype("uint8"), labels.astype("uint8")


def mnist_load_data(num_train=256, num_test=64, seed=0):
    """Like ``keras.datasets.mnist.load_data()``: ``(x (n, 28, 28) uint8, y (n,) uint8)`` pairs."""
    x, y = _prototype_images(num_train + num_test, (28, 28), 10, seed)
    return (x[:num_train], y[:num_train]), (x[num_train:], y[num_train:])


def cifar10_load_data(num_train=64, num_test=16, seed=1):
    """Like ``keras.datasets.cifar10.load_data()``: ``(x (n, 32, 32, 3) uint8, y (n, 1) uint8)``."""
    x, y = _prototype_images(num_train + num_test, (32, 32, 3), 10, seed)
    y = y.reshape(-1, 1)
    return (x[:num_train], y[:num_train]), (x[num_train:], y[num_train:])


def imdb_load_data(num_words=20000, num_train=128, num_test=32, seed=2):
    """Like ``keras.datasets.imdb.load_data(num_words=...)``: lists of word-index lists of
    varying length (some longer than 200, some shorter) starting with 1, labels 0/1.

    Positive reviews draw a third of their words from one small set of "sentiment" words,
    negative reviews from another; the rest are random words of the vocabulary.
    """
    rng = np.random.default_rng(seed)
    positive, negative = np.arange(4, 54), np.arange(54, 104)

    def review(label):
        length = int(rng.integers(20, 300))
        words = rng.integers(104, num_words, size=length)
        marked = rng.random(length) < 1 / 3
        words[marked] = rng.choice(positive if label else negative, size=int(marked.sum()))
        return [1] + words.tolist()

    labels = rng.integers(0, 2, size=num_train + num_test)
    reviews = [review(label) for label in labels]
    return ((reviews[:num_train], labels[:num_train]), (reviews[num_train:], labels[num_train:]))
