"""A model may output the mask a tensor carries (``t._keras_mask``), as in Keras (engine/network/mask_of.py)."""

import numpy as np

from engine import Input, Model
from engine.network.functional import Functional
from engine.network.mask_of import MaskOf
from layers import Concatenate, Dense, Embedding, Masking


def test_a_mask_spec_as_output_is_computed_from_the_tensor_that_carries_it():
    a, b = Input(shape=(4, 2), name="a"), Input(shape=(4, 2), name="b")
    joined = Concatenate(axis=1)([Masking()(a), b])
    model = Model([a, b], {"values": joined, "mask": joined._keras_mask})
    assert isinstance(model.get_layer(index=-1), MaskOf) and model.output["mask"].shape == (None, 8)
    x1 = np.array([[[0, 0], [1, 2], [0, 0], [3, 4]]], "float32")
    x2 = np.array([[[0, 0], [0, 0], [1, 2], [3, 4]]], "float32")
    out = model([x1, x2])
    # Keras' Concatenate gives an input without a mask an all-true one.
    np.testing.assert_array_equal(out["mask"], [[False, True, False, True, True, True, True, True]])
    revived = Functional.from_config(model.get_config())
    np.testing.assert_array_equal(revived([x1, x2])["mask"], out["mask"])


def test_a_trained_model_outputs_the_mask_next_to_the_values():
    tokens = Input(shape=(3,), dtype="int32")
    embedded = Embedding(5, 2, mask_zero=True)(tokens)
    model = Model(tokens, [Dense(1)(embedded), embedded._keras_mask])
    _, mask = model(np.array([[1, 0, 2]]))
    np.testing.assert_array_equal(mask, [[True, False, True]])
    assert mask.dtype == bool
    _, cache = model.forward(np.array([[1, 0, 2]]))
    grads, weight_grads = model.backward(cache, [np.ones((1, 3, 1), "float32"), None])
    assert set(weight_grads) == set(model.trainable_variables)
