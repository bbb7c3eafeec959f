"""keras-io example "Image segmentation with a U-Net-like architecture" (fchollet), rewritten
with ``import nodeweave as keras`` on synthetic Oxford-Pets-shaped data: RGB images and
one-channel masks of 3 classes, at 32x32 instead of 160x160 so it trains in seconds.

The model code is the example's, unchanged: an Xception-style downsampling half
(SeparableConv2D, BatchNormalization, strided residual projections) and an upsampling half
(Conv2DTranspose, UpSampling2D, residuals), ending in a per-pixel softmax.
"""

import numpy as np
import pytest

import nodeweave as keras
from nodeweave import layers

img_size = (32, 32)
num_classes = 3
batch_size = 8


def synthetic_pets(num_samples, seed=0):
    """Images holding a bright square ("pet", class 1) with a border ("outline", class 2) on a
    dark background (class 0), masks of shape (h, w, 1) uint8 as the example's loader makes."""
    rng = np.random.default_rng(seed)
    images = rng.uniform(0, 60, size=(num_samples,) + img_size + (3,)).astype("float32")
    masks = np.zeros((num_samples,) + img_size + (1,), "uint8")
    for image, mask in zip(images, masks):
        top, left = rng.integers(0, img_size[0] - 14, size=2)
        size = int(rng.integers(8, 14))
        mask[top:top + size, left:left + size] = 2
        mask[top + 1:top + size - 1, left + 1:left + size - 1] = 1
        image[mask[..., 0] == 2] += 120
        image[mask[..., 0] == 1] += 190
    return images / 255.0, masks


def get_model(img_size, num_classes):
    inputs = keras.Input(shape=img_size + (3,))

    ### [First half of the network: downsampling inputs] ###

    # Entry block
    x = layers.Conv2D(32, 3, strides=2, padding="same")(inputs)
    x = layers.BatchNormalization()(x)
    x = layers.Activation("relu")(x)

    previous_block_activation = x  # Set aside residual

    # Blocks 1, 2, 3 are identical apart from the feature depth.
    for filters in [64, 128]:
        x = layers.Activation("relu")(x)
        x = layers.SeparableConv2D(filters, 3, padding="same")(x)
        x = layers.BatchNormalization()(x)

        x = layers.Activation("relu")(x)
        x = layers.SeparableConv2D(filters, 3, padding="same")(x)
        x = layers.BatchNormalization()(x)

        x = layers.MaxPooling2D(3, strides=2, padding="same")(x)

        # Project residual
        residual = layers.Conv2D(filters, 1, strides=2, padding="same")(previous_block_activation)
        x = layers.add([x, residual])  # Add back residual
        previous_block_activation = x  # Set aside next residual

    ### [Second half of the network: upsampling inputs] ###

    for filters in [128, 64, 32]:
        x = layers.Activation("relu")(x)
        x = layers.Conv2DTranspose(filters, 3, padding="same")(x)
        x = layers.BatchNormalization()(x)

        x = layers.Activation("relu")(x)
        x = layers.Conv2DTranspose(filters, 3, padding="same")(x)
        x = layers.BatchNormalization()(x)

        x = layers.UpSampling2D(2)(x)

        # Project residual
        residual = layers.UpSampling2D(2)(previous_block_activation)
        residual = layers.Conv2D(filters, 1, padding="same")(residual)
        x = layers.add([x, residual])  # Add back residual
        previous_block_activation = x  # Set aside next residual

    # Add a per-pixel classification layer
    outputs = layers.Conv2D(num_classes, 3, activation="softmax", padding="same")(x)

    # Define the model
    model = keras.Model(inputs, outputs)
    return model


def test_the_unet_maps_each_pixel_to_class_probabilities():
    model = get_model(img_size, num_classes)
    assert model.output_shape == (None,) + img_size + (num_classes,)
    probabilities = model.predict(synthetic_pets(2)[0], verbose=0)
    np.testing.assert_allclose(probabilities.sum(axis=-1), 1.0, rtol=1e-5)


@pytest.mark.slow
def test_training_lowers_the_per_pixel_loss_and_segments_the_squares():
    keras.utils.set_random_seed(1337)
    train_input, train_target = synthetic_pets(48)
    val_input, val_target = synthetic_pets(8, seed=1)
    model = get_model(img_size, num_classes)
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy")
    history = model.fit(train_input, train_target, batch_size=batch_size, epochs=4,
                        validation_data=(val_input, val_target), verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < losses[0]
    assert len(history.history["val_loss"]) == 4

    val_preds = model.predict(val_input, verbose=0)
    mask = np.argmax(val_preds, axis=-1)
    assert mask.shape == (8,) + img_size
    background = (val_target[..., 0] == 0).mean()
    assert (mask == val_target[..., 0]).mean() >= background  # at least as good as "all background"
