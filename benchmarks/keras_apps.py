"""keras.applications side by side with Keras 3 (jax backend), issue 15.

- Inference at 224x224 of ResNet50 and MobileNetV2, batch 1 and 16: nodeweave's
  ``model(x)`` (the model loaded from Keras' own ``.keras`` file) against Keras'
  eager ``model(x)`` (waited for: jax computes asynchronously) and its compiled
  ``predict_on_batch``. Goals: at most 1.0x
  Keras' eager call at batch 16 and 1.5x at batch 1.
- Building and loading each of the 14 architectures (``weights=None``, default
  input size): Keras builds with ``keras.applications``, nodeweave from Keras'
  ``model.to_json()``; each loads its own file (``.keras``, ``.nw``), and
  nodeweave the ``.keras`` too (ConvNeXt's and InceptionResNetV2's private layers
  ship in layers/applications.py); and a 12,000-layer Dense chain, built in Python
  and loaded from its ``.nw``. Goals: nodeweave builds faster than Keras, and
  loads a ``.nw`` in at most 1.5x its build.
- Loading a ``.keras`` of 20,000 Identity layers against building it: the
  weight paths are found in one pass over each model's layers (issue 28: a
  lookup per layer made it quadratic, 37 s).

Threads are NOT pinned here, unlike the other benchmarks: each library runs at
its defaults, which is what users get (nodeweave and XLA use every core).

A smoke run (``--smoke``, tests/benchmarks) checks that every row is measured and
written, on small inputs and with Keras on its NumPy backend, which builds an
application without compiling a kernel per weight shape.
"""

import gc
import os
import sys
import tempfile

import numpy as np

os.environ["KERAS_BACKEND"] = "numpy" if "--smoke" in sys.argv else "jax"

ARCHITECTURES = ["VGG16", "ResNet50", "ResNet50V2", "InceptionV3", "Xception", "MobileNet", "MobileNetV2",
                 "MobileNetV3Small", "DenseNet121", "NASNetMobile", "EfficientNetB0", "EfficientNetV2B0",
                 "ConvNeXtTiny", "InceptionResNetV2"]
INFERENCE = ["ResNet50", "MobileNetV2"]
GOALS = {1: 1.5, 16: 1.0}


def keras_application(name, size=None):
    import keras

    shape = None if size is None else (size, size, 3)
    return getattr(keras.applications, name)(weights=None, input_shape=shape)


def finished(model):
    """``model`` once jax has computed its weights: jax dispatches work asynchronously,
    so without this a Keras contender's work would run into the next one's timing."""
    import keras

    if keras.backend.backend() == "jax":
        import jax

        jax.block_until_ready([variable.value for variable in model.weights])
    return model


def inference_rows(folder, smoke):
    from benchmarks.harness import measure
    from engine import load_model

    size = 32 if smoke else 224
    rows = []
    print(f"{'model':>12} {'batch':>5} {'nodeweave ms':>13} {'keras eager ms':>15} {'keras compiled ms':>18} "
          f"{'/ eager':>8} {'goal':>5}")
    for name in INFERENCE[1:] if smoke else INFERENCE:
        theirs = keras_application(name, size)
        path = os.path.join(folder, f"{name}.keras")
        theirs.save(path)
        ours = load_model(path)
        for batch in (1,) if smoke else (1, 16):
            x = np.random.default_rng(0).uniform(-1, 1, (batch, size, size, 3)).astype("float32")
            difference = float(np.max(np.abs(ours(x) - np.asarray(theirs(x)))))
            result = measure({"nodeweave": lambda: ours(x), "keras_eager": lambda: np.asarray(theirs(x)),
                              "keras_compiled": lambda: theirs.predict_on_batch(x)},
                             repeats=1 if smoke else (9 if batch == 1 else 5))
            ms = {k: v["median"] * 1e3 for k, v in result.items()}
            ratio = ms["nodeweave"] / ms["keras_eager"]
            print(f"{name:>12} {batch:>5} {ms['nodeweave']:13.1f} {ms['keras_eager']:15.1f} "
                  f"{ms['keras_compiled']:18.1f} {ratio:8.2f} {GOALS[batch]:5.1f}", flush=True)
            rows.append({"case": f"{name} inference batch {batch}", "seconds": result, "goal": GOALS[batch],
                         "ratios": {"to_keras_eager": ratio,
                                    "to_keras_compiled": ms["nodeweave"] / ms["keras_compiled"]},
                         "max_abs_difference": difference})
    return rows


