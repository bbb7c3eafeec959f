"""Drawing initial weights costs no more than a load charges: a 900-byte JSON
asking for an 8192 x 8192 Orthogonal kernel (a cubic QR factorization, 2.6 GB
of float64 temporaries) is refused at once under a memory cap; what
initializers allocate beside their weight is charged to the budget; model files
draw nothing (their weights are assigned)."""

import json

import numpy as np
import pytest

from engine import Input, LoadLimits, Model, ModelFormatError, load_model, model_from_json
from engine.network import initializers
from engine.files.load_limits import charge_weight, weight_budget
from engine.utils import random_generator
from layers import Dense
from tests.reliability.capped import run_capped


def test_an_orthogonal_kernel_too_costly_to_draw_is_refused_within_a_memory_cap(tmp_path):
    child = run_capped("tests.reliability.declared_shapes", "orthogonal", tmp_path, memory=512 * 2**20, timeout=60)
    assert child.returncode == 0, child.stderr[-3000:]
    message = json.loads(child.stdout.strip().splitlines()[-1])["model.json"]
    assert "weight 'kernel' of layer 'd' with shape (8192, 8192) by Orthogonal" in message
    assert "max_initializer_operations=34,359,738,368" in message


def _json(units, initializer):
    x = Input(shape=(units,), name="x")
    return Model(x, Dense(units, name="d", kernel_initializer=initializer)(x)).to_json()


def test_the_operations_limit_is_a_load_limit():
    text = _json(64, "orthogonal")
    with pytest.raises(ModelFormatError, match=r"Orthogonal takes about 1,048,576 operations, more than "
                                               r"max_initializer_operations=1,000\. .*LoadLimits"):
        model_from_json(text, limits=LoadLimits(max_initializer_operations=1000))
    kernel = model_from_json(text).get_layer("d").kernel.value
    np.testing.assert_allclose(kernel.T @ kernel, np.eye(64), atol=1e-5)


@pytest.mark.parametrize("initializer, temporaries", [
    ("orthogonal", 8 * (3 * 256 * 256 + 256 * 256)),  # float64 draw, QR's copies and R
    ("glorot_normal", 256 * 256 + 9 * 2**16),  # the indices of the values redrawn, a checked chunk
])
def test_the_temporaries_of_an_initializer_must_fit_in_what_is_left_of_the_budget(initializer, temporaries):
    text = _json(256, initializer)
    kernel, bias = 256 * 256 * 4, 256 * 4  # the kernel is drawn first, the bias (zeros) after
    with pytest.raises(ModelFormatError, match=rf"kernel' of layer 'd' .* needs {temporaries:,} bytes of temporary "
                                               rf"arrays, more than the {temporaries - 1:,} left"):
        model_from_json(text, limits=LoadLimits(max_weight_bytes=kernel + temporaries - 1))
    limits = LoadLimits(max_weight_bytes=kernel + bias + temporaries)
    assert model_from_json(text, limits=limits).count_params() == 256 * 257


def test_initializers_charge_what_they_allocate():
    assert initializers.get("zeros").cost((10, 3)) == (0, 30)
    assert initializers.get("glorot_uniform").cost((10, 3)) == (0, 30)
    assert initializers.get("glorot_uniform").cost((10, 3), "float16") == (120, 30)  # drawn in float32, then cast
    assert initializers.get("orthogonal").cost((3, 10)) == (8 * (3 * 30 + 9), 4 * 10 * 3 * 3)


def test_a_seed_gives_the_same_weights_and_a_model_file_draws_none(tmp_path):
    orthogonal = initializers.Orthogonal(gain=2.0, seed=7)
    np.testing.assert_array_equal(orthogonal((5, 3)), orthogonal((5, 3)))
    np.testing.assert_allclose(orthogonal((3, 5)) @ orthogonal((3, 5)).T, 4 * np.eye(3), atol=1e-5)
    normal = initializers.GlorotNormal(seed=7)((300, 700))
    assert np.abs(normal).max() <= 2 * np.sqrt(2 / 1000) / 0.87962566103423978
    np.testing.assert_array_equal(normal, initializers.GlorotNormal(seed=7)((300, 700)))
    model = model_from_json(_json(32, "orthogonal"))
    generator = random_generator()
    for extension in ("nw", "keras"):
        model.save(tmp_path / f"m.{extension}")
        before = generator.bit_generator.state
        loaded = load_model(tmp_path / f"m.{extension}")
        assert generator.bit_generator.state == before, extension
        np.testing.assert_array_equal(loaded.get_layer("d").kernel.value, model.get_layer("d").kernel.value)


def test_a_plain_function_as_initializer_is_charged_for_its_weight_only():
    with weight_budget(100, "a test budget", "Nothing to do.", max_operations=1):
        assert not charge_weight("l", "w", (5,), "float32", lambda shape, dtype: np.zeros(shape, dtype))
        with pytest.raises(ModelFormatError, match="more than max_initializer_operations=1"):
            charge_weight("l", "w", (5,), "float32", initializers.get("ones"))
