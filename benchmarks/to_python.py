"""Code from a model (graph.to_python, issue 25): seconds to write each of the 14
keras.applications architectures as ``build_model()`` source, and to run that
source back into a model (whose ``get_config()`` is checked against the original's).

The architectures are built from Keras' configs at the smallest input each accepts
(tests/graph/data/keras_applications.json.gz, no Keras import). Goal: to_python
<= 1 s per architecture. The smoke run writes three of them once.
"""

from benchmarks.harness import pin_threads

pin_threads()

import gzip  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402

GOAL_SECONDS = 1.0
SMOKE = ["VGG16", "MobileNetV3Small", "ConvNeXtTiny"]


def main(smoke=False):
    from benchmarks.harness import measure, save
    from engine import model_from_json
    from graph.to_python import to_python
    from tests.graph.data.make_keras_applications import PATH, SIZES

    with gzip.open(PATH, "rt", encoding="utf-8") as file:
        configs = json.load(file)["configs"]

    def run(source):
        namespace = {}
        exec(compile(source, "<to_python>", "exec"), namespace)  # the source to_python just wrote
        return namespace["build_model"]()

    rows = []
    print(f"{'model':>18} {'layers':>7} {'lines':>6} {'to_python s':>12} {'run source s':>13} {'goal s':>7} "
          f"{'same config*':>13}")
    for name in SMOKE if smoke else SIZES:
        model = model_from_json(json.dumps(configs[name]))
        source = to_python(model)
        result = measure({"to_python": lambda: to_python(model), "run_source": lambda: run(source)},
                         repeats=1 if smoke else 5)
        rebuilt = run(source)
        # operators (x + 3.0) take fresh automatic names: compare the layers' configs without names
        # (tests/graph/test_to_python.py checks the whole config, names mapped)
        same = _without_names(rebuilt.get_config()) == _without_names(model.get_config())
        seconds = result["to_python"]["median"]
        print(f"{name:>18} {len(model.layers):>7} {len(source.splitlines()):>6} {seconds:12.3f} "
              f"{result['run_source']['median']:13.3f} {GOAL_SECONDS:7.1f} {str(same):>13}", flush=True)
        rows.append({"model": name, "layers": len(model.layers), "lines": len(source.splitlines()),
                     "to_python_seconds": result["to_python"], "run_source_seconds": result["run_source"],
                     "goal": GOAL_SECONDS, "same_config_but_names": same})
    print("* the layers' classes and configs, in order, names aside")
    save("to_python", {"rows": rows})
    return rows


def _without_names(config):
    """The model config's layer classes and configs in order, without names."""
    return [(entry["class_name"], {k: v for k, v in entry["config"].items() if k not in ("name", "layers")})
            for entry in config["layers"]]


if __name__ == "__main__":
    main(smoke="--smoke" in sys.argv)
