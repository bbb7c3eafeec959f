"""Damaged and hostile Keras 3 files: each raises one ModelFormatError that
says what is wrong, before anything large is read or allocated."""

import io
import json
import zipfile

import h5py
import keras
import numpy as np
import pytest
from keras import layers

from engine import LoadLimits, ModelFormatError, load_model, model_from_json


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A small Keras model's archive: {member name: bytes}."""
    x = keras.Input((4,), name="x")
    model = keras.Model(x, layers.Dense(2, name="out")(layers.Dense(3, name="hidden")(x)))
    path = tmp_path_factory.mktemp("keras") / "small.keras"
    model.save(path)
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def write(tmp_path, members, compression=zipfile.ZIP_STORED):
    path = tmp_path / "hostile.keras"
    with zipfile.ZipFile(path, "w", compression) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return path


def edited_config(saved, edit):
    config = json.loads(saved["config.json"])
    edit(config)
    return {**saved, "config.json": json.dumps(config)}


def edited_weights(saved, edit):
    buffer = io.BytesIO(saved["model.weights.h5"])
    with h5py.File(buffer, "a") as file:
        edit(file)
    return {**saved, "model.weights.h5": buffer.getvalue()}


def layer_entry(config, name):
    return next(entry for entry in config["config"]["layers"] if entry["name"] == name)


def test_the_untouched_file_loads(saved, tmp_path):
    model = load_model(write(tmp_path, saved))
    assert model.count_params() == 4 * 3 + 3 + 3 * 2 + 2


