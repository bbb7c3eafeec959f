import numpy as np
import pytest

import engine.keras_random as seed_generator  # where SeedGenerator draws
from engine import Input, Model, tree
from engine.network.gradient_check import gradient_check
from layers import Dense
from layers.attention import MultiHeadAttention
from layers.embedding import Embedding
from layers.normalization import LayerNormalization
from tests.layers.oracle import assert_config_round_trip, assert_symbolic_shape_matches_eager, keras


def tensors(*shapes, seed=0, dtype="float32"):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=shape).astype(dtype) for shape in shapes]


def keras_mha(inputs, seed=0, **kwargs):
    """A Keras MultiHeadAttention called on ``inputs``, with random weights (biases included)."""
    # Constant initial weights spare jax compiling a random initializer for every shape.
    layer = keras.layers.MultiHeadAttention(**kwargs, kernel_initializer="zeros")
    layer.build(*[np.shape(x) for x in inputs])
    rng = np.random.default_rng(seed)
    layer.set_weights([rng.normal(0, 0.5, np.shape(w)).astype("float32") for w in layer.get_weights()])
    return layer


def assert_mha_matches_keras(inputs, call_kwargs=None, keras_form=False, **kwargs):
    """Our layer, given Keras' weights, computes Keras' outputs (list form, or Keras' form).

    Keras runs with return_attention_scores=True: its other path (a fused kernel) computes
    the same function, except on fully masked rows, but fails on jax when value_dim !=
    key_dim, and costs the tests another few seconds of jax compilation."""
    call_kwargs = call_kwargs or {}
    theirs = keras_mha(inputs, **kwargs)
    key = inputs[2] if len(inputs) == 3 else None
    expected = theirs(*inputs[:2], key=key, **{**call_kwargs, "return_attention_scores": True})
    expected = [np.asarray(e) for e in expected[: 2 if call_kwargs.get("return_attention_scores") else 1]]
    ours = MultiHeadAttention(**kwargs)
    args = (inputs[0], inputs[1]) + tuple(inputs[2:]) if keras_form else (list(inputs),)
    ours(*args, **call_kwargs)
    ours.set_weights([np.asarray(w) for w in theirs.get_weights()])
    received = tree.flatten(ours(*args, **call_kwargs))
    assert len(received) == len(expected)
    for got, want in zip(received, expected):
        assert got.dtype == np.float32 and got.shape == want.shape
        np.testing.assert_allclose(got, want, atol=1e-5, rtol=1e-5)
    return ours, received


def key_bias_free_report(layer, inputs, training=False):
    """gradient_check, with the key biases set apart: their true gradient is exactly 0 (adding
    q . b_k to every score of a row does not change its softmax), so finite differences give
    only noise there. Asserts the rest below 1e-6 and the key biases' analytic gradient ~0."""
    report = gradient_check(layer, inputs, training=training)
    checked = {name: e for name, e in report.errors.items() if not name.endswith("key/bias")}
    assert max(checked.values()) < 1e-6, f"{layer.name}:\n{report}"
    outputs, cache = layer.forward(tree.map_structure(np.asarray, inputs), training=training)
    rng = np.random.default_rng(0)
    _, grads = layer.backward(cache, tree.map_structure(lambda o: rng.normal(size=o.shape), outputs))
    for variable in layer.weights:
        if variable.path.endswith("key/bias"):
            kernel = next(v for v in layer.weights if v.path == variable.path.replace("bias", "kernel"))
            assert np.abs(grads[variable]).max() <= 1e-5 * np.abs(grads[kernel]).max()
    return report


# ------------------------------------------------------------------ forward
@pytest.mark.parametrize("keras_form", [False, True])
def test_self_attention_matches_keras(keras_form):
    x = tensors((2, 3, 6))[0]
    assert_mha_matches_keras([x, x], keras_form=keras_form, num_heads=2, key_dim=3)


