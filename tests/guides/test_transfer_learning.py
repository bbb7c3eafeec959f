"""keras-io guide "Transfer learning & fine-tuning" (fchollet), its end-to-end example,
rewritten with ``import nodeweave as keras`` on synthetic cats-vs-dogs-shaped images.

Changed: the base model is ``keras.applications.MobileNetV2(weights=None, include_top=False,
input_shape=(32, 32, 3))`` built locally (no ImageNet download, 32x32 instead of 150x150
Xception); the data augmentation stage (``RandomFlip``, ``RandomRotation``) is left out, as
nodeweave has no random image-augmentation layers. Kept: the frozen base called with
``training=False``, ``Rescaling`` to [-1, 1], a new head trained first, then the whole model
unfrozen, recompiled with a low learning rate and trained again.
"""

import numpy as np
import pytest

import nodeweave as keras


def synthetic_cats_and_dogs(num_samples=48, seed=0):
    """uint8-range float images (n, 32, 32, 3), label 1 ("dog") images brighter in red."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, size=num_samples)
    images = rng.uniform(0, 255, size=(num_samples, 32, 32, 3))
    images[labels == 1, ..., 0] = 0.5 * images[labels == 1, ..., 0] + 127
    images[labels == 0, ..., 2] = 0.5 * images[labels == 0, ..., 2] + 127
    return images.astype("float32"), labels.astype("float32")


def build_model():
    base_model = keras.applications.MobileNetV2(
        weights=None,  # no pre-trained weights here; the guide loads ImageNet's.
        input_shape=(32, 32, 3),
        include_top=False,
    )  # Do not include the ImageNet classifier at the top.

    # Freeze the base_model
    base_model.trainable = False

    # Create new model on top
    inputs = keras.Input(shape=(32, 32, 3))

    # Pre-trained weights require that input be scaled
    # from (0, 255) to a range of (-1., +1.), the rescaling layer
    # outputs: `(inputs * scale) + offset`
    scale_layer = keras.layers.Rescaling(scale=1 / 127.5, offset=-1)
    x = scale_layer(inputs)

    # The base model contains batchnorm layers. We want to keep them in inference mode
    # when we unfreeze the base model for fine-tuning, so we make sure that the
    # base_model is running in inference mode here.
    x = base_model(x, training=False)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dropout(0.2)(x)  # Regularize with dropout
    outputs = keras.layers.Dense(1)(x)
    return keras.Model(inputs, outputs), base_model


@pytest.mark.slow
def test_train_the_new_head_on_a_frozen_base_then_fine_tune_everything():
    keras.utils.set_random_seed(0)
    x, y = synthetic_cats_and_dogs()
    model, base_model = build_model()
    frozen_weights = [w.copy() for w in base_model.get_weights()]
    assert len(model.trainable_weights) == 2  # only the new Dense head

    model.compile(
        optimizer=keras.optimizers.Adam(),
        loss=keras.losses.BinaryCrossentropy(from_logits=True),
        metrics=[keras.metrics.BinaryAccuracy()],
    )
    history = model.fit(x, y, batch_size=16, epochs=4, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < losses[0]
    for before, after in zip(frozen_weights, base_model.get_weights()):
        np.testing.assert_array_equal(before, after)  # the base did not move, BN statistics included

    # Unfreeze the base_model. Note that it keeps running in inference mode
    # since we passed `training=False` when calling it. This means that
    # the batchnorm layers will not update their batch statistics.
    # This prevents the batchnorm layers from undoing all the training
    # we've done so far.
    base_model.trainable = True
    assert len(model.trainable_weights) > 2
    model.compile(
        optimizer=keras.optimizers.Adam(1e-5),  # Low learning rate
        loss=keras.losses.BinaryCrossentropy(from_logits=True),
        metrics=[keras.metrics.BinaryAccuracy()],
    )
    before_fine_tuning = model.evaluate(x, y, verbose=0)[0]
    model.fit(x, y, batch_size=16, epochs=2, verbose=0)
    assert model.evaluate(x, y, verbose=0)[0] < before_fine_tuning
    moved = [not np.array_equal(b, a) for b, a in zip(frozen_weights, base_model.get_weights())]
    assert any(moved)
