"""Every argument of a Keras 3 layer's constructor is taken by ours: implemented, or accepted at
the values that change nothing here (Keras' default first) and refused with a ValueError naming
the layer, the argument and the value otherwise (engine/network/keras_arguments.py)."""

import inspect
import re

import numpy as np
import pytest

import layers as L
from engine import Input, Layer, Model, Sequential, load_model
from engine.network.keras_arguments import KERAS_LAYER_ARGUMENTS, _accepted_arguments
from engine.files.keras_format.catalog import KERAS_LAYERS
from engine.network.layer import _ALLOWED_KWARGS
from tests.engine.test_saving_catalog import EXAMPLES
from tests.layers.oracle import keras

CATALOG = sorted(KERAS_LAYERS - {"InputLayer"})


def _double(x):
    return x * 2.0


# The arguments without a default (or whose default does not fit the example inputs), for our layer
# and Keras' alike (`lib` is `layers` or `keras.layers`).
REQUIRED = {
    "Activation": lambda lib: {"activation": "tanh"},
    "AveragePooling1D": lambda lib: {"pool_size": 2},
    "AveragePooling2D": lambda lib: {"pool_size": 2},
    "Bidirectional": lambda lib: {"layer": lib.GRU(3, return_sequences=True)},
    "CenterCrop": lambda lib: {"height": 4, "width": 5},
    "Conv1D": lambda lib: {"filters": 2, "kernel_size": 2},
    "Conv1DTranspose": lambda lib: {"filters": 2, "kernel_size": 2},
    "Conv2D": lambda lib: {"filters": 2, "kernel_size": 2},
    "Conv2DTranspose": lambda lib: {"filters": 2, "kernel_size": 2},
    "Conv3D": lambda lib: {"filters": 2, "kernel_size": 2},
    "Dense": lambda lib: {"units": 3},
    "DepthwiseConv2D": lambda lib: {"kernel_size": 2},
    "Dot": lambda lib: {"axes": 1},
    "Dropout": lambda lib: {"rate": 0.5},
    "Embedding": lambda lib: {"input_dim": 10, "output_dim": 3},
    "GRU": lambda lib: {"units": 3},
    "GaussianDropout": lambda lib: {"rate": 0.3},
    "GaussianNoise": lambda lib: {"stddev": 0.1},
    "GroupNormalization": lambda lib: {"groups": 2},
    "LSTM": lambda lib: {"units": 3},
    "Lambda": lambda lib: {"function": _double},
    "MultiHeadAttention": lambda lib: {"num_heads": 2, "key_dim": 2},
    "Permute": lambda lib: {"dims": (2, 1)},
    "RepeatVector": lambda lib: {"n": 3},
    "Rescaling": lambda lib: {"scale": 0.5},
    "Reshape": lambda lib: {"target_shape": (-1, 2)},
    "Resizing": lambda lib: {"height": 4, "width": 5},
    "SeparableConv2D": lambda lib: {"filters": 2, "kernel_size": 2},
    "SimpleRNN": lambda lib: {"units": 3},
    "SpatialDropout1D": lambda lib: {"rate": 0.3},
    "SpatialDropout2D": lambda lib: {"rate": 0.3},
    "TimeDistributed": lambda lib: {"layer": lib.Dense(2)},
}
# A value Keras takes and we refuse, for each argument accepted at its default only.
REFUSED = {"lora_rank": 4, "lora_alpha": 8.0, "quantization_config": {"mode": "int8"}, "renorm": True,
           "renorm_clipping": {"rmax": 3.0}, "renorm_momentum": 0.9, "sliding_window": 4, "flash_attention": True,
           "use_gate": True, "use_cudnn": True, "weights": [np.ones((2, 2))], "bounding_box_format": "xyxy",
           "factor": 0.5}
# Values besides the default that change nothing here, so they are accepted.
HONOURED = {"synchronized": True, "flash_attention": False, "use_cudnn": False, "autocast": False}


def _required(name, lib):
    return REQUIRED.get(name, lambda lib: {})(lib)