@pytest.mark.parametrize("kwargs", [
    {"num_heads": 2, "key_dim": 3},
    {"num_heads": 3, "key_dim": 2, "value_dim": 5},
    {"num_heads": 2, "key_dim": 3, "output_shape": 4},
    {"num_heads": 1, "key_dim": 4, "value_dim": 2, "output_shape": (2, 3), "use_bias": False},
])
def test_cross_attention_with_a_key_matches_keras(kwargs):
    inputs = tensors((2, 3, 6), (2, 5, 4), (2, 5, 7), seed=1)
    assert_mha_matches_keras(inputs, **kwargs)
    assert_mha_matches_keras(inputs[:2], {"return_attention_scores": True}, **kwargs)


def test_keras_form_cross_attention_with_the_query_feature_size_matches_keras():
    inputs = tensors((2, 3, 6), (2, 5, 6), (2, 5, 6), seed=2)
    assert_mha_matches_keras(inputs, keras_form=True, num_heads=2, key_dim=3, value_dim=4)


@pytest.mark.parametrize("call_kwargs", [
    {"return_attention_scores": True},
    {"use_causal_mask": True},
    {"use_causal_mask": True, "return_attention_scores": True},
    {"attention_mask": np.random.default_rng(3).random((2, 3, 5)) > 0.3},
    {"attention_mask": np.tri(3, 5, 1, dtype=bool), "return_attention_scores": True},
    {"attention_mask": np.random.default_rng(4).random((2, 3, 5)) > 0.3, "use_causal_mask": True,
     "return_attention_scores": True},
])
def test_masks_and_scores_match_keras(call_kwargs):
    if "attention_mask" in call_kwargs:
        call_kwargs["attention_mask"][..., 0] = True  # every query row attends somewhere
    inputs = tensors((2, 3, 6), (2, 5, 4), seed=5)
    _, outputs = assert_mha_matches_keras(inputs, call_kwargs, num_heads=2, key_dim=3)
    if call_kwargs.get("return_attention_scores"):
        scores = outputs[1]
        assert scores.shape == (2, 2, 3, 5)
        np.testing.assert_allclose(scores.sum(axis=-1), 1, rtol=1e-6)


def test_fully_masked_rows_get_zero_probabilities_and_output_the_bias():
    mask = np.ones((2, 3, 5), bool)
    mask[0, 1] = False
    inputs = tensors((2, 3, 6), (2, 5, 4), seed=6)
    call_kwargs = {"attention_mask": mask, "return_attention_scores": True}
    ours, (outputs, scores) = assert_mha_matches_keras(inputs, call_kwargs, num_heads=2, key_dim=3)
    assert np.all(scores[0, :, 1] == 0)
    np.testing.assert_allclose(outputs[0, 1], ours.output_bias.value, rtol=1e-6)
    np.testing.assert_array_equal(ours(inputs, attention_mask=mask), outputs)


def test_masks_made_upstream_mask_padding_as_in_keras():
    tokens = np.array([[3, 1, 4, 0, 0], [2, 7, 1, 8, 0]])
    k_ids = keras.Input(shape=(5,), dtype="int32")
    k_embedded = keras.layers.Embedding(10, 6, embeddings_initializer="zeros", mask_zero=True)(k_ids)
    k_mha = keras.layers.MultiHeadAttention(2, 3, kernel_initializer="zeros")
    theirs = keras.Model(k_ids, k_mha(k_embedded, k_embedded, return_attention_scores=True))
    rng = np.random.default_rng(16)
    theirs.set_weights([rng.normal(0, 0.5, np.shape(w)).astype("float32") for w in theirs.get_weights()])
    expected = [np.asarray(e) for e in theirs(tokens)]
    for keras_form in (True, False):
        ids = Input(shape=(5,), dtype="int32")
        embedded = Embedding(10, 6, mask_zero=True)(ids)
        mha = MultiHeadAttention(2, 3)
        args = (embedded, embedded) if keras_form else ([embedded, embedded],)
        ours = Model(ids, mha(*args, return_attention_scores=True))
        ours.set_weights([np.asarray(w) for w in theirs.get_weights()])
        for got, want in zip(ours(tokens), expected):
            np.testing.assert_allclose(got, want, atol=1e-5, rtol=1e-5)
    assert np.all(expected[1][0, :, :, 3:] == 0)  # no attention to padding


