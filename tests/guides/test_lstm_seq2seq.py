"""keras-io example "Character-level recurrent sequence-to-sequence model" (fchollet),
rewritten with ``import nodeweave as keras`` on a synthetic English-to-French corpus: the
"translation" of a word is its reversal, between "\\t" and "\\n" as in the example.

The training model, the one-hot encoding and the inference models (an encoder returning
its states, a decoder stepping one character at a time from states it is given) are the
example's, with ``latent_dim`` 32 instead of 256.
"""

import numpy as np

import nodeweave as keras

latent_dim = 32
batch_size = 16


def corpus(num_samples=96, seed=0):
    rng = np.random.default_rng(seed)
    letters = list("abcdef")
    input_texts = ["".join(rng.choice(letters, size=int(rng.integers(2, 6)))) for _ in range(num_samples)]
    target_texts = ["\t" + text[::-1] + "\n" for text in input_texts]
    return input_texts, target_texts


def vectorize(input_texts, target_texts):
    input_characters = sorted(set("".join(input_texts)))
    target_characters = sorted(set("".join(target_texts)))
    num_encoder_tokens = len(input_characters)
    num_decoder_tokens = len(target_characters)
    max_encoder_seq_length = max([len(txt) for txt in input_texts])
    max_decoder_seq_length = max([len(txt) for txt in target_texts])

    input_token_index = dict([(char, i) for i, char in enumerate(input_characters)])
    target_token_index = dict([(char, i) for i, char in enumerate(target_characters)])

    encoder_input_data = np.zeros((len(input_texts), max_encoder_seq_length, num_encoder_tokens), dtype="float32")
    decoder_input_data = np.zeros((len(input_texts), max_decoder_seq_length, num_decoder_tokens), dtype="float32")
    decoder_target_data = np.zeros((len(input_texts), max_decoder_seq_length, num_decoder_tokens), dtype="float32")

    for i, (input_text, target_text) in enumerate(zip(input_texts, target_texts)):
        for t, char in enumerate(input_text):
            encoder_input_data[i, t, input_token_index[char]] = 1.0
        for t, char in enumerate(target_text):
            # decoder_target_data is ahead of decoder_input_data by one timestep
            decoder_input_data[i, t, target_token_index[char]] = 1.0
            if t > 0:
                # decoder_target_data will be ahead by one timestep
                # and will not include the start character.
                decoder_target_data[i, t - 1, target_token_index[char]] = 1.0
    return (encoder_input_data, decoder_input_data, decoder_target_data), target_token_index


def build_training_model(num_encoder_tokens, num_decoder_tokens):
    # Define an input sequence and process it.
    encoder_inputs = keras.Input(shape=(None, num_encoder_tokens))
    encoder = keras.layers.LSTM(latent_dim, return_state=True)
    encoder_outputs, state_h, state_c = encoder(encoder_inputs)

    # We discard `encoder_outputs` and only keep the states.
    encoder_states = [state_h, state_c]

    # Set up the decoder, using `encoder_states` as initial state.
    decoder_inputs = keras.Input(shape=(None, num_decoder_tokens))

    # We set up our decoder to return full output sequences,
    # and to return internal states as well. We don't use the
    # return states in the training model, but we will use them in inference.
    decoder_lstm = keras.layers.LSTM(latent_dim, return_sequences=True, return_state=True)
    decoder_outputs, _, _ = decoder_lstm(decoder_inputs, initial_state=encoder_states)
    decoder_dense = keras.layers.Dense(num_decoder_tokens, activation="softmax")
    decoder_outputs = decoder_dense(decoder_outputs)

    # Define the model that will turn
    # `encoder_input_data` & `decoder_input_data` into `decoder_target_data`
    return keras.Model([encoder_inputs, decoder_inputs], decoder_outputs)


