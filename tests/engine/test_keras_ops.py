"""keras.ops on NumPy (engine/keras_ops): every name against Keras' own on the
same inputs, every differentiable row against finite differences, and the ops
as graph nodes of a functional model that predicts, trains, saves and draws."""

import numpy as np
import pytest

from engine import Input, Model
from engine import keras_ops as ops
from engine import tree
from engine.autodiff import GradientTape
from engine.keras_ops.table import OPS
from engine.files.saving import load_model, save_model
from tests.layers.oracle import keras

RNG = np.random.default_rng(0)


def rand(*shape, low=-2.0, high=2.0):
    return RNG.uniform(low, high, shape).astype("float32")


def positive(*shape):
    return rand(*shape, low=0.5, high=2.0)


def unit(*shape):
    return rand(*shape, low=-0.9, high=0.9)


def probabilities(*shape):
    p = positive(*shape)
    return p / p.sum(-1, keepdims=True)


def integers(*shape, high=4):
    return RNG.integers(0, high, shape).astype("int32")


def boolean(*shape):
    return RNG.random(shape) > 0.5


A, B, M, N = rand(2, 3), rand(2, 3), rand(3, 4), rand(2, 3, 4)
IMAGES, KERNEL, SEQUENCE = rand(2, 5, 6, 3), rand(3, 3, 3, 4), rand(2, 7, 3)

