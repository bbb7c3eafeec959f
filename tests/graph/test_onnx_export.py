"""graph.onnx_export: the walk, names, shared weights, the transpose clean-up, errors, Model.export
and ``nodeweave export``; each export checked by onnx.checker and ONNX Runtime against predict."""

import os
import re
import sys

import numpy as np
import pytest

pytest.importorskip("onnxruntime", reason="the ONNX tests need onnx and onnxruntime (the test extra)")

import layers as L  # noqa: E402
from engine import Input, Layer, Model, Sequential  # noqa: E402
from engine.network.ops import BinaryOp, GetItem  # noqa: E402
from graph import OnnxExportError, register_onnx_converter, save_onnx, to_onnx  # noqa: E402
from graph.cli import main  # noqa: E402
from layers import activations  # noqa: E402
from layers._onnx import CONVERTERS  # noqa: E402
from tests.engine.test_saving_catalog import doubled  # noqa: E402
from tests.graph.onnx_check import assert_exports_match, run_onnx  # noqa: E402

RNG = np.random.default_rng(0)


def _data(*shape, dtype="float32"):
    return RNG.normal(size=shape).astype(dtype)


def _nested_and_shared():
    """An outer model calling a nested model twice and a shared Dense twice, and the nested model."""
    x = Input(shape=(4,), name="inner_in")
    inner = Model(x, L.Dense(4, activation="tanh", name="proj")(L.Dense(8, name="hidden")(x)), name="block")
    a, b = Input(shape=(4,), name="left"), Input(shape=(4,), name="right")
    shared = L.Dense(4, name="shared")
    left, right = inner(shared(a)), inner(shared(b))
    out = L.Dense(2, name="scores")(L.Concatenate(name="join")([left, right]))
    return Model([a, b], [out, L.Add(name="total")([left, right])], name="outer"), inner


def test_nested_and_shared_layers_export_once_with_their_paths(tmp_path):
    model, inner = _nested_and_shared()
    proto = assert_exports_match(model, [_data(5, 4), _data(5, 4)])
    names = [node.name for node in proto.graph.node]
    assert "block/hidden/MatMul" in names and "block/hidden/MatMul_1" in names  # inlined twice, under its path
    weight_names = {init.name for init in proto.graph.initializer if init.dims and np.prod(init.dims) > 1}
    assert weight_names == {w.path for w in model.weights}  # each weight stored once
    weight_bytes = sum(w.numpy().nbytes for w in model.weights)
    path = tmp_path / "outer.onnx"
    save_onnx(model, path)
    assert weight_bytes <= os.path.getsize(path) <= 1.01 * weight_bytes + 4096  # graph text: a few kB


def test_inputs_and_outputs_are_named_after_the_model_with_a_dynamic_batch():
    model, _ = _nested_and_shared()
    proto = to_onnx(model)
    assert [i.name for i in proto.graph.input] == ["left", "right"]
    assert [o.name for o in proto.graph.output] == ["scores", "total"]
    for value in list(proto.graph.input) + list(proto.graph.output):
        dims = value.type.tensor_type.shape.dim
        assert dims[0].dim_param == "batch" and dims[1].dim_value in (2, 4)
    got = run_onnx(proto, [_data(7, 4), _data(7, 4)])
    assert [g.shape for g in got] == [(7, 2), (7, 4)]


def test_outputs_that_are_an_input_or_repeat_go_through_identity():
    x = Input(shape=(3,), name="x")
    y = L.Dense(2, name="d")(x)
    model = Model(x, [y, L.Identity(name="same")(x), L.Identity(name="again")(y)])
    proto = assert_exports_match(model, _data(4, 3))
    assert [o.name for o in proto.graph.output] == ["d", "same", "again"]


def test_sequential_and_dict_inputs_export():
    model = Sequential([Input(shape=(3,)), L.Dense(4, activation="relu"), L.Dropout(0.5), L.Dense(2)])
    proto = assert_exports_match(model, _data(4, 3))
    assert [n.op_type for n in proto.graph.node] == ["MatMul", "Add", "Relu", "MatMul", "Add"]  # Dropout: no node
    a, b = Input(shape=(2,), name="a"), Input(shape=(3,), name="b")
    model = Model({"b": b, "a": a}, L.Concatenate()([a, b]))
    assert_exports_match(model, {"a": _data(4, 2), "b": _data(4, 3)})