# ---------------------------------------------------------------- gradients
@pytest.mark.parametrize("kwargs", [
    {},
    {"value_dim": 2, "output_shape": (2, 2)},
    {"use_bias": False, "output_shape": 3},
])
def test_gradients_of_every_input_and_weight(kwargs):
    inputs = tensors((2, 3, 4), (2, 4, 3), (2, 4, 5), seed=7, dtype="float64")
    report = key_bias_free_report(MultiHeadAttention(2, 3, **kwargs), inputs)
    assert {"input 0", "input 1", "input 2"} <= set(report.errors)
    key_bias_free_report(MultiHeadAttention(2, 3, **kwargs), inputs[:2])


def test_gradients_with_masks_causal_mask_and_scores():
    query, value, mask = Input(shape=(3, 4)), Input(shape=(4, 5)), Input(shape=(3, 4), dtype="bool")
    outputs = MultiHeadAttention(2, 2)([query, value], attention_mask=mask, use_causal_mask=True,
                                       return_attention_scores=True)
    model = Model([query, value, mask], outputs)
    attention_mask = np.random.default_rng(8).random((2, 3, 4)) > 0.4
    attention_mask[0, 2] = False  # a fully masked row
    inputs = tensors((2, 3, 4), (2, 4, 5), seed=8, dtype="float64") + [attention_mask]
    report = key_bias_free_report(model, inputs)
    assert {"input 0", "input 1"} <= set(report.errors)


def test_masked_positions_get_zero_gradient():
    layer = MultiHeadAttention(2, 2)
    query, value = tensors((1, 3, 4), (1, 4, 4), seed=9, dtype="float64")
    mask = np.ones((1, 3, 4), bool)
    mask[0, :, 2] = False  # no query attends to value position 2
    layer([query, value])
    outputs, cache = layer.forward([query, value], attention_mask=mask)
    (_, grad_value), _ = layer.backward(cache, np.ones_like(outputs))
    np.testing.assert_array_equal(grad_value[0, 2], 0)
    assert np.all(grad_value[0, [0, 1, 3]] != 0)


def test_dropout_gradients_use_the_forward_mask(monkeypatch):
    monkeypatch.setattr(seed_generator, "random_generator", lambda seed=None: np.random.default_rng(0))
    inputs = tensors((2, 3, 4), (2, 4, 4), seed=10, dtype="float64")
    key_bias_free_report(MultiHeadAttention(2, 2, dropout=0.3), inputs, training=True)


def test_keras_form_self_attention_trains_through_its_one_argument():
    x = Input(shape=(3, 4))
    model = Model(x, MultiHeadAttention(2, 2)(x, x, use_causal_mask=True))
    key_bias_free_report(model, tensors((2, 3, 4), seed=11, dtype="float64")[0])


def test_keras_form_cross_attention_builds_from_all_shapes_and_trains_value_and_key():
    query, value, key = tensors((2, 3, 6), (2, 5, 4), (2, 5, 3), seed=12)
    assert_mha_matches_keras([query, value], keras_form=True, num_heads=2, key_dim=3)
    assert_mha_matches_keras([query, value, key], keras_form=True, num_heads=2, key_dim=3, value_dim=2)
    q, v, k = Input(shape=(3, 6)), Input(shape=(5, 4)), Input(shape=(5, 3))
    pair = Model([q, v], MultiHeadAttention(2, 3)(q, v))
    report = key_bias_free_report(pair, [x.astype("float64") for x in (query, value)])
    assert {"input 0", "input 1"} <= set(report.errors)
    triple = Model([q, v, k], MultiHeadAttention(2, 3)(q, v, k))
    report = key_bias_free_report(triple, [x.astype("float64") for x in (query, value, key)])
    assert {"input 0", "input 1", "input 2"} <= set(report.errors)


