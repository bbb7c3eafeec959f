"""Masking as in Keras 3: the Masking layer, which layers pass masks on
(``supports_masking``), how merges combine masks, masks reaching every layer
that takes one (in models, nested models and training), and bad masks."""

import inspect

import jax
import numpy as np
import pytest
from keras.src.backend.common.masking import set_keras_mask

import layers
from engine import Input, Layer, Model, Sequential, load_model
from engine.network.gradient_check import gradient_check
from engine.training.optimizers import SGD
from engine.files.registry import lookup
from layers import (LSTM, Add, Average, Bidirectional, Concatenate, Dense, Dot, Dropout, Embedding,
                    GlobalAveragePooling1D, LayerNormalization, Masking, Maximum, Minimum,
                    Multiply, Subtract, TimeDistributed)
from tests.layers.oracle import assert_config_round_trip, keras

RNG = np.random.default_rng(12)


def padded_sequences(mask_value=0.0):
    """(3, 6, 4) floats whose padded steps (all features ``mask_value``) differ per sample,
    with one step that holds ``mask_value`` in some features only (not padding)."""
    x = RNG.normal(size=(3, 6, 4)).astype("float32")
    x[0, 4:] = mask_value
    x[1, 1:3] = mask_value
    x[2, 2, :2] = mask_value
    return x


def random_keras_weights(model, scale=0.5):
    model.set_weights([RNG.normal(0, scale, np.shape(w)).astype("float32") for w in model.get_weights()])


def copy_weights(ours, theirs):
    """Keras' weights into ours, layer by layer, matched by name."""
    for layer in theirs.layers:
        if layer.weights:
            ours.get_layer(layer.name).set_weights([np.asarray(w) for w in layer.get_weights()])


def assert_same_outputs(ours, theirs, inputs, atol=1e-5):
    expected = theirs(inputs)
    received = ours(inputs)
    for got, want in zip(received if isinstance(received, list) else [received],
                         expected if isinstance(expected, list) else [expected]):
        np.testing.assert_allclose(got, np.asarray(want), atol=atol, rtol=1e-5)
    return received


# ----------------------------------------------------------------- Masking
@pytest.mark.parametrize("mask_value", [0.0, -1.0])
def test_masking_zeroes_masked_steps_and_masks_them_as_keras(mask_value):
    x = padded_sequences(mask_value)
    ours, theirs = Masking(mask_value=mask_value), keras.layers.Masking(mask_value=mask_value)
    np.testing.assert_array_equal(ours(x), np.asarray(theirs(x)))
    expected_mask = np.asarray(theirs.compute_mask(x))
    np.testing.assert_array_equal(ours.compute_mask(x), expected_mask)
    assert ours.compute_mask(x).dtype == bool
    assert expected_mask[0].tolist() == [True] * 4 + [False] * 2 and expected_mask[2].all()


def test_masking_keeps_shape_and_dtype_symbolically():
    out = Masking()(Input(shape=(None, 4)))
    assert out.shape == (None, None, 4) and out.dtype == "float32"


def test_masking_backward_matches_finite_differences_and_is_zero_at_masked_steps():
    x = padded_sequences().astype("float64")
    layer = Masking(dtype="float64")
    weights = RNG.normal(size=x.shape)
    outputs, cache = layer.forward(x)
    grad, grad_weights = layer.backward(cache, weights)
    assert grad_weights == {}
    keep = layer.compute_mask(x)
    np.testing.assert_array_equal(grad[~keep], 0.0)
    # Central differences where the step stays unmasked under the perturbation.
    epsilon = 1e-6
    for index in zip(*np.nonzero(np.broadcast_to(keep[..., None], x.shape))):
        step = np.zeros_like(x)
        step[index] = epsilon
        numeric = (np.sum(layer(x + step) * weights) - np.sum(layer(x - step) * weights)) / (2 * epsilon)
        np.testing.assert_allclose(grad[index], numeric, atol=1e-6)
    # Keras' own gradient (JAX) is zero at masked steps too.
    theirs = keras.layers.Masking()
    keras_grad = jax.grad(lambda v: (theirs(v) * weights.astype("float32")).sum())(x.astype("float32"))
    np.testing.assert_allclose(grad, np.asarray(keras_grad), atol=1e-6)


