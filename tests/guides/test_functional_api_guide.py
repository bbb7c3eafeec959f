"""keras-io guide "The Functional API" (fchollet), rewritten for nodeweave on synthetic data.

Each section of the guide is one test. The code is what a Keras user writes with the
imports changed: ``keras`` -> ``engine``, ``keras.layers`` -> ``layers``,
``keras.utils.plot_model`` -> ``graph.plot_model``, ``keras.ops`` -> NumPy, and the
datasets -> ``tests.guides.synthetic``; files go to a temporary working directory.
"""

import os

import numpy as np
import pytest

import engine
import engine.training.losses
import engine.training.optimizers
import engine.utils
import layers
from graph import plot_model
from tests.guides import synthetic


@pytest.fixture(autouse=True)
def in_tmp_path(tmp_path, monkeypatch):
    """The guide writes its files to the working directory."""
    monkeypatch.chdir(tmp_path)


def mnist_mlp():
    inputs = engine.Input(shape=(784,))
    dense = layers.Dense(64, activation="relu")
    x = dense(inputs)
    x = layers.Dense(64, activation="relu")(x)
    outputs = layers.Dense(10)(x)
    return engine.Model(inputs=inputs, outputs=outputs, name="mnist_model")


def mnist_vectors():
    (x_train, y_train), (x_test, y_test) = synthetic.mnist_load_data(num_train=1024, num_test=128)
    x_train = x_train.reshape(len(x_train), 784).astype("float32") / 255
    x_test = x_test.reshape(len(x_test), 784).astype("float32") / 255
    return (x_train, y_train), (x_test, y_test)


def test_introduction_builds_a_graph_of_layers(capsys):
    inputs = engine.Input(shape=(784,))
    img_inputs = engine.Input(shape=(32, 32, 3))
    assert inputs.shape == (None, 784)
    assert img_inputs.shape == (None, 32, 32, 3)
    assert inputs.dtype == "float32"

    model = mnist_mlp()
    model.summary()
    printed = capsys.readouterr().out
    assert '"mnist_model"' in printed
    assert model.count_params() == (784 * 64 + 64) + (64 * 64 + 64) + (64 * 10 + 10)
    assert f"Total params: {model.count_params():,}" in printed

    plot_model(model, "my_first_model.png")
    plot_model(model, "my_first_model_with_shape_info.png", show_shapes=True)
    assert os.path.getsize("my_first_model.png") > 0
    assert os.path.getsize("my_first_model_with_shape_info.png") > 0


def test_training_evaluation_and_inference():
    (x_train, y_train), (x_test, y_test) = mnist_vectors()
    model = mnist_mlp()
    model.compile(
        loss=engine.training.losses.SparseCategoricalCrossentropy(from_logits=True),
        optimizer=engine.training.optimizers.RMSprop(),
        metrics=["accuracy"],
    )
    history = model.fit(x_train, y_train, batch_size=64, epochs=2, validation_split=0.2, verbose=0)
    test_scores = model.evaluate(x_test, y_test, verbose=0)

    assert history.history["loss"][-1] < history.history["loss"][0]
    assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    test_loss, test_accuracy = test_scores
    assert test_loss < history.history["loss"][0]  # what it learnt holds on unseen samples
    assert 0.0 <= test_accuracy <= 1.0


def trained_mnist_mlp():
    (x_train, y_train), (x_test, _) = mnist_vectors()
    model = mnist_mlp()
    model.compile(loss=engine.training.losses.SparseCategoricalCrossentropy(from_logits=True),
                  optimizer=engine.training.optimizers.RMSprop(), metrics=["accuracy"])
    model.fit(x_train, y_train, batch_size=64, epochs=1, verbose=0)
    return model, (x_train, y_train), x_test


def test_save_and_serialize():
    model, (x_train, y_train), x_test = trained_mnist_mlp()
    expected = model.predict(x_test, verbose=0)

    model.save("path_to_my_model.nw")
    del model
    # Recreate the exact same model purely from the file:
    model = engine.load_model("path_to_my_model.nw")

    np.testing.assert_allclose(model.predict(x_test, verbose=0), expected, rtol=1e-6, atol=1e-6)
    assert model.name == "mnist_model"
    history = model.fit(x_train, y_train, batch_size=64, epochs=1, verbose=0)  # compiled state came back too
    assert np.isfinite(history.history["loss"][0])