# name -> (positional arguments, keyword arguments); one row per function of the table.
CASES = {
    "add": ((A, B), {}), "subtract": ((A, 1.5), {}), "multiply": ((A, B), {}), "divide": ((A, positive(2, 3)), {}),
    "true_divide": ((A, positive(2, 3)), {}), "maximum": ((A, B), {}), "minimum": ((A, B), {}),
    "power": ((positive(2, 3), rand(2, 3)), {}), "mod": ((rand(2, 3), positive(2, 3)), {}),
    "floor_divide": ((rand(2, 3), positive(2, 3)), {}), "equal": ((integers(5), integers(5)), {}),
    "not_equal": ((integers(5), integers(5)), {}), "greater": ((A, B), {}), "greater_equal": ((A, B), {}),
    "less": ((A, B), {}), "less_equal": ((A, B), {}), "logical_and": ((boolean(4), boolean(4)), {}),
    "logical_or": ((boolean(4), boolean(4)), {}), "logical_xor": ((boolean(4), boolean(4)), {}),
    "exp": ((A,), {}), "expm1": ((A,), {}), "log": ((positive(2, 3),), {}), "log1p": ((positive(2, 3),), {}),
    "log2": ((positive(2, 3),), {}), "log10": ((positive(2, 3),), {}), "sqrt": ((positive(2, 3),), {}),
    "square": ((A,), {}), "negative": ((A,), {}), "reciprocal": ((positive(2, 3),), {}), "sin": ((A,), {}),
    "cos": ((A,), {}), "tan": ((unit(2, 3),), {}), "arcsin": ((unit(2, 3),), {}), "arccos": ((unit(2, 3),), {}),
    "arctan": ((A,), {}), "sinh": ((A,), {}), "cosh": ((A,), {}), "tanh": ((A,), {}), "arctanh": ((unit(2, 3),), {}),
    "abs": ((A,), {}), "absolute": ((A,), {}), "sign": ((A,), {}), "floor": ((A,), {}), "ceil": ((A,), {}),
    "logical_not": ((boolean(4),), {}), "isnan": ((np.array([1.0, np.nan, np.inf], "float32"),), {}),
    "isinf": ((np.array([1.0, np.nan, np.inf], "float32"),), {}),
    "isfinite": ((np.array([1.0, np.nan, np.inf], "float32"),), {}),
    "round": ((A * 10,), {"decimals": -1}), "clip": ((A, -1.0, 1.0), {}), "where": ((A > 0, A, B), {}),
    "matmul": ((N, rand(4, 2)), {}), "tensordot": ((N, rand(4, 3, 2)), {"axes": ([1, 2], [1, 0])}),
    "einsum": (("bij,jk->bik", N, rand(4, 5)), {}), "dot": ((A, M), {}), "outer": ((rand(3), rand(4)), {}),
    "mean": ((N,), {"axis": [0, 2]}), "sum": ((N,), {"axis": 1, "keepdims": True}), "max": ((N,), {"axis": -1}),
    "min": ((N,), {"axis": 0}), "prod": ((A,), {"axis": 1}), "var": ((N,), {"axis": 1}), "std": ((N,), {}),
    "cumsum": ((N,), {"axis": 1}), "argmax": ((N,), {"axis": -1}), "argmin": ((N,), {}),
    "any": ((boolean(3, 4),), {"axis": 0}), "all": ((boolean(3, 4),), {"axis": 1}),
    "count_nonzero": ((integers(3, 4),), {"axis": 1}), "argsort": ((A,), {}),
    "transpose": ((N,), {"axes": (2, 0, 1)}), "reshape": ((N,), {"newshape": (-1, 6)}), "ravel": ((N,), {}),
    "expand_dims": ((A,), {"axis": 1}), "squeeze": ((rand(2, 1, 3),), {"axis": 1}),
    "swapaxes": ((N, 0, 2), {}), "moveaxis": ((N, 0, -1), {}), "flip": ((N,), {"axis": 1}),
    "broadcast_to": ((rand(1, 3), (4, 3)), {}), "concatenate": (([A, B],), {"axis": 1}),
    "stack": (([A, B],), {"axis": 1}), "hstack": (([A, B],), {}), "vstack": (([A, B],), {}),
    "split": ((N, 2), {"axis": 2}), "pad": ((A, [(1, 0), (0, 2)]), {}),
    "take": ((N, np.array([2, 0, 2])), {"axis": 1}),
    "take_along_axis": ((N, integers(2, 3, 2, high=4)), {"axis": -1}),
    "tile": ((A, (2, 1, 2)), {}), "repeat": ((A, 2), {"axis": 1}), "sort": ((N,), {"axis": 1}),
    "tril": ((rand(2, 4, 4),), {"k": -1}), "triu": ((rand(4, 4),), {"k": 1}),
    "arange": ((1, 10, 3), {}), "linspace": ((0.0, 1.0, 7), {}), "zeros": (((2, 3),), {}), "ones": (((2,),), {}),
    "full": (((2, 2), 3.0), {}), "eye": ((3, 4), {"k": 1}), "zeros_like": ((A,), {}), "ones_like": ((A,), {}),
    "full_like": ((A, 2.5), {}), "size": ((N,), {}), "ndim": ((N,), {}),
    "relu": ((A,), {}), "relu6": ((A * 5,), {}), "sigmoid": ((A * 10,), {}), "hard_sigmoid": ((A * 2,), {}),
    "softplus": ((A * 10,), {}), "log_sigmoid": ((A,), {}), "softsign": ((A,), {}), "silu": ((A,), {}),
    "swish": ((A,), {}), "leaky_relu": ((A,), {"negative_slope": 0.1}), "elu": ((A,), {"alpha": 0.5}),
    "selu": ((A,), {}), "gelu": ((A,), {}), "softmax": ((N,), {"axis": 1}), "log_softmax": ((N,), {}),
    "normalize": ((N,), {"axis": 1}), "moments": ((N,), {"axes": [0, 1]}),
    "binary_crossentropy": ((boolean(2, 3).astype("float32"), probabilities(2, 3)), {}),
    "categorical_crossentropy": ((np.eye(3, dtype="float32")[[0, 2]], probabilities(2, 3)), {}),
    "sparse_categorical_crossentropy": ((np.array([1, 2]), A), {"from_logits": True}),
    "conv": ((IMAGES, KERNEL), {"strides": (2, 1), "padding": "same"}),
    "depthwise_conv": ((SEQUENCE, rand(3, 3, 2)), {"dilation_rate": 2}),
    "max_pool": ((IMAGES, 2), {"strides": 1, "padding": "same"}),
    "average_pool": ((IMAGES, 2), {"strides": (1, 2), "padding": "same"}), "one_hot": ((integers(2, 3),), {"num_classes": 4}),
    "logsumexp": ((N * 10,), {"axis": 1}), "top_k": ((A, 2), {}), "rsqrt": ((positive(2, 3),), {}),
    "erf": ((A,), {}), "norm": ((N,), {"axis": -1}),
    "cast": ((A, "float16"), {}), "stop_gradient": ((A,), {}),
    "scatter": ((np.array([[0, 1], [2, 0], [0, 1]]), rand(3), (3, 2)), {}),
    "slice": ((N, (1, 0, 1), (1, 2, 2)), {}), "slice_update": ((N, (0, 1, 1), rand(2, 2, 2)), {}),
    "convert_to_tensor": (([1.5, 2.0],), {}), "convert_to_numpy": ((A,), {}), "shape": ((N,), {}),
    "cond": ((True, lambda: ops.exp(A), lambda: A), {}),
    "while_loop": ((lambda i, x: i < 3, lambda i, x: (i + 1, x * 2.0), (0, A)), {}),
    "fori_loop": ((0, 4, lambda i, x: x + i, A), {}),
}
# Python-function arguments call ops of their own library: given to Keras, they call Keras' ops.
KERAS_CASES = {
    "cond": ((True, lambda: keras.ops.exp(A), lambda: A), {}),
}
DIFFERENTIABLE = sorted(name for name, row in OPS.items() if row.differentiable and row.returns_arrays)


