"""keras-io example "Text classification with Transformer" (Apoorv Nandan), rewritten for
nodeweave on a small synthetic IMDB of the same shapes.

Imports changed: ``keras`` -> ``engine``, ``keras.layers`` -> ``layers``, ``keras.ops`` ->
NumPy, ``keras.utils.pad_sequences`` -> ``engine.utils.pad_sequences``. The two custom
layers are also written with Keras 3 (``keras.ops``) to check ours against them.
"""

import keras
import numpy as np

import engine
import engine.utils
import layers
from tests.guides import synthetic


class TransformerBlock(engine.Layer):
    def __init__(self, embed_dim, num_heads, ff_dim, rate=0.1):
        super().__init__()
        self.att = layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim)
        self.ffn = engine.Sequential(
            [
                layers.Dense(ff_dim, activation="relu"),
                layers.Dense(embed_dim),
            ]
        )
        self.layernorm1 = layers.LayerNormalization(epsilon=1e-6)
        self.layernorm2 = layers.LayerNormalization(epsilon=1e-6)
        self.dropout1 = layers.Dropout(rate)
        self.dropout2 = layers.Dropout(rate)

    def call(self, inputs):
        attn_output = self.att(inputs, inputs)
        attn_output = self.dropout1(attn_output)
        out1 = self.layernorm1(inputs + attn_output)
        ffn_output = self.ffn(out1)
        ffn_output = self.dropout2(ffn_output)
        return self.layernorm2(out1 + ffn_output)


class TokenAndPositionEmbedding(engine.Layer):
    def __init__(self, maxlen, vocab_size, embed_dim):
        super().__init__()
        self.token_emb = layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
        self.pos_emb = layers.Embedding(input_dim=maxlen, output_dim=embed_dim)

    def call(self, x):
        maxlen = np.shape(x)[-1]
        positions = np.arange(start=0, stop=maxlen, step=1)
        positions = self.pos_emb(positions)
        x = self.token_emb(x)
        return x + positions


class KerasTransformerBlock(keras.layers.Layer):
    """The example's block in Keras 3, the oracle for ours."""

    def __init__(self, embed_dim, num_heads, ff_dim, rate=0.1):
        super().__init__()
        self.att = keras.layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim)
        self.ffn = keras.Sequential([keras.layers.Dense(ff_dim, activation="relu"), keras.layers.Dense(embed_dim)])
        self.layernorm1 = keras.layers.LayerNormalization(epsilon=1e-6)
        self.layernorm2 = keras.layers.LayerNormalization(epsilon=1e-6)
        self.dropout1 = keras.layers.Dropout(rate)
        self.dropout2 = keras.layers.Dropout(rate)

    def call(self, inputs):
        out1 = self.layernorm1(inputs + self.dropout1(self.att(inputs, inputs)))
        return self.layernorm2(out1 + self.dropout2(self.ffn(out1)))


vocab_size = 20000  # Only consider the top 20k words
maxlen = 200  # Only consider the first 200 words of each movie review
embed_dim = 32  # Embedding size for each token
num_heads = 2  # Number of attention heads
ff_dim = 32  # Hidden layer size in feed forward network inside transformer


def test_transformer_block_layer():
    block = TransformerBlock(embed_dim, num_heads, ff_dim)
    x = np.random.rand(2, 12, embed_dim).astype("float32")
    y = block(x)
    assert y.shape == (2, 12, embed_dim)
    np.testing.assert_allclose(y.mean(axis=-1), 0.0, atol=1e-5)  # layer-normalized per token
    np.testing.assert_array_equal(block(x), y)  # dropout only while training

    theirs = KerasTransformerBlock(embed_dim, num_heads, ff_dim)
    theirs(x)
    assert len(block.weights) == len(theirs.weights) == 16
    theirs.set_weights(block.get_weights())
    np.testing.assert_allclose(y, np.asarray(theirs(x)), rtol=1e-4, atol=1e-5)

    # training=True reaches the Dropout layers inside, although call() takes no `training`.
    assert not np.allclose(block(x, training=True), y)


def test_token_and_position_embedding_layer():
    embedding_layer = TokenAndPositionEmbedding(maxlen, vocab_size, embed_dim)
    tokens = np.random.randint(vocab_size, size=(3, maxlen))
    embedded = embedding_layer(tokens)

    assert embedded.shape == (3, maxlen, embed_dim)
    token_table = embedding_layer.token_emb.get_weights()[0]
    position_table = embedding_layer.pos_emb.get_weights()[0]
    np.testing.assert_allclose(embedded, token_table[tokens] + position_table[None, :maxlen], rtol=1e-6)

    symbolic = embedding_layer(engine.Input(shape=(maxlen,)))
    assert symbolic.shape == (None, maxlen, embed_dim)


def prepare_dataset():
    (x_train, y_train), (x_val, y_val) = synthetic.imdb_load_data(num_words=vocab_size, num_train=32, num_test=8)
    x_train = engine.utils.pad_sequences(x_train, maxlen=maxlen)
    x_val = engine.utils.pad_sequences(x_val, maxlen=maxlen)
    return (x_train, y_train), (x_val, y_val)


def test_prepare_the_dataset():
    (x_train, y_train), (x_val, y_val) = prepare_dataset()
    assert x_train.shape == (len(y_train), maxlen) and x_val.shape == (len(y_val), maxlen)
    (raw_train, _), _ = synthetic.imdb_load_data(num_words=vocab_size, num_train=32, num_test=8)
    np.testing.assert_array_equal(x_train, keras.utils.pad_sequences(raw_train, maxlen=maxlen))


def test_classifier_with_a_transformer_layer_trains():
    (x_train, y_train), (x_val, y_val) = prepare_dataset()

    inputs = engine.Input(shape=(maxlen,))
    embedding_layer = TokenAndPositionEmbedding(maxlen, vocab_size, embed_dim)
    x = embedding_layer(inputs)
    transformer_block = TransformerBlock(embed_dim, num_heads, ff_dim)
    x = transformer_block(x)
    x = layers.GlobalAveragePooling1D()(x)
    x = layers.Dropout(0.1)(x)
    x = layers.Dense(20, activation="relu")(x)
    x = layers.Dropout(0.1)(x)
    outputs = layers.Dense(2, activation="softmax")(x)
    model = engine.Model(inputs=inputs, outputs=outputs)
    assert x.shape == (None, 20) and outputs.shape == (None, 2)

    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    loss_before, _ = model.evaluate(x_train, y_train, verbose=0)
    history = model.fit(x_train, y_train, batch_size=32, epochs=3, validation_data=(x_val, y_val), verbose=0)
    loss_after, _ = model.evaluate(x_train, y_train, verbose=0)

    assert loss_after < loss_before  # measured without dropout, so the fall is the training's
    assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    probabilities = model.predict(x_val, verbose=0)
    assert probabilities.shape == (len(x_val), 2)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-5)
