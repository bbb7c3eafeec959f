"""What the three recurrent layers share (layers/recurrent/_rnn.py): masking, initial
states, dropout and the argument and shape checks."""

import numpy as np
import pytest

from engine import ArgumentGradients, Input, Model, gradient_check
from engine.utils import set_random_seed
from layers import Dense
from layers.embedding import Embedding
from layers.recurrent import GRU, LSTM, SimpleRNN
from tests.layers.oracle import assert_gradients, keras

LAYERS = [(SimpleRNN, keras.layers.SimpleRNN), (LSTM, keras.layers.LSTM), (GRU, keras.layers.GRU)]
# Leading, trailing and inner padding, and a fully padded row.
TOKENS = np.array([[1, 2, 3, 0, 0], [4, 5, 0, 0, 0], [0, 6, 0, 8, 9], [0, 0, 0, 0, 0]], "int32")
MASK_OPTIONS = [{}, {"return_sequences": True}, {"return_sequences": True, "go_backwards": True},
                {"go_backwards": True, "return_state": True},
                {"return_sequences": True, "zero_output_for_mask": True}]


def sequences(shape, seed=0, dtype="float64"):
    return np.random.default_rng(seed).normal(size=shape).astype(dtype)


def outputs(values):
    return [np.asarray(v) for v in (values if isinstance(values, (list, tuple)) else [values])]


def embedded_models(ours_cls, keras_cls, build, units=3):
    """The same model in Keras and in nodeweave (weights copied):
    tokens -> Embedding(mask_zero=True) -> ``build(layer class, embedded)``."""
    rng = np.random.default_rng(3)
    k_tokens = keras.Input((5,), dtype="int32")
    theirs = keras.Model(k_tokens, build(keras_cls, keras.layers.Embedding(10, 4, mask_zero=True)(k_tokens)))
    theirs.set_weights([rng.uniform(-0.5, 0.5, np.shape(w)).astype("float32") for w in theirs.get_weights()])
    tokens = Input((5,), dtype="int32")
    ours = Model(tokens, build(ours_cls, Embedding(10, 4, mask_zero=True)(tokens)))
    ours.set_weights(theirs.get_weights())
    return ours, theirs


# ------------------------------------------------------------------ masks
@pytest.mark.parametrize("options", MASK_OPTIONS)
@pytest.mark.parametrize("ours_cls, keras_cls", LAYERS)
def test_masks_from_embedding_match_keras(ours_cls, keras_cls, options):
    ours, theirs = embedded_models(ours_cls, keras_cls, lambda cls, x: cls(3, **options)(x))
    for got, want in zip(outputs(ours(TOKENS)), outputs(theirs(TOKENS))):
        np.testing.assert_allclose(got, want, atol=1e-5, rtol=1e-5)
    # The fully padded row never updates: its states stay at zero.
    assert not outputs(ours(TOKENS))[0][3].any()


