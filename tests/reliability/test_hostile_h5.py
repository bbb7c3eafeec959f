"""Keras-written weight files with one byte of their HDF5 structure changed load or fail with
ModelFormatError, allocating at most twice the weights they declare plus a fixed allowance:
thousands of them in a child process whose address space is capped (``hostile_h5``). Through
libhdf5 one such byte made a 23 KB file allocate 18.9 GB."""

import json

import keras
import numpy as np
from keras import layers

from tests.reliability.capped import run_capped


def test_changed_bytes_of_a_keras_weight_file_stay_within_its_declared_weights(tmp_path):
    x = keras.Input((4,), name="x")
    model = keras.Model(x, layers.Dense(2, name="out")(layers.Dense(3, name="hidden")(x)))
    model.compile(optimizer="adam", loss="mse")
    model.fit(np.ones((2, 4)), np.ones((2, 2)), verbose=0)
    model.save(tmp_path / "compiled.keras")
    child = run_capped("tests.reliability.hostile_h5", tmp_path / "compiled.keras", 3000, memory=2**30, timeout=240)
    assert child.returncode == 0, child.stderr[-3000:]
    outcomes = json.loads(child.stdout.strip().splitlines()[-1])
    assert outcomes["refused"] >= 200 and outcomes["loaded"] + outcomes["refused"] == 3000, outcomes
