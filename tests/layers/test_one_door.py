"""One door per layer: every catalog layer whose ``call`` takes tensors beyond its
first argument (initial states, masks, attention's value and key) is called with
each of them by position and by keyword, and gives the same outputs in inference
(``predict``, against Keras 3 where Keras has the layer and the call form),
trains in ``fit`` and gives gradients under a ``GradientTape``.

Each model feeds its first input through a Dense first, so that every layer,
weightless ones too, has weights to train and gradients to pass on.
"""

import inspect

import numpy as np
import pytest

import nodeweave as nw
from engine import Layer
from engine.autodiff import GradientTape
from engine.files.registry import _REGISTRY
from tests.layers.oracle import keras

BATCH = 4


def _floats(*shape):
    return ("float32", shape)


def _mask(*shape):
    return ("bool", shape)


class Case:
    """One layer class called one way: ``form(layer, *tensors)`` on the model's inputs
    (the first through a Dense), for the ``parameter`` it passes by ``how``."""

    def __init__(self, layer, parameter, how, make, inputs, form, keras_differs=None):
        self.layer, self.parameter, self.how = layer, parameter, how
        self.make, self.inputs, self.form = make, inputs, form
        self.keras_differs = keras_differs  # why Keras 3.15 is no oracle for this call, if it is not

    @property
    def id(self):
        return f"{self.layer}-{self.parameter}-{self.how}"

    def model(self, api):
        """The case's model in ``api`` (nodeweave or keras), and its layer."""
        tensors = [api.Input(shape, dtype=dtype) for dtype, shape in self.inputs]
        first = api.layers.Dense(self.inputs[0][1][-1], name="first")(tensors[0])
        layer = self.make(api.layers, api)
        return api.Model(tensors, self.form(layer, first, *tensors[1:])), layer

    def data(self):
        rng = np.random.default_rng(0)
        arrays = []
        for dtype, shape in self.inputs:
            if dtype == "bool":  # the first step kept, so that no row is masked out entirely
                mask = rng.random((BATCH,) + shape) < 0.7
                mask[:, 0] = True
                arrays.append(mask)
            else:
                arrays.append(rng.normal(0, 1, (BATCH,) + shape).astype("float32"))
        return arrays


# Where Keras 3.15 is no oracle (nodeweave takes these calls):
TRAINING_BY_POSITION = "Keras passes training by keyword, so an argument by position in its place fails twice"
NO_MASK = "Keras' merges and MultiHeadAttention take no mask argument (Keras' Multiply reads the tensors' masks)"
# Layers the engine calls itself, on the mask a tensor carries: nothing to train, no float output to differentiate.
ENGINE_ONLY = {"MaskOf"}
QUERY_MASK = "Keras' MultiHeadAttention reads the query's mask from the tensor, ignoring query_mask="
MASKS_BY_POSITION = ("Keras' MultiHeadAttention.compute_output_spec gets its own query_mask twice when masks come "
                     "by position")


def _sequence_model(api, layer):
    x = api.Input((5, 3))
    return api.Model(x, layer(x))


