"""keras-io example "Image classification from scratch" (fchollet), rewritten with
``import nodeweave as keras`` on synthetic cats-vs-dogs-shaped images.

``make_model`` is the example's small Xception-style network (Rescaling, SeparableConv2D,
BatchNormalization, strided residual projections added back, GlobalAveragePooling2D,
Dropout, one logit), with 32x32 images and block widths (16, 32) instead of 180x180 and
(256, 512, 728), so it trains in seconds. Changed: the ``data_augmentation`` stage
(``RandomFlip``, ``RandomRotation``) is left out, as nodeweave has no random augmentation
layers.
"""

import numpy as np

import nodeweave as keras
from nodeweave import layers

image_size = (32, 32)


def synthetic_cats_and_dogs(num_samples=64, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, size=num_samples)
    images = rng.uniform(0, 255, size=(num_samples,) + image_size + (3,))
    images[labels == 1, ..., 0] = 0.5 * images[labels == 1, ..., 0] + 127
    images[labels == 0, ..., 2] = 0.5 * images[labels == 0, ..., 2] + 127
    return images.astype("float32"), labels.astype("float32")


def make_model(input_shape, num_classes):
    inputs = keras.Input(shape=input_shape)

    # Entry block
    x = layers.Rescaling(1.0 / 255)(inputs)
    x = layers.Conv2D(16, 3, strides=2, padding="same")(x)
    x = layers.BatchNormalization()(x)
    x = layers.Activation("relu")(x)

    previous_block_activation = x  # Set aside residual

    for size in [16, 32]:
        x = layers.Activation("relu")(x)
        x = layers.SeparableConv2D(size, 3, padding="same")(x)
        x = layers.BatchNormalization()(x)

        x = layers.Activation("relu")(x)
        x = layers.SeparableConv2D(size, 3, padding="same")(x)
        x = layers.BatchNormalization()(x)

        x = layers.MaxPooling2D(3, strides=2, padding="same")(x)

        # Project residual
        residual = layers.Conv2D(size, 1, strides=2, padding="same")(previous_block_activation)
        x = layers.add([x, residual])  # Add back residual
        previous_block_activation = x  # Set aside next residual

    x = layers.SeparableConv2D(48, 3, padding="same")(x)
    x = layers.BatchNormalization()(x)
    x = layers.Activation("relu")(x)

    x = layers.GlobalAveragePooling2D()(x)
    if num_classes == 2:
        units = 1
    else:
        units = num_classes

    x = layers.Dropout(0.25)(x)
    # We specify activation=None so as to return logits
    outputs = layers.Dense(units, activation=None)(x)
    return keras.Model(inputs, outputs)


def test_the_xception_style_network_trains_from_scratch():
    keras.utils.set_random_seed(0)
    x, y = synthetic_cats_and_dogs()
    model = make_model(input_shape=image_size + (3,), num_classes=2)
    assert model.output_shape == (None, 1)
    assert sum(isinstance(layer, layers.SeparableConv2D) for layer in model.layers) == 5

    model.compile(
        optimizer=keras.optimizers.Adam(3e-4),
        loss=keras.losses.BinaryCrossentropy(from_logits=True),
        metrics=[keras.metrics.BinaryAccuracy(name="acc")],
    )
    history = model.fit(x, y, epochs=4, batch_size=16, validation_split=0.25, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < losses[0]
    assert set(history.history) == {"loss", "acc", "val_loss", "val_acc"}

    predictions = model.predict(x[:4], verbose=0)
    score = float(keras.ops.sigmoid(predictions[0][0]))
    assert 0.0 <= score <= 1.0
