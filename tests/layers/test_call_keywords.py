"""A call's keywords are checked when the layer is called: one ``call`` does not accept
fails then, with the layer, the keyword and the accepted ones named; ``mask=None``
is accepted by every layer, symbolically and when the model runs."""

import numpy as np
import pytest

from engine import Input, Layer, Model
from layers import BatchNormalization, Dense, MultiHeadAttention
from tests.engine.test_saving_catalog import EXAMPLES
from tests.layers.oracle import keras


def _model(name, **call_kwargs):
    factory, shapes, dtype = EXAMPLES[name]
    inputs = [Input(shape=s, dtype=dtype) for s in shapes]
    layer = factory()
    outputs = layer(inputs if len(inputs) > 1 else inputs[0], **call_kwargs)
    rng = np.random.default_rng(0)
    if dtype == "int32":
        data = [rng.integers(0, 10, size=(3,) + s).astype(dtype) for s in shapes]
    else:
        data = [rng.normal(size=(3,) + s).astype(dtype) for s in shapes]
    return Model(inputs, outputs), layer, data


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_every_layer_accepts_mask_none_symbolically_and_when_the_model_runs(name):
    model, layer, data = _model(name, mask=None)
    plain = Model(model.inputs, layer(model.inputs if len(model.inputs) > 1 else model.inputs[0]))
    for got, want in zip(np.atleast_1d(model.predict(data, verbose=0)), np.atleast_1d(plain.predict(data, verbose=0))):
        np.testing.assert_array_equal(got, want)


def test_batch_normalization_with_mask_none_builds_a_model_that_runs():
    x = Input(shape=(4,))
    model = Model(x, BatchNormalization()(x, mask=None))
    assert model.layers[1].inbound_nodes[0].call_kwargs == {}
    np.testing.assert_allclose(model(np.ones((2, 4), "float32")), np.ones((2, 4)) / np.sqrt(1 + 1e-3), rtol=1e-6)
    model.compile("sgd", "mse")
    assert np.isfinite(model.fit(np.ones((4, 4), "float32"), np.ones((4, 4), "float32"), verbose=0).history["loss"][0])
    assert BatchNormalization()(np.ones((2, 4), "float32"), mask=None).shape == (2, 4)


def test_an_unknown_keyword_fails_at_symbolic_call_time_naming_what_is_accepted():
    x = Input(shape=(4,))
    with pytest.raises(TypeError, match=r"Layer 'bn' \(BatchNormalization\) got an unexpected keyword argument "
                                        r"'foo' in its call. Its call\(\) accepts: training \(and mask=None, which "
                                        r"is ignored\)\. Pass other values"):
        BatchNormalization(name="bn")(x, foo=1)
    assert BatchNormalization(name="bn2").inbound_nodes == []
    with pytest.raises(TypeError, match=r"unexpected keyword arguments 'bar', 'foo' in its call"):
        Dense(2)(x, foo=1, bar=2)
    with pytest.raises(TypeError, match=r"'values' in its call. Its call\(\) accepts: attention_mask, key, key_mask, "
                                        r"mask, query_mask, return_attention_scores, training, use_causal_mask, value, "
                                        r"value_mask\. Pass"):
        MultiHeadAttention(num_heads=1, key_dim=2)(Input(shape=(3, 4)), values=Input(shape=(3, 4)))


def test_the_same_check_for_eager_calls_and_keras_agrees():
    with pytest.raises(TypeError, match=r"\(Dense\) got an unexpected keyword argument 'foo'"):
        Dense(2)(np.ones((1, 3), "float32"), foo=1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
        keras.layers.Dense(2)(keras.Input(shape=(3,)), foo=1)


def test_a_mask_tensor_is_refused_where_call_takes_no_mask():
    x = Input(shape=(4,))
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'mask' in its call"):
        Dense(2)(x, mask=Input(shape=(4,), dtype="bool"))


def test_calls_taking_any_keyword_and_the_training_flag_pass_through():
    class Scaled(Layer):
        def call(self, inputs, **kwargs):
            return inputs * kwargs.get("factor", 1.0)

    x = Input(shape=(2,))
    model = Model(x, Scaled()(x, factor=3.0))
    np.testing.assert_array_equal(model(np.ones((1, 2), "float32")), [[3.0, 3.0]])

    class NoTraining(Layer):
        def call(self, inputs):
            return inputs

    np.testing.assert_array_equal(NoTraining()(np.ones((1, 2), "float32"), training=True, mask=None), [[1.0, 1.0]])
