"""Writing a nodeweave model as a Keras 3 ``.keras`` archive.

The archive is a zip of ``config.json`` (``write_config``), ``metadata.json``
and ``model.weights.h5`` (``write_weights``), laid out as Keras 3.15 writes
them, so ``keras.saving.load_model`` rebuilds the same model with the same
weights. It is written atomically, as ``.nw`` files are.
"""

import json
import os
import shutil
import tempfile
import time
import zipfile

from engine.files.atomic_file import atomic_write
from engine.files.keras_format.write_config import keras_model_config
from engine.files.keras_format.write_weights import write_weights_h5

# The Keras release whose archive layout this module writes.
KERAS_VERSION = "3.15.1"


def save_keras_model(model, path: str | os.PathLike) -> None:
    """Writes ``model`` (functional or Sequential) to the ``.keras`` file ``path``.

    A compiled model keeps its compile arguments and optimizer state
    (``write_compile`` says when they cannot be written).

    Args:
        model: a built functional or Sequential model.
        path: where to write; must end in ``.keras``.

    Raises:
        ValueError: ``path`` does not end in ``.keras``; a layer Keras cannot
            load (a ``Lambda``), named in the message.
        NotImplementedError: a subclassed model, whose architecture is Python code.

    Example:
        >>> import os, tempfile
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,))
        >>> path = os.path.join(tempfile.mkdtemp(), "m.keras")
        >>> save_keras_model(Model(x, Dense(2)(x)), path)
        >>> sorted(zipfile.ZipFile(path).namelist())
        ['config.json', 'metadata.json', 'model.weights.h5']
    """
    if not str(path).endswith(".keras"):
        raise ValueError(f"A Keras archive must be written to a .keras file; received path {str(path)!r}.")
    if not hasattr(type(model), "plan"):
        raise NotImplementedError(
            f"Model {model.name!r} ({type(model).__name__}) is a subclassed model: its architecture is the Python "
            "code of its class, which a .keras file cannot hold for Keras to rebuild. Build it with the functional "
            "API or Sequential to save it as .keras."
        )
    config = keras_model_config(model)
    files = {
        "metadata.json": json.dumps({"keras_version": KERAS_VERSION,
                                     "date_saved": time.strftime("%Y-%m-%d@%H:%M:%S")}),
        "config.json": json.dumps(config),
    }
    # The weights go to a temporary file, then into the archive in chunks: no second copy of them in memory.
    with tempfile.TemporaryFile() as weights:
        # Keras reads an optimizer's state only into the optimizer its compile_config makes.
        write_weights_h5(model, weights, with_optimizer=config["compile_config"] is not None)

        def write(handle):
            with zipfile.ZipFile(handle, "w") as archive:
                for name, content in files.items():
                    archive.writestr(name, content, compress_type=zipfile.ZIP_DEFLATED)
                member = zipfile.ZipInfo("model.weights.h5", date_time=time.localtime()[:6])
                member.external_attr = 0o600 << 16  # as writestr gives its members
                member.file_size = weights.seek(0, os.SEEK_END)  # over 2 GiB, the member is written as ZIP64
                weights.seek(0)
                with archive.open(member, "w") as stored:
                    shutil.copyfileobj(weights, stored, 1 << 20)

        atomic_write(path, write)
