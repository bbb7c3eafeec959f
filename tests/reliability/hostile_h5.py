"""Keras weight files with one byte of their HDF5 structure changed, read in a
child process under a memory cap (see ``test_hostile_h5.py``).

``python -m tests.reliability.hostile_h5 FILE COUNT`` reads FILE (a compiled
model's ``.keras``, written by Keras), then COUNT variations of its
``model.weights.h5``, each with one byte outside the weights' own bytes set to
another value, through the reader ``load_model`` uses. Every read must load or
raise ``ModelFormatError``, and allocate at most twice the weights the model
declares (its optimizer's included) plus ``ALLOWANCE`` (tracemalloc counts
NumPy's arrays and every Python object). Anything else fails. It prints one
JSON line: the outcomes, the largest allocation and the declared bytes.
"""

import io
import json
import math
import sys
import tracemalloc
import zipfile
from collections import Counter

import numpy as np

from engine import ModelFormatError, load_model
from engine.files.keras_format.h5_reader import Dataset
from engine.files.keras_format.weights_h5 import keras_variable_paths, load_optimizer_state, opened, read_datasets

ALLOWANCE = 2**20


def weight_regions(weights):
    """``[(start, end)]`` of the weights' own bytes in the HDF5 file ``weights``."""
    with opened(io.BytesIO(weights), "valid") as file:
        regions, groups = [], [""]
        while groups:
            path = groups.pop()
            for name in file.members(path):
                item = file.get(f"{path}/{name}" if path else name)
                if isinstance(item, Dataset):
                    if item.address is not None:
                        regions.append((item.address, item.address + item.stored_size))
                else:
                    groups.append(f"{path}/{name}" if path else name)
    return regions


def main(path, count):
    model = load_model(path)
    with zipfile.ZipFile(path) as archive:
        config = json.loads(archive.read("config.json"))
        weights = archive.read("model.weights.h5")
    paths = keras_variable_paths(model, config)
    trainable = {id(variable) for variable in model.trainable_weights}
    in_keras_order = [variable for variable in paths.values() if id(variable) in trainable]
    variables = list(paths.values()) + list(model.optimizer.variables)
    declared = sum(math.prod(v.shape) * np.dtype(v.dtype).itemsize for v in variables)

    def read(content):
        with opened(io.BytesIO(content), "mutated.weights.h5") as file:
            read_datasets(file, paths, "mutated.weights.h5")
            load_optimizer_state(file, model.optimizer, in_keras_order, "mutated.weights.h5")

    read(weights)
    in_weights = np.zeros(len(weights), bool)
    for start, end in weight_regions(weights):
        in_weights[start:end] = True
    structure = np.flatnonzero(~in_weights)
    rng = np.random.default_rng(0)
    outcomes, largest = Counter(), 0
    tracemalloc.start()
    for offset, shift in zip(rng.choice(structure, count), rng.integers(1, 256, count)):
        content = bytearray(weights)
        content[offset] = (content[offset] + shift) % 256
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        try:
            read(bytes(content))
            outcomes["loaded"] += 1
        except ModelFormatError:
            outcomes["refused"] += 1
        peak = tracemalloc.get_traced_memory()[1] - before
        largest = max(largest, peak)
        if peak > 2 * declared + ALLOWANCE:
            raise AssertionError(f"byte {offset} set to {content[offset]} allocated {peak:,} bytes for {declared:,} "
                                 "declared")
    print(json.dumps({**outcomes, "largest_allocation": largest, "declared": declared}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
