"""Building a graph never allocates in proportion to a declared shape: a 1 KB
JSON, .nw or .keras file declaring an input of 2**26 x 4 values (1 GiB) loads
in a child process capped at 512 MiB (``declared_shapes``); a layer that must
run ``call`` on examples to learn its shape has them charged to the load."""

import json

import numpy as np
import pytest

from engine import Input, KerasTensor, Layer, LoadLimits, Model, ModelFormatError, model_from_json
from layers import Dense, Embedding, Masking
from tests.reliability.capped import run_capped
from tests.reliability.declared_shapes import STEPS

MEMORY = 512 * 2**20


@pytest.mark.parametrize("case", ["masked", "nested_masked"])
def test_a_masked_input_of_a_huge_declared_shape_loads_in_little_memory(tmp_path, case):
    child = run_capped("tests.reliability.declared_shapes", case, tmp_path, memory=MEMORY, timeout=120)
    assert child.returncode == 0, child.stderr[-3000:]
    loaded = json.loads(child.stdout.strip().splitlines()[-1])
    assert loaded == {name: [None, STEPS, 2] for name in ("model.json", "model.nw", "model.keras")}


def test_mask_specs_keep_the_ranks_of_the_masks_of_whole_examples():
    x = Input(batch_shape=(None, STEPS, 4))
    masked = Masking()(x)
    assert masked._keras_mask.shape == (None, STEPS)
    assert Dense(2)(masked)._keras_mask.shape == (None, STEPS)
    tokens = Input(batch_shape=(None, STEPS), dtype="int32")
    assert Embedding(5, 3, mask_zero=True)(tokens)._keras_mask.shape == (None, STEPS)


class NoShape(Layer):
    """Learns its output shape by running call (it defines no compute_output_shape)."""

    def call(self, inputs):
        return inputs[..., :1] * 2.0


def _no_shape_json(steps):
    x = Input(batch_shape=(None, 7, 4), name="x")
    return Model(x, NoShape(name="no_shape")(x)).to_json().replace("7, 4]", f"{steps}, 4]")


def test_a_layer_without_compute_output_shape_has_its_examples_charged_while_a_file_loads():
    text = _no_shape_json(STEPS)
    with pytest.raises(ModelFormatError, match=r"Layer 'no_shape' \(NoShape\) defines no compute_output_shape, .*"
                                               r"1,073,741,824 bytes, more than the 1,048,576 left .*Define "
                                               r"compute_output_shape\(self, input_shape\) in NoShape"):
        model_from_json(text, custom_objects={"NoShape": NoShape}, limits=LoadLimits(max_weight_bytes=2**20))
    small = model_from_json(_no_shape_json(1000), custom_objects={"NoShape": NoShape},
                            limits=LoadLimits(max_weight_bytes=2**20))
    assert small.output.shape == (None, 1000, 1)
    # Outside a load, a graph is the caller's own: nothing is charged.
    assert NoShape()(KerasTensor((None, 3, 4))).shape == (None, 3, 1)
    np.testing.assert_array_equal(small(np.ones((1, 1000, 4), "float32")), np.full((1, 1000, 1), 2.0))
