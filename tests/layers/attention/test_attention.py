import numpy as np
import pytest

import engine.keras_random as seed_generator  # where SeedGenerator draws
from engine import Input, Model
from layers.attention import Attention
from layers.embedding import Embedding
from tests.layers.oracle import (assert_config_round_trip, assert_gradients, assert_matches_keras,
                                 assert_symbolic_shape_matches_eager, keras)


def tensors(*shapes, seed=0, dtype="float32"):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=shape).astype(dtype) for shape in shapes]


def scaled(layer, inputs, values=(0.7, 1.3)):
    """Builds ``layer`` and sets its scalar weights away from their initial 1.0."""
    layer(inputs)
    layer.set_weights([np.asarray(v, "float32") for v in values[: len(layer.weights)]])
    return layer


@pytest.mark.parametrize("score_mode", ["dot", "concat"])
@pytest.mark.parametrize("use_scale", [False, True])
@pytest.mark.parametrize("shapes", [[(2, 3, 4), (2, 5, 4)], [(2, 3, 4), (2, 5, 6), (2, 5, 4)]])
def test_forward_matches_keras(score_mode, use_scale, shapes):
    inputs = tensors(*shapes)
    theirs = scaled(keras.layers.Attention(use_scale=use_scale, score_mode=score_mode), inputs)
    out = assert_matches_keras(Attention(use_scale=use_scale, score_mode=score_mode), theirs, inputs)[0]
    assert out.dtype == np.float32 and out.shape == shapes[0][:2] + shapes[1][2:]


@pytest.mark.parametrize("score_mode", ["dot", "concat"])
@pytest.mark.parametrize("call_kwargs", [
    {"return_attention_scores": True},
    {"use_causal_mask": True, "return_attention_scores": True},
    {"mask": [np.array([[1, 1, 0], [1, 0, 1]], bool), np.array([[1, 1, 1, 0, 0], [0, 1, 1, 1, 1]], bool)]},
    {"mask": [None, np.array([[1, 0, 1, 0, 1], [1, 1, 0, 0, 0]], bool)], "use_causal_mask": True,
     "return_attention_scores": True},
])
def test_masks_causal_mask_and_scores_match_keras(score_mode, call_kwargs):
    inputs = tensors((2, 3, 4), (2, 5, 6), (2, 5, 4), seed=1)
    theirs = scaled(keras.layers.Attention(use_scale=True, score_mode=score_mode), inputs)
    assert_matches_keras(Attention(use_scale=True, score_mode=score_mode), theirs, inputs, call_kwargs=call_kwargs)


def test_masks_made_upstream_reach_the_layer_as_in_keras():
    tokens = np.array([[3, 1, 4, 0, 0], [2, 7, 1, 8, 0]])
    ids = Input(shape=(5,), dtype="int32")
    embedded = Embedding(10, 4, mask_zero=True)(ids)
    ours = Model(ids, Attention()([embedded, embedded]))
    k_ids = keras.Input(shape=(5,), dtype="int32")
    k_embedded = keras.layers.Embedding(10, 4, embeddings_initializer="zeros", mask_zero=True)(k_ids)
    theirs = keras.Model(k_ids, keras.layers.Attention()([k_embedded, k_embedded]))
    theirs.set_weights([np.random.default_rng(7).normal(size=(10, 4)).astype("float32")])
    ours.set_weights([np.asarray(w) for w in theirs.get_weights()])
    expected = np.asarray(theirs(tokens))
    np.testing.assert_allclose(ours(tokens), expected, atol=1e-5, rtol=1e-5)
    assert np.all(expected[tokens == 0] == 0)  # padded queries output 0


@pytest.mark.parametrize("score_mode", ["dot", "concat"])
@pytest.mark.parametrize("use_scale", [False, True])
def test_gradients(score_mode, use_scale):
    with_key = tensors((2, 3, 4), (2, 5, 3), (2, 5, 4), seed=2, dtype="float64")
    assert_gradients(scaled(Attention(use_scale=use_scale, score_mode=score_mode), with_key), with_key)
    # Without a key, value serves as the key: its gradient sums both uses.
    without_key = tensors((2, 3, 4), (2, 5, 4), seed=3, dtype="float64")
    assert_gradients(scaled(Attention(use_scale=use_scale, score_mode=score_mode), without_key), without_key)