def test_masking_config_round_trip_registry_and_model_file(tmp_path):
    layer = Masking(mask_value=-1.0, name="pad")
    assert_config_round_trip(layer)
    assert layer.get_config()["mask_value"] == keras.layers.Masking(mask_value=-1.0).get_config()["mask_value"]
    assert lookup("Masking") is Masking and "Masking" in layers.__all__
    inputs = Input(shape=(6, 4))
    model = Model(inputs, GlobalAveragePooling1D()(LSTM(3, return_sequences=True)(layer(inputs))))
    model.save(tmp_path / "masked.nw")
    loaded = load_model(tmp_path / "masked.nw")
    x = padded_sequences(-1.0)
    np.testing.assert_array_equal(loaded(x), model(x))
    assert loaded.get_layer("pad").mask_value == -1.0


def test_masking_rejects_a_mask_value_that_is_not_a_number():
    with pytest.raises(TypeError, match="mask_value to be a number"):
        Masking(mask_value="pad")


# -------------------------------------------------------- supports_masking
def _instances(name):
    """Our layer and Keras' with the same arguments."""
    arguments = {
        "Activation": ("relu",), "AveragePooling1D": (2,), "AveragePooling2D": (2,), "Conv1D": (2, 3),
        "Conv1DTranspose": (2, 3), "Conv2D": (2, 3), "Conv2DTranspose": (2, 3), "Conv3D": (2, 3),
        "DepthwiseConv2D": (3,), "Dense": (3,), "Dot": (1,), "Dropout": (0.5,), "Embedding": (5, 3),
        "GaussianDropout": (0.1,), "GaussianNoise": (0.1,), "GRU": (2,), "Lambda": (lambda x: x,), "LSTM": (2,),
        "MaxPooling1D": (2,), "MaxPooling2D": (2,), "MultiHeadAttention": (2, 2), "Permute": ((1,),),
        "RepeatVector": (2,), "Reshape": ((2,),), "SeparableConv2D": (2, 3), "SimpleRNN": (2,),
        "SpatialDropout1D": (0.1,), "SpatialDropout2D": (0.1,), "Rescaling": (0.5,), "CenterCrop": (2, 2),
        "Resizing": (2, 2),
    }
    if name == "Bidirectional":
        return Bidirectional(LSTM(2)), keras.layers.Bidirectional(keras.layers.LSTM(2))
    if name == "TimeDistributed":
        return TimeDistributed(Dense(2)), keras.layers.TimeDistributed(keras.layers.Dense(2))
    args = arguments.get(name, ())
    return getattr(layers, name)(*args), getattr(keras.layers, name)(*args)


CATALOG = [name for name in layers.__all__ if inspect.isclass(getattr(layers, name))]


@pytest.mark.parametrize("name", CATALOG)
def test_supports_masking_is_keras_for_every_catalog_layer(name):
    ours, theirs = _instances(name)
    assert ours.supports_masking == theirs.supports_masking


def test_a_layer_that_defines_compute_mask_supports_masking_as_in_keras():
    def compute_mask(self, inputs, mask=None):
        return mask

    ours = type("OwnMask", (Layer,), {"compute_mask": compute_mask})()
    theirs = type("OwnMask", (keras.layers.Layer,), {"compute_mask": compute_mask})()
    assert ours.supports_masking == theirs.supports_masking
    assert Layer().supports_masking == keras.layers.Layer().supports_masking


def test_embedding_supports_masking_only_with_mask_zero():
    assert Embedding(5, 3, mask_zero=True).supports_masking
    assert not Embedding(5, 3).supports_masking


@pytest.mark.parametrize("make", [lambda: Dense(2), lambda: Dropout(0.5), lambda: LayerNormalization(),
                                  lambda: layers.Activation("tanh"), lambda: layers.GaussianNoise(0.1)])
def test_pass_through_layers_hand_the_mask_on(make):
    x, mask = np.ones((2, 5, 3), "float32"), np.array([[1, 1, 1, 0, 0], [1, 0, 0, 0, 0]], bool)
    layer = make()
    np.testing.assert_array_equal(layer.compute_mask(x, mask), mask)