@pytest.mark.parametrize("ours_cls, keras_cls", LAYERS)
def test_masks_and_initial_states_match_keras_in_a_model(ours_cls, keras_cls, random_weights):
    n = 2 if ours_cls is LSTM else 1
    states = [sequences((4, 3), seed, dtype="float32") for seed in range(n)]
    k_embedding = random_weights(keras.layers.Embedding(10, 4, mask_zero=True), (4, 5))
    k_layer = random_weights(keras_cls(3, return_sequences=True), (4, 5, 4))
    # Keras 3's functional models drop the mask of a layer called with several tensor
    # arguments (here the initial states), so the oracle passes it explicitly.
    expected = np.asarray(k_layer(k_embedding(TOKENS), initial_state=states, mask=TOKENS != 0))
    for list_form in (False, True):
        tokens, state_inputs = Input((5,), dtype="int32"), [Input((3,)) for _ in range(n)]
        embedding, layer = Embedding(10, 4, mask_zero=True), ours_cls(3, return_sequences=True)
        embedded = embedding(tokens)
        out = layer([embedded, *state_inputs]) if list_form else layer(embedded, initial_state=state_inputs)
        ours = Model([tokens, *state_inputs], out)
        embedding.set_weights(k_embedding.get_weights())
        layer.set_weights(k_layer.get_weights())
        np.testing.assert_allclose(ours([TOKENS, *states]), expected, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("ours_cls", [SimpleRNN, LSTM, GRU])
def test_gradients_through_masked_models(ours_cls):
    tokens = Input((5,), dtype="int32")
    embedded = Embedding(10, 4, mask_zero=True, embeddings_initializer="normal")(tokens)
    model = Model(tokens, Dense(2)(ours_cls(3, return_sequences=True)(embedded)))
    report = assert_gradients(model, TOKENS)
    assert any("embeddings" in name for name in report.errors)


@pytest.mark.parametrize("options", MASK_OPTIONS)
@pytest.mark.parametrize("ours_cls", [SimpleRNN, LSTM, GRU])
def test_masked_gradients_of_inputs_and_initial_states(ours_cls, options, random_weights, with_mask):
    layer = random_weights(ours_cls(3, **options), (4, 5, 2))
    mask = TOKENS != 0
    n = 2 if ours_cls is LSTM else 1
    inputs = [sequences((4, 5, 2)), *(sequences((4, 3), seed) for seed in range(1, n + 1))]
    report = assert_gradients(with_mask(layer, mask), inputs)
    assert len([name for name in report.errors if name.startswith("input")]) == 1 + n


def test_output_masks_follow_keras():
    mask = TOKENS != 0
    x = sequences((4, 5, 2), dtype="float32")
    for options in MASK_OPTIONS:
        ours, theirs = LSTM(3, **options), keras.layers.LSTM(3, **options)
        expected = theirs.compute_mask(x, mask)
        got = ours.compute_mask(x, mask)
        if not isinstance(got, list):
            got, expected = [got], [expected]
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert (g is None and e is None) or np.array_equal(g, np.asarray(e))
    assert LSTM(3, return_sequences=True).compute_mask([x, x[:, 0], x[:, 0]], [mask, None, None]) is mask


# -------------------------------------------------------- initial states
def test_initial_state_kwarg_and_list_form_give_the_same_gradients(random_weights):
    layer = random_weights(LSTM(3), (2, 4, 2))
    x, h0, c0 = sequences((2, 4, 2)), sequences((2, 3), 1), sequences((2, 3), 2)
    g = sequences((2, 3), 3)
    kwarg_out, kwarg_cache = layer.forward(x, initial_state=[h0, c0])
    list_out, list_cache = layer.forward([x, h0, c0])
    np.testing.assert_array_equal(kwarg_out, list_out)
    kwarg_grads, _ = layer.backward(kwarg_cache, g)
    list_grads, _ = layer.backward(list_cache, g)
    # Each in the form of its call: by argument name, or as the inputs list.
    assert isinstance(kwarg_grads, ArgumentGradients) and set(kwarg_grads) == {"inputs", "initial_state"}
    assert isinstance(list_grads, list) and len(list_grads) == 3
    np.testing.assert_allclose(kwarg_grads["inputs"], list_grads[0])
    for kwarg_grad, list_grad in zip(kwarg_grads["initial_state"], list_grads[1:]):
        np.testing.assert_allclose(kwarg_grad, list_grad)


def test_gradient_check_of_initial_state_given_by_keyword(random_weights):
    layer = random_weights(LSTM(3), (2, 4, 2))
    x, h0, c0 = sequences((2, 4, 2)), sequences((2, 3), 1), sequences((2, 3), 2)
    report = gradient_check(layer, x, call_kwargs={"initial_state": [h0, c0]})
    assert {"input 0", "initial_state 0", "initial_state 1"} <= set(report.errors)
    assert report.max_error < 1e-6


def encoder_decoder(list_form):
    """LSTM encoder whose final states start an LSTM decoder, as in seq2seq models."""
    source, target = Input((4, 2)), Input((3, 2))
    _, h, c = LSTM(3, return_state=True, name="encoder")(source)
    decoder = LSTM(3, return_sequences=True, name="decoder")
    decoded = decoder([target, h, c]) if list_form else decoder(target, initial_state=[h, c])
    return Model([source, target], Dense(2, name="head")(decoded))


def test_encoder_decoder_matches_keras_and_trains_the_encoder_through_the_states():
    k_source, k_target = keras.Input((4, 2)), keras.Input((3, 2))
    _, h, c = keras.layers.LSTM(3, return_state=True)(k_source)
    decoded = keras.layers.LSTM(3, return_sequences=True)(k_target, initial_state=[h, c])
    theirs = keras.Model([k_source, k_target], keras.layers.Dense(2)(decoded))
    rng = np.random.default_rng(0)
    theirs.set_weights([rng.uniform(-0.5, 0.5, np.shape(w)).astype("float32") for w in theirs.get_weights()])
    data = [sequences((2, 4, 2), dtype="float32"), sequences((2, 3, 2), 1, dtype="float32")]
    ours = encoder_decoder(list_form=True)
    ours.set_weights(theirs.get_weights())
    np.testing.assert_allclose(ours(data), np.asarray(theirs(data)), atol=1e-5, rtol=1e-5)
    report = assert_gradients(ours, [d.astype("float64") for d in data])
    assert {"input 0", "input 1", "encoder/kernel"} <= set(report.errors)


def test_initial_state_kwarg_in_a_model_trains_the_encoder_like_the_list_form():
    data = [sequences((2, 4, 2)), sequences((2, 3, 2), 1)]
    list_model, kwarg_model = encoder_decoder(list_form=True), encoder_decoder(list_form=False)
    kwarg_model.set_weights(list_model.get_weights())
    reports = [assert_gradients(model, data) for model in (list_model, kwarg_model)]
    assert set(reports[0].errors) == set(reports[1].errors) >= {"input 0", "encoder/kernel"}


# ---------------------------------------------------------------- dropout
class FixedDraws:
    """A seed generator that draws the same masks on every pass (for finite differences)."""

    @property
    def generator(self):
        return np.random.default_rng(11)


@pytest.mark.parametrize("ours_cls", [SimpleRNN, LSTM, GRU])
def test_dropout_is_the_identity_at_inference(ours_cls, random_weights):
    x = sequences((3, 4, 2), dtype="float32")
    plain = random_weights(ours_cls(3, return_sequences=True), x.shape)
    dropped = ours_cls(3, dropout=0.5, recurrent_dropout=0.5, return_sequences=True, seed=1)
    dropped.build(x.shape)
    dropped.set_weights(plain.get_weights())
    np.testing.assert_array_equal(dropped(x), plain(x))
    np.testing.assert_array_equal(dropped.forward(x, training=False)[0], plain(x))
    assert not np.allclose(dropped(x, training=True), plain(x))


@pytest.mark.parametrize("ours_cls", [SimpleRNN, LSTM, GRU])
def test_dropout_gradients_with_the_masks_of_the_forward_pass(ours_cls, random_weights):
    layer = random_weights(ours_cls(3, dropout=0.3, recurrent_dropout=0.4, return_sequences=True), (2, 4, 3))
    layer.seed_generator = FixedDraws()
    assert_gradients(layer, sequences((2, 4, 3)), training=True)


def identity_rnn(**options):
    """A linear SimpleRNN whose kernel and recurrent kernel are identities: h_t = x_t + h_{t-1}."""
    layer = SimpleRNN(5, activation=None, use_bias=False, return_sequences=True, **options)
    layer.build((None, 3, 5))
    layer.set_weights([np.eye(5), np.eye(5)])
    return layer


def test_input_dropout_draws_one_mask_per_sequence_with_the_right_statistics():
    layer = identity_rnn(dropout=0.4, seed=0)
    x = np.zeros((4000, 3, 5), "float32")
    x[:, 0] = 1.0
    out = layer(x, training=True)
    kept = out[:, 0] != 0
    assert abs(1 - kept.mean() - 0.4) < 0.02
    np.testing.assert_allclose(out[:, 0][kept], 1 / 0.6, rtol=1e-6)
    # The same features are dropped at every step: step 1's input is zero, so out[:, 1] = out[:, 0].
    np.testing.assert_array_equal(out[:, 1], out[:, 0])


def test_recurrent_dropout_draws_one_mask_per_sequence_with_the_right_statistics():
    layer = identity_rnn(recurrent_dropout=0.3, seed=0)
    x = np.zeros((4000, 3, 5), "float32")
    x[:, 0] = 1.0
    out = layer(x, training=True)
    np.testing.assert_array_equal(out[:, 0], 1.0)  # h0 = 0: nothing to drop at step 0
    kept = out[:, 1] != 0
    assert abs(1 - kept.mean() - 0.3) < 0.02
    np.testing.assert_allclose(out[:, 1][kept], 1 / 0.7, rtol=1e-6)
    np.testing.assert_array_equal(out[:, 2] != 0, kept)  # the same units at the next step


def test_dropout_masks_are_seeded():
    x = np.ones((8, 3, 5), "float32")
    first, second = identity_rnn(dropout=0.5, seed=4), identity_rnn(dropout=0.5, seed=4)
    draws = first(x, training=True)
    np.testing.assert_array_equal(draws, second(x, training=True))
    assert not np.array_equal(draws, first(x, training=True))  # a new mask for each call
    unseeded = identity_rnn(dropout=0.5)
    set_random_seed(9)
    again = unseeded(x, training=True)
    set_random_seed(9)
    np.testing.assert_array_equal(unseeded(x, training=True), again)


# ------------------------------------------------------------------ errors
def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="invalid value for argument `units`, expected a positive integer, got 0"):
        LSTM(0)
    with pytest.raises(ValueError, match=r"`dropout`, expected a float in \[0, 1\). Received: dropout=1.0"):
        GRU(2, dropout=1.0)
    with pytest.raises(ValueError, match="`recurrent_dropout`.*Received: recurrent_dropout='x'"):
        SimpleRNN(2, recurrent_dropout="x")
    with pytest.raises(ValueError, match="LSTM 'lstm': stateful=True is not supported.*return_state=True"):
        LSTM(2, stateful=True, name="lstm")


