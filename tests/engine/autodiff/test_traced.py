"""The traced array: ndarray behaviour, NumPy's dtypes kept, plain results where there is no gradient, and
errors that say what to write instead."""

import numpy as np
import pytest

from engine import Variable
from engine.autodiff import GradientTape, Traced, TracingError


@pytest.fixture
def traced():
    """A float32 (2, 3) Traced on a live tape."""
    with GradientTape(persistent=True) as tape:
        yield tape.watch(np.arange(-3.0, 3.0, dtype="float32").reshape(2, 3))


def test_array_attributes_and_protocols(traced):
    assert traced.shape == (2, 3) and traced.dtype == np.float32 and traced.ndim == 2 and traced.size == 6
    assert traced.T.shape == (3, 2) and isinstance(traced.T, Traced)
    assert len(traced) == 2
    rows = list(traced)
    assert len(rows) == 2 and all(isinstance(r, Traced) and r.shape == (3,) for r in rows)
    assert f"{np.sum(traced):.1f}" == "-3.0"
    assert "Traced(array(" in repr(traced)


def test_methods_return_traced_values(traced):
    for result in (traced.reshape(3, 2), traced.reshape((6,)), traced.transpose(), traced.transpose(1, 0),
                   traced.sum(), traced.mean(0), traced.max(axis=1), traced.min(), traced.var(), traced.std(1),
                   traced.astype("float64"), traced[None].squeeze(0), traced.swapaxes(0, 1), traced.clip(-1, 1),
                   traced.dot(np.ones(3, "float32")), traced.flatten(), traced.ravel(), traced.prod()):
        assert isinstance(result, Traced)


def test_value_is_a_read_only_view(traced):
    with pytest.raises(ValueError, match="read-only"):
        traced.value[0, 0] = 1.0


@pytest.mark.parametrize("expression", [
    lambda x: x * 0.5, lambda x: 0.5 * x, lambda x: x / 3, lambda x: x + 1, lambda x: np.abs(x) ** 0.5,
    lambda x: 2.0 ** x, lambda x: np.maximum(x, 0), lambda x: np.where(x > 0, x, 0.01 * x), lambda x: np.clip(x, -1, 1),
    lambda x: np.mean(x), lambda x: np.var(x), lambda x: np.std(x), lambda x: np.exp(x - np.max(x)),
    lambda x: np.einsum("ij,kj->ik", x, x), lambda x: x @ x.T, lambda x: x[x > 0] * 2.5,
])
def test_python_scalars_never_promote_float32(expression):
    with GradientTape() as tape:
        x = tape.watch(np.linspace(-1, 1, 6, dtype="float32").reshape(2, 3))
        y = expression(x)
    assert y.dtype == np.float32 == expression(x.value).dtype
    assert tape.gradient(y, x).dtype == np.float32


def test_gradient_comes_back_in_the_input_dtype_after_a_cast():
    with GradientTape() as tape:
        x = tape.watch(np.ones(3, "float32"))
        y = x.astype("float64") * np.float64(2.0)
    assert y.dtype == np.float64 and tape.gradient(y, x).dtype == np.float32


@pytest.mark.parametrize("expression", [
    lambda x: x > 0, lambda x: x == 1, lambda x: x != 0, lambda x: x <= 1, lambda x: np.argmax(x), lambda x: x.argmin(),
    lambda x: np.floor(x), lambda x: np.ceil(x), lambda x: np.round(x), lambda x: np.rint(x), lambda x: np.sign(x),
    lambda x: np.isnan(x), lambda x: np.isfinite(x), lambda x: np.logical_and(x > 0, x < 2), lambda x: x // 2,
    lambda x: x.astype("int32"), lambda x: np.zeros_like(x), lambda x: np.ones_like(x), lambda x: np.full_like(x, 3),
    lambda x: np.shape(x), lambda x: np.nonzero(x), lambda x: np.where(x > 0),
])
def test_non_differentiable_functions_return_plain_results(traced, expression):
    result = expression(traced)
    assert not isinstance(result, Traced)
    assert not any(isinstance(r, Traced) for r in (result if isinstance(result, tuple) else ()))


