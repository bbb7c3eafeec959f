"""The ``nodeweave`` package: Keras 3's namespace mapped onto engine, layers and graph
(nodeweave/). A Keras-3-style script runs through ``import nodeweave as keras``, every
name the package exports exists in Keras under the same path, and every name README
promises is there."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import engine
import engine.keras_ops
import engine.keras_random
import graph
import layers as catalog
import nodeweave as nw
from engine.utils import image as image_utils

keras = pytest.importorskip("keras")

README = Path(__file__).resolve().parents[1] / "README.md"
SUBMODULES = ["activations", "applications", "backend", "callbacks", "constraints", "initializers", "layers", "losses",
              "metrics", "models", "ops", "optimizers", "optimizers.schedules", "preprocessing.image",
              "preprocessing.sequence", "random", "regularizers", "saving", "utils"]


def _module(root, path):
    for part in path.split("."):
        root = getattr(root, part)
    return root


def test_a_keras_3_script_runs_unchanged(tmp_path):
    keras_ = nw  # the script below is Keras 3 code with `import nodeweave as keras`
    keras_.utils.set_random_seed(0)
    x = np.random.default_rng(0).normal(size=(64, 8)).astype(keras_.backend.floatx())
    y = keras_.utils.to_categorical((x[:, 0] > 0).astype("int32"), num_classes=2)
    inputs = keras_.Input(shape=(8,), name="features")
    hidden = keras_.layers.Dense(16, activation="relu")(inputs)
    hidden = keras_.layers.Dropout(0.1)(hidden)
    outputs = keras_.layers.Dense(2, activation="softmax")(hidden)
    model = keras_.Model(inputs=inputs, outputs=outputs, name="classifier")
    model.compile(optimizer=keras_.optimizers.Adam(learning_rate=1e-2),
                  loss=keras_.losses.CategoricalCrossentropy(), metrics=[keras_.metrics.CategoricalAccuracy()])
    history = model.fit(x, y, batch_size=16, epochs=5, validation_split=0.25, verbose=0,
                        callbacks=[keras_.callbacks.EarlyStopping(monitor="val_loss", patience=3)])
    loss, accuracy = model.evaluate(x, y, verbose=0)
    for path in (tmp_path / "model.keras", tmp_path / "model.nw"):
        keras_.saving.save_model(model, path)
        restored = keras_.models.load_model(path)
        np.testing.assert_allclose(restored.predict(x, verbose=0), model.predict(x, verbose=0), atol=1e-6)

    assert history.history["loss"][-1] < history.history["loss"][0]
    assert set(history.history) == {"loss", "categorical_accuracy", "val_loss", "val_categorical_accuracy"}
    assert accuracy > 0.8 and loss < history.history["loss"][0]
    assert y.shape == (64, 2) and x.dtype == np.float32


def test_a_keras_3_custom_layer_with_ops_and_random_trains(tmp_path):
    keras_ = nw

    class NoisyDense(keras_.layers.Layer):
        def __init__(self, units, **kwargs):
            super().__init__(**kwargs)
            self.units, self.seed_generator = units, keras_.random.SeedGenerator(1337)

        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="glorot_uniform")

        def call(self, x, training=False):
            if training:
                x = x + 0.01 * keras_.random.normal(keras_.ops.shape(x), seed=self.seed_generator)
            return keras_.ops.tanh(keras_.ops.matmul(x, self.w))

    inputs = keras_.Input(shape=(4,))
    outputs = keras_.ops.softmax(NoisyDense(3)(inputs))  # an op on a KerasTensor adds a layer to the graph
    model = keras_.Model(inputs, outputs)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    x = np.random.default_rng(0).normal(size=(32, 4)).astype("float32")
    y = (x[:, 0] > 0).astype("int32")
    losses = model.fit(x, y, epochs=10, batch_size=8, verbose=0).history["loss"]
    assert losses[-1] < losses[0]
    np.testing.assert_allclose(model.predict(x, verbose=0).sum(axis=1), 1.0, rtol=1e-5)


def test_the_namespace_holds_nodeweaves_own_objects():
    assert nw.Model is engine.Model and nw.layers.Dense is catalog.Dense and nw.layers.MaxPool2D is catalog.MaxPooling2D
    assert nw.utils.plot_model is graph.plot_model and nw.models.clone_model is engine.clone_model
    assert nw.optimizers.schedules.ExponentialDecay is engine.training.optimizers.schedules.ExponentialDecay
    assert nw.preprocessing.sequence.pad_sequences is engine.utils.pad_sequences
    assert nw.ops.matmul is engine.keras_ops.matmul and nw.random.SeedGenerator is engine.keras_random.SeedGenerator
    from nodeweave.optimizers.schedules import CosineDecay  # importable by path, as Keras scripts do
    from nodeweave.preprocessing.sequence import pad_sequences
    assert CosineDecay is engine.training.optimizers.schedules.CosineDecay and pad_sequences is nw.utils.pad_sequences


@pytest.mark.parametrize("path", SUBMODULES)
def test_every_exported_name_is_keras_name_at_the_same_path(path):
    ours, theirs = _module(nw, path), _module(keras, path)
    missing = [name for name in ours.__all__ if not hasattr(theirs, name)]
    assert not missing, f"nodeweave.{path} exports names keras.{path} does not have: {missing}"
    assert all(hasattr(ours, name) for name in ours.__all__)


def test_top_level_names_are_keras_names():
    assert [name for name in nw.__all__ if not hasattr(keras, name)] == []


def test_backend_answers_as_keras_does():
    assert (nw.backend.floatx(), nw.backend.epsilon(), nw.backend.image_data_format()) == (
        keras.backend.floatx(), keras.backend.epsilon(), keras.backend.image_data_format())
    assert nw.backend.backend() == "numpy"
    assert nw.backend.is_keras_tensor(nw.Input(shape=(2,))) and not nw.backend.is_keras_tensor(np.ones(2))


def _readme_promises():
    """{"layers": ["Dense", ...], ...} from README's table of the namespace."""
    rows = re.findall(r"^\| `nodeweave(?:\.([\w.]+))?` \| (.+) \|$", README.read_text(), flags=re.MULTILINE)
    return {path or "": re.findall(r"`([A-Za-z_]\w*)`", names) for path, names in rows}