def _conv_residual(blocks=2):
    x = Input(shape=(8, 8, 3), name="image")
    h = L.Conv2D(4, 3, padding="same", name="stem")(x)
    for i in range(blocks):
        y = L.BatchNormalization()(L.Conv2D(4, 3, padding="same")(h))
        y = L.Conv2D(4, 3, padding="same", activation="relu")(L.ReLU()(y))
        h = L.ReLU(max_value=6.0)(L.Add()([h, y]))
    h = L.PReLU(alpha_initializer="random_normal", shared_axes=[1, 2])(h) * np.arange(1, 5, dtype="float32")
    h = L.Rescaling(0.5, offset=1.0)(L.Concatenate()([h, L.Conv2D(2, 1)(h)]))
    return Model(x, [L.Dense(3)(L.GlobalAveragePooling2D()(h)), L.MaxPooling2D(name="pooled")(h)])


def test_conv_residual_stack_has_transposes_only_at_its_borders():
    model = _conv_residual()
    proto = assert_exports_match(model, _data(2, 8, 8, 3))
    transposes = [n for n in proto.graph.node if n.op_type == "Transpose"]
    # The image in (NHWC to NCHW) and the pooled map out (NCHW to NHWC); Add, Relu, Clip, PRelu and the
    # product by a vector per channel (their constants re-laid out), Concat and Rescaling run channels-first.
    assert len(transposes) == 2
    assert transposes[0].input == ["image"] and transposes[1].output == ["pooled"]


@pytest.mark.parametrize("name", sorted(activations._REGISTRY))
def test_every_activation_string_matches(name):
    x = Input(shape=(6,))
    model = Model(x, L.Dense(5, activation=name)(x))
    data = _data(4, 6) * 3
    assert_exports_match(model, data)


@pytest.mark.parametrize("make", [
    lambda: L.ReLU(negative_slope=0.1, max_value=2.0, threshold=0.5), lambda: L.ReLU(threshold=0.5),
    lambda: L.ReLU(negative_slope=0.2), lambda: L.Softmax(axis=(1, 2)), lambda: L.Activation("log_softmax"),
    lambda: L.PReLU(alpha_initializer="random_normal", shared_axes=[1]), lambda: L.LeakyReLU(0.1), lambda: L.ELU(0.5),
], ids=["relu_all", "relu_threshold", "relu_slope", "softmax_axes", "log_softmax", "prelu_shared", "leaky", "elu"])
def test_activation_layer_options_match(make):
    x = Input(shape=(3, 4))
    assert_exports_match(Model(x, make()(x)), _data(2, 3, 4) * 2)


def test_gelu_uses_the_operator_from_opset_20():
    x = Input(shape=(4,))
    model = Model(x, L.Activation("gelu")(x))
    proto = assert_exports_match(model, _data(3, 4) * 2, opset=20)
    assert [n.op_type for n in proto.graph.node] == ["Gelu"]
    assert proto.opset_import[0].version == 20


@pytest.mark.parametrize("build", [
    lambda x: x % 0.7, lambda x: -x // 0.3, lambda x: 2.0 ** x, lambda x: 1.5 - x, lambda x: x / 2,
    lambda x: (x > 0.1) & (x < 0.5), lambda x: ~(x >= 0), lambda x: abs(x) @ np.ones((6, 2), "float32"),
    lambda x: round(x, 1), lambda x: round(x * 100, -1), lambda x: x[:, ::-1, None, 1:3],
    lambda x: x[..., -1], lambda x: x[:, 1].reshape((-1, 2, 3)), lambda x: x[:, :1].squeeze(),
    lambda x: L.Dot(axes=(1, 2))([x, L.Reshape((3, 4))(x[:, :2])]),
    lambda x: L.Average()([x, x[:, :1]]), lambda x: L.Maximum()([x, -x]), lambda x: L.Subtract()([x, 2 * x]),
], ids=["mod", "floor_divide", "power", "rsub", "divide", "and", "not", "matmul", "round", "round_tens",
        "slices", "ellipsis", "reshape", "squeeze", "dot", "average_broadcast", "maximum", "subtract"])
def test_operator_layers_match(build):
    x = Input(shape=(4, 6))
    assert_exports_match(Model(x, build(x)), _data(3, 4, 6) * 2)