def test_every_name_has_a_case():
    assert sorted(CASES) == sorted(OPS)
    assert sorted(ops.__all__) == sorted([*OPS, "nn", "numpy", "linalg"])


@pytest.mark.parametrize("name", sorted(OPS))
def test_value_and_dtype_against_keras(name):
    args, kwargs = CASES[name]
    theirs_args, theirs_kwargs = KERAS_CASES.get(name, (args, kwargs))
    ours = getattr(ops, name)(*args, **kwargs)
    theirs = getattr(keras.ops, name)(*theirs_args, **theirs_kwargs)
    if name in ("shape", "size", "ndim"):
        assert ours == theirs
        return
    ours, theirs = tree.flatten(ours), tree.flatten(theirs)
    assert len(ours) == len(theirs)
    for got, want in zip(ours, theirs):
        got, want = np.asarray(got), np.asarray(want)
        assert got.shape == want.shape
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        np.testing.assert_allclose(got.astype("float64"), want.astype("float64"), rtol=1e-5, atol=1e-6)


def test_python_numbers_get_keras_dtypes():
    assert ops.convert_to_tensor(1.0).dtype == np.float32
    assert ops.convert_to_tensor(1).dtype == np.int32
    assert ops.add(np.ones(2, "int32"), np.ones(2, "float32")).dtype == np.float32
    assert ops.mean(np.ones(2, "int32")).dtype == np.float32
    assert ops.multiply(np.ones(2, "float16"), 2.0).dtype == np.float16
    assert ops.exp(np.ones(2)).dtype == np.float64  # NumPy's own float64 arrays stay float64
    assert isinstance(ops.exp(1.0), np.ndarray)


def _numeric_gradient(function, arrays, index, projection, epsilon=1e-6):
    grad = np.zeros_like(arrays[index])
    for position in np.ndindex(arrays[index].shape):
        values = []
        for step in (epsilon, -epsilon):
            moved = [a.copy() for a in arrays]
            moved[index][position] += step
            values.append(sum(np.sum(np.asarray(o, np.float64) * r)
                              for o, r in zip(tree.flatten(function(*moved)), projection)))
        grad[position] = (values[0] - values[1]) / (2 * epsilon)
    return grad


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_gradient_against_finite_differences(name):
    args, kwargs = CASES[name]
    leaves = tree.flatten(args)
    floating = [i for i, leaf in enumerate(leaves) if isinstance(leaf, np.ndarray) and leaf.dtype.kind == "f"]
    if name == "cast":
        kwargs, leaves = {}, [leaves[0], "float64"]
    arrays = [leaves[i].astype("float64") for i in floating]

    def function(*values):
        substituted = list(leaves)
        for i, value in zip(floating, values):
            substituted[i] = value
        return getattr(ops, name)(*tree.pack_as(args, substituted), **kwargs)

    outputs = [o for o in tree.flatten(function(*arrays)) if np.asarray(o).dtype.kind == "f"]
    projection = [RNG.standard_normal(np.shape(o)) for o in outputs]
    with GradientTape() as tape:
        traced = [tape.watch(a) for a in arrays]
        out = [o for o in tree.flatten(function(*traced)) if o.dtype.kind == "f"]
        loss = sum(np.sum(o * r) for o, r in zip(out, projection))
    grads = tape.gradient(loss, traced)
    for index, grad in enumerate(grads):
        expected = _numeric_gradient(lambda *v: [o for o in tree.flatten(function(*v))
                                                 if np.asarray(o).dtype.kind == "f"], arrays, index, projection)
        got = np.zeros_like(expected) if grad is None else np.asarray(grad)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6, err_msg=f"{name}: argument {index}")


def test_exact_gelu_and_its_gradient():
    x = np.array([-3.0, -0.5, 0.2, 2.5])
    np.testing.assert_allclose(ops.gelu(x.astype("float32"), approximate=False),
                               keras.ops.gelu(x.astype("float32"), approximate=False), rtol=1e-5)
    with GradientTape() as tape:
        traced = tape.watch(x)
        loss = np.sum(ops.gelu(traced, approximate=False))
    numeric = _numeric_gradient(lambda v: [ops.gelu(v, approximate=False)], [x], 0, [np.ones(4)])
    np.testing.assert_allclose(tape.gradient(loss, traced), numeric, rtol=1e-6)