def build_inference_models(model):
    """The example's "restore the model and construct the encoder and decoder" section."""
    encoder_inputs = model.input[0]  # input_1
    encoder_outputs, state_h_enc, state_c_enc = model.layers[2].output  # lstm_1
    encoder_states = [state_h_enc, state_c_enc]
    encoder_model = keras.Model(encoder_inputs, encoder_states)

    decoder_inputs = model.input[1]  # input_2
    decoder_state_input_h = keras.Input(shape=(latent_dim,))
    decoder_state_input_c = keras.Input(shape=(latent_dim,))
    decoder_states_inputs = [decoder_state_input_h, decoder_state_input_c]
    decoder_lstm = model.layers[3]
    decoder_outputs, state_h_dec, state_c_dec = decoder_lstm(decoder_inputs, initial_state=decoder_states_inputs)
    decoder_states = [state_h_dec, state_c_dec]
    decoder_dense = model.layers[4]
    decoder_outputs = decoder_dense(decoder_outputs)
    decoder_model = keras.Model([decoder_inputs] + decoder_states_inputs, [decoder_outputs] + decoder_states)
    return encoder_model, decoder_model


def decode_sequence(input_seq, encoder_model, decoder_model, target_token_index, max_decoder_seq_length):
    reverse_target_char_index = dict((i, char) for char, i in target_token_index.items())
    num_decoder_tokens = len(target_token_index)
    # Encode the input as state vectors.
    states_value = encoder_model.predict(input_seq, verbose=0)

    # Generate empty target sequence of length 1.
    target_seq = np.zeros((1, 1, num_decoder_tokens))
    # Populate the first character of target sequence with the start character.
    target_seq[0, 0, target_token_index["\t"]] = 1.0

    # Sampling loop for a batch of sequences
    # (to simplify, here we assume a batch of size 1).
    stop_condition = False
    decoded_sentence = ""
    while not stop_condition:
        output_tokens, h, c = decoder_model.predict([target_seq] + states_value, verbose=0)

        # Sample a token
        sampled_token_index = np.argmax(output_tokens[0, -1, :])
        sampled_char = reverse_target_char_index[sampled_token_index]
        decoded_sentence += sampled_char

        # Exit condition: either hit max length
        # or find stop character.
        if sampled_char == "\n" or len(decoded_sentence) > max_decoder_seq_length:
            stop_condition = True

        # Update the target sequence (of length 1).
        target_seq = np.zeros((1, 1, num_decoder_tokens))
        target_seq[0, 0, sampled_token_index] = 1.0

        # Update states
        states_value = [h, c]
    return decoded_sentence


def test_seq2seq_trains_then_decodes_character_by_character_from_the_encoder_states():
    keras.utils.set_random_seed(0)
    input_texts, target_texts = corpus()
    (encoder_input_data, decoder_input_data, decoder_target_data), target_token_index = vectorize(
        input_texts, target_texts)
    model = build_training_model(encoder_input_data.shape[-1], decoder_input_data.shape[-1])
    model.compile(optimizer="rmsprop", loss="categorical_crossentropy", metrics=["accuracy"])
    history = model.fit([encoder_input_data, decoder_input_data], decoder_target_data,
                        batch_size=batch_size, epochs=3, validation_split=0.2, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < losses[0]

    encoder_model, decoder_model = build_inference_models(model)
    assert [tuple(s) for s in encoder_model.output_shape] == [(None, latent_dim), (None, latent_dim)]
    max_decoder_seq_length = decoder_input_data.shape[1]
    decoded = decode_sequence(encoder_input_data[0:1], encoder_model, decoder_model, target_token_index,
                              max_decoder_seq_length)
    assert 1 <= len(decoded) <= max_decoder_seq_length + 1
    assert set(decoded) <= set(target_token_index)
    # The inference models share the trained layers: one step of the decoder from the encoder's
    # states gives the training model's first output.
    first_step = decoder_model.predict([decoder_input_data[:2, :1]] + encoder_model.predict(
        encoder_input_data[:2], verbose=0), verbose=0)[0]
    full = model.predict([encoder_input_data[:2], decoder_input_data[:2]], verbose=0)
    np.testing.assert_allclose(first_step[:, 0], full[:, 0], rtol=1e-4, atol=1e-6)