@pytest.mark.parametrize("make", [lambda: layers.Flatten(), lambda: layers.Conv1D(2, 3),
                                  lambda: GlobalAveragePooling1D(), lambda: LSTM(2), lambda: Dot(axes=2)])
def test_layers_that_consume_the_mask_return_none(make):
    x, mask = np.ones((2, 5, 3), "float32"), np.ones((2, 5), bool)
    layer = make()
    assert layer.compute_mask([x, x] if isinstance(layer, Dot) else x, [mask, mask] if isinstance(layer, Dot)
                              else mask) is None


# --------------------------------------------------------------- merges
MASK_A = np.array([[1, 1, 0, 0, 0], [1, 0, 1, 0, 1]], bool)
MASK_B = np.array([[1, 0, 1, 0, 0], [0, 0, 0, 0, 1]], bool)


@pytest.mark.parametrize("cls", [Add, Subtract, Multiply, Average, Maximum, Minimum])
@pytest.mark.parametrize("masks", [[MASK_A, MASK_B], [MASK_A, None], [None, None], None])
def test_elementwise_merges_combine_masks_as_keras(cls, masks):
    x = np.ones((2, 5, 3), "float32")
    expected = getattr(keras.layers, cls.__name__)().compute_mask([x, x], masks)
    received = cls().compute_mask([x, x], masks)
    if expected is None:
        assert received is None
    else:
        np.testing.assert_array_equal(received, np.asarray(expected))


@pytest.mark.parametrize("axis", [-1, 1])
@pytest.mark.parametrize("masks", [[MASK_A, MASK_B], [MASK_A, None], [None, MASK_B], [None, None]])
def test_concatenate_combines_masks_as_keras(axis, masks):
    x = np.ones((2, 5, 3), "float32")
    expected = keras.layers.Concatenate(axis=axis).compute_mask([x, x], masks)
    received = Concatenate(axis=axis).compute_mask([x, x], masks)
    if expected is None:
        assert received is None
    else:
        np.testing.assert_array_equal(received, np.asarray(expected))


@pytest.mark.parametrize("cls", [Maximum, Minimum])
@pytest.mark.parametrize("masks", [[MASK_A, MASK_B], [MASK_A, None], [None, MASK_B]])
def test_maximum_and_minimum_skip_masked_elements_as_keras_with_checked_gradients(cls, masks):
    a, b = RNG.normal(size=(2, 5, 3)).astype("float32"), RNG.normal(size=(2, 5, 3)).astype("float32")
    keras_inputs = []
    for x, mask in zip((a, b), masks):
        tensor = keras.ops.convert_to_tensor(x)
        if mask is not None:  # Keras reads masks attached to its tensors
            set_keras_mask(tensor, keras.ops.convert_to_tensor(mask))
        keras_inputs.append(tensor)
    expected = np.asarray(getattr(keras.layers, cls.__name__)()(keras_inputs))
    np.testing.assert_array_equal(cls()([a, b], mask=masks), expected)
    assert not np.array_equal(cls()([a, b]), expected)
    report = gradient_check(cls(), [a.astype("float64"), b.astype("float64")], call_kwargs={"mask": masks})
    assert report.max_error < 1e-6, str(report)


@pytest.mark.parametrize("cls", [Add, Concatenate])
@pytest.mark.parametrize("masks, message", [(MASK_A, "should be a list"), ([MASK_A], "same length")])
def test_merges_reject_masks_that_are_not_one_per_input(cls, masks, message):
    x = np.ones((2, 5, 3), "float32")
    with pytest.raises(ValueError):
        getattr(keras.layers, cls.__name__)().compute_mask([x, x], masks)
    with pytest.raises(ValueError, match=message):
        cls().compute_mask([x, x], masks)


# ------------------------------------------- masks through models (Keras)
def _sequence_model(lib, make_input, make_model):
    inputs = make_input((6, 4))
    masked = lib.Masking()(inputs)
    hidden = lib.Dropout(0.3)(lib.Dense(5, activation="tanh", name="dense")(masked))
    sequence = lib.LSTM(4, return_sequences=True, name="lstm")(lib.LayerNormalization(name="norm")(hidden))
    sequence = lib.Bidirectional(lib.GRU(3, return_sequences=True), name="bidirectional")(sequence)
    return make_model(inputs, [lib.GlobalAveragePooling1D()(sequence), lib.SimpleRNN(2, name="rnn")(sequence)])


