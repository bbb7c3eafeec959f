"""Graph surgery (graph/surgery.py, issue 25): seconds for each edit of ResNet50 as
Keras builds it (weights=None, 224x224, loaded from Keras' ``to_json()``), the new
model built and checked: a BatchNormalization after every Conv2D, every
BatchNormalization removed, the stem's convolution replaced inside ResNet50 nested
in an outer model, Conv2D-BatchNormalization-relu replaced by a pattern, a
residual branch rewired. Goal: each <= 1 s.
"""

from benchmarks.harness import pin_threads

pin_threads()

import os  # noqa: E402
import sys  # noqa: E402

os.environ.setdefault("KERAS_BACKEND", "jax")

GOAL_SECONDS = 1.0


def edits(model):
    """The edits timed, by name, each ``() -> new model``."""
    from engine import Input, Model
    from graph import insert_after, remove, replace, replace_pattern, rewire
    from layers import Activation, BatchNormalization, Conv2D, Dense

    x = Input(shape=model.inputs[0].shape[1:], name="image")
    outer = Model(x, Dense(2, name="head")(model(x)), name="outer")
    stem = next(layer for layer in model.layers if isinstance(layer, Conv2D))
    adds = [step for step in model.plan.steps if len(step.node.input_tensors) == 2]
    shortcut, branch = adds[-1].node.input_tensors  # the last block's branch dropped
    return {
        "insert_after Conv2D": lambda: insert_after(model, Conv2D, lambda old: BatchNormalization()),
        "remove BatchNormalization": lambda: remove(model, BatchNormalization),
        "replace nested": lambda: replace(outer, f"{model.name}/{stem.name}",
                                          lambda old: Conv2D.from_config(old.get_config())),
        "replace_pattern": lambda: replace_pattern(model, lambda t: Activation("relu")(BatchNormalization()(t)),
                                                   lambda t: Activation("relu")(t)),
        "rewire": lambda: rewire(model, branch, shortcut),
    }


def small_resnet():
    """A stem and two residual blocks built as Keras builds ResNet50's, for the smoke run (no Keras import)."""
    from engine import Input, Model
    from layers import Activation, Add, BatchNormalization, Conv2D, Dense, GlobalAveragePooling2D

    x = Input(shape=(32, 32, 3), name="image")
    h = Activation("relu")(BatchNormalization()(Conv2D(16, 3, padding="same")(x)))
    for _ in range(2):
        y = Activation("relu")(BatchNormalization()(Conv2D(16, 3, padding="same")(h)))
        h = Activation("relu")(Add()([h, BatchNormalization()(Conv2D(16, 3, padding="same")(y))]))
    return Model(x, Dense(10)(GlobalAveragePooling2D()(h)), name="small_resnet")


def keras_application(name):
    import keras

    from engine import model_from_json

    text = getattr(keras.applications, name)(weights=None).to_json()
    keras.backend.clear_session()
    return model_from_json(text)


def main(smoke=False):
    from benchmarks.harness import measure, save

    model = small_resnet() if smoke else keras_application("ResNet50")
    timed = edits(model)
    result = measure(timed, repeats=1 if smoke else 5)
    print(f"{'model':>10} {'layers':>7} {'edit':>26} {'seconds':>8} {'goal s':>7} {'new layers':>11}")
    rows = []
    for name, edit in timed.items():
        seconds = result[name]["median"]
        layers = len(edit().layers)
        print(f"{model.name:>10} {len(model.layers):>7} {name:>26} {seconds:8.3f} {GOAL_SECONDS:7.1f} {layers:>11}")
        rows.append({"model": model.name, "layers": len(model.layers), "edit": name, "seconds": result[name],
                     "goal": GOAL_SECONDS, "new_layers": layers})
    save("surgery", {"rows": rows})
    return rows


if __name__ == "__main__":
    main(smoke="--smoke" in sys.argv)
