"""ONNX export (graph.onnx_export, issue 27): seconds to write ResNet50 as ONNX
(``to_onnx``, then ``save_onnx`` with the file written), the file's size against
its weights' bytes, and the transposes left by the clean-up pass.

ResNet50 as Keras builds it (weights=None, 224x224), loaded from Keras'
``to_json()``. Goals: ``save_onnx`` <= 2 s, the file within 1% of the weights'
bytes, and one transpose (the image in; the head is Dense, so none out).
"""

from benchmarks.harness import pin_threads

pin_threads()

import os  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402

os.environ.setdefault("KERAS_BACKEND", "jax")

GOAL_SECONDS = 2.0


def keras_application(name):
    import keras

    from engine import model_from_json

    text = getattr(keras.applications, name)(weights=None).to_json()
    keras.backend.clear_session()
    return model_from_json(text)


def small_resnet():
    """Two residual blocks of 3x3 convolutions, for the smoke run (no Keras import)."""
    from engine import Input, Model
    from layers import Add, BatchNormalization, Conv2D, Dense, GlobalAveragePooling2D, ReLU

    x = Input(shape=(32, 32, 3), name="image")
    h = Conv2D(16, 3, padding="same")(x)
    for _ in range(2):
        y = ReLU()(BatchNormalization()(Conv2D(16, 3, padding="same")(h)))
        h = ReLU()(Add()([h, BatchNormalization()(Conv2D(16, 3, padding="same")(y))]))
    return Model(x, Dense(10)(GlobalAveragePooling2D()(h)), name="small_resnet")


def main(smoke=False):
    from benchmarks.harness import measure, save
    from graph.onnx_export import save_onnx, to_onnx

    model = small_resnet() if smoke else keras_application("ResNet50")
    path = os.path.join(tempfile.mkdtemp(), "model.onnx")
    result = measure({"to_onnx": lambda: to_onnx(model), "save_onnx": lambda: save_onnx(model, path)},
                     repeats=1 if smoke else 5)
    weight_bytes = sum(w.numpy().nbytes for w in model.weights)
    file_bytes = os.path.getsize(path)
    proto = to_onnx(model)
    transposes = sum(node.op_type == "Transpose" for node in proto.graph.node)
    seconds = result["save_onnx"]["median"]
    print(f"{'model':>14} {'layers':>7} {'nodes':>6} {'to_onnx s':>10} {'save_onnx s':>12} {'goal s':>7} "
          f"{'file / weights':>15} {'transposes':>11}")
    print(f"{model.name:>14} {len(model.layers):>7} {len(proto.graph.node):>6} {result['to_onnx']['median']:10.2f} "
          f"{seconds:12.2f} {GOAL_SECONDS:7.1f} {file_bytes / weight_bytes:15.4f} {transposes:>11}")
    row = {"model": model.name, "layers": len(model.layers), "nodes": len(proto.graph.node),
           "to_onnx_seconds": result["to_onnx"], "save_onnx_seconds": result["save_onnx"], "goal": GOAL_SECONDS,
           "file_bytes": file_bytes, "weight_bytes": weight_bytes, "transposes": transposes}
    save("onnx_export", {"rows": [row]})
    return row


if __name__ == "__main__":
    main(smoke="--smoke" in sys.argv)