def test_masking_reaches_rnns_and_pooling_through_pass_through_layers_as_in_keras():
    theirs = _sequence_model(keras.layers, keras.Input, keras.Model)
    random_keras_weights(theirs)
    ours = _sequence_model(layers, Input, Model)
    copy_weights(ours, theirs)
    assert_same_outputs(ours, theirs, padded_sequences())


def _embedding_models(lib, make_input, make_model):
    ids = make_input((5,), dtype="int32")
    embedded = lib.Embedding(10, 6, mask_zero=True, name="embedding")(ids)
    attended = lib.MultiHeadAttention(2, 3, name="mha")(embedded, embedded)
    return make_model(ids, [lib.LSTM(3, name="lstm")(embedded), lib.GlobalAveragePooling1D()(embedded),
                            lib.GlobalAveragePooling1D()(attended)])


TOKENS = np.array([[3, 1, 4, 0, 0], [2, 7, 1, 8, 0], [5, 0, 0, 0, 0]])


def test_embedding_masks_reach_lstm_pooling_and_self_attention_as_in_keras():
    theirs = _embedding_models(keras.layers, keras.Input, keras.Model)
    random_keras_weights(theirs)
    ours = _embedding_models(layers, Input, Model)
    copy_weights(ours, theirs)
    assert_same_outputs(ours, theirs, TOKENS)


def _cross_attention(lib, make_input, make_model):
    query_ids, value_ids = make_input((4,), dtype="int32"), make_input((5,), dtype="int32")
    query = lib.Embedding(10, 6, mask_zero=True, name="query_embedding")(query_ids)
    value = lib.Embedding(10, 6, mask_zero=True, name="value_embedding")(value_ids)
    attended = lib.MultiHeadAttention(2, 3, name="mha")(query, value)
    # Pooling reads the query's mask on the output: what padded queries hold does not count.
    return make_model([query_ids, value_ids], lib.GlobalAveragePooling1D()(attended))


def test_cross_attention_gets_the_query_and_the_value_masks_as_in_keras():
    theirs = _cross_attention(keras.layers, keras.Input, keras.Model)
    random_keras_weights(theirs)
    ours = _cross_attention(layers, Input, Model)
    copy_weights(ours, theirs)
    query_ids, value_ids = np.array([[1, 2, 3, 0], [4, 5, 0, 0]]), np.array([[1, 2, 0, 0, 0], [3, 0, 0, 0, 0]])
    received = assert_same_outputs(ours, theirs, [query_ids, value_ids])
    # The value's mask matters: with the query's alone, padded values are attended to.
    query, value = ours.get_layer("query_embedding")(query_ids), ours.get_layer("value_embedding")(value_ids)
    attended = ours.get_layer("mha")(query, np.asarray(value), query_mask=query_ids != 0)  # value without its mask
    assert not np.allclose(GlobalAveragePooling1D()(attended, mask=query_ids != 0), received)


def _merged(lib, make_input, make_model, merge, second_masked):
    a, b = make_input((4,), dtype="int32"), make_input((4,), dtype="int32")
    merged = merge([lib.Embedding(10, 3, mask_zero=True, name="embedding_a")(a),
                    lib.Embedding(10, 3, mask_zero=second_masked, name="embedding_b")(b)])
    return make_model([a, b], lib.LSTM(2, return_sequences=True, name="lstm")(merged))


@pytest.mark.parametrize("name, axis", [("Add", None), ("Maximum", None), ("Concatenate", -1), ("Concatenate", 1)])
@pytest.mark.parametrize("second_masked", [True, False])
def test_merged_masks_reach_the_next_layer_as_in_keras(name, axis, second_masked):
    def merge(lib):
        return getattr(lib, name)() if axis is None else getattr(lib, name)(axis=axis)

    theirs = _merged(keras.layers, keras.Input, keras.Model, merge(keras.layers), second_masked)
    random_keras_weights(theirs)
    ours = _merged(layers, Input, Model, merge(layers), second_masked)
    copy_weights(ours, theirs)
    assert_same_outputs(ours, theirs, [np.array([[1, 2, 0, 0], [1, 0, 0, 0]]), np.array([[1, 0, 3, 0], [0, 0, 0, 0]])])


