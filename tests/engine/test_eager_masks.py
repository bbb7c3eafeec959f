"""Masks carried by eager arrays reach the next call as Keras passes them: ``mask`` for the
inputs, ``<argument>_mask`` for each argument whose ``call`` takes one (attention's query and value)."""

import numpy as np

from engine import Input, Model
from engine.network.eager_masks import argument_masks
from layers import Dense, Embedding, MultiHeadAttention

QUERY_TOKENS = np.array([[1, 2, 0], [4, 0, 0]])
VALUE_TOKENS = np.array([[3, 4, 5, 0, 0], [6, 7, 0, 0, 0]])


def test_an_eager_attention_call_on_masked_arrays_equals_the_same_call_in_a_graph():
    embed_query, embed_value = Embedding(10, 4, mask_zero=True), Embedding(10, 4, mask_zero=True)
    attention = MultiHeadAttention(num_heads=2, key_dim=2)
    query, value = Input((3,), dtype="int32"), Input((5,), dtype="int32")
    model = Model([query, value], attention(embed_query(query), embed_value(value)))

    eager = attention(embed_query(QUERY_TOKENS), embed_value(VALUE_TOKENS))
    unmasked = attention(np.asarray(embed_query(QUERY_TOKENS)), np.asarray(embed_value(VALUE_TOKENS)))

    np.testing.assert_allclose(eager, model.predict([QUERY_TOKENS, VALUE_TOKENS], verbose=0), atol=1e-6)
    assert np.abs(np.asarray(eager) - np.asarray(unmasked)).max() > 1e-3  # the masks changed the result


def test_only_masked_arguments_whose_mask_parameter_is_free_are_passed():
    value = Embedding(10, 4, mask_zero=True)(VALUE_TOKENS)
    query = np.ones((2, 3, 4))
    assert set(argument_masks(MultiHeadAttention, (query, value), {})) == {"value_mask"}
    np.testing.assert_array_equal(argument_masks(MultiHeadAttention, (query,), {"value": value})["value_mask"],
                                  VALUE_TOKENS != 0)
    given = np.ones((2, 5), bool)
    assert argument_masks(MultiHeadAttention, (query, value), {"value_mask": given}) == {}
    assert argument_masks(Dense, (value,), {}) == {}  # a call without <argument>_mask parameters