CASES = [
    # The recurrent layers: initial states after the sequences, then a mask.
    Case("LSTM", "initial_state", "position", lambda L, api: L.LSTM(4),
         [_floats(5, 3), _floats(4), _floats(4)], lambda layer, x, h, c: layer(x, [h, c])),
    Case("LSTM", "initial_state", "keyword", lambda L, api: L.LSTM(4),
         [_floats(5, 3), _floats(4), _floats(4)], lambda layer, x, h, c: layer(x, initial_state=[h, c])),
    Case("LSTM", "mask", "position", lambda L, api: L.LSTM(4),
         [_floats(5, 3), _mask(5)], lambda layer, x, m: layer(x, None, m)),
    Case("LSTM", "mask", "keyword", lambda L, api: L.LSTM(4),
         [_floats(5, 3), _mask(5)], lambda layer, x, m: layer(x, mask=m)),
    Case("GRU", "initial_state", "position", lambda L, api: L.GRU(4),
         [_floats(5, 3), _floats(4)], lambda layer, x, h: layer(x, h)),
    Case("GRU", "initial_state", "keyword", lambda L, api: L.GRU(4, return_sequences=True),
         [_floats(5, 3), _floats(4)], lambda layer, x, h: layer(x, initial_state=[h])),
    Case("GRU", "mask", "position", lambda L, api: L.GRU(4),
         [_floats(5, 3), _mask(5)], lambda layer, x, m: layer(x, None, m)),
    Case("GRU", "mask", "keyword", lambda L, api: L.GRU(4),
         [_floats(5, 3), _mask(5)], lambda layer, x, m: layer(x, mask=m)),
    Case("SimpleRNN", "initial_state", "position", lambda L, api: L.SimpleRNN(4),
         [_floats(5, 3), _floats(4)], lambda layer, x, h: layer(x, [h])),
    Case("SimpleRNN", "initial_state", "keyword", lambda L, api: L.SimpleRNN(4),
         [_floats(5, 3), _floats(4)], lambda layer, x, h: layer(x, initial_state=h)),
    Case("SimpleRNN", "mask", "position", lambda L, api: L.SimpleRNN(4, return_sequences=True),
         [_floats(5, 3), _mask(5)], lambda layer, x, m: layer(x, None, m)),
    Case("SimpleRNN", "mask", "keyword", lambda L, api: L.SimpleRNN(4),
         [_floats(5, 3), _mask(5)], lambda layer, x, m: layer(x, mask=m)),
    Case("Bidirectional", "initial_state", "position", lambda L, api: L.Bidirectional(L.LSTM(4)),
         [_floats(5, 3)] + [_floats(4)] * 4, lambda layer, x, *states: layer(x, list(states))),
    Case("Bidirectional", "initial_state", "keyword", lambda L, api: L.Bidirectional(L.GRU(4)),
         [_floats(5, 3), _floats(4), _floats(4)], lambda layer, x, *states: layer(x, initial_state=list(states))),
    Case("Bidirectional", "mask", "position", lambda L, api: L.Bidirectional(L.SimpleRNN(4)),
         [_floats(5, 3), _mask(5)], lambda layer, x, m: layer(x, None, m)),
    Case("Bidirectional", "mask", "keyword", lambda L, api: L.Bidirectional(L.LSTM(4), merge_mode="sum"),
         [_floats(5, 3), _mask(5)], lambda layer, x, m: layer(x, mask=m)),
    # Masks of single-input layers.
    Case("Softmax", "mask", "position", lambda L, api: L.Softmax(),
         [_floats(5), _mask(5)], lambda layer, y, m: layer(y, m)),
    Case("Softmax", "mask", "keyword", lambda L, api: L.Softmax(),
         [_floats(5), _mask(5)], lambda layer, y, m: layer(y, mask=m)),
    Case("GlobalAveragePooling1D", "mask", "position", lambda L, api: L.GlobalAveragePooling1D(),
         [_floats(5, 3), _mask(5)], lambda layer, x, m: layer(x, m)),
    Case("GlobalAveragePooling1D", "mask", "keyword", lambda L, api: L.GlobalAveragePooling1D(),
         [_floats(5, 3), _mask(5)], lambda layer, x, m: layer(x, mask=m)),
    Case("TimeDistributed", "mask", "position", lambda L, api: L.TimeDistributed(L.Dense(2)),
         [_floats(5, 3), _mask(5)], lambda layer, x, m: layer(x, None, m),
         keras_differs=TRAINING_BY_POSITION),
    Case("TimeDistributed", "mask", "keyword", lambda L, api: L.TimeDistributed(L.Dense(2)),
         [_floats(5, 3), _mask(5)], lambda layer, x, m: layer(x, mask=m)),
    # Masks of merges (Keras' merges take none).
    Case("Maximum", "mask", "position", lambda L, api: L.Maximum(), [_floats(5, 3), _floats(5, 3), _mask(5), _mask(5)],
         lambda layer, a, b, ma, mb: layer([a, b], False, [ma, mb]), keras_differs=NO_MASK),
    Case("Maximum", "mask", "keyword", lambda L, api: L.Maximum(), [_floats(5, 3), _floats(5, 3), _mask(5), _mask(5)],
         lambda layer, a, b, ma, mb: layer([a, b], mask=[ma, mb]), keras_differs=NO_MASK),
    Case("Minimum", "mask", "position", lambda L, api: L.Minimum(), [_floats(5, 3), _floats(5, 3), _mask(5), _mask(5)],
         lambda layer, a, b, ma, mb: layer([a, b], False, [ma, mb]), keras_differs=NO_MASK),
    Case("Minimum", "mask", "keyword", lambda L, api: L.Minimum(), [_floats(5, 3), _floats(5, 3), _mask(5), _mask(5)],
         lambda layer, a, b, ma, mb: layer([a, b], mask=[ma, mb]), keras_differs=NO_MASK),
    Case("Multiply", "mask", "position", lambda L, api: L.Multiply(), [_floats(5, 3), _floats(5, 3), _mask(5), _mask(5)],
         lambda layer, a, b, ma, mb: layer([a, b], False, [ma, mb]), keras_differs=NO_MASK),
    Case("Multiply", "mask", "keyword", lambda L, api: L.Multiply(), [_floats(5, 3), _floats(5, 3), _mask(5), _mask(5)],
         lambda layer, a, b, ma, mb: layer([a, b], mask=[ma, mb]), keras_differs=NO_MASK),
    # Attention: masks of the query and the value; MultiHeadAttention's value, key and masks.
    Case("Attention", "mask", "position", lambda L, api: L.Attention(use_scale=True),
         [_floats(3, 4), _floats(5, 4), _mask(3), _mask(5)], lambda layer, q, v, qm, vm: layer([q, v], [qm, vm])),
    Case("Attention", "mask", "keyword", lambda L, api: L.Attention(score_mode="concat"),
         [_floats(3, 4), _floats(5, 4), _mask(3), _mask(5)], lambda layer, q, v, qm, vm: layer([q, v], mask=[qm, vm])),
    Case("MultiHeadAttention", "query", "keyword", lambda L, api: L.MultiHeadAttention(2, 3),
         [_floats(3, 4), _floats(5, 4)], lambda layer, q, v: layer(query=q, value=v)),
    Case("MultiHeadAttention", "value", "position", lambda L, api: L.MultiHeadAttention(2, 3),
         [_floats(3, 4), _floats(5, 4)], lambda layer, q, v: layer(q, v)),
    Case("MultiHeadAttention", "value", "keyword", lambda L, api: L.MultiHeadAttention(2, 3),
         [_floats(3, 4), _floats(5, 4)], lambda layer, q, v: layer(q, value=v)),
    Case("MultiHeadAttention", "key", "position", lambda L, api: L.MultiHeadAttention(2, 3),
         [_floats(3, 4), _floats(5, 4), _floats(5, 6)], lambda layer, q, v, k: layer(q, v, k)),
    Case("MultiHeadAttention", "key", "keyword", lambda L, api: L.MultiHeadAttention(2, 3),
         [_floats(3, 4), _floats(5, 4), _floats(5, 6)], lambda layer, q, v, k: layer(query=q, value=v, key=k)),
    Case("MultiHeadAttention", "query_mask", "position", lambda L, api: L.MultiHeadAttention(2, 3),
         [_floats(3, 4), _floats(5, 4), _mask(3)], lambda layer, q, v, m: layer(q, v, None, m),
         keras_differs=QUERY_MASK),
    Case("MultiHeadAttention", "query_mask", "keyword", lambda L, api: L.MultiHeadAttention(2, 3),
         [_floats(3, 4), _floats(5, 4), _mask(3)], lambda layer, q, v, m: layer(q, v, query_mask=m),
         keras_differs=QUERY_MASK),
    Case("MultiHeadAttention", "value_mask", "position", lambda L, api: L.MultiHeadAttention(2, 3),
         [_floats(3, 4), _floats(5, 4), _mask(5)], lambda layer, q, v, m: layer(q, v, None, None, m),
         keras_differs=MASKS_BY_POSITION),
    Case("MultiHeadAttention", "value_mask", "keyword", lambda L, api: L.MultiHeadAttention(2, 3),
         [_floats(3, 4), _floats(5, 4), _mask(5)], lambda layer, q, v, m: layer(q, v, value_mask=m)),
    Case("MultiHeadAttention", "key_mask", "position", lambda L, api: L.MultiHeadAttention(2, 3),
         [_floats(3, 4), _floats(5, 4), _floats(5, 6), _mask(5)], lambda layer, q, v, k, m: layer(q, v, k, None, None, m),
         keras_differs=MASKS_BY_POSITION),
    Case("MultiHeadAttention", "key_mask", "keyword", lambda L, api: L.MultiHeadAttention(2, 3),
         [_floats(3, 4), _floats(5, 4), _floats(5, 6), _mask(5)], lambda layer, q, v, k, m: layer(q, v, k, key_mask=m)),
    # nodeweave's masks of [query, value] in one argument, which Keras reads from the tensors instead.
    Case("MultiHeadAttention", "mask", "position", lambda L, api: L.MultiHeadAttention(2, 3),
         [_floats(3, 4), _floats(5, 4), _mask(3), _mask(5)],
         lambda layer, q, v, qm, vm: layer(q, v, None, None, None, None, None, False, False, False, [qm, vm]),
         keras_differs=NO_MASK),
    Case("MultiHeadAttention", "mask", "keyword", lambda L, api: L.MultiHeadAttention(2, 3),
         [_floats(3, 4), _floats(5, 4), _mask(3), _mask(5)], lambda layer, q, v, qm, vm: layer(q, v, mask=[qm, vm]),
         keras_differs=NO_MASK),
    Case("MultiHeadAttention", "attention_mask", "position", lambda L, api: L.MultiHeadAttention(2, 3),
         [_floats(3, 4), _floats(5, 4), _mask(3, 5)],
         lambda layer, q, v, am: layer(q, v, None, None, None, None, am), keras_differs=MASKS_BY_POSITION),
    Case("MultiHeadAttention", "attention_mask", "keyword", lambda L, api: L.MultiHeadAttention(2, 3),
         [_floats(3, 4), _floats(5, 4), _mask(3, 5)], lambda layer, q, v, am: layer(q, v, attention_mask=am)),
    # Models called as layers, with the mask of their inputs.
    Case("Functional", "mask", "position", lambda L, api: _sequence_model(api, L.LSTM(4)),
         [_floats(5, 3), _mask(5)], lambda layer, x, m: layer(x, None, m), keras_differs=TRAINING_BY_POSITION),
    Case("Functional", "mask", "keyword", lambda L, api: _sequence_model(api, L.GRU(4)),
         [_floats(5, 3), _mask(5)], lambda layer, x, m: layer(x, mask=m)),
    Case("Sequential", "mask", "position", lambda L, api: api.Sequential([api.Input((5, 3)), L.SimpleRNN(4)]),
         [_floats(5, 3), _mask(5)], lambda layer, x, m: layer(x, None, m), keras_differs=TRAINING_BY_POSITION),
    Case("Sequential", "mask", "keyword", lambda L, api: api.Sequential([api.Input((5, 3)), L.LSTM(4)]),
         [_floats(5, 3), _mask(5)], lambda layer, x, m: layer(x, mask=m)),
]