def test_saving_to_a_keras_archive_keras_loads():
    """The Keras 3 guide saves to "my_model.keras": nodeweave writes a Keras 3
    archive (uncompiled) that Keras itself loads, with the same predictions."""
    import keras

    model, _, x_test = trained_mnist_mlp()
    model.save("my_model.keras")
    reloaded = keras.saving.load_model("my_model.keras")
    np.testing.assert_allclose(np.asarray(reloaded.predict(x_test, verbose=0)), model.predict(x_test, verbose=0),
                               rtol=1e-5, atol=1e-5)


def test_same_graph_of_layers_defines_multiple_models():
    encoder_input = engine.Input(shape=(28, 28, 1), name="img")
    x = layers.Conv2D(16, 3, activation="relu")(encoder_input)
    x = layers.Conv2D(32, 3, activation="relu")(x)
    x = layers.MaxPooling2D(3)(x)
    x = layers.Conv2D(32, 3, activation="relu")(x)
    x = layers.Conv2D(16, 3, activation="relu")(x)
    encoder_output = layers.GlobalMaxPooling2D()(x)
    encoder = engine.Model(encoder_input, encoder_output, name="encoder")
    encoder.summary()

    x = layers.Reshape((4, 4, 1))(encoder_output)
    x = layers.Conv2DTranspose(16, 3, activation="relu")(x)
    x = layers.Conv2DTranspose(32, 3, activation="relu")(x)
    x = layers.UpSampling2D(3)(x)
    x = layers.Conv2DTranspose(16, 3, activation="relu")(x)
    decoder_output = layers.Conv2DTranspose(1, 3, activation="relu")(x)
    autoencoder = engine.Model(encoder_input, decoder_output, name="autoencoder")
    autoencoder.summary()

    assert encoder.output.shape == (None, 16)
    assert autoencoder.output.shape == (None, 28, 28, 1)  # symmetric decoder: input shape back
    assert all(layer in autoencoder.layers for layer in encoder.layers)  # one graph, two models
    images = np.random.rand(2, 28, 28, 1).astype("float32")
    assert autoencoder(images).shape == (2, 28, 28, 1)


def image_encoder_decoder():
    encoder_input = engine.Input(shape=(28, 28, 1), name="original_img")
    x = layers.Conv2D(16, 3, activation="relu")(encoder_input)
    x = layers.Conv2D(32, 3, activation="relu")(x)
    x = layers.MaxPooling2D(3)(x)
    x = layers.Conv2D(32, 3, activation="relu")(x)
    x = layers.Conv2D(16, 3, activation="relu")(x)
    encoder_output = layers.GlobalMaxPooling2D()(x)
    encoder = engine.Model(encoder_input, encoder_output, name="encoder")

    decoder_input = engine.Input(shape=(16,), name="encoded_img")
    x = layers.Reshape((4, 4, 1))(decoder_input)
    x = layers.Conv2DTranspose(16, 3, activation="relu")(x)
    x = layers.Conv2DTranspose(32, 3, activation="relu")(x)
    x = layers.UpSampling2D(3)(x)
    x = layers.Conv2DTranspose(16, 3, activation="relu")(x)
    decoder_output = layers.Conv2DTranspose(1, 3, activation="relu")(x)
    decoder = engine.Model(decoder_input, decoder_output, name="decoder")

    autoencoder_input = engine.Input(shape=(28, 28, 1), name="img")
    encoded_img = encoder(autoencoder_input)
    decoded_img = decoder(encoded_img)
    autoencoder = engine.Model(autoencoder_input, decoded_img, name="autoencoder")
    return encoder, decoder, autoencoder


def test_all_models_are_callable_like_layers():
    encoder, decoder, autoencoder = image_encoder_decoder()
    encoder.summary()
    decoder.summary()
    autoencoder.summary()

    assert [layer.name for layer in autoencoder.layers] == ["img", "encoder", "decoder"]
    images = np.random.rand(3, 28, 28, 1).astype("float32")
    np.testing.assert_allclose(autoencoder(images), decoder(encoder(images)), rtol=1e-6)  # weights reused


    autoencoder.compile(optimizer="adam", loss="mse")
    history = autoencoder.fit(images, images, epochs=3, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]


