import numpy as np
import pytest

from engine import InputSpec
from engine.network.input_spec import assert_input_compatibility


def test_axes_message_matches_seed():
    spec = InputSpec(min_ndim=2, axes={-1: 5})
    with pytest.raises(ValueError) as info:
        assert_input_compatibility(spec, [np.zeros((10, 4))], "dense")
    assert str(info.value) == ("Input 0 of layer dense is incompatible with the layer: expected axis -1 "
                               "of input shape to have value 5 but received input with shape (10, 4)")


def test_number_of_inputs():
    with pytest.raises(ValueError, match=r'Layer "merge" expects 2 input\(s\), but it received 1 input tensors'):
        assert_input_compatibility([InputSpec(), InputSpec()], [np.zeros(2)], "merge")


def test_ndim_bounds_shape_and_dtype():
    x = np.zeros((2, 3, 4))
    assert_input_compatibility(InputSpec(min_ndim=2, max_ndim=3, shape=None), [x], "l")
    with pytest.raises(ValueError, match="expected max_ndim=2, found ndim=3"):
        assert_input_compatibility(InputSpec(max_ndim=2), [x], "l")
    with pytest.raises(ValueError, match=r"expected shape=\(None, 3, 5\), found shape=\(2, 3, 4\)"):
        assert_input_compatibility(InputSpec(shape=(None, 3, 5)), [x], "l")
    with pytest.raises(ValueError, match="expected dtype int32"):
        assert_input_compatibility(InputSpec(dtype="int32"), [x], "l")
    assert_input_compatibility(InputSpec(dtype="int32"), [np.zeros(2, "int64")], "l")


def test_spec_axes_out_of_range_is_rejected():
    with pytest.raises(ValueError, match="out of range"):
        InputSpec(ndim=2, axes={3: 4})
