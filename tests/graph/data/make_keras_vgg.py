"""Writes keras_vgg.json.gz beside this file: the Keras 3 configs (``model.to_json()``) of
VGG16 and VGG19 (no weights, 32x32 inputs) built one after the other in one session, as
a user would, so their inputs are named ``input_layer`` and ``input_layer_1``:
tests/graph/test_diff.py compares them. Run from the repository's root:

    KERAS_BACKEND=jax python -m tests.graph.data.make_keras_vgg
"""

import gzip
import json
import os

PATH = os.path.join(os.path.dirname(__file__), "keras_vgg.json.gz")


def main():
    import keras

    configs = {name: json.loads(getattr(keras.applications, name)(weights=None, input_shape=(32, 32, 3)).to_json())
               for name in ("VGG16", "VGG19")}
    text = json.dumps({"keras_version": keras.__version__, "configs": configs}, separators=(",", ":"))
    with gzip.GzipFile(PATH, "wb", mtime=0) as file:  # no time stamp: the same configs give the same bytes
        file.write(text.encode("utf-8"))


if __name__ == "__main__":
    main()