def _tensor_parameters(cls):
    """The parameters of ``cls.call`` past the first that take tensors: those
    defaulting to None, but for keywords naming tensors of the layer's own graph."""
    parameters = list(inspect.signature(cls.call).parameters.values())[2:]
    return {p.name for p in parameters
            if p.default is None and p.name not in cls._naming_keywords and p.kind is not p.KEYWORD_ONLY}


def test_the_cases_cover_every_extra_tensor_argument_of_the_catalog_both_ways():
    catalog = {name: cls for name, cls in _REGISTRY.items()
               if isinstance(cls, type) and issubclass(cls, Layer) and name not in ENGINE_ONLY}
    wanted = {(name, parameter, how) for name, cls in catalog.items() for parameter in _tensor_parameters(cls)
              for how in ("position", "keyword")}
    assert {"LSTM", "Softmax", "MultiHeadAttention"} <= {name for name, _, _ in wanted}
    assert wanted <= {(case.layer, case.parameter, case.how) for case in CASES}


@pytest.fixture(params=CASES, ids=lambda case: case.id)
def case(request):
    return request.param


def _predicted(case, ours):
    return [np.asarray(a) for a in _listed(ours.predict(case.data(), batch_size=BATCH, verbose=0))]


def _listed(outputs):
    return outputs if isinstance(outputs, list) else [outputs]