@pytest.mark.parametrize("score_mode", ["dot", "concat"])
def test_gradients_with_masks_causal_mask_and_scores(score_mode):
    query, value = Input(shape=(3, 4)), Input(shape=(4, 4))
    query_mask, value_mask = Input(shape=(3,), dtype="bool"), Input(shape=(4,), dtype="bool")
    layer = Attention(use_scale=True, score_mode=score_mode)
    outputs = layer([query, value], mask=[query_mask, value_mask], use_causal_mask=True,
                    return_attention_scores=True)
    model = Model([query, value, query_mask, value_mask], outputs)
    layer.set_weights([np.float32(0.8), np.float32(1.2)][: len(layer.weights)])
    arrays = tensors((2, 3, 4), (2, 4, 4), seed=4, dtype="float64")
    masks = [np.array([[1, 0, 1], [1, 1, 1]], bool), np.array([[1, 1, 0, 1], [1, 0, 1, 1]], bool)]
    report = assert_gradients(model, arrays + masks)
    assert {"input 0", "input 1"} <= set(report.errors)


def test_dropout_in_training_only_scaled_and_reproducible():
    query, value = tensors((4000, 3, 4), (4000, 5, 4), seed=5)
    query[:], value[:] = query[0], value[0]  # identical samples, independent masks
    layer = Attention(dropout=0.4, seed=3)
    inference, probabilities = layer([query, value], return_attention_scores=True)
    np.testing.assert_array_equal(layer([query, value], training=False), inference)
    out, weights = layer([query, value], training=True, return_attention_scores=True)
    dropped = weights == 0
    assert dropped.mean() == pytest.approx(0.4, abs=0.03)
    # The returned scores are the probabilities after dropout, as in Keras.
    np.testing.assert_allclose(weights[~dropped], probabilities[~dropped] / 0.6, rtol=1e-6)
    np.testing.assert_allclose(out, weights @ value, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out.mean(axis=0), inference[0], atol=0.05)
    again = Attention(dropout=0.4, seed=3)([query, value], training=True)
    np.testing.assert_array_equal(out, again)


def test_dropout_gradients_use_the_forward_mask(monkeypatch):
    monkeypatch.setattr(seed_generator, "random_generator", lambda seed=None: np.random.default_rng(0))
    inputs = tensors((2, 3, 4), (2, 5, 4), seed=6, dtype="float64")
    assert_gradients(scaled(Attention(use_scale=True, dropout=0.3), inputs), inputs, training=True)


def test_config_round_trip_and_symbolic_shapes():
    clone = assert_config_round_trip(Attention(use_scale=True, score_mode="concat", dropout=0.2, seed=4, name="att"))
    assert clone.score_mode == "concat" and clone.seed == 4
    assert_symbolic_shape_matches_eager(Attention(), tensors((2, 3, 4), (2, 5, 6), (2, 5, 4)))
    query, value = Input(shape=(3, 4)), Input(shape=(5, 6))
    out, scores = Attention()([query, value, Input(shape=(5, 4))], return_attention_scores=True)
    assert out.shape == (None, 3, 6) and scores.shape == (None, 3, 5)


def test_bad_config_and_input_errors():
    with pytest.raises(ValueError, match="Expected one of {'dot', 'concat'}. Received: score_mode='add'"):
        Attention(score_mode="add")
    with pytest.raises(ValueError, match=r"expected a float in \[0, 1\). Received: dropout=1.0"):
        Attention(dropout=1.0)
    with pytest.raises(ValueError, match="expected a bool. Received: use_scale=1"):
        Attention(use_scale=1)
    with pytest.raises(ValueError, match="expects at least 2 inputs"):
        Attention()(tensors((2, 3, 4))[0])
    with pytest.raises(ValueError, match=r"same last dimension.*query_shape=\(2, 3, 4\), key_shape=\(2, 5, 3\)"):
        Attention()(tensors((2, 3, 4), (2, 5, 3)))
    with pytest.raises(ValueError, match="same batch size and time steps"):
        Attention()(tensors((2, 3, 4), (2, 5, 4), (2, 6, 4)))
    with pytest.raises(ValueError, match="expects query, value and key of rank 3"):
        Attention()(tensors((2, 4), (2, 4)))
    query, value = tensors((2, 3, 4), (2, 5, 4))
    with pytest.raises(ValueError, match=r"value_mask must have shape \(2, 5\).*value_mask.shape=\(2, 3\)"):
        Attention()([query, value], mask=[None, np.ones((2, 3), bool)])
    with pytest.raises(ValueError, match=r"expects mask=\[query_mask, value_mask\]"):
        Attention()([query, value], mask=np.ones((2, 5), bool))