def test_integer_operators_keep_numpy_semantics():
    x = Input(shape=(5,), dtype="int32")
    model = Model(x, [x % 3, x // -2, x + 1.5, L.Embedding(20, 2)(x % 20)])
    assert_exports_match(model, RNG.integers(-20, 20, size=(4, 5)).astype("int32"))


def test_masks_are_not_exported_but_masking_zeros_its_steps():
    x = Input(shape=(4, 3))
    model = Model(x, L.Masking(mask_value=0.0)(x) * 2.0)
    data = _data(2, 4, 3)
    data[0, 1] = 0.0
    assert_exports_match(model, data)


class _Cube(Layer):
    def call(self, x):
        return x * x * x


def test_a_layer_without_a_converter_is_named_with_how_to_register_one():
    x = Input(shape=(3,))
    model = Model(x, _Cube(name="cube")(L.Dense(3)(x)))
    with pytest.raises(OnnxExportError, match=r"Layer 'cube' \(_Cube\) has no ONNX converter.*"
                                              r"graph\.register_onnx_converter\(_Cube, function\)"):
        to_onnx(model)


def test_a_registered_converter_exports_a_user_layer_and_its_subclasses(monkeypatch):
    monkeypatch.setitem(CONVERTERS, _Cube, None)  # so that the table is restored after the test
    register_onnx_converter(_Cube, lambda layer, call: call.op("Pow", [call.input, call.constant(3.0)]))

    class _Cube2(_Cube):
        pass

    x = Input(shape=(3,))
    assert_exports_match(Model(x, _Cube2()(_Cube()(x))), _data(2, 3))


def test_register_onnx_converter_checks_its_arguments():
    with pytest.raises(TypeError, match="expects a layer class"):
        register_onnx_converter("Dense", lambda layer, call: None)
    with pytest.raises(TypeError, match="must be callable"):
        register_onnx_converter(_Cube, "pow")


def test_a_converter_returning_the_wrong_count_is_named(monkeypatch):
    monkeypatch.setitem(CONVERTERS, _Cube, lambda layer, call: [call.input, call.input])
    x = Input(shape=(3,))
    with pytest.raises(OnnxExportError, match=r"converter of layer 'cube'.*expected 1 output name"):
        to_onnx(Model(x, _Cube(name="cube")(x)))


def test_missing_onnx_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)
    x = Input(shape=(3,))
    with pytest.raises(ModuleNotFoundError, match=r'pip install "nodeweave\[onnx\]"'):
        to_onnx(Model(x, L.Dense(2)(x)))


@pytest.mark.parametrize("opset", [17, "18", 10_000])
def test_opset_out_of_range_is_refused(opset):
    x = Input(shape=(3,))
    with pytest.raises(ValueError, match=rf"opset to be an integer from 18 to \d+.*received opset={opset!r}"):
        to_onnx(Model(x, L.Dense(2)(x)), opset=opset)


def test_a_subclassed_model_is_refused():
    class Net(Model):
        def __init__(self):
            super().__init__()
            self.dense = L.Dense(2)

        def call(self, x):
            return self.dense(x)

    with pytest.raises(ValueError, match="subclassed model has no graph"):
        to_onnx(Net())


def test_model_export_writes_onnx_and_refuses_other_formats(tmp_path):
    x = Input(shape=(3,), name="x")
    model = Model(x, L.Dense(2, name="y")(x))
    path = tmp_path / "m.onnx"
    model.export(path)
    import onnx

    loaded = onnx.load(str(path))
    np.testing.assert_allclose(run_onnx(loaded, [np.ones((2, 3), "float32")])[0],
                               model.predict(np.ones((2, 3)), verbose=0), atol=1e-6)
    with pytest.raises(ValueError, match="Unrecognized format='tf_saved_model'.*supports format='onnx'"):
        model.export(tmp_path / "m", format="tf_saved_model")


@pytest.mark.parametrize("suffix", [".nw", ".keras"])
def test_cli_export_writes_onnx(tmp_path, capsys, suffix):
    model, _ = _nested_and_shared()
    source = tmp_path / f"outer{suffix}"
    model.save(source)
    output = tmp_path / "out.onnx"
    assert main(["export", str(source), "-o", str(output), "--opset", "19"]) == 0
    assert capsys.readouterr().out == f"wrote {output}\n"
    import onnx

    proto = onnx.load(str(output))
    assert proto.opset_import[0].version == 19
    data = [_data(3, 4), _data(3, 4)]
    for got, expected in zip(run_onnx(proto, data), model.predict(data, verbose=0)):
        np.testing.assert_allclose(got, expected, atol=1e-5)


def test_cli_export_reports_a_layer_it_cannot_export(tmp_path):
    x = Input(shape=(3,))
    source = tmp_path / "lambda.nw"
    Model(x, L.Lambda(doubled, name="twice")(x)).save(source)
    with pytest.raises(SystemExit, match=r"nodeweave: Cannot export layer 'twice' \(Lambda\)"):
        main(["export", str(source), "-o", str(tmp_path / "out.onnx")])
    with pytest.raises(SystemExit, match=r"received --opset 3"):
        Model(x, L.Dense(2)(x)).save(tmp_path / "dense.nw")
        main(["export", str(tmp_path / "dense.nw"), "--opset", "3", "-o", str(tmp_path / "out.onnx")])


def test_onnx_converter_modules_do_not_import_onnx():
    import layers._onnx as package

    folder = os.path.dirname(package.__file__)
    for name in os.listdir(folder):
        if name.endswith(".py"):
            with open(os.path.join(folder, name)) as source:
                text = source.read()
            assert not re.search(r"^\s*(import onnx|from onnx\b)", text, re.MULTILINE), name