def test_an_explicit_mask_argument_reaches_the_layer_and_flows_on():
    x, mask = Input(shape=(5, 3)), Input(shape=(5,), dtype="bool")
    sequence = LSTM(2, return_sequences=True, name="lstm")(x, mask=mask)
    model = Model([x, mask], GlobalAveragePooling1D()(sequence))
    k_x, k_mask = keras.Input((5, 3)), keras.Input((5,), dtype="bool")
    theirs = keras.Model([k_x, k_mask], keras.layers.GlobalAveragePooling1D()(
        keras.layers.LSTM(2, return_sequences=True, name="lstm")(k_x, mask=k_mask)))
    random_keras_weights(theirs)
    copy_weights(model, theirs)
    values = [RNG.normal(size=(2, 5, 3)).astype("float32"), np.array([[1, 1, 1, 0, 0], [1, 0, 0, 0, 0]], bool)]
    assert_same_outputs(model, theirs, values)


def _through_lambda(lib, make_input, make_model, passes_mask):
    inputs = make_input((6, 4))
    doubled = lib.Lambda(lambda x: x * 2.0, mask=(lambda x, mask: mask) if passes_mask else None)(
        lib.Masking()(inputs))
    return make_model(inputs, lib.LSTM(3, name="lstm")(doubled))


@pytest.mark.parametrize("passes_mask", [True, False])
def test_lambda_passes_the_mask_only_given_a_mask_function_as_in_keras(passes_mask):
    theirs = _through_lambda(keras.layers, keras.Input, keras.Model, passes_mask)
    random_keras_weights(theirs)
    ours = _through_lambda(layers, Input, Model, passes_mask)
    copy_weights(ours, theirs)
    assert ours.layers[2].supports_masking == theirs.layers[2].supports_masking == passes_mask
    assert_same_outputs(ours, theirs, padded_sequences())


def test_sequential_models_pass_masks_as_in_keras():
    theirs = keras.Sequential([keras.Input((6, 4)), keras.layers.Masking(), keras.layers.LSTM(3, name="lstm")])
    random_keras_weights(theirs)
    ours = Sequential([Input((6, 4)), Masking(), LSTM(3, name="lstm")])
    copy_weights(ours, theirs)
    assert_same_outputs(ours, theirs, padded_sequences())


def test_models_without_mask_makers_keep_no_masks_nested_or_not():
    inputs = Input((3,))
    inner = Model(inputs, Dense(2)(inputs))
    middle_inputs = Input((3,))
    middle = Model(middle_inputs, inner(middle_inputs))
    outer_inputs = Input((3,))
    outer = Model(outer_inputs, middle(outer_inputs))
    assert not (inner.plan.uses_masks or middle.plan.uses_masks or outer.plan.uses_masks)


# ------------------------------------------------------- nested models
def _mask_made_inside(lib, make_input, make_model):
    inner_inputs = make_input((6, 4))
    inner = make_model(inner_inputs, lib.Dense(4, name="dense")(lib.Masking()(inner_inputs)), name="inner")
    outer_inputs = make_input((6, 4))
    return make_model(outer_inputs, lib.LSTM(2, name="lstm")(inner(outer_inputs)))


def _mask_used_inside(lib, make_input, make_model):
    inner_inputs = make_input((6, 4))
    inner = make_model(inner_inputs, lib.LSTM(2, name="lstm")(inner_inputs), name="inner")
    outer_inputs = make_input((6, 4))
    return make_model(outer_inputs, inner(lib.Masking()(outer_inputs)))


@pytest.mark.parametrize("build", [_mask_made_inside, _mask_used_inside])
def test_masks_cross_nested_model_boundaries_as_in_keras(build):
    theirs = build(keras.layers, keras.Input, keras.Model)
    random_keras_weights(theirs)
    ours = build(layers, Input, Model)
    copy_weights(ours, theirs)
    x = padded_sequences()
    expected = np.asarray(theirs(x))
    np.testing.assert_allclose(ours(x), expected, atol=1e-5)
    outputs, _ = ours.plan.forward([x])  # training passes them too
    np.testing.assert_allclose(outputs[0], expected, atol=1e-5)


