"""Tiny model files whose declared shapes or initializers would cost gigabytes
to build, loaded in a child process under a memory cap (see
``test_declared_shapes.py`` and ``test_initializer_budget.py``).

``python -m tests.reliability.declared_shapes CASE FOLDER`` writes the case's
files in FOLDER and loads each; it prints one JSON line: per file, what the load
gave (the output shape, or the refusal's message).
"""

import json
import sys
import zipfile
from pathlib import Path

from engine import Input, Model, ModelFormatError, load_model, model_from_json
from layers import Dense, Masking

FOLDER = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(".")
#: Time steps declared by the hostile files: 2**26 x 4 float32 values are 1 GiB.
STEPS = 2**26


def grown(text, small, large):
    """``text`` with the declared dimension ``small`` replaced by ``large``."""
    assert small in text, text
    return text.replace(small, large)


def files_declaring(model, small, large):
    """Writes ``model`` as JSON, ``.nw`` and ``.keras`` with ``small`` in its
    config replaced by ``large``; returns their paths."""
    paths = [FOLDER / "model.json"]
    paths[0].write_text(grown(model.to_json(), small, large))
    for extension in ("nw", "keras"):
        source, path = FOLDER / f"source.{extension}", FOLDER / f"model.{extension}"
        model.save(source)
        with zipfile.ZipFile(source) as original, zipfile.ZipFile(path, "w") as forged:
            for info in original.infolist():
                content = original.read(info)
                if info.filename == "config.json":
                    content = grown(content.decode(), small, large).encode()
                forged.writestr(info, content)
        paths.append(path)
    return paths


def load(path):
    """The output shape of the model loaded from ``path``, or the ModelFormatError's message."""
    try:
        model = model_from_json(path.read_text()) if path.suffix == ".json" else load_model(path)
    except ModelFormatError as error:
        return str(error)
    return list(model.output.shape)


def masked():
    """Input(batch_shape=(None, 2**26, 4)) -> Masking -> Dense(2)."""
    x = Input(batch_shape=(None, 7, 4), name="x")
    return files_declaring(Model(x, Dense(2, name="d")(Masking(name="m")(x))), "7, 4]", f"{STEPS}, 4]")


def nested_masked():
    """The same through a nested model that is given the mask."""
    inner_input = Input(batch_shape=(None, 7, 4), name="inner_x")
    inner = Model(inner_input, Dense(2, name="d")(inner_input), name="inner")
    x = Input(batch_shape=(None, 7, 4), name="x")
    return files_declaring(Model(x, inner(Masking(name="m")(x))), "7, 4]", f"{STEPS}, 4]")


def orthogonal():
    """Dense(8192, kernel_initializer="orthogonal"): as JSON only (its weights
    would be 256 MiB in a model file, which does not draw them anyway)."""
    x = Input(shape=(8192,), name="x")
    text = Model(x, Dense(4, name="d", kernel_initializer="orthogonal")(x)).to_json()
    path = FOLDER / "model.json"
    path.write_text(grown(text, '"units": 4', '"units": 8192'))
    return [path]


if __name__ == "__main__":
    paths = {"masked": masked, "nested_masked": nested_masked, "orthogonal": orthogonal}[sys.argv[1]]()
    print(json.dumps({path.name: load(path) for path in paths}))