def test_inference_matches_keras(case):
    ours, _ = case.model(nw)
    predicted = _predicted(case, ours)
    assert all(np.all(np.isfinite(p)) for p in predicted)
    np.testing.assert_allclose(_listed(ours(case.data())), predicted, atol=1e-6)  # the eager call agrees
    if case.keras_differs:
        return
    theirs, _ = case.model(keras)
    ours.set_weights([np.asarray(w) for w in theirs.get_weights()])
    expected = _listed(theirs.predict(case.data(), batch_size=BATCH, verbose=0))
    for got, want in zip(_predicted(case, ours), expected, strict=True):
        np.testing.assert_allclose(got, np.asarray(want), atol=1e-5, rtol=1e-5)


def test_one_fit_step_trains_on_the_loss_of_the_prediction(case):
    ours, layer = case.model(nw)
    data = case.data()
    (prediction,) = _predicted(case, ours)
    first, own = ours.get_layer("first").trainable_weights, layer.trainable_weights
    before = [np.array(w.value) for w in first + own]
    ours.compile(optimizer="sgd", loss="mse")
    history = ours.fit(data, np.zeros_like(prediction), batch_size=BATCH, epochs=1, shuffle=False, verbose=0)
    np.testing.assert_allclose(history.history["loss"][0], np.mean(prediction ** 2), rtol=1e-5)
    changed = [not np.array_equal(b, w.value) for b, w in zip(before, first + own)]
    assert changed[:len(first)] == [True] * len(first)  # the Dense before the layer: gradients passed through it
    assert any(changed[len(first):]) or not own


