"""Safe mode under threads: a trusted load with safe_mode=False in one thread
never lets another thread's load import code named by a hostile file."""

import json
import sys
import threading
import zipfile

import numpy as np
import pytest

from engine import Input, Model, ModelFormatError, load_model, model_from_json
from layers import Dense, Lambda
from tests.reliability.trusted_functions import double

CANARY = "nodeweave_canary_module"


class _ImportRecorder:
    """A meta-path finder that records every attempt to import the canary module."""

    def __init__(self):
        self.attempts = 0

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == CANARY:
            self.attempts += 1


@pytest.fixture
def import_recorder():
    recorder = _ImportRecorder()
    sys.meta_path.insert(0, recorder)
    yield recorder
    sys.meta_path.remove(recorder)


def _lambda_model():
    x = Input(shape=(3,), name="x")
    return Model(x, Dense(2, name="out")(Lambda(double, name="fn")(x)))


@pytest.fixture
def files(tmp_path):
    model = _lambda_model()
    trusted = tmp_path / "trusted.nw"
    model.save(trusted)
    config = json.loads(model.to_json())
    for layer in config["config"]["layers"]:
        if layer["class_name"] == "Lambda":
            layer["config"]["function"] = f"{CANARY}:payload"
    hostile_json = json.dumps(config)
    hostile = tmp_path / "hostile.nw"  # the trusted file with the Lambda's function renamed
    with zipfile.ZipFile(trusted) as source, zipfile.ZipFile(hostile, "w") as target:
        for name in source.namelist():
            content = source.read(name)
            if name == "config.json":
                entry = json.loads(content)
                entry["config"] = config["config"]
                content = json.dumps(entry).encode()
            target.writestr(name, content)
    return trusted, hostile, hostile_json


def test_each_load_path_refuses_the_hostile_function_in_safe_mode(files, import_recorder):
    _, hostile, hostile_json = files
    for load in (lambda: load_model(hostile), lambda: model_from_json(hostile_json),
                 lambda: Model.from_config(json.loads(hostile_json)["config"])):
        with pytest.raises(ModelFormatError, match=f"function '{CANARY}:payload', which is not registered"):
            load()
    assert import_recorder.attempts == 0
    with pytest.raises(ModelFormatError, match=f"No module named '{CANARY}'"):
        model_from_json(hostile_json, safe_mode=False)
    assert import_recorder.attempts > 0


def test_trusted_and_hostile_loads_race_in_threads_without_one_import(files, import_recorder):
    trusted, hostile, hostile_json = files
    rounds = 1000
    barrier = threading.Barrier(3)
    outcomes = {"trusted": 0, "refused": 0, "other": []}
    lock = threading.Lock()
    x = np.ones((2, 3), "float32")

    def trusted_loads():
        barrier.wait()
        for _ in range(rounds):
            model = load_model(trusted, safe_mode=False)
            assert model.get_layer("fn").function is double
            with lock:
                outcomes["trusted"] += 1

    def hostile_loads(load):
        barrier.wait()
        for _ in range(rounds):
            try:
                load()
            except ModelFormatError as error:
                with lock:
                    if "not registered" in str(error):
                        outcomes["refused"] += 1
                    else:
                        outcomes["other"].append(str(error))
            else:
                outcomes["other"].append("a hostile load succeeded")

    threads = [threading.Thread(target=trusted_loads),
               threading.Thread(target=hostile_loads, args=(lambda: load_model(hostile, safe_mode=True),)),
               threading.Thread(target=hostile_loads, args=(lambda: model_from_json(hostile_json),))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert import_recorder.attempts == 0
    assert outcomes == {"trusted": rounds, "refused": 2 * rounds, "other": []}
    assert load_model(trusted, safe_mode=False)(x).shape == (2, 2)
    with pytest.raises(ModelFormatError, match="not registered"):  # the guard is up again afterwards
        load_model(hostile)
