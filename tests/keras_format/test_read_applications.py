"""The 14 keras.applications architectures, built by Keras with weights=None at
small inputs, their BatchNormalization statistics moved off their initial
values, saved to .keras, load in nodeweave as the same model: outputs within
1e-5 of Keras' (relative to the largest), parameter counts and summary totals
equal. Saved back to .keras by nodeweave, Keras loads the same model again.
The private layers of two applications are passed as custom_objects on both
sides, as a user would."""

import keras
import numpy as np
import pytest

from engine import Layer, initializers, load_model
from tests.keras_format.read_helpers import assert_same_model, perturb, save_keras


class LayerScale(Layer):
    """ConvNeXt's private layer: multiplies the last axis by a learned vector."""

    def __init__(self, init_values, projection_dim, **kwargs):
        super().__init__(**kwargs)
        self.init_values, self.projection_dim = init_values, projection_dim

    def build(self, input_shape):
        self.gamma = self.add_weight(shape=(self.projection_dim,), name="gamma",
                                     initializer=initializers.Constant(self.init_values))

    def call(self, inputs):
        return inputs * self.gamma.value

    def get_config(self):
        return {**super().get_config(), "init_values": self.init_values, "projection_dim": self.projection_dim}


class CustomScaleLayer(Layer):
    """InceptionResNetV2's private layer: ``inputs[0] + inputs[1] * scale``."""

    def __init__(self, scale, **kwargs):
        super().__init__(**kwargs)
        self.scale = scale

    def call(self, inputs):
        return inputs[0] + inputs[1] * self.scale

    def get_config(self):
        return {**super().get_config(), "scale": self.scale}


A = keras.applications
# Keras' own classes of the two private layers, to load our files back in Keras.
KERAS_PRIVATE_LAYERS = {"LayerScale": keras.src.applications.convnext.LayerScale,
                        "CustomScaleLayer": keras.src.applications.inception_resnet_v2.CustomScaleLayer}
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
    keras_model = build(weights=None, input_shape=(size, size, 3))
    perturb(keras_model)
    ours = load_model(save_keras(keras_model, tmp_path, name),
                      custom_objects={"LayerScale": LayerScale, "CustomScaleLayer": CustomScaleLayer})
    images = np.random.default_rng(0).uniform(0, 255, (2, size, size, 3)).astype("float32")
    assert_same_model(keras_model, ours, images)
    ours.save(tmp_path / "ours.keras")
    back = keras.saving.load_model(tmp_path / "ours.keras", custom_objects=KERAS_PRIVATE_LAYERS)
    assert back.count_params() == keras_model.count_params()
    np.testing.assert_allclose(np.asarray(back(images)), ours(images), rtol=1e-5, atol=1e-5 * np.abs(ours(images)).max())