# ----------------------------------------------------------- training
def _classifier(lib, make_input, make_model):
    ids = make_input((5,), dtype="int32")
    embedded = lib.Embedding(10, 4, mask_zero=True, name="embedding")(ids)
    hidden = lib.LSTM(3, return_sequences=True, name="lstm")(embedded)
    return make_model(ids, lib.Dense(1, activation="sigmoid", name="dense")(lib.GlobalAveragePooling1D()(hidden)))


def test_masked_model_gradients_match_finite_differences():
    model = _classifier(layers, Input, Model)
    report = gradient_check(model, TOKENS)
    assert report.max_error < 1e-6, str(report)


def test_fit_with_masks_matches_keras_and_never_trains_the_padding_embedding():
    theirs = _classifier(keras.layers, keras.Input, keras.Model)
    random_keras_weights(theirs)
    ours = _classifier(layers, Input, Model)
    copy_weights(ours, theirs)
    labels = np.array([[1.0], [0.0], [1.0]], "float32")
    theirs.compile(optimizer=keras.optimizers.SGD(0.5), loss="binary_crossentropy")
    ours.compile(optimizer=SGD(0.5), loss="binary_crossentropy")
    padding_row = ours.get_layer("embedding").embeddings.value[0].copy()
    keras_history = theirs.fit(TOKENS, labels, epochs=3, batch_size=3, shuffle=False, verbose=0)
    history = ours.fit(TOKENS, labels, epochs=3, batch_size=3, shuffle=False, verbose=0)
    np.testing.assert_allclose(history.history["loss"], keras_history.history["loss"], rtol=1e-4)
    for name in ("embedding", "lstm", "dense"):
        for got, want in zip(ours.get_layer(name).get_weights(), theirs.get_layer(name).get_weights()):
            np.testing.assert_allclose(got, np.asarray(want), atol=1e-5)
    np.testing.assert_array_equal(ours.get_layer("embedding").embeddings.value[0], padding_row)


# ------------------------------------------------------------ bad masks
X = np.ones((2, 5, 3), "float32")


@pytest.mark.parametrize("name, make, mask", [
    ("LSTM", lambda lib: lib.LSTM(2), np.ones((2, 4), bool)),
    ("LSTM", lambda lib: lib.LSTM(2), np.ones((3, 5), bool)),
    ("GlobalAveragePooling1D", lambda lib: lib.GlobalAveragePooling1D(), np.ones((2, 4), bool)),
    ("Bidirectional", lambda lib: lib.Bidirectional(lib.GRU(2)), np.ones((2, 4), bool)),
    ("TimeDistributed", lambda lib: lib.TimeDistributed(lib.Dense(2)), np.ones((2, 4), bool)),
])
def test_a_mask_of_the_wrong_shape_is_a_clear_value_error_as_in_keras(name, make, mask):
    with pytest.raises(ValueError):
        make(keras.layers)(X, mask=mask)
    with pytest.raises(ValueError, match=r"mask of shape .* must have shape \(2, 5\)"):
        make(layers)(X, mask=mask)


def test_numeric_masks_count_as_booleans_as_in_keras():
    mask = np.array([[1, 1, 1, 0, 0], [1, 0, 0, 0, 0]])
    x = RNG.normal(size=(2, 5, 3)).astype("float32")
    for make in (lambda lib: lib.LSTM(2), lambda lib: lib.GlobalAveragePooling1D()):
        theirs = make(keras.layers)
        expected = np.asarray(theirs(x, mask=mask.astype("float32")))
        ours = make(layers)
        ours(x)
        ours.set_weights([np.asarray(w) for w in theirs.get_weights()])
        np.testing.assert_allclose(ours(x, mask=mask.astype("float32")), expected, atol=1e-6)
        np.testing.assert_allclose(ours(x, mask=mask.astype(bool)), expected, atol=1e-6)