def test_readme_lists_the_namespace_and_every_name_it_promises_is_there():
    promises = _readme_promises()
    assert set(SUBMODULES) | {""} <= set(promises)
    for path, names in promises.items():
        module = _module(nw, path) if path else nw
        assert names and [name for name in names if not hasattr(module, name)] == [], path


def test_importing_nodeweave_loads_no_heavy_optional_package():
    code = "import sys, nodeweave; print(sorted({m.split('.')[0] for m in sys.modules}))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            env={**os.environ, "PYTHONPATH": str(README.parent)}).stdout
    heavy = [name for name in ("onnx", "onnxruntime", "dask", "distributed", "zarr", "matplotlib", "igraph", "PIL",
                               "keras", "jax", "sklearn") if f"'{name}'" in loaded]
    assert heavy == []


@pytest.mark.parametrize("shape, data_format", [((5, 7, 3), "channels_last"), ((4, 5, 7), "channels_first"),
                                                ((5, 7, 1), "channels_last")])
def test_images_to_arrays_and_back_as_keras(shape, data_format):
    x = np.random.default_rng(1).uniform(-3, 9, size=shape)
    ours = nw.utils.array_to_img(x, data_format=data_format)
    theirs = keras.utils.array_to_img(x, data_format=data_format)
    assert ours.mode == theirs.mode and ours.size == theirs.size
    ours_array = nw.utils.img_to_array(ours, data_format=data_format)
    np.testing.assert_array_equal(ours_array, keras.utils.img_to_array(theirs, data_format=data_format))
    assert ours_array.dtype == np.float32 and ours_array.shape == shape


def test_image_files_round_trip_through_load_img_and_save_img(tmp_path):
    x = np.random.default_rng(2).integers(0, 256, size=(6, 4, 3)).astype("float32")
    nw.utils.save_img(tmp_path / "x.png", x, scale=False)
    np.testing.assert_array_equal(nw.utils.img_to_array(nw.utils.load_img(tmp_path / "x.png")), x)
    small = nw.utils.load_img(tmp_path / "x.png", color_mode="grayscale", target_size=(3, 2))
    assert small.mode == "L" and nw.utils.img_to_array(small).shape == (3, 2, 1)


def test_image_errors_name_what_was_received():
    with pytest.raises(ValueError, match=r"single image of rank 3, received an array of shape \(2, 5, 5, 3\)"):
        nw.utils.array_to_img(np.zeros((2, 5, 5, 3)))
    with pytest.raises(ValueError, match=r"1, 3 or 4 channels, received an image of shape \(5, 5, 2\)"):
        nw.utils.array_to_img(np.zeros((5, 5, 2)))
    with pytest.raises(ValueError, match="data_format must be one of .* received 'channels_middle'"):
        nw.utils.img_to_array(np.zeros((2, 2)), data_format="channels_middle")
    with pytest.raises(ValueError, match="color_mode must be one of .* received 'cmyk'"):
        image_utils.load_img("unused.png", color_mode="cmyk")