def build_and_load_rows(folder, smoke):
    import keras

    from benchmarks.harness import measure
    from engine import load_model, model_from_json

    rows = []
    print(f"\n{'model':>17} {'keras build s':>14} {'nw build s':>11} {'nw / keras':>11} {'nw load .nw s':>14} "
          f"{'load / build':>13} {'keras load s':>13} {'nw load .keras s':>17}")
    for name in ["MobileNet"] if smoke else ARCHITECTURES:
        size = 32 if smoke else None
        theirs = keras_application(name, size)
        text = theirs.to_json()
        keras_path, ours_path = os.path.join(folder, f"{name}.keras"), os.path.join(folder, f"{name}.nw")
        theirs.save(keras_path)
        model_from_json(text).save(ours_path)
        del theirs
        gc.collect()
        result = measure({
            "keras_build": lambda: finished(keras_application(name, size)),
            "nodeweave_build": lambda: model_from_json(text),
            "nodeweave_load_nw": lambda: load_model(ours_path),
            "keras_load_keras": lambda: finished(keras.saving.load_model(keras_path)),
            "nodeweave_load_keras": lambda: load_model(keras_path),
        }, repeats=1 if smoke else 3, warmup=0 if smoke else 1)
        s = {k: v["median"] for k, v in result.items()}
        build_ratio, load_ratio = s["nodeweave_build"] / s["keras_build"], s["nodeweave_load_nw"] / s["nodeweave_build"]
        print(f"{name:>17} {s['keras_build']:14.2f} {s['nodeweave_build']:11.2f} {build_ratio:11.2f} "
              f"{s['nodeweave_load_nw']:14.2f} {load_ratio:13.2f} {s['keras_load_keras']:13.2f} "
              f"{s['nodeweave_load_keras']:17.2f}", flush=True)
        rows.append({"case": f"{name} build and load", "seconds": result,
                     "ratios": {"build_to_keras_build": build_ratio, "load_nw_to_build": load_ratio}})
        keras.backend.clear_session()
        gc.collect()
    return rows


def dense_chain(depth):
    from engine import Input, Model
    from layers import Dense

    x = Input((8,))
    h = x
    for _ in range(depth):
        h = Dense(8)(h)
    return Model(x, h)


def deep_chain_row(folder, smoke):
    """A deep model with tiny weights, where loading costs what rebuilding the graph costs:
    a chain of Dense(8) layers built in Python against the same chain loaded from its .nw."""
    from benchmarks.harness import measure
    from engine import load_model

    depth = 500 if smoke else 12_000
    path = os.path.join(folder, "chain.nw")
    dense_chain(depth).save(path)
    result = measure({"nodeweave_build": lambda: dense_chain(depth), "nodeweave_load_nw": lambda: load_model(path)},
                     repeats=1 if smoke else 5)
    s = {k: v["median"] for k, v in result.items()}
    ratio = s["nodeweave_load_nw"] / s["nodeweave_build"]
    print(f"{f'Dense chain {depth:,}':>17} {'':>14} {s['nodeweave_build']:11.2f} {'':>11} "
          f"{s['nodeweave_load_nw']:14.2f} {ratio:13.2f}")
    return {"case": f"Dense(8) chain of {depth} layers build and load", "seconds": result,
            "ratios": {"load_nw_to_build": ratio}}


def identity_chain_keras_row(folder, smoke):
    """A deep ``.keras`` file without weights to speak of: its load costs what rebuilding the graph costs,
    unless finding each layer's weight paths grows with the number of layers."""
    from benchmarks.harness import measure
    from engine import Input, Model, load_model
    from layers import Dense, Identity

    def chain():
        x = Input((4,))
        h = Dense(2)(x)
        for _ in range(depth):
            h = Identity()(h)
        return Model(x, h)

    depth = 1000 if smoke else 20_000
    path = os.path.join(folder, "identity_chain.keras")
    chain().save(path)
    result = measure({"nodeweave_build": chain, "nodeweave_load_keras": lambda: load_model(path)},
                     repeats=1 if smoke else 3)
    s = {k: v["median"] for k, v in result.items()}
    ratio = s["nodeweave_load_keras"] / s["nodeweave_build"]
    print(f"{f'Identity chain {depth:,}':>17} {'':>14} {s['nodeweave_build']:11.2f} {'':>11} {'':>14} {'':>13} "
          f"{'':>13} {s['nodeweave_load_keras']:17.2f}")
    return {"case": f"Identity chain of {depth} layers build and .keras load", "seconds": result,
            "ratios": {"load_keras_to_build": ratio}}


def main(smoke=False):
    import keras

    from benchmarks.harness import machine, save

    folder = tempfile.mkdtemp()
    rows = inference_rows(folder, smoke) + build_and_load_rows(folder, smoke)
    rows += [deep_chain_row(folder, smoke), identity_chain_keras_row(folder, smoke)]
    save("keras_apps", {"rows": rows, "keras": keras.__version__, "keras_backend": keras.backend.backend(),
                        "machine": {**machine(), "threads": "each library's default"}})
    return rows


if __name__ == "__main__":
    main(smoke="--smoke" in sys.argv)
