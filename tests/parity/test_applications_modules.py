"""``nodeweave.applications.<family>`` modules hold the builders Keras' ``keras.applications.<family>`` do."""

import importlib

import pytest

import nodeweave
from tests.layers.oracle import keras

FAMILIES = ["convnext", "densenet", "efficientnet", "efficientnet_v2", "inception_resnet_v2", "inception_v3",
            "mobilenet", "mobilenet_v2", "mobilenet_v3", "nasnet", "resnet", "resnet50", "resnet_v2", "vgg16",
            "vgg19", "xception"]


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_module_has_keras_builders(family):
    theirs = importlib.import_module(f"{keras.__name__}.applications.{family}")  # oracle: Keras on jax
    builders = sorted(name for name in dir(theirs) if name[0].isupper() and callable(getattr(theirs, name)))
    ours = getattr(nodeweave.applications, family)
    assert set(builders) <= set(ours.__all__)  # Keras' mobilenet_v3 module has none: its builders are top-level
    assert ours.__all__ and all(getattr(ours, name) is getattr(nodeweave.applications, name) for name in ours.__all__)


def test_a_family_builder_makes_a_model_that_nests_in_a_sequential():
    base = nodeweave.applications.mobilenet.MobileNet(input_shape=(32, 32, 3), alpha=0.25, include_top=False,
                                                      weights=None)
    model = nodeweave.Sequential([nodeweave.Input(shape=(32, 32, 3)), base,
                                  nodeweave.layers.GlobalAveragePooling2D(), nodeweave.layers.Dense(3)])
    revived = nodeweave.Sequential.from_config(model.get_config())
    assert [layer.name for layer in revived.layers] == [layer.name for layer in model.layers]
    assert revived.output_shape == (None, 3)
