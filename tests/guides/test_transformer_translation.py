"""keras-io example "English-to-Spanish translation with a sequence-to-sequence Transformer"
(fchollet), rewritten with ``import nodeweave as keras`` on a synthetic parallel corpus of
token ids: the "Spanish" sentence is the English one reversed, between start (1) and end (2)
tokens.

``PositionalEmbedding``, ``TransformerEncoder`` and ``TransformerDecoder`` (causal
self-attention, then attention over the encoder's outputs) and the wiring of the
encoder-decoder model are the example's, smaller (embed_dim 16, latent_dim 32, 2 heads).
Changed: ``TextVectorization`` is replaced by ready-made token ids (nodeweave has no text
vectorization layer), and the padding masks are left out (every synthetic sentence has the
full length, so the masks would be all ones). As in the example, ``MultiHeadAttention`` is
called with ``query=``, ``value=``, ``key=``. The token inputs have fixed lengths instead of
``shape=(None,)``: nodeweave learns a custom layer's output shape by running its ``call`` on
example arrays, so the ``Sequential`` inside ``TransformerEncoder`` is built for the example's
length and refuses another one ("expected shape=(None, 1, 16), found shape=(2, 2, 16)"),
where Keras traces ``call`` on symbolic tensors.
"""

import numpy as np

import nodeweave as keras
from nodeweave import layers, ops

vocab_size = 12
sequence_length = 6
embed_dim = 16
latent_dim = 32
num_heads = 2


class TransformerEncoder(layers.Layer):
    def __init__(self, embed_dim, dense_dim, num_heads, **kwargs):
        super().__init__(**kwargs)
        self.attention = layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim)
        self.dense_proj = keras.Sequential([layers.Dense(dense_dim, activation="relu"), layers.Dense(embed_dim)])
        self.layernorm_1 = layers.LayerNormalization()
        self.layernorm_2 = layers.LayerNormalization()

    def call(self, inputs):
        attention_output = self.attention(query=inputs, value=inputs, key=inputs)
        proj_input = self.layernorm_1(inputs + attention_output)
        proj_output = self.dense_proj(proj_input)
        return self.layernorm_2(proj_input + proj_output)


class PositionalEmbedding(layers.Layer):
    def __init__(self, sequence_length, vocab_size, embed_dim, **kwargs):
        super().__init__(**kwargs)
        self.token_embeddings = layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
        self.position_embeddings = layers.Embedding(input_dim=sequence_length, output_dim=embed_dim)

    def call(self, inputs):
        length = ops.shape(inputs)[-1]
        positions = ops.arange(0, length, 1)
        embedded_tokens = self.token_embeddings(inputs)
        embedded_positions = self.position_embeddings(positions)
        return embedded_tokens + embedded_positions


class TransformerDecoder(layers.Layer):
    def __init__(self, embed_dim, latent_dim, num_heads, **kwargs):
        super().__init__(**kwargs)
        self.attention_1 = layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim)
        self.attention_2 = layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim)
        self.dense_proj = keras.Sequential([layers.Dense(latent_dim, activation="relu"), layers.Dense(embed_dim)])
        self.layernorm_1 = layers.LayerNormalization()
        self.layernorm_2 = layers.LayerNormalization()
        self.layernorm_3 = layers.LayerNormalization()

    def call(self, inputs, encoder_outputs):
        attention_output_1 = self.attention_1(query=inputs, value=inputs, key=inputs, use_causal_mask=True)
        out_1 = self.layernorm_1(inputs + attention_output_1)
        attention_output_2 = self.attention_2(query=out_1, value=encoder_outputs, key=encoder_outputs)
        out_2 = self.layernorm_2(out_1 + attention_output_2)
        proj_output = self.dense_proj(out_2)
        return self.layernorm_3(out_2 + proj_output)


def build_transformer():
    encoder_inputs = keras.Input(shape=(sequence_length - 1,), dtype="int64", name="encoder_inputs")
    x = PositionalEmbedding(sequence_length, vocab_size, embed_dim)(encoder_inputs)
    encoder_outputs = TransformerEncoder(embed_dim, latent_dim, num_heads)(x)
    encoder = keras.Model(encoder_inputs, encoder_outputs)

    decoder_inputs = keras.Input(shape=(sequence_length,), dtype="int64", name="decoder_inputs")
    encoded_seq_inputs = keras.Input(shape=(None, embed_dim), name="decoder_state_inputs")
    x = PositionalEmbedding(sequence_length, vocab_size, embed_dim)(decoder_inputs)
    x = TransformerDecoder(embed_dim, latent_dim, num_heads)(x, encoded_seq_inputs)
    x = layers.Dropout(0.5)(x)
    decoder_outputs = layers.Dense(vocab_size, activation="softmax")(x)
    decoder = keras.Model([decoder_inputs, encoded_seq_inputs], decoder_outputs)

    decoder_outputs = decoder([decoder_inputs, encoder_outputs])
    return keras.Model([encoder_inputs, decoder_inputs], decoder_outputs, name="transformer")


def synthetic_pairs(num_pairs=128, seed=0):
    """(encoder_inputs, decoder_inputs) -> targets, the example's ``format_dataset`` layout:
    the decoder reads the target sentence without its last token and predicts it shifted by one."""
    rng = np.random.default_rng(seed)
    english = rng.integers(3, vocab_size, size=(num_pairs, sequence_length - 1))
    spanish = np.concatenate([np.ones((num_pairs, 1), int), english[:, ::-1], np.full((num_pairs, 1), 2)], axis=1)
    return {"encoder_inputs": english, "decoder_inputs": spanish[:, :-1]}, spanish[:, 1:]


def test_the_decoder_attends_causally():
    keras.utils.set_random_seed(0)
    decoder = TransformerDecoder(embed_dim, latent_dim, num_heads)
    inputs = np.random.default_rng(0).normal(size=(2, 5, embed_dim)).astype("float32")
    encoded = np.random.default_rng(1).normal(size=(2, 4, embed_dim)).astype("float32")
    changed = inputs.copy()
    changed[:, 3:] += 1.0
    before, after = (keras.ops.convert_to_numpy(decoder(x, encoded)) for x in (inputs, changed))
    np.testing.assert_allclose(before[:, :3], after[:, :3], rtol=1e-5, atol=1e-6)  # the past ignores the future
    assert not np.allclose(before[:, 3:], after[:, 3:])


def test_the_transformer_learns_to_translate_the_synthetic_pairs():
    keras.utils.set_random_seed(0)
    inputs, targets = synthetic_pairs()
    transformer = build_transformer()
    transformer.compile("rmsprop", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    history = transformer.fit(inputs, targets, batch_size=32, epochs=5, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < losses[0]

    predictions = transformer.predict(inputs, verbose=0)
    assert predictions.shape == (128, sequence_length, vocab_size)
    np.testing.assert_allclose(predictions.sum(axis=-1), 1.0, rtol=1e-5)