def test_in_place_operators_return_a_new_traced_and_leave_the_original(traced):
    x = traced
    before = x.value.copy()
    x += 1
    x *= 2
    assert isinstance(x, Traced) and x is not traced
    np.testing.assert_array_equal(traced.value, before)
    np.testing.assert_array_equal(x.value, (before + 1) * 2)


def test_in_place_operators_keep_shape_and_dtype_like_numpy(traced):
    y = traced
    y += np.float64(1.0) * np.ones(3)  # NumPy's `a += b` keeps a float32 `a` float32
    assert y.dtype == np.float32
    with pytest.raises(ValueError, match="non-broadcastable output operand"):
        z = traced[0]
        z += traced


@pytest.mark.parametrize(("call", "function"), [
    (lambda x: np.sort(x), "numpy.sort"),
    (lambda x: np.cumprod(x), "numpy.cumprod"),
    (lambda x: np.linalg.norm(x), "numpy.linalg.norm"),
    (lambda x: np.fmod(x, 2), "numpy.fmod"),
])
def test_functions_without_a_rule_are_named_with_the_two_ways_out(traced, call, function):
    with pytest.raises(TracingError) as info:
        call(traced)
    message = str(info.value)
    assert info.value.function == function and message.startswith(f"{function} cannot be traced")
    assert "Use a supported NumPy function" in message and "hand-written `forward`/`backward`" in message
    assert isinstance(info.value, NotImplementedError)


@pytest.mark.parametrize(("call", "function"), [
    (lambda x: np.add.reduce(x), "numpy.add.reduce"),
    (lambda x: np.multiply.outer(x, x), "numpy.multiply.outer"),
    (lambda x: np.add.at(x, [0], 1.0), "numpy.add.at"),
    (lambda x: np.maximum.accumulate(x), "numpy.maximum.accumulate"),
])
def test_ufunc_methods_are_refused_by_name(traced, call, function):
    with pytest.raises(TracingError, match=f"{function} cannot be traced: ufunc methods .* Use np.sum"):
        call(traced)


def test_converting_to_a_plain_array_says_to_read_value(traced):
    with pytest.raises(TracingError, match=r"numpy.asarray cannot be traced: .*silently drop its gradient.*`x.value`"):
        np.asarray(traced)
    with pytest.raises(TracingError, match="numpy.asarray"):
        np.array([traced, traced])


@pytest.mark.parametrize("convert", [float, int, bool, lambda x: 1 if x else 0])
def test_converting_to_a_number_says_what_to_write_instead(traced, convert):
    with pytest.raises(TracingError, match=r"Python number .*`float\(x.value\)`.*np.where"):
        convert(traced[0, 0])


def test_item_assignment_points_to_np_where(traced):
    with pytest.raises(TracingError, match=r"item assignment .* np.where\(mask, value, x\)"):
        traced[0] = 1


def test_writing_into_a_plain_array_is_refused(traced):
    buffer = np.zeros((2, 3), "float32")
    with pytest.raises(TracingError, match=r"numpy.add cannot be traced: it would write the result .*`x = x \+ y`"):
        buffer += traced
    with pytest.raises(TracingError, match="numpy.sum cannot be traced: its keyword argument where="):
        np.sum(traced, where=np.ones((2, 3), bool))


def test_unsupported_einsum_form_and_pad_mode_are_refused_when_traced(traced):
    with pytest.raises(TracingError, match="interleaved"):
        np.einsum(traced, [0, 1], [1, 0])
    with pytest.raises(TracingError, match="numpy.pad with mode='mean'"):
        np.pad(traced, 1, mode="mean")


def test_tracing_error_composes_a_context():
    error = TracingError("numpy.sort").with_context("layer 'sorter'")
    assert str(error).startswith("numpy.sort cannot be traced in layer 'sorter': it has no derivative rule")
    assert error.function == "numpy.sort" and error.context == "layer 'sorter'"


def test_unsupported_call_on_a_non_trainable_variable_while_recording_runs_plainly():
    frozen = Variable(np.array([3.0, 1.0]), name="f", path="l/f", trainable=False)
    with GradientTape():
        assert list(np.sort(frozen)) == [1.0, 3.0]
        assert np.add.reduce(frozen) == 4.0


def test_a_traced_keyword_argument_is_refused(traced):
    with pytest.raises(TracingError, match="keyword argument a_min= is traced"):
        np.clip(traced, a_min=traced, a_max=None)