def test_wrong_input_rank_and_size():
    layer = GRU(2, name="gru")
    with pytest.raises(ValueError, match=r"layer 'gru' \(GRU\).*expected ndim=3 .*found ndim=2. Full shape.*\(3, 4\)"):
        layer(np.ones((3, 4), "float32"))
    with pytest.raises(ValueError, match="expected ndim=3"):
        layer(Input((4,)))
    layer(np.ones((3, 5, 4), "float32"))
    with pytest.raises(ValueError, match=r"expected axis -1 of input shape to have value 4 .*\(3, 5, 6\)"):
        layer(np.ones((3, 5, 6), "float32"))


def test_mismatched_initial_states_name_the_layer_and_both_shapes():
    x = np.ones((3, 5, 2), "float32")
    message = (r"Layer 'enc' \(LSTM\) expects initial_state to be 2 tensor\(s\) of shape \(batch_size, units\): "
               r"expected shapes \[\(3, 4\), \(3, 4\)\], received shapes \[\(3, 5\), \(3, 4\)\]")
    with pytest.raises(ValueError, match=message):
        LSTM(4, name="enc")(x, initial_state=[np.ones((3, 5)), np.ones((3, 4))])
    with pytest.raises(ValueError, match=message):
        LSTM(4, name="enc")([x, np.ones((3, 5)), np.ones((3, 4))])
    with pytest.raises(ValueError, match=r"received shapes \[\(3, 4\)\]"):
        LSTM(4)(x, initial_state=np.ones((3, 4)))
    with pytest.raises(ValueError, match=r"expected shapes \[\(None, 4\)\], received shapes \[\(None, 3\)\]"):
        GRU(4)(Input((5, 2)), initial_state=[Input((3,))])
    with pytest.raises(ValueError, match="both in its inputs list and as initial_state="):
        GRU(4)([x, np.ones((3, 4))], initial_state=[np.ones((3, 4))])