def test_a_mask_that_is_not_numbers_is_a_type_error():
    with pytest.raises(TypeError, match="expects a boolean mask"):
        LSTM(2)(X, mask=np.full((2, 5), "yes"))


def test_a_mask_given_to_a_layer_that_takes_none_is_a_type_error_as_in_keras():
    with pytest.raises(TypeError):
        keras.layers.Dense(2)(X, mask=np.ones((2, 5), bool))
    with pytest.raises(TypeError, match="mask"):
        Dense(2)(X, mask=np.ones((2, 5), bool))


def test_a_custom_layer_gets_masks_by_argument_name():
    seen = {}

    class Pair(Layer):
        def compute_output_shape(self, input_shape):
            return input_shape

        def call(self, inputs, other, inputs_mask=None, other_mask=None):
            seen.update(inputs_mask=inputs_mask, other_mask=other_mask)
            return inputs

    a, b = Input(shape=(4,), dtype="int32"), Input(shape=(5,), dtype="int32")
    embedded_a, embedded_b = Embedding(10, 2, mask_zero=True)(a), Embedding(10, 2)(b)
    Model([a, b], Pair()(embedded_a, embedded_b))([np.array([[1, 0, 2, 0]]), np.array([[1, 2, 3, 0, 0]])])
    np.testing.assert_array_equal(seen["inputs_mask"], [[True, False, True, False]])
    assert seen["other_mask"] is None


def _mask_specs(lib, make_input):
    ids = make_input((5,), dtype="int32")
    embedded = lib.Embedding(10, 4, mask_zero=True)(ids)
    hidden = lib.Dense(3)(embedded)
    sequence = lib.LSTM(2, return_sequences=True)(hidden)
    return [ids, embedded, hidden, sequence, lib.LSTM(2)(sequence), lib.Flatten()(hidden)]


def test_symbolic_tensors_carry_the_spec_of_their_mask_as_in_keras():
    def spec(tensor):
        mask = getattr(tensor, "_keras_mask", None)
        return None if mask is None else tuple(mask.shape)

    assert ([spec(t) for t in _mask_specs(layers, Input)] == [spec(t) for t in _mask_specs(keras.layers, keras.Input)]
            == [None, (None, 5), (None, 5), (None, 5), None, None])


def test_a_custom_layer_gets_its_mask_while_its_output_shape_is_inferred():
    class MaskedMean(Layer):
        def call(self, inputs, mask=None):
            weights = np.asarray(mask, inputs.dtype)[..., None]
            return np.sum(inputs * weights, axis=1) / np.maximum(np.sum(weights, axis=1), 1.0)

    ids = Input(shape=(None,), dtype="int32")
    outputs = MaskedMean()(Embedding(10, 3, mask_zero=True)(ids))
    assert outputs.shape == (None, 3)
    model = Model(ids, outputs)
    tokens = np.array([[1, 2, 0, 0]])
    embedded = model.layers[1].embeddings.value[[1, 2]]
    np.testing.assert_allclose(model(tokens), embedded.mean(axis=0, keepdims=True), rtol=1e-6)


def test_a_nested_model_that_makes_masks_is_called_symbolically_on_unknown_lengths():
    """Its mask specs come from its own graph: nothing runs on a one-step example, which
    Conv1D(kernel_size=3) could not take."""
    ids = Input(shape=(None,), dtype="int32")
    inner = Model(ids, layers.Conv1D(2, 3)(Embedding(10, 4, mask_zero=True)(ids)))
    outer_ids = Input(shape=(None,), dtype="int32")
    outer = Model(outer_ids, inner(outer_ids))
    assert outer(np.ones((1, 5), "int32")).shape == (1, 3, 2)


def test_graphs_whose_layers_could_mask_but_do_not_run_nested_models_once():
    calls = []

    def doubled(x):
        calls.append(1)
        return x * 2.0

    inputs = Input(shape=(3,))
    inner = Model(inputs, Dense(2)(layers.Lambda(doubled)(Embedding(4, 3)(inputs))))  # neither makes a mask
    outer_inputs = Input(shape=(3,))
    outer = Model(outer_inputs, inner(outer_inputs))
    calls.clear()
    outer(np.ones((1, 3)))
    assert len(calls) == 1 and not outer.plan.uses_masks
