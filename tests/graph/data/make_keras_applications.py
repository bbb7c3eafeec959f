"""Writes keras_applications.json.gz beside this file: the Keras 3 configs (``model.to_json()``)
of the 14 keras.applications architectures at the smallest input each accepts, which
the graph tests build in nodeweave (``stored_json``). Building them in Keras takes
minutes; reading the configs, a second. Run from the repository's root:

    KERAS_BACKEND=jax python -m tests.graph.data.make_keras_applications
"""

import functools
import gzip
import json
import os

SIZES = {
    "MobileNet": 32, "VGG16": 32, "ResNet50": 32, "ResNet50V2": 32, "InceptionV3": 75, "Xception": 71,
    "MobileNetV2": 32, "MobileNetV3Small": 32, "DenseNet121": 32, "NASNetMobile": 32, "EfficientNetB0": 32,
    "EfficientNetV2B0": 32, "ConvNeXtTiny": 32, "InceptionResNetV2": 75,
}
PATH = os.path.join(os.path.dirname(__file__), "keras_applications.json.gz")


@functools.cache
def _stored():
    with gzip.open(PATH, "rt", encoding="utf-8") as file:
        return json.load(file)["configs"]


def stored_json(name):
    """``keras.applications.<name>(weights=None)``'s ``to_json()`` at ``SIZES[name]``, as stored (no Keras run)."""
    return json.dumps(_stored()[name])


def main():
    import keras

    configs = {}
    for name, size in SIZES.items():
        model = getattr(keras.applications, name)(weights=None, input_shape=(size, size, 3))
        configs[name] = json.loads(model.to_json())
        print(name, flush=True)
    text = json.dumps({"keras_version": keras.__version__, "configs": configs}, separators=(",", ":"))
    with gzip.GzipFile(PATH, "wb", mtime=0) as file:  # no time stamp: the same configs give the same bytes
        file.write(text.encode("utf-8"))


if __name__ == "__main__":
    main()
