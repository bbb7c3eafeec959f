"""The 14 keras.applications architectures, built by Keras with weights=None at
small inputs, their BatchNormalization statistics moved off their initial
values, saved to .keras, load in nodeweave as the same model: outputs within
1e-5 of Keras' (relative to the largest), parameter counts and summary totals
equal. Saved back to .keras by nodeweave, Keras loads the same model again.
The layers two applications define in their own modules (ConvNeXt's
LayerScale, InceptionResNetV2's CustomScaleLayer) are found on both sides
without custom_objects (layers/applications.py)."""

import gc

import keras
import numpy as np
import pytest

from engine import load_model
from tests.keras_format.read_helpers import assert_same_model, perturb, save_keras

A = keras.applications
# name -> (builder, input size: 32, or the application's minimum)
APPLICATIONS = {
    "MobileNet": (A.MobileNet, 32),
    "VGG16": (A.VGG16, 32),
    "ResNet50": (A.ResNet50, 32),
    "ResNet50V2": (A.ResNet50V2, 32),
    "InceptionV3": (A.InceptionV3, 75),
    "Xception": (A.Xception, 71),
    "MobileNetV2": (A.MobileNetV2, 32),
    "MobileNetV3Small": (A.MobileNetV3Small, 32),
    "DenseNet121": (A.DenseNet121, 32),
    "NASNetMobile": (A.NASNetMobile, 32),
    "EfficientNetB0": (A.EfficientNetB0, 32),
    "EfficientNetV2B0": (A.EfficientNetV2B0, 32),
    "ConvNeXtTiny": (A.ConvNeXtTiny, 32),
    "InceptionResNetV2": (A.InceptionResNetV2, 75),
}
# Building, running and saving each one in Keras takes 10 s to a minute on 2 cores.
FAST = {"MobileNet"}


@pytest.mark.parametrize("name", [
    name if name in FAST else pytest.param(name, marks=pytest.mark.slow) for name in APPLICATIONS])
def test_application_goes_from_keras_to_nodeweave_and_back(name, tmp_path):
    build, size = APPLICATIONS[name]
    keras.utils.set_random_seed(0)  # the same weights whichever tests ran before in this process
    keras_model = build(weights=None, input_shape=(size, size, 3))
    perturb(keras_model)
    ours = load_model(save_keras(keras_model, tmp_path, name))
    images = np.random.default_rng(0).uniform(0, 255, (2, size, size, 3)).astype("float32")
    # Two float32 backends (XLA, NumPy's BLAS) round differently through 50 to 160 layers: 1.0e-5 to 1.2e-5 of the largest
    # output, depending on the weights drawn (ResNet50V2, InceptionResNetV2); a weight read into the wrong place
    # moves the outputs by far more, as perturb() sees to.
    assert_same_model(keras_model, ours, images, rtol=2e-5)
    parameters = keras_model.count_params()
    del keras_model  # one model fewer in memory while Keras loads ours back (InceptionResNetV2 holds 220 MB)
    gc.collect()  # a model's layers refer to one another: only the collector frees them
    ours.save(tmp_path / "ours.keras")
    back = keras.saving.load_model(tmp_path / "ours.keras")
    assert back.count_params() == parameters
    expected = ours(images)
    np.testing.assert_allclose(np.asarray(back(images)), expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())
