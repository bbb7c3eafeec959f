import numpy as np
import pytest

from engine import Input, Model, ModelFormatError, load_model, register_serializable
from engine.files.registry import loading_options
from engine.network.gradient_check import gradient_check
from layers.core import Lambda
from tests.layers.oracle import assert_gradients, assert_matches_keras, assert_symbolic_shape_matches_eager, keras


def square(x):
    return x ** 2


def square_backward(inputs, outputs, grad_outputs):
    return 2 * inputs * grad_outputs


def scale(x, factor):
    return x * factor


def _x(shape=(3, 4), dtype="float32"):
    return np.random.default_rng(0).normal(size=shape).astype(dtype)


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4)])
def test_forward_matches_keras(shape):
    x = _x(shape)
    assert_matches_keras(Lambda(square), keras.layers.Lambda(square), x)
    out = assert_matches_keras(Lambda(scale, arguments={"factor": 3.0}),
                               keras.layers.Lambda(scale, arguments={"factor": 3.0}), x)[0]
    assert out.dtype == np.float32


def test_gradients_with_backward():
    assert_gradients(Lambda(square, backward=square_backward), _x(dtype="float64"))
    add = Lambda(lambda xs: xs[0] * xs[1], backward=lambda xs, y, g: [g * xs[1], g * xs[0]])
    assert_gradients(add, [_x(dtype="float64"), _x(dtype="float64") + 1])


def test_without_backward_the_function_is_traced_and_matches_the_hand_written_one():
    x = _x(dtype="float64")
    traced, hand_written = Lambda(square, name="sq"), Lambda(square, backward=square_backward)
    assert_gradients(traced, x)
    out, cache = traced.forward(x)
    grad = np.random.default_rng(1).normal(size=out.shape)
    np.testing.assert_allclose(traced.backward(cache, grad)[0],
                               hand_written.backward(hand_written.forward(x)[1], grad)[0], rtol=1e-12)
    inputs = Input(shape=(4,))
    untraceable = Model(inputs, Lambda(lambda v: np.sort(v, axis=-1), name="sorter")(inputs))
    with pytest.raises(NotImplementedError, match=r"numpy.sort cannot be traced in layer 'sorter' \(Lambda\)"):
        gradient_check(untraceable, _x())


def test_output_shape_inferred_given_or_computed():
    inputs = Input(shape=(5,))
    assert Lambda(lambda x: x[:, :2])(inputs).shape == (None, 2)
    assert Lambda(lambda x: x[:, :2], output_shape=(2,))(inputs).shape == (None, 2)
    assert Lambda(lambda x: x[:, :2], output_shape=lambda s: (s[0], 2))(inputs).shape == (None, 2)
    pair = [Input(shape=(3,)), Input(shape=(3,))]
    assert Lambda(lambda xs: np.concatenate(xs, axis=-1), output_shape=(6,))(pair).shape == (None, 6)
    assert_symbolic_shape_matches_eager(Lambda(lambda x: x.reshape(len(x), -1)), _x((2, 3, 4)))


def test_training_flag_is_passed_when_the_function_takes_it():
    layer = Lambda(lambda x, training: x * (2.0 if training else 1.0))
    x = _x()
    np.testing.assert_array_equal(layer(x), x)
    np.testing.assert_array_equal(layer(x, training=True), 2 * x)
    np.testing.assert_array_equal(layer.forward(x, training=True)[0], 2 * x)
    # A builtin without a signature (inspect cannot tell whether it takes `training`).
    np.testing.assert_array_equal(Lambda(max)(np.array([[1.0, 3.0]])), [1.0, 3.0])


def test_config_names_functions_and_safe_mode_refuses_unregistered_ones():
    layer = Lambda(square, output_shape=(4,), backward=square_backward, arguments={}, name="sq")
    config = layer.get_config()
    module = __name__
    assert config["function"] == f"{module}:square" and config["backward"] == f"{module}:square_backward"
    assert config["output_shape"] == (4,) and config["arguments"] == {}
    assert Lambda(square, output_shape=len).get_config()["output_shape"] == "builtins:len"
    with pytest.raises(ValueError, match=f"Lambda layer 'sq' uses the function '{module}:square', which is not "
                                         "registered.*register_serializable.*safe_mode=False"):
        Lambda.from_config(config)
    with loading_options(safe_mode=False):
        clone = Lambda.from_config(config)
    assert clone.function is square and clone.backward_function is square_backward
    assert clone.get_config() == config


def test_registered_functions_load_in_safe_mode_and_lambdas_never_import():
    @register_serializable(package="lambda_tests")
    def triple(x):
        return x * 3.0

    config = Lambda(triple).get_config()
    assert config["function"] == "lambda_tests>triple"
    np.testing.assert_array_equal(Lambda.from_config(config)(np.ones((1, 2))), [[3.0, 3.0]])
    anonymous = Lambda(lambda x: x).get_config()
    with loading_options(safe_mode=False), pytest.raises(ValueError, match="cannot be imported \\(a lambda"):
        Lambda.from_config(anonymous)


def test_model_files_with_lambdas_follow_safe_mode(tmp_path):
    x = Input(shape=(4,))
    Model(x, Lambda(square, name="sq")(x)).save(tmp_path / "lambda.nw")
    with pytest.raises(ModelFormatError, match="Lambda layer 'sq' uses the function .*not registered"):
        load_model(tmp_path / "lambda.nw")
    loaded = load_model(tmp_path / "lambda.nw", safe_mode=False)
    np.testing.assert_array_equal(loaded(np.full((1, 4), 2.0)), np.full((1, 4), 4.0))
    loaded = load_model(tmp_path / "lambda.nw", custom_objects={f"{__name__}:square": square})
    assert loaded.get_layer("sq").function is square


def test_config_round_trip_of_the_other_arguments():
    layer = Lambda(scale, arguments={"factor": 2.0})
    clone = Lambda(**{**layer.get_config(), "function": scale})
    np.testing.assert_array_equal(clone(_x()), layer(_x()))


def test_no_mask_support_as_keras_without_mask():
    assert not Lambda(square).supports_masking and not keras.layers.Lambda(square).supports_masking


def test_errors():
    with pytest.raises(ValueError, match="Lambda expects `function` to be callable. Received: function=3"):
        Lambda(3)
    with pytest.raises(ValueError, match="Lambda expects `backward` to be None or a callable.*Received: backward='g'"):
        Lambda(square, backward="g")
    with pytest.raises(ValueError, match="`output_shape` to be None, a tuple.*Received: output_shape='4'"):
        Lambda(square, output_shape="4")
    with pytest.raises(ValueError, match=r"Lambda expects `arguments` to be a dict. Received: arguments=\[1\]"):
        Lambda(square, arguments=[1])
    with pytest.raises(ValueError, match=r"'lambda_\d+' \(Lambda\) could not infer its output shape by running "
                                         "<lambda> on a zero batch: ValueError: .*Pass output_shape="):
        Lambda(lambda x: x @ np.ones((7, 2)))(Input(shape=(5,)))
