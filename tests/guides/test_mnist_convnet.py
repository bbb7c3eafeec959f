"""keras-io example "Simple MNIST convnet" (fchollet), rewritten for nodeweave on a small
synthetic MNIST of the same shapes (``keras`` -> ``engine``, ``keras.layers`` -> ``layers``).

The sections (prepare the data, build the model, train, evaluate) are one test each; the
same model code also runs on Keras 3, which must give the same parameter count and, with
our weights copied in, the same predictions.
"""

import keras
import numpy as np

import engine
import engine.utils
import layers
from tests.guides import synthetic

# Model / data parameters
num_classes = 10
input_shape = (28, 28, 1)


def prepare_data():
    (x_train, y_train), (x_test, y_test) = synthetic.mnist_load_data(num_train=192, num_test=32)
    # Scale images to the [0, 1] range
    x_train = x_train.astype("float32") / 255
    x_test = x_test.astype("float32") / 255
    # Make sure images have shape (28, 28, 1)
    x_train = np.expand_dims(x_train, -1)
    x_test = np.expand_dims(x_test, -1)
    # convert class vectors to binary class matrices
    y_train = engine.utils.to_categorical(y_train, num_classes)
    y_test = engine.utils.to_categorical(y_test, num_classes)
    return (x_train, y_train), (x_test, y_test)


def build_model(keras, layers):
    return keras.Sequential(
        [
            keras.Input(shape=input_shape),
            layers.Conv2D(32, kernel_size=(3, 3), activation="relu"),
            layers.MaxPooling2D(pool_size=(2, 2)),
            layers.Conv2D(64, kernel_size=(3, 3), activation="relu"),
            layers.MaxPooling2D(pool_size=(2, 2)),
            layers.Flatten(),
            layers.Dropout(0.5),
            layers.Dense(num_classes, activation="softmax"),
        ]
    )


def test_prepare_the_data():
    (x_train, y_train), (x_test, y_test) = prepare_data()
    assert x_train.shape == (192, 28, 28, 1) and x_test.shape == (32, 28, 28, 1)
    assert x_train.dtype == np.float32 and 0.0 <= x_train.min() and x_train.max() <= 1.0
    assert y_train.shape == (192, num_classes) and y_test.shape == (32, num_classes)
    np.testing.assert_array_equal(y_train.sum(axis=1), 1.0)
    (_, labels), _ = synthetic.mnist_load_data(num_train=192, num_test=32)
    np.testing.assert_array_equal(y_train.argmax(axis=1), labels)
    np.testing.assert_array_equal(y_train, keras.utils.to_categorical(labels, num_classes))


def test_build_the_model(capsys):
    model = build_model(engine, layers)
    model.summary()
    printed = capsys.readouterr().out

    assert model.output_shape == (None, num_classes)
    assert [layer.output.shape for layer in model.layers[:5]] == [
        (None, 26, 26, 32), (None, 13, 13, 32), (None, 11, 11, 64), (None, 5, 5, 64), (None, 1600)]
    theirs = build_model(keras, keras.layers)
    assert model.count_params() == theirs.count_params()
    assert f"Total params: {theirs.count_params():,}" in printed

    theirs.set_weights(model.get_weights())
    images = np.random.rand(4, 28, 28, 1).astype("float32")
    np.testing.assert_allclose(model.predict(images, verbose=0), theirs.predict(images, verbose=0),
                               rtol=1e-4, atol=1e-6)


def test_train_and_evaluate_the_model():
    (x_train, y_train), (x_test, y_test) = prepare_data()
    model = build_model(engine, layers)

    batch_size = 128
    epochs = 3
    model.compile(loss="categorical_crossentropy", optimizer="adam", metrics=["accuracy"])
    untrained_loss, _ = model.evaluate(x_train, y_train, verbose=0)
    history = model.fit(x_train, y_train, batch_size=batch_size, epochs=epochs, validation_split=0.1, verbose=0)
    assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    assert len(history.history["loss"]) == epochs
    # Measured by evaluate (no Dropout), so the fall is the training's, not the noise's.
    assert model.evaluate(x_train, y_train, verbose=0)[0] < untrained_loss

    score = model.evaluate(x_test, y_test, verbose=0)
    test_loss, test_accuracy = score
    assert np.isfinite(test_loss) and 0.0 <= test_accuracy <= 1.0
    predictions = model.predict(x_test, verbose=0)
    np.testing.assert_allclose(predictions.sum(axis=1), 1.0, rtol=1e-5)