def test_ensembling_averages_nested_models():
    def get_model():
        inputs = engine.Input(shape=(128,))
        outputs = layers.Dense(1)(inputs)
        return engine.Model(inputs, outputs)

    model1 = get_model()
    model2 = get_model()
    model3 = get_model()

    inputs = engine.Input(shape=(128,))
    y1 = model1(inputs)
    y2 = model2(inputs)
    y3 = model3(inputs)
    outputs = layers.average([y1, y2, y3])
    ensemble_model = engine.Model(inputs=inputs, outputs=outputs)

    data = np.random.rand(4, 128).astype("float32")
    np.testing.assert_allclose(ensemble_model(data), (model1(data) + model2(data) + model3(data)) / 3, rtol=1e-5)
    assert len(ensemble_model.trainable_weights) == 6


num_tags = 12  # Number of unique issue tags
num_words = 10000  # Size of vocabulary obtained when preprocessing text data
num_departments = 4  # Number of departments for predictions


def ticket_model():
    title_input = engine.Input(shape=(None,), name="title")  # Variable-length sequence of ints
    body_input = engine.Input(shape=(None,), name="body")  # Variable-length sequence of ints
    tags_input = engine.Input(shape=(num_tags,), name="tags")  # Binary vectors of size `num_tags`

    title_features = layers.Embedding(num_words, 64)(title_input)
    body_features = layers.Embedding(num_words, 64)(body_input)
    title_features = layers.LSTM(128)(title_features)
    body_features = layers.LSTM(32)(body_features)
    x = layers.concatenate([title_features, body_features, tags_input])

    priority_pred = layers.Dense(1, name="priority")(x)
    department_pred = layers.Dense(num_departments, name="department")(x)
    return engine.Model(inputs=[title_input, body_input, tags_input], outputs=[priority_pred, department_pred])


def ticket_data(num_samples):
    title_data = np.random.randint(num_words, size=(num_samples, 10))
    body_data = np.random.randint(num_words, size=(num_samples, 100))
    tags_data = np.random.randint(2, size=(num_samples, num_tags)).astype("float32")
    # Targets the tags decide, so that there is something to learn.
    priority_targets = tags_data[:, :6].mean(axis=1, keepdims=True)
    dept_targets = tags_data[:, 6:6 + num_departments].astype("int64")
    return (title_data, body_data, tags_data), (priority_targets, dept_targets)