def test_truncated_weights_file(saved, tmp_path):
    members = {**saved, "model.weights.h5": saved["model.weights.h5"][: len(saved["model.weights.h5"]) // 2]}
    with pytest.raises(ModelFormatError, match="weights file of .* cannot be read"):
        load_model(write(tmp_path, members))


def test_dataset_declaring_a_huge_shape_is_refused_before_it_is_read(saved, tmp_path):
    def huge(file):
        del file["layers/dense/vars/0"]
        file.create_dataset("layers/dense/vars/0", shape=(2**40, 3), dtype="float32")  # never written: a few bytes

    members = edited_weights(saved, huge)
    assert len(members["model.weights.h5"]) < 2**20
    with pytest.raises(ModelFormatError, match=r"has shape \(1099511627776, 3\), but it fills weight .* \(4, 3\)"):
        load_model(write(tmp_path, members))


def _replace(file, path, **dataset_options):
    """The weight at ``path`` rewritten with its own values but stored as ``dataset_options`` say."""
    values = file[path][()]
    del file[path]
    file.create_dataset(path, data=values, **dataset_options)


def _external_storage(tmp_path):
    secret = tmp_path / "secret.bin"
    secret.write_bytes(np.full(2, 7.0, "float32").tobytes())
    return lambda file: (file.__delitem__("layers/dense_1/vars/1"),
                         file.create_dataset("layers/dense_1/vars/1", shape=(2,), dtype="float32",
                                             external=[(str(secret), 0, 8)]))


def _virtual(file):
    layout = h5py.VirtualLayout(shape=(2,), dtype="float32")
    layout[:] = h5py.VirtualSource("other.h5", "data", shape=(2,))
    del file["layers/dense_1/vars/1"]
    file.create_virtual_dataset("layers/dense_1/vars/1", layout, fillvalue=-1)


def _soft_link(file):
    file.move("layers/dense_1/vars/1", "elsewhere")
    file["layers/dense_1/vars/1"] = h5py.SoftLink("/elsewhere")


def _external_link(file, tmp_path):
    with h5py.File(tmp_path / "other.h5", "w") as other:
        other["kernel"] = file["layers/dense_1/vars/0"][()]
    del file["layers/dense_1/vars/0"]
    file["layers/dense_1/vars/0"] = h5py.ExternalLink(str(tmp_path / "other.h5"), "/kernel")


@pytest.mark.parametrize("storage, problem", [
    ("external", "stored in another file"),  # any file on this machine read into the weights
    ("gzip_chunks", "stored in chunks"),  # a chunk inflating to gigabytes for a few values
    ("virtual", "a virtual dataset"),
    ("soft_link", "is a soft link"),
    # HDF5 keeps an external link only in a group of link messages, which Keras never writes
    ("external_link", "'layers/dense_1/vars' is a group of link messages"),
])
def test_weights_not_stored_as_keras_stores_them_are_refused_before_they_are_read(saved, tmp_path, storage,
                                                                                   problem):
    edits = {
        "external": _external_storage(tmp_path),
        "gzip_chunks": lambda file: _replace(file, "layers/dense_1/vars/1", chunks=(1,), maxshape=(None,),
                                             compression="gzip"),
        "virtual": _virtual,
        "soft_link": _soft_link,
        "external_link": lambda file: _external_link(file, tmp_path),
    }
    with pytest.raises(ModelFormatError, match=problem):
        load_model(write(tmp_path, edited_weights(saved, edits[storage])))


def test_missing_and_extra_weights(saved, tmp_path):
    def drop(file):
        del file["layers/dense_1/vars/1"]

    with pytest.raises(ModelFormatError, match="has no weight 'layers/dense_1/vars/1'"):
        load_model(write(tmp_path, edited_weights(saved, drop)))

    def add(file):
        file.create_dataset("layers/dense_1/vars/2", data=np.zeros(2, "float32"))

    with pytest.raises(ModelFormatError, match="holds 3 weights in 'layers/dense_1/vars' but the layer there has 2"):
        load_model(write(tmp_path, edited_weights(saved, add)))


def test_dataset_of_strings_is_refused(saved, tmp_path):
    def strings(file):
        del file["layers/dense/vars/1"]
        file.create_dataset("layers/dense/vars/1", data=np.array([b"a", b"b", b"c"]))

    with pytest.raises(ModelFormatError, match="has dtype string of 1 bytes; weights are plain numbers"):
        load_model(write(tmp_path, edited_weights(saved, strings)))


def test_config_referring_to_a_missing_layer(saved, tmp_path):
    def ghost(config):
        layer_entry(config, "out")["inbound_nodes"][0]["args"][0]["config"]["keras_history"] = ["ghost", 0, 0]

    with pytest.raises(ModelFormatError, match=r"layer 'out' call 0 needs tensors \[\['ghost', 0, 0\]\]"):
        load_model(write(tmp_path, edited_config(saved, ghost)))

    def output(config):
        config["config"]["output_layers"] = [["ghost", 0, 0]]

    with pytest.raises(ModelFormatError, match=r"\['ghost', 0, 0\] refers to no tensor"):
        load_model(write(tmp_path, edited_config(saved, output)))


def test_config_declaring_more_weights_than_the_file_holds(saved, tmp_path):
    def widen(config):
        layer_entry(config, "hidden")["config"]["units"] = 10**9

    with pytest.raises(ModelFormatError, match="more weights than the file holds"):
        load_model(write(tmp_path, edited_config(saved, widen)))


def test_compression_bomb_in_the_config(saved, tmp_path):
    config = json.loads(saved["config.json"])
    config["padding"] = " " * 50_000_000
    members = {**saved, "config.json": json.dumps(config)}
    with pytest.raises(ModelFormatError, match="inflates .* times"):
        load_model(write(tmp_path, members, zipfile.ZIP_DEFLATED))
    with pytest.raises(ModelFormatError, match="more than the 1,000"):
        load_model(write(tmp_path, saved), limits=LoadLimits(max_config_bytes=1000))


def test_unexpected_member(saved, tmp_path):
    with pytest.raises(ModelFormatError, match="unexpected member 'run.py'"):
        load_model(write(tmp_path, {**saved, "run.py": b"print('hi')"}))


def test_unknown_class_is_one_error_saying_how_to_pass_it(saved, tmp_path):
    def custom(config):
        entry = layer_entry(config, "hidden")
        entry.update(module="my_package.layers", class_name="Scale", registered_name="my_package>Scale")

    with pytest.raises(ModelFormatError) as caught:
        load_model(write(tmp_path, edited_config(saved, custom)))
    message = str(caught.value)
    assert "'hidden'" in message and "'Scale'" in message
    assert "custom_objects={'Scale': Scale}" in message and "register_serializable" in message


def test_keras_layer_nodeweave_lacks_is_named(saved, tmp_path):
    def swap(config):
        layer_entry(config, "hidden")["class_name"] = "EinsumDense"

    with pytest.raises(ModelFormatError, match="the Keras layer 'EinsumDense' .* has no nodeweave equivalent"):
        load_model(write(tmp_path, edited_config(saved, swap)))


def test_keras_op_nodeweave_lacks_is_named():
    x = keras.Input((3,))
    text = keras.Model(x, keras.ops.cast(x, "float16")).to_json()
    with pytest.raises(ModelFormatError, match="the Keras op 'Cast' .* has no nodeweave equivalent"):
        model_from_json(text)


def test_initializer_argument_we_cannot_honour(saved, tmp_path):
    def axes(config):
        layer_entry(config, "hidden")["config"]["kernel_initializer"]["config"]["input_axes"] = [0]

    with pytest.raises(ModelFormatError, match=r"GlorotUniform .* has input_axes=\[0\]; .* only the default"):
        load_model(write(tmp_path, edited_config(saved, axes)))


def double(tensor):
    return tensor * 2.0


def test_lambda_layers_are_refused_in_safe_mode():
    x = keras.Input((3,))
    with_lambda = keras.Model(x, layers.Lambda(lambda t: t * 2.0)(x)).to_json()
    with pytest.raises(ModelFormatError, match="lambda as bytecode in argument 'function' of layer 'lambda.*' \\(Lambda\\), which nodeweave never"):
        model_from_json(with_lambda)
    with pytest.raises(ModelFormatError, match="lambda as bytecode"):
        model_from_json(with_lambda, safe_mode=False)
    with_function = keras.Model(x, layers.Lambda(double)(x)).to_json()
    with pytest.raises(ModelFormatError, match="safe mode loads no code named by a file"):
        model_from_json(with_function)
    ones = np.ones((1, 3), "float32")
    np.testing.assert_array_equal(model_from_json(with_function, custom_objects={"double": double})(ones), 2 * ones)


def test_config_nesting_too_deep():
    value = []
    for _ in range(300):
        value = [value]
    entry = {"module": "keras.layers", "class_name": "Dense", "registered_name": None,
             "config": {"name": "d", "units": 2, "deep": value}}
    with pytest.raises(ModelFormatError, match="nests deeper than"):
        model_from_json(json.dumps(entry))


def test_a_compile_config_we_cannot_apply_says_to_load_uncompiled(saved, tmp_path):
    def metric_argument_we_lack(config):
        config["compile_config"] = {"optimizer": "adam", "loss": "mse", "loss_weights": None, "weighted_metrics": None,
                                    "metrics": [{"module": "keras.metrics", "class_name": "MeanAbsoluteError",
                                                 "config": {"name": "mae", "dtype": "float32", "unknown": 1},
                                                 "registered_name": None}]}

    path = write(tmp_path, edited_config(saved, metric_argument_we_lack))
    with pytest.raises(ModelFormatError, match=r"compile_config .* cannot be applied: .*unknown.* compile=False"):
        load_model(path)
    assert load_model(path, compile=False).count_params() == 4 * 3 + 3 + 3 * 2 + 2


def _identity_chain(depth):
    from engine import Input, Model
    from layers import Dense, Identity

    x = Input((4,))
    h = Dense(2)(x)
    for _ in range(depth):
        h = Identity()(h)
    return Model(x, h)


@pytest.mark.parametrize("depth", [10, 2000])
def test_weight_paths_scan_the_layers_once_per_model_whatever_their_number(tmp_path, monkeypatch, depth):
    """Looking each config entry's layer up by ``get_layer`` (a copy and scan of ``model.layers``) made
    loading quadratic in the layers: 32,000 identity layers took 197 s."""
    from engine.network.functional import Functional
    from engine.files.keras_format.weights_h5 import keras_variable_paths

    model = _identity_chain(depth)
    model.save(tmp_path / "chain.keras")
    with zipfile.ZipFile(tmp_path / "chain.keras") as archive:
        config = json.loads(archive.read("config.json"))
    scans = []
    listed = Functional.layers.fget
    monkeypatch.setattr(Functional, "layers", property(lambda self: scans.append(self) or listed(self)))
    paths = keras_variable_paths(model, config)
    assert sorted(paths) == ["layers/dense/vars/0", "layers/dense/vars/1"]
    assert len(scans) == 1


@pytest.fixture(scope="module")
def compiled_saved(tmp_path_factory):
    """A small Keras model compiled with Adam and fitted one step: {member name: bytes}."""
    x = keras.Input((4,), name="x")
    model = keras.Model(x, layers.Dense(2, name="out")(layers.Dense(3, name="hidden")(x)))
    model.compile(optimizer="adam", loss="mse")
    model.fit(np.ones((2, 4)), np.ones((2, 2)), verbose=0)
    path = tmp_path_factory.mktemp("keras") / "compiled.keras"
    model.save(path)
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def test_a_weight_of_another_kind_of_number_is_refused(compiled_saved, tmp_path):
    """An integer iteration count stored as float64 1e300 read as -2**63, and the next fit made every weight NaN."""
    def float_iterations(file):
        assert file["optimizer/vars/0"].dtype.kind == "i"
        del file["optimizer/vars/0"]
        file["optimizer/vars/0"] = np.float64(1e300)

    members = edited_weights(compiled_saved, float_iterations)
    message = r"Weight 'optimizer/vars/0' in '.*hostile.keras' has dtype float64, but it fills .* dtype int64: a value "
    with pytest.raises(ModelFormatError, match=message):
        load_model(write(tmp_path, members))
    model = load_model(write(tmp_path, compiled_saved))
    weights = tmp_path / "hostile.weights.h5"
    weights.write_bytes(members["model.weights.h5"])
    with pytest.raises(ModelFormatError, match=message.replace("keras", "weights.h5")):
        model.load_weights(weights)
    assert model.optimizer.iterations == 1

    def integer_kernel(file):
        del file["layers/dense/vars/0"]
        file["layers/dense/vars/0"] = np.ones((4, 3), "int32")

    with pytest.raises(ModelFormatError, match=r"'layers/dense/vars/0' .* has dtype int32, but .* dtype float32"):
        load_model(write(tmp_path, edited_weights(compiled_saved, integer_kernel)))