@pytest.mark.parametrize("keras_form", [False, True])
def test_transformer_block_builds_runs_and_passes_a_gradient_check(keras_form):
    x = Input(shape=(3, 4))
    mha = MultiHeadAttention(num_heads=2, key_dim=2)
    attended = mha(x, x) if keras_form else mha([x, x])
    h = LayerNormalization()(x + attended)
    y = LayerNormalization()(h + Dense(4)(Dense(6, activation="tanh")(h)))
    model = Model(x, y)
    data = tensors((2, 3, 4), seed=13, dtype="float64")[0]
    assert model(data).shape == (2, 3, 4)
    report = key_bias_free_report(model, data)
    assert len(report.errors) == 1 + 8 + 4 + 4  # the input, attention, two norms, two denses


def test_transformer_block_without_biases_passes_the_plain_gradient_check():
    x = Input(shape=(3, 4))
    h = LayerNormalization()(x + MultiHeadAttention(2, 2, use_bias=False)([x, x], use_causal_mask=True))
    model = Model(x, h + Dense(4, activation="tanh")(h))
    assert gradient_check(model, tensors((2, 3, 4), seed=14, dtype="float64")[0]).max_error < 1e-6


# ------------------------------------------------------------------ dropout
def test_dropout_in_training_only_unbiased_and_reproducible():
    query, value = tensors((3000, 3, 4), (3000, 5, 4), seed=15)
    query[:], value[:] = query[0], value[0]  # identical samples, independent masks
    layer = MultiHeadAttention(2, 2, dropout=0.4, seed=3)
    layer([query, value])
    theirs = keras_mha([query[:2], value[:2]], num_heads=2, key_dim=2, dropout=0.4)
    layer.set_weights([np.asarray(w) for w in theirs.get_weights()])
    inference, probabilities = layer([query, value], return_attention_scores=True)
    np.testing.assert_allclose(inference[:2], theirs(query[:2], value[:2], training=False), atol=1e-5, rtol=1e-5)
    out, scores = layer([query, value], training=True, return_attention_scores=True)
    np.testing.assert_array_equal(scores, probabilities)  # scores are taken before dropout, as in Keras
    assert not np.allclose(out[0], inference[0])
    np.testing.assert_allclose(out.mean(axis=0), inference[0], atol=0.05)
    twin = MultiHeadAttention(2, 2, dropout=0.4, seed=3)
    twin([query, value])
    twin.set_weights(layer.get_weights())
    np.testing.assert_array_equal(twin([query, value], training=True), out)


# ------------------------------------------------------ config and shapes
def test_weights_follow_keras_names_order_and_layout():
    inputs = tensors((2, 3, 6), (2, 5, 4), (2, 5, 7))
    theirs = keras_mha(inputs, num_heads=2, key_dim=3, value_dim=5, output_shape=(2, 4))
    ours = MultiHeadAttention(2, 3, value_dim=5, output_shape=(2, 4), name="mha")
    ours(inputs)
    assert [w.path for w in ours.weights] == [f"mha/{p}/{w}" for p in ("query", "key", "value", "attention_output")
                                              for w in ("kernel", "bias")]
    assert [w.path.split("/", 1)[1] for w in ours.weights] == [w.path.split("/", 1)[1] for w in theirs.weights]
    assert [w.shape for w in ours.weights] == [tuple(w.shape) for w in theirs.weights]


def test_config_round_trip():
    layer = MultiHeadAttention(3, 4, value_dim=2, dropout=0.1, use_bias=False, output_shape=[5], attention_axes=1,
                               kernel_initializer="he_normal", kernel_regularizer="l2", bias_constraint="non_neg",
                               seed=7, name="mha")
    clone = assert_config_round_trip(layer)
    assert clone.get_config()["output_shape"] == (5,) and clone.attention_axes == (1,)
    assert MultiHeadAttention(2, 3).get_config()["value_dim"] == 3  # resolved, as Keras reports it