def test_stop_gradient_gives_no_gradient():
    x = np.array([1.0, 2.0])
    with GradientTape() as tape:
        traced = tape.watch(x)
        loss = np.sum(traced * ops.stop_gradient(traced))
    np.testing.assert_allclose(tape.gradient(loss, traced), x)


# ---------------------------------------------------------------- on KerasTensors

# Cases whose other arguments are arrays the first must match in shape: their Input keeps the batch size.
KNOWN_BATCH = {"binary_crossentropy", "categorical_crossentropy", "broadcast_to", "scatter"}
SYMBOLIC = sorted(name for name, row in OPS.items() if row.records and isinstance(CASES[name][0][0], np.ndarray)
                  and CASES[name][0][0].ndim >= 2)


@pytest.mark.parametrize("name", SYMBOLIC)
def test_symbolic_shape_dtype_and_name_against_keras(name):
    """The first argument as an Input with an unknown batch size: the op node's
    shapes, dtypes and name are Keras' own."""
    (first, *rest), kwargs = CASES[name]
    shape = first.shape if name in KNOWN_BATCH else (None, *first.shape[1:])
    ours = getattr(ops, name)(Input(batch_shape=shape, dtype=first.dtype), *rest, **kwargs)
    theirs = getattr(keras.ops, name)(keras.Input(batch_shape=shape, dtype=str(first.dtype)), *rest, **kwargs)
    for got, want in zip(tree.flatten(ours), tree.flatten(theirs), strict=True):
        assert (got.shape, got.dtype) == (want.shape, want.dtype)
    layer, operation = tree.flatten(ours)[0]._keras_history.layer, tree.flatten(theirs)[0]._keras_history.operation
    assert _base_name(layer.name) == _base_name(operation.name)


def _base_name(name):
    """``matmul_3`` -> ``matmul``: the name before the suffix that makes it unique."""
    stem, _, suffix = name.rpartition("_")
    return stem if suffix.isdigit() else name


def _op_model():
    inputs = Input(shape=(4,), name="features")
    other = Input(shape=(4,), name="other")
    from layers import Dense

    hidden = Dense(6, name="hidden")(inputs)
    mixed = ops.matmul(ops.concatenate([hidden, Dense(6, name="side")(other)], axis=-1), np.eye(12, 3, dtype="float32"))
    probabilities = ops.softmax(ops.cast(mixed, "float32") * 2.0)
    return Model([inputs, other], Dense(2, name="head")(probabilities))


def test_functional_model_with_ops_predicts_trains_saves_and_draws(tmp_path):
    from graph import static_svg, to_networkx

    model = _op_model()
    x = [rand(8, 4), rand(8, 4)]
    names = [layer.name for layer in model.layers]
    assert {"matmul", "concatenate", "cast", "softmax"} <= {_base_name(n) for n in names}
    before = model.predict(x, verbose=0)
    model.compile(optimizer="sgd", loss="mse")
    losses = model.fit(x, rand(8, 2), epochs=3, verbose=0).history["loss"]
    assert losses[-1] < losses[0]
    hidden_before = model.get_layer("hidden").get_weights()[0].copy()
    model.fit(x, rand(8, 2), epochs=1, verbose=0)
    assert not np.allclose(model.get_layer("hidden").get_weights()[0], hidden_before)  # gradients cross the ops
    after = model.predict(x, verbose=0)
    assert not np.allclose(before, after)

    path = tmp_path / "ops.nw"
    save_model(model, path)
    loaded = load_model(path)
    np.testing.assert_allclose(loaded.predict(x, verbose=0), after, rtol=1e-6)
    assert [layer.name for layer in loaded.layers] == names

    graph = to_networkx(model)
    softmax = next(n for n in names if n.startswith("softmax"))
    assert any(edge[1] == softmax for edge in graph.edges)
    assert softmax in static_svg(model)


def test_symbolic_control_flow_and_functions_as_arguments_are_refused():
    x = Input(shape=(3,))
    with pytest.raises(ValueError, match="ops.cond runs eagerly in nodeweave"):
        ops.cond(x, lambda: x, lambda: x)
    with pytest.raises(ValueError, match="ops.convert_to_numpy cannot convert the symbolic tensor"):
        ops.convert_to_numpy(x)
    with pytest.raises(TypeError, match=r"ops.add\(x1, x2\): missing a required argument: 'x2'"):
        ops.add(x)