def _signature_defaults(cls):
    """The parameters of ``cls.__init__`` and of the bases its ``**kwargs`` reach: {name: default}."""
    found = {}
    for klass in cls.__mro__:
        if "__init__" not in klass.__dict__:
            continue
        parameters = inspect.signature(klass.__init__).parameters.values()
        for p in parameters:
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self":
                found.setdefault(p.name, p.default)
        if not any(p.kind is p.VAR_KEYWORD for p in parameters):
            break
    return found


def keras_defaults(name):
    """Keras' full default keyword set for ``keras.layers.<name>``: every parameter with a default
    that Keras' constructor takes (those a subclass fills in itself, such as a pooling layer's
    ``pool_mode``, are left out by asking Keras)."""
    cls = getattr(keras.layers, name)
    defaults = {k: v for k, v in _signature_defaults(cls).items() if v is not inspect.Parameter.empty}
    required = _required(name, keras.layers)
    defaults = {k: v for k, v in defaults.items() if k not in required}
    try:
        cls(**required, **defaults)
        return defaults
    except Exception:  # Keras fails on a parameter its subclass passes itself (TypeError, or KeyError)
        def keras_takes(key):
            try:
                cls(**_required(name, keras.layers), **{key: defaults[key]})
                return True
            except Exception:
                return False
        return {k: v for k, v in defaults.items() if keras_takes(k)}


def _inputs(name):
    _, shapes, dtype = EXAMPLES[name]
    rng = np.random.default_rng(0)
    if dtype == "int32":
        return [rng.integers(0, 10, size=(2,) + s).astype(dtype) for s in shapes]
    return [rng.normal(size=(2,) + s).astype(dtype) for s in shapes]


def _without_names(config):
    """A config without the layers' names (wrapped layers' included), which differ by construction."""
    if isinstance(config, dict):
        return {k: _without_names(v) for k, v in config.items() if k != "name"}
    return config


def _call(layer, arrays):
    outputs = layer(arrays if len(arrays) > 1 else arrays[0])
    return [np.asarray(o) for o in (outputs if isinstance(outputs, (list, tuple)) else [outputs])]


@pytest.mark.parametrize("name", CATALOG)
def test_keras_full_default_keyword_set_constructs_and_behaves_as_the_plain_layer(name):
    cls = getattr(L, name)
    full = cls(**_required(name, L), **keras_defaults(name))
    plain = cls(**_required(name, L))
    assert _without_names(full.get_config()) == _without_names(plain.get_config())
    arrays = _inputs(name)
    plain_outputs = _call(plain, arrays)
    _call(full, arrays)
    full.set_weights(plain.get_weights())
    for got, want in zip(_call(full, arrays), plain_outputs):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", CATALOG)
def test_the_table_lists_exactly_what_keras_takes_and_our_constructor_lacks(name):
    ours = set(_signature_defaults(getattr(L, name))) | set(inspect.signature(Layer.__init__).parameters)
    ours |= _ALLOWED_KWARGS | {"input_dim"}
    keras_only = set(keras_defaults(name)) - ours
    accepted = set(_accepted_arguments(getattr(L, name)))
    assert keras_only <= accepted, f"{name}: Keras arguments neither implemented nor in the table: {keras_only - accepted}"
    listed = {argument for klass in getattr(L, name).__mro__ for argument in KERAS_LAYER_ARGUMENTS.get(klass.__name__, {})}
    assert listed <= keras_only, f"{name}: the table lists arguments Keras does not take: {listed - keras_only}"


CASES = sorted((name, argument) for name, table in KERAS_LAYER_ARGUMENTS.items() for argument in table)


def test_every_argument_of_the_table_is_tested_refused_or_honoured():
    assert {argument for _, argument in CASES} <= set(REFUSED) | set(HONOURED)


@pytest.mark.parametrize("name, argument", [(name, argument) for name, argument in CASES if argument in REFUSED])
def test_a_value_we_cannot_honour_is_refused_naming_layer_argument_and_value(name, argument):
    value = REFUSED[argument]
    with pytest.raises(ValueError, match=f"^{re.escape(f'{name} {chr(39)}x{chr(39)} does not support {argument}={value!r}')}"
                                         r".*accepted here only as"):
        getattr(L, name)(**_required(name, L), **{argument: value}, name="x")


@pytest.mark.parametrize("name, argument", sorted((name, argument) for name, argument in CASES if argument in HONOURED)
                         + [("Dense", "autocast"), ("Conv2D", "autocast")])