def test_symbolic_shapes_match_eager():
    assert_symbolic_shape_matches_eager(MultiHeadAttention(2, 3), tensors((2, 3, 6), (2, 5, 4), (2, 5, 7)))
    assert_symbolic_shape_matches_eager(MultiHeadAttention(2, 3, output_shape=(2, 2)), tensors((2, 3, 6), (2, 5, 4)))
    query, value = Input(shape=(3, 6)), Input(shape=(5, 6))
    arrays = tensors((2, 3, 6), (2, 5, 6))
    for args in ((query, value), ([query, value],)):
        layer = MultiHeadAttention(2, 3, output_shape=4)
        out, scores = layer(*args, return_attention_scores=True, use_causal_mask=True)
        eager = layer(*([arrays] if len(args) == 1 else arrays), return_attention_scores=True)
        assert out.shape == (None,) + eager[0].shape[1:] == (None, 3, 4)
        assert scores.shape == (None,) + eager[1].shape[1:] == (None, 2, 3, 5)


# ------------------------------------------------------------------- errors
def test_bad_config_errors():
    with pytest.raises(ValueError, match="`num_heads`, expected a positive integer. Received: num_heads=0"):
        MultiHeadAttention(0, 2)
    with pytest.raises(ValueError, match="`key_dim`, expected a positive integer. Received: key_dim=2.5"):
        MultiHeadAttention(2, 2.5)
    with pytest.raises(ValueError, match="`value_dim`, expected a positive integer or `None`. Received: value_dim=-1"):
        MultiHeadAttention(2, 2, value_dim=-1)
    with pytest.raises(ValueError, match=r"expected a float in \[0, 1\). Received: dropout=-0.1"):
        MultiHeadAttention(2, 2, dropout=-0.1)
    with pytest.raises(ValueError, match=r"Invalid `output_shape`.*Received: output_shape=\(4, 0\)"):
        MultiHeadAttention(2, 2, output_shape=(4, 0))
    with pytest.raises(ValueError, match=r"only the default attention_axes.*Received: attention_axes=\(1, 2\)"):
        MultiHeadAttention(2, 2, attention_axes=(1, 2))


def test_bad_input_errors():
    query, value, other = tensors((2, 3, 6), (2, 5, 4), (2, 4, 4))
    built = MultiHeadAttention(2, 3)
    built(query, value)
    with pytest.raises(ValueError, match=r"built for a value with 4 features \(last axis\), but received "
                                         r"value_shape=\(2, 4, 6\)"):
        built(query, np.ones((2, 4, 6), "float32"))
    with pytest.raises(ValueError, match="All dimensions of `value` and `key`, except the last one, must be equal"):
        MultiHeadAttention(2, 3)([query, value, other])
    with pytest.raises(ValueError, match="supports query, value and key of rank 3"):
        MultiHeadAttention(2, 3)([np.ones((2, 3, 3, 6)), np.ones((2, 3, 3, 6))])
    with pytest.raises(ValueError, match=r"needs a value: call it as mha\(\[query, value\]\)"):
        MultiHeadAttention(2, 3)(query)
    with pytest.raises(ValueError, match=r"expects a list \[query, value\] or \[query, value, key\]"):
        MultiHeadAttention(2, 3)([query])
    with pytest.raises(ValueError, match="also a value or key"):
        MultiHeadAttention(2, 3)([query, value], value)
    layer = MultiHeadAttention(2, 3)
    with pytest.raises(ValueError, match=r"attention_mask of shape \(B, T, S\) = \(2, 3, 5\).*shape=\(2, 3, 4\)"):
        layer([query, value], attention_mask=np.ones((2, 3, 4), bool))
    with pytest.raises(ValueError, match=r"attention_mask of shape.*shape=\(5,\)"):
        layer([query, value], attention_mask=np.ones(5, bool))
    with pytest.raises(ValueError, match=r"value_mask must have shape \(2, 5\).*value_mask.shape=\(2, 3\)"):
        layer([query, value], mask=[None, np.ones((2, 3), bool)])
    with pytest.raises(ValueError, match=r"attention_mask of shape \(B, T, S\) = \(None, 3, 5\)"):
        layer([Input(shape=(3, 6)), Input(shape=(5, 4))], attention_mask=Input(shape=(5, 3), dtype="bool"))