def test_gradient_tape_gives_every_gradient(case):
    ours, layer = case.model(nw)
    data = case.data()
    floats = [i for i, (dtype, _) in enumerate(case.inputs) if dtype != "bool"]
    with GradientTape() as tape:
        arrays = [tape.watch(a) if i in floats else a for i, a in enumerate(data)]
        loss = sum(np.sum(output ** 2) for output in _listed(ours(arrays)))
    weights = ours.trainable_weights
    grads = tape.gradient(loss, weights + [arrays[i] for i in floats])
    assert all(g is not None for g in grads), [w.path for w, g in zip(weights, grads) if g is None]
    assert all(np.any(g != 0) for g in grads[len(weights):])  # every float input reaches the loss


@pytest.mark.parametrize("how", ["position", "keyword"])
def test_a_mask_given_wins_over_the_mask_the_inputs_carry_as_in_keras(how):
    def build(api):
        ids, mask = api.Input((5,), dtype="int32"), api.Input((5,), dtype="bool")
        embedded = api.layers.Embedding(10, 3, mask_zero=True)(ids)
        lstm = api.layers.LSTM(4, return_sequences=True)
        return api.Model([ids, mask], lstm(embedded, None, mask) if how == "position" else lstm(embedded, mask=mask))

    data = [np.array([[3, 1, 0, 0, 0], [2, 7, 1, 8, 0]]), np.array([[1, 0, 1, 1, 0], [1, 1, 1, 1, 1]], bool)]
    ours, theirs = build(nw), build(keras)
    ours.set_weights([np.asarray(w) for w in theirs.get_weights()])
    expected = np.asarray(theirs.predict(data, verbose=0))
    np.testing.assert_allclose(ours.predict(data, verbose=0), expected, atol=1e-5)
    embedding, lstm = (next(l for l in ours.layers if isinstance(l, kind)) for kind in (nw.layers.Embedding, nw.layers.LSTM))
    eager_embedded = embedding(data[0])  # an eager call: the array carries its mask too
    eager = lstm(eager_embedded, None, data[1]) if how == "position" else lstm(eager_embedded, mask=data[1])
    np.testing.assert_allclose(eager, expected, atol=1e-5)
