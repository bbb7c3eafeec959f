"""keras-io example "Character-level text generation with LSTM" (fchollet), rewritten with
``import nodeweave as keras`` on a synthetic corpus (a short repeated phrase with random
words mixed in, instead of Nietzsche's writings) and a smaller LSTM (32 units, maxlen 10).

The vectorization, the model, the optimizer and the ``sample`` function (temperature, then
``np.random.multinomial``) are the example's; the generation loop also draws through
``keras.random.categorical`` as a Keras 3 script can.
"""

import numpy as np

import nodeweave as keras
from nodeweave import layers

maxlen = 10
step = 3


def synthetic_text(num_words=120, seed=0):
    rng = np.random.default_rng(seed)
    words = ["the will to power ", "beyond good and evil ", "truth "]
    return "".join(rng.choice(words, size=num_words))


def vectorize(text):
    chars = sorted(list(set(text)))
    char_indices = dict((c, i) for i, c in enumerate(chars))
    indices_char = dict((i, c) for i, c in enumerate(chars))

    # cut the text in semi-redundant sequences of maxlen characters
    sentences = []
    next_chars = []
    for i in range(0, len(text) - maxlen, step):
        sentences.append(text[i: i + maxlen])
        next_chars.append(text[i + maxlen])

    x = np.zeros((len(sentences), maxlen, len(chars)), dtype="bool")
    y = np.zeros((len(sentences), len(chars)), dtype="bool")
    for i, sentence in enumerate(sentences):
        for t, char in enumerate(sentence):
            x[i, t, char_indices[char]] = 1
        y[i, char_indices[next_chars[i]]] = 1
    return x, y, chars, char_indices, indices_char


def build_model(num_chars):
    model = keras.Sequential(
        [
            keras.Input(shape=(maxlen, num_chars)),
            layers.LSTM(32),
            layers.Dense(num_chars, activation="softmax"),
        ]
    )
    optimizer = keras.optimizers.RMSprop(learning_rate=0.01)
    model.compile(loss="categorical_crossentropy", optimizer=optimizer)
    return model


def sample(preds, temperature=1.0):
    # helper function to sample an index from a probability array
    preds = np.asarray(preds).astype("float64")
    preds = np.log(preds) / temperature
    exp_preds = np.exp(preds)
    preds = exp_preds / np.sum(exp_preds)
    probas = np.random.multinomial(1, preds, 1)
    return np.argmax(probas)


def generate(model, text, char_indices, indices_char, diversity, length=20):
    start_index = 0
    generated = ""
    sentence = text[start_index: start_index + maxlen]
    for i in range(length):
        x_pred = np.zeros((1, maxlen, len(char_indices)))
        for t, char in enumerate(sentence):
            x_pred[0, t, char_indices[char]] = 1.0
        preds = model.predict(x_pred, verbose=0)[0]
        next_index = sample(preds, diversity)
        next_char = indices_char[next_index]
        sentence = sentence[1:] + next_char
        generated += next_char
    return generated


def test_the_lstm_learns_the_next_character_and_generates_text_from_a_seed():
    keras.utils.set_random_seed(0)
    text = synthetic_text()
    x, y, chars, char_indices, indices_char = vectorize(text)
    assert x.shape == (len(x), maxlen, len(chars)) and y.shape == (len(x), len(chars))
    model = build_model(len(chars))

    untrained = model.evaluate(x, y, verbose=0)
    history = model.fit(x, y, batch_size=32, epochs=4, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < losses[0]
    assert model.evaluate(x, y, verbose=0) < untrained

    for diversity in [0.2, 0.5, 1.0, 1.2]:
        generated = generate(model, text, char_indices, indices_char, diversity)
        assert len(generated) == 20 and set(generated) <= set(chars)

    # The same draw through keras.random: seeded, one character index per row.
    logits = np.log(model.predict(x[:4], verbose=0))
    seed = keras.random.SeedGenerator(1337)
    drawn = keras.ops.convert_to_numpy(keras.random.categorical(logits, 1, seed=seed))
    assert drawn.shape == (4, 1) and ((0 <= drawn) & (drawn < len(chars))).all()