def test_multi_input_multi_output_ticket_model():
    model = ticket_model()
    plot_model(model, "multi_input_and_output_model.png", show_shapes=True)
    assert os.path.getsize("multi_input_and_output_model.png") > 0

    # Losses and loss weights as lists, in the order of the outputs...
    model.compile(
        optimizer=engine.training.optimizers.RMSprop(1e-3),
        loss=[engine.training.losses.BinaryCrossentropy(from_logits=True),
              engine.training.losses.CategoricalCrossentropy(from_logits=True)],
        loss_weights=[1.0, 0.2],
    )
    # ...or as dicts keyed by the names of the output layers.
    model.compile(
        optimizer=engine.training.optimizers.RMSprop(1e-3),
        loss={"priority": engine.training.losses.BinaryCrossentropy(from_logits=True),
              "department": engine.training.losses.CategoricalCrossentropy(from_logits=True)},
        loss_weights={"priority": 1.0, "department": 0.2},
    )

    (title_data, body_data, tags_data), (priority_targets, dept_targets) = ticket_data(64)
    history = model.fit(
        {"title": title_data, "body": body_data, "tags": tags_data},
        {"priority": priority_targets, "department": dept_targets},
        epochs=3,
        batch_size=32,
        verbose=0,
    )
    assert history.history["loss"][-1] < history.history["loss"][0]

    # Lists in the order of the inputs and outputs train the same model.
    history = model.fit([title_data, body_data, tags_data], [priority_targets, dept_targets],
                        epochs=1, batch_size=32, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    priority, department = model.predict({"title": title_data, "body": body_data, "tags": tags_data}, verbose=0)
    assert priority.shape == (64, 1) and department.shape == (64, num_departments)


def toy_resnet():
    inputs = engine.Input(shape=(32, 32, 3), name="img")
    x = layers.Conv2D(32, 3, activation="relu")(inputs)
    x = layers.Conv2D(64, 3, activation="relu")(x)
    block_1_output = layers.MaxPooling2D(3)(x)

    x = layers.Conv2D(64, 3, activation="relu", padding="same")(block_1_output)
    x = layers.Conv2D(64, 3, activation="relu", padding="same")(x)
    block_2_output = layers.add([x, block_1_output])

    x = layers.Conv2D(64, 3, activation="relu", padding="same")(block_2_output)
    x = layers.Conv2D(64, 3, activation="relu", padding="same")(x)
    block_3_output = layers.add([x, block_2_output])

    x = layers.Conv2D(64, 3, activation="relu")(block_3_output)
    x = layers.GlobalAveragePooling2D()(x)
    x = layers.Dense(256, activation="relu")(x)
    x = layers.Dropout(0.5)(x)
    outputs = layers.Dense(10)(x)
    return engine.Model(inputs, outputs, name="toy_resnet")


def test_toy_resnet():
    model = toy_resnet()
    model.summary()
    plot_model(model, "mini_resnet.png", show_shapes=True)
    assert model.get_layer("add_1").input[1] is model.get_layer("add").output  # the residual connection
    assert model.output_shape == (None, 10)

    (x_train, y_train), (x_test, y_test) = synthetic.cifar10_load_data(num_train=10, num_test=2)
    x_train = x_train.astype("float32") / 255.0
    x_test = x_test.astype("float32") / 255.0
    y_train = engine.utils.to_categorical(y_train, 10)
    y_test = engine.utils.to_categorical(y_test, 10)
    assert y_train.shape == (len(x_train), 10)

    model.compile(
        optimizer=engine.training.optimizers.RMSprop(1e-3),
        loss=engine.training.losses.CategoricalCrossentropy(from_logits=True),
        metrics=["acc"],
    )
    untrained_loss, _ = model.evaluate(x_train, y_train, verbose=0)
    history = model.fit(x_train, y_train, batch_size=64, epochs=2, validation_split=0.2, verbose=0)
    assert set(history.history) == {"loss", "acc", "val_loss", "val_acc"}
    assert model.evaluate(x_train, y_train, verbose=0)[0] < untrained_loss  # without Dropout's noise
    test_loss, test_accuracy = model.evaluate(x_test, y_test, verbose=0)
    assert np.isfinite(test_loss) and 0.0 <= test_accuracy <= 1.0


def test_shared_layers():
    # Embedding for 1000 unique words mapped to 128-dimensional vectors
    shared_embedding = layers.Embedding(1000, 128)
    text_input_a = engine.Input(shape=(None,), dtype="int32")
    text_input_b = engine.Input(shape=(None,), dtype="int32")
    # Reuse the same layer to encode both inputs
    encoded_input_a = shared_embedding(text_input_a)
    encoded_input_b = shared_embedding(text_input_b)

    assert encoded_input_a.shape == encoded_input_b.shape == (None, None, 128)
    assert len(shared_embedding.inbound_nodes) == 2
    assert len(shared_embedding.weights) == 1  # one table serves both inputs
    model = engine.Model([text_input_a, text_input_b], [encoded_input_a, encoded_input_b])
    words = np.random.randint(1000, size=(2, 7))
    a, b = model([words, words])
    np.testing.assert_array_equal(a, b)


def small_vgg():
    """A stand-in for ``keras.applications.VGG19()`` (no pretrained weights offline)."""
    inputs = engine.Input(shape=(32, 32, 3), name="input_layer")
    x = layers.Conv2D(8, 3, activation="relu", padding="same", name="block1_conv1")(inputs)
    x = layers.Conv2D(8, 3, activation="relu", padding="same", name="block1_conv2")(x)
    x = layers.MaxPooling2D(2, name="block1_pool")(x)
    x = layers.Conv2D(16, 3, activation="relu", padding="same", name="block2_conv1")(x)
    x = layers.MaxPooling2D(2, name="block2_pool")(x)
    x = layers.Flatten(name="flatten")(x)
    x = layers.Dense(32, activation="relu", name="fc1")(x)
    outputs = layers.Dense(10, activation="softmax", name="predictions")(x)
    return engine.Model(inputs, outputs, name="vgg19")


def test_extract_and_reuse_nodes():
    vgg19 = small_vgg()
    features_list = [layer.output for layer in vgg19.layers]
    feat_extraction_model = engine.Model(inputs=vgg19.input, outputs=features_list)

    img = np.random.random((1, 32, 32, 3)).astype("float32")
    extracted_features = feat_extraction_model(img)

    assert len(extracted_features) == len(vgg19.layers)
    np.testing.assert_array_equal(extracted_features[0], img)
    np.testing.assert_allclose(extracted_features[-1], vgg19(img), rtol=1e-6)
    assert [f.shape for f in extracted_features[1:4]] == [(1, 32, 32, 8), (1, 32, 32, 8), (1, 16, 16, 8)]


class CustomDense(engine.Layer):
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


def test_extend_the_api_with_custom_layers():
    inputs = engine.Input((4,))
    outputs = CustomDense(10)(inputs)
    model = engine.Model(inputs, outputs)
    assert outputs.shape == (None, 10)

    config = model.get_config()
    new_model = engine.Model.from_config(config, custom_objects={"CustomDense": CustomDense})
    assert isinstance(new_model.layers[-1], CustomDense)
    assert new_model.layers[-1].units == 10
    new_model.set_weights(model.get_weights())
    data = np.random.rand(5, 4).astype("float32")
    np.testing.assert_allclose(new_model(data), model(data), rtol=1e-6)

    model.compile(optimizer="adam", loss="mse")
    history = model.fit(data, np.random.rand(5, 10), epochs=5, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]


units = 32
timesteps = 10
input_dim = 5
batch_size = 16


def test_functional_model_inside_a_custom_layer():
    inputs = engine.Input((None, units))
    x = layers.GlobalAveragePooling1D()(inputs)
    outputs = layers.Dense(1)(x)
    model = engine.Model(inputs, outputs)

    class CustomRNN(engine.Layer):
        def __init__(self):
            super().__init__()
            self.units = units
            self.projection_1 = layers.Dense(units=units, activation="tanh")
            self.projection_2 = layers.Dense(units=units, activation="tanh")
            # Our previously-defined Functional model
            self.classifier = model

        def call(self, inputs):
            outputs = []
            state = np.zeros(shape=(inputs.shape[0], self.units))
            for t in range(inputs.shape[1]):
                x = inputs[:, t, :]
                h = self.projection_1(x)
                y = h + self.projection_2(state)
                state = y
                outputs.append(y)
            features = np.stack(outputs, axis=1)
            return self.classifier(features)

    rnn_model = CustomRNN()
    out = rnn_model(np.zeros((1, timesteps, input_dim)))
    assert out.shape == (1, 1)
    assert len(rnn_model.weights) == 6  # two projections and the classifier's Dense


def test_custom_layer_inside_a_functional_model():
    class CustomRNN(engine.Layer):
        def __init__(self):
            super().__init__()
            self.units = units
            self.projection_1 = layers.Dense(units=units, activation="tanh")
            self.projection_2 = layers.Dense(units=units, activation="tanh")
            self.classifier = layers.Dense(1)

        def call(self, inputs):
            outputs = []
            state = np.zeros(shape=(inputs.shape[0], self.units))
            for t in range(inputs.shape[1]):
                x = inputs[:, t, :]
                h = self.projection_1(x)
                y = h + self.projection_2(state)
                state = y
                outputs.append(y)
            features = np.stack(outputs, axis=1)
            return self.classifier(features)

    # A static batch size, because CustomRNN makes its zero state from inputs.shape[0].
    inputs = engine.Input(batch_shape=(batch_size, timesteps, input_dim))
    x = layers.Conv1D(32, 3)(inputs)
    outputs = CustomRNN()(x)
    model = engine.Model(inputs, outputs)
    assert outputs.shape == (batch_size, timesteps - 2, 1)

    rnn_model = CustomRNN()
    assert rnn_model(np.zeros((1, 10, 5))).shape == (1, 10, 1)

    data = np.random.rand(2 * batch_size, timesteps, input_dim).astype("float32")
    targets = data[:, 2:, :1] - data[:, :-2, 1:2]
    model.compile(optimizer="adam", loss="mse")
    history = model.fit(data, targets, batch_size=batch_size, epochs=5, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
