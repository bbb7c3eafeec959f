import numpy as np
import pytest

from engine import Input, Model
from layers import Dense
from layers.embedding import Embedding
from layers.recurrent import GRU, LSTM, Bidirectional, SimpleRNN
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)

MERGE_MODES = ["concat", "sum", "mul", "ave", None]
RETURNS = [{}, {"return_sequences": True, "return_state": True}, {"return_state": True}]
TOKENS = np.array([[1, 2, 3, 0, 0], [4, 5, 0, 0, 0], [0, 6, 0, 8, 9]], "int32")


def sequences(shape=(3, 5, 4), seed=0, dtype="float32"):
    return np.random.default_rng(seed).normal(size=shape).astype(dtype)


# Every merge mode, each with some of the return options (Keras compiles each case: keep them few).
@pytest.mark.parametrize("merge_mode, returns", [
    ("concat", {}), ("sum", {"return_sequences": True}), ("mul", {"return_state": True}),
    ("ave", {"return_sequences": True, "return_state": True}), (None, {}),
    (None, {"return_sequences": True, "return_state": True}),
])
def test_forward_matches_keras(merge_mode, returns, random_weights):
    x = sequences()
    theirs = random_weights(keras.layers.Bidirectional(keras.layers.LSTM(3, **returns), merge_mode=merge_mode), x.shape)
    ours = Bidirectional(LSTM(3, **returns), merge_mode=merge_mode)
    assert_matches_keras(ours, theirs, x)


@pytest.mark.parametrize("ours_cls, keras_cls", [(GRU, keras.layers.GRU), (SimpleRNN, keras.layers.SimpleRNN)])
def test_other_layers_and_a_custom_backward_layer_match_keras(ours_cls, keras_cls, random_weights):
    x = sequences()
    theirs = random_weights(keras.layers.Bidirectional(
        keras_cls(3, return_sequences=True),
        backward_layer=keras.layers.LSTM(2, activation="relu", return_sequences=True, go_backwards=True)), x.shape)
    ours = Bidirectional(ours_cls(3, return_sequences=True),
                         backward_layer=LSTM(2, activation="relu", return_sequences=True, go_backwards=True))
    assert assert_matches_keras(ours, theirs, x)[0].shape == (3, 5, 5)


def test_weights_are_the_forward_layers_then_the_backward_layers_as_in_keras():
    ours, theirs = Bidirectional(LSTM(3, name="enc")), keras.layers.Bidirectional(keras.layers.LSTM(3, name="enc"))
    ours.build((None, 5, 4))
    theirs.build((None, 5, 4))
    assert [w.shape for w in ours.weights] == [tuple(w.shape) for w in theirs.weights]
    assert [w.path for w in ours.weights] == [f"{d}_enc/{n}" for d in ("forward", "backward")
                                             for n in ("kernel", "recurrent_kernel", "bias")]
    assert ours.forward_layer.name == theirs.forward_layer.name == "forward_enc"
    assert ours.backward_layer.name == theirs.backward_layer.name == "backward_enc"
    assert ours.backward_layer.go_backwards and not ours.forward_layer.go_backwards


def test_initial_states_match_keras_and_take_gradients_in_the_list_form(random_weights):
    x = sequences()
    states = [sequences((3, 3), seed) for seed in range(1, 5)]
    theirs = random_weights(keras.layers.Bidirectional(keras.layers.LSTM(3, return_sequences=True)), x.shape)
    ours = Bidirectional(LSTM(3, return_sequences=True))
    assert_matches_keras(ours, theirs, x, call_kwargs={"initial_state": states})
    np.testing.assert_allclose(ours([x, *states]), np.asarray(theirs(x, initial_state=states)), atol=1e-5, rtol=1e-5)
    report = assert_gradients(ours, [x.astype("float64"), *(s.astype("float64") for s in states)])
    assert {f"input {i}" for i in range(5)} <= set(report.errors)


@pytest.mark.parametrize("returns", RETURNS)
@pytest.mark.parametrize("merge_mode", MERGE_MODES)
def test_gradients(merge_mode, returns, random_weights):
    layer = random_weights(Bidirectional(GRU(2, **returns), merge_mode=merge_mode), (2, 3, 2))
    assert_gradients(layer, sequences((2, 3, 2), seed=1, dtype="float64"))


