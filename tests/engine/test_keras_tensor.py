import numpy as np
import pytest

from engine import Input, KerasTensor


def test_shape_dtype_name():
    x = Input(shape=(3, 4), name="pixels")
    assert x.shape == (None, 3, 4)
    assert x.dtype == "float32"
    assert x.name == "pixels"
    assert x.ndim == 3


def test_immutable_and_hashable_by_identity():
    x = Input(shape=(3,))
    y = Input(shape=(3,))
    with pytest.raises(AttributeError, match="The `shape` attribute of KerasTensor is immutable"):
        x.shape = (None, 4)
    with pytest.raises(AttributeError, match="The `dtype` attribute of KerasTensor is immutable"):
        x.dtype = "int32"
    assert len({x, y, x}) == 2
    assert x == x and not x == y  # `==` compares identity, as in Keras; `!=` is elementwise
    assert (x != y).dtype == "bool"
    assert {x: 1}[x] == 1 and y in [x, y]


def test_bool_iteration_and_array_conversion_explain_what_to_do():
    x = Input(shape=(3,), name="x")
    with pytest.raises(TypeError, match="cannot be used as a boolean.*control flow inside a layer's call"):
        bool(x)
    with pytest.raises(NotImplementedError, match="Iterating over a symbolic KerasTensor.*Index it instead"):
        list(x)
    with pytest.raises(ValueError, match="KerasTensor 'x'.*You cannot convert it to a NumPy array.*Build a Model"):
        np.asarray(x)
    with pytest.raises(TypeError, match="has no len"):
        len(x)


def test_history_is_stamped_once():
    x = KerasTensor((None, 2))
    assert x._keras_history is None
    inp = Input(shape=(2,))
    with pytest.raises(ValueError, match="already comes from layer"):
        inp._set_history(None, 0, 0)


def test_is_keras_tensor_and_any_symbolic_tensors_look_through_nesting():
    from engine.network.keras_tensor import any_symbolic_tensors, is_keras_tensor

    symbolic = KerasTensor((None, 3))
    assert is_keras_tensor(symbolic) and not is_keras_tensor(np.ones(3))
    assert any_symbolic_tensors(args=[np.ones(2), {"deep": (1, symbolic)}])
    assert any_symbolic_tensors(kwargs={"mask": symbolic})
    assert not any_symbolic_tensors(args=[np.ones(2), 3.0], kwargs={"y": np.ones(1)})


def test_sparse_and_ragged_flags_describe_a_spec_and_inputs_stay_dense():
    spec = KerasTensor((None, 5), "float32", sparse=True)
    assert spec.sparse and not spec.ragged and spec.shape == (None, 5)
    assert KerasTensor((2,), ragged=True).ragged
    assert not Input(shape=(5,)).sparse
    with pytest.raises(ValueError, match="cannot have `sparse=True` and `ragged=True`"):
        KerasTensor((2,), sparse=True, ragged=True)
    with pytest.raises(ValueError, match="`sparse=True` is not supported by InputLayer"):
        Input(shape=(5,), sparse=True)