def test_values_that_change_nothing_here_are_accepted(name, argument):
    layer = getattr(L, name)(**_required(name, L), **{argument: HONOURED[argument]})
    assert argument not in layer.get_config()


def test_keras_dtype_policies_are_names_and_mixed_or_quantized_policies_are_refused():
    policy = keras.layers.Dense(2).get_config()["dtype"]
    assert policy["class_name"] == "DTypePolicy"
    assert L.Dense(2, dtype=policy).dtype == "float32"
    assert L.Dense(2, dtype=keras.DTypePolicy("float64")).dtype == "float64"
    with pytest.raises(ValueError, match=r"Dense 'd' does not support dtype='mixed_float16': .*one precision"):
        L.Dense(2, dtype=keras.DTypePolicy("mixed_float16"), name="d")
    with pytest.raises(ValueError, match=r"Dense does not support dtype='mixed_bfloat16'"):
        L.Dense(2, dtype="mixed_bfloat16")
    with pytest.raises(ValueError, match="does not support dtype=.*QuantizedDTypePolicy.*without quantization"):
        L.Dense(2, dtype={"module": "keras", "class_name": "QuantizedDTypePolicy",
                          "config": {"name": "int8_from_float32"}})


@pytest.mark.filterwarnings("ignore:Do not pass an `input_shape`/`input_dim` argument")
def test_input_dim_is_keras_shorthand_for_input_shape():
    model = Sequential([L.Dense(4, input_dim=3), L.Dense(1)])
    keras_model = keras.Sequential([keras.layers.Dense(4, input_dim=3), keras.layers.Dense(1)])
    assert model.inputs[0].shape == tuple(keras_model.inputs[0].shape) == (None, 3)
    with pytest.raises(ValueError, match=r"Dense received both input_dim=3 and input_shape=\(4,\); pass one"):
        L.Dense(4, input_dim=3, input_shape=(4,))
    with pytest.raises(ValueError, match="Unrecognized keyword arguments passed to Dense: {'units_': 3}"):
        L.Dense(4, units_=3)


def test_embedding_weights_set_the_initial_table_as_in_keras():
    table = np.arange(30, dtype="float32").reshape(10, 3)
    ours, theirs = L.Embedding(10, 3, weights=table), keras.layers.Embedding(10, 3, weights=table)
    indices = np.array([[1, 9, 0]])
    np.testing.assert_array_equal(ours(indices), np.asarray(theirs(indices)))
    assert ours.built and L.Embedding(10, 3, weights=[table]).get_weights()[0].tolist() == table.tolist()
    x = Input(shape=(3,), dtype="int32")
    np.testing.assert_array_equal(Model(x, L.Embedding(10, 3, weights=table)(x))(indices), table[indices])


def test_a_keras_model_with_these_arguments_and_the_preprocessing_layers_round_trips(tmp_path):
    x = keras.Input((9, 11, 3))
    normalization = keras.layers.Normalization()
    y = normalization(keras.layers.Rescaling(1 / 255.0)(x))
    y = keras.layers.CenterCrop(6, 6)(keras.layers.Resizing(8, 8, antialias=True)(y))
    y = keras.layers.BatchNormalization()(keras.layers.Conv2D(4, 3, activation="hard_swish")(y))
    y = keras.layers.LSTM(5, return_sequences=True)(keras.layers.Reshape((16, 4))(y))
    y = keras.layers.Dense(2, activation="hard_sigmoid")(keras.layers.MultiHeadAttention(2, 3)(y, y))
    theirs = keras.Model(x, y)
    data = np.random.default_rng(0).uniform(0, 255, size=(2, 9, 11, 3)).astype("float32")
    normalization.adapt(data)
    expected = np.asarray(theirs.predict(data, verbose=0))
    theirs.save(tmp_path / "keras.keras")
    ours = load_model(tmp_path / "keras.keras")
    np.testing.assert_allclose(ours.predict(data, verbose=0), expected, rtol=1e-5, atol=1e-6)
    ours.save(tmp_path / "ours.keras")
    back = keras.saving.load_model(tmp_path / "ours.keras")
    np.testing.assert_allclose(np.asarray(back.predict(data, verbose=0)), expected, rtol=1e-5, atol=1e-6)