@pytest.mark.parametrize("merge_mode", ["concat", None])
def test_masks_match_keras_with_zero_outputs_at_masked_steps(merge_mode):
    def build(embedding, rnn, wrapper, tokens):
        return wrapper(rnn(3, return_sequences=True), merge_mode=merge_mode)(embedding(10, 4, mask_zero=True)(tokens))

    k_tokens = keras.Input((5,), dtype="int32")
    k_layers = keras.layers
    theirs = keras.Model(k_tokens, build(k_layers.Embedding, k_layers.LSTM, k_layers.Bidirectional, k_tokens))
    rng = np.random.default_rng(2)
    theirs.set_weights([rng.uniform(-0.5, 0.5, np.shape(w)).astype("float32") for w in theirs.get_weights()])
    tokens = Input((5,), dtype="int32")
    ours = Model(tokens, build(Embedding, LSTM, Bidirectional, tokens))
    ours.set_weights(theirs.get_weights())
    got, want = ours(TOKENS), theirs(TOKENS)
    for g, w in zip(got if merge_mode is None else [got], want if merge_mode is None else [want]):
        np.testing.assert_allclose(g, np.asarray(w), atol=1e-5, rtol=1e-5)
        assert not g[TOKENS == 0].any()
    assert_gradients(ours, TOKENS)


def test_masked_gradients_of_inputs(random_weights, with_mask):
    layer = random_weights(Bidirectional(LSTM(2, return_sequences=True, return_state=True), merge_mode="mul"),
                           (3, 5, 2))
    assert_gradients(with_mask(layer, TOKENS != 0), sequences((3, 5, 2), dtype="float64"))


def test_output_masks():
    mask = TOKENS != 0
    x = sequences()
    assert Bidirectional(LSTM(2, return_sequences=True)).compute_mask(x, mask) is mask
    assert Bidirectional(LSTM(2, return_sequences=True), merge_mode=None).compute_mask(x, mask) == [mask, mask]
    assert Bidirectional(LSTM(2, return_state=True)).compute_mask(x, mask) == [None] * 5
    symbolic = Bidirectional(GRU(2, return_state=True), merge_mode=None)(Input((5, 4)))
    assert [t.shape for t in symbolic] == [(None, 2)] * 4


def test_config_round_trip_and_symbolic_shapes():
    layer = Bidirectional(LSTM(3, return_sequences=True, dropout=0.1), merge_mode="ave", name="bi")
    clone = assert_config_round_trip(layer)
    assert clone.merge_mode == "ave" and clone.forward_layer.dropout == 0.1 and clone.backward_layer.go_backwards
    custom = Bidirectional(GRU(3), backward_layer=SimpleRNN(2, go_backwards=True), merge_mode=None)
    assert isinstance(assert_config_round_trip(custom).backward_layer, SimpleRNN)
    assert_symbolic_shape_matches_eager(Bidirectional(LSTM(3, return_sequences=True, return_state=True)), sequences())
    assert_symbolic_shape_matches_eager(custom, sequences())


def test_bidirectional_in_a_model_trains_with_dense_head():
    source = Input((5, 4))
    model = Model(source, Dense(1)(Bidirectional(SimpleRNN(2))(source)))
    assert_gradients(model, sequences(dtype="float64"))


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="Invalid merge mode. Received: 'max'"):
        Bidirectional(LSTM(2), merge_mode="max")
    with pytest.raises(ValueError, match="expects `layer` to be a recurrent layer.*Received: layer=<Dense"):
        Bidirectional(Dense(2))
    with pytest.raises(ValueError, match="different `go_backwards` value"):
        Bidirectional(LSTM(2), backward_layer=LSTM(2))
    with pytest.raises(ValueError, match='same value for attribute "return_sequences"'):
        Bidirectional(LSTM(2), backward_layer=LSTM(2, go_backwards=True, return_sequences=True))
    with pytest.raises(ValueError, match=r"'bi' \(Bidirectional\) expects an even number of initial states.*ved 3"):
        Bidirectional(LSTM(2), name="bi")([sequences(), *(np.ones((3, 2), "float32"),) * 3])
    with pytest.raises(ValueError, match=r"'forward_lstm' \(LSTM\) expects initial_state.*received shapes \[\(3, 5\)"):
        Bidirectional(LSTM(2, name="lstm"))(sequences(), initial_state=[np.ones((3, 5))] * 4)
