"""The classic functional-API models (Keras' guide) build, run, train and pass a
whole-model gradient check."""

import numpy as np

from engine import Input, Model
from engine.network.gradient_check import gradient_check
from layers import (LSTM, Conv2D, Conv2DTranspose, Dense, Dropout, Embedding, GlobalAveragePooling2D,
                    GlobalMaxPooling2D, LayerNormalization, MaxPooling2D, MultiHeadAttention, Reshape, UpSampling2D,
                    add, concatenate)


def toy_resnet():
    inputs = Input(shape=(12, 12, 3), name="img")
    x = Conv2D(4, 3, activation="relu")(inputs)
    x = Conv2D(6, 3, activation="relu")(x)
    block_1_output = MaxPooling2D(2)(x)
    x = Conv2D(6, 3, activation="relu", padding="same")(block_1_output)
    x = Conv2D(6, 3, activation="relu", padding="same")(x)
    block_2_output = add([x, block_1_output])
    x = Conv2D(6, 3, activation="relu", padding="same")(block_2_output)
    x = Conv2D(6, 3, activation="relu", padding="same")(x)
    block_3_output = add([x, block_2_output])
    x = Conv2D(6, 3, activation="relu")(block_3_output)
    x = GlobalAveragePooling2D()(x)
    x = Dense(8, activation="relu")(x)
    x = Dropout(0.5)(x)
    return Model(inputs, Dense(10)(x), name="toy_resnet")


def autoencoder():
    encoder_input = Input(shape=(10, 10, 1), name="original_img")
    x = Conv2D(4, 3, activation="relu")(encoder_input)
    x = MaxPooling2D(2)(x)
    x = Conv2D(4, 3, activation="relu")(x)
    encoder = Model(encoder_input, GlobalMaxPooling2D()(x), name="encoder")
    decoder_input = Input(shape=(4,), name="encoded_img")
    x = Reshape((2, 2, 1))(decoder_input)
    x = Conv2DTranspose(4, 3, activation="relu")(x)
    x = UpSampling2D(2)(x)
    decoder = Model(decoder_input, Conv2DTranspose(1, 3, activation="sigmoid")(x), name="decoder")
    image = Input(shape=(10, 10, 1), name="img")
    return Model(image, decoder(encoder(image)), name="autoencoder")


def text_model(vocabulary=20, departments=3):
    title_input = Input(shape=(None,), dtype="int32", name="title")
    body_input = Input(shape=(None,), dtype="int32", name="body")
    title_features = LSTM(6)(Embedding(vocabulary, 5, mask_zero=True)(title_input))
    body_features = LSTM(4)(Embedding(vocabulary, 5)(body_input))
    x = concatenate([title_features, body_features])
    return Model(inputs=[title_input, body_input],
                 outputs={"priority": Dense(1, name="priority")(x), "department": Dense(departments, name="department")(x)})


def transformer_block():
    tokens = Input(shape=(5, 8))
    attended = MultiHeadAttention(num_heads=2, key_dim=4)([tokens, tokens])
    x = LayerNormalization()(tokens + attended)
    return Model(tokens, LayerNormalization()(x + Dense(8)(Dense(16, activation="relu")(x))))


def _random_biases(model, seed=0):
    """Moves zero-initialized biases off relu's kink at 0, where finite differences straddle it."""
    rng = np.random.default_rng(seed)
    model.set_weights([w + rng.normal(scale=0.1, size=w.shape).astype(w.dtype) for w in model.get_weights()])
    return model


def test_toy_resnet_runs_and_has_correct_gradients():
    model = _random_biases(toy_resnet())
    images = np.random.default_rng(0).normal(size=(2, 12, 12, 3))
    assert model(images).shape == (2, 10)
    report = gradient_check(model, images, samples=12)
    assert report.max_error < 1e-6, str(report)


def test_autoencoder_of_two_nested_models_runs_and_has_correct_gradients():
    model = _random_biases(autoencoder())
    images = np.random.default_rng(1).uniform(size=(2, 10, 10, 1))
    assert model(images).shape == (2, 10, 10, 1)
    assert [l.name for l in model.layers] == ["img", "encoder", "decoder"]
    report = gradient_check(model, images, samples=12)
    assert report.max_error < 1e-6, str(report)


def test_text_model_with_two_inputs_two_outputs_and_masking():
    model = text_model()
    rng = np.random.default_rng(2)
    title = rng.integers(1, 20, size=(3, 4)).astype("int32")
    title[:, -1] = 0  # padding, masked by the title embedding
    body = rng.integers(0, 20, size=(3, 6)).astype("int32")
    outputs = model([title, body])
    assert outputs["priority"].shape == (3, 1) and outputs["department"].shape == (3, 3)
    report = gradient_check(model, [title, body], samples=12)
    assert report.max_error < 1e-6, str(report)
    model.compile(optimizer="adam", loss={"priority": "mse", "department": "sparse_categorical_crossentropy"})
    history = model.fit([title, body], {"priority": rng.normal(size=(3, 1)), "department": np.array([0, 1, 2])},
                        epochs=3, verbose=0)
    assert len(history.history["loss"]) == 3


def test_transformer_block_has_correct_gradients():
    model = transformer_block()
    report = gradient_check(model, np.random.default_rng(3).normal(size=(2, 5, 8)), samples=10)
    assert report.max_error < 1e-6, str(report)
