import math

import keras
import numpy as np
import pytest

from engine import Input, Model, load_model
from engine.training.constraints import MaxNorm, NonNeg
from engine.training.optimizers import SGD, Adam, Nadam, RMSprop, get, schedules
from layers import Dense
from tests.engine.optimizers.oracle import (assert_close, assert_matches_keras, fixed_gradients, initial_weights,
                                            keras_variables, make_pair, our_variables)

# Each optimizer with the options that give it every kind of slot.
ALL_SLOTS = {
    "SGD": {"momentum": 0.9, "nesterov": True},
    "Adam": {"amsgrad": True},
    "AdamW": {"amsgrad": True},
    "RMSprop": {"momentum": 0.5, "centered": True},
    "Adagrad": {},
    "Adamax": {},
    "Nadam": {},
}


def test_variables_follow_keras_layout():
    ours, theirs = make_pair("Adam", amsgrad=True)
    ours.build(our_variables(initial_weights()))
    theirs.build(keras_variables(initial_weights()))
    assert [v.path for v in ours.variables] == [
        "adam/iteration", "adam/learning_rate",
        "adam/dense_kernel_momentum", "adam/dense_kernel_velocity",
        "adam/dense_bias_momentum", "adam/dense_bias_velocity",
        "adam/dense_kernel_velocity_hat", "adam/dense_bias_velocity_hat",
    ]
    assert [v.name.replace("dense_", "") for v in ours.variables] == [v.name for v in theirs.variables]
    assert not any(v.trainable for v in ours.variables)
    scheduled = Adam(learning_rate=schedules.ExponentialDecay(0.1, 10, 0.5))
    assert [v.path for v in scheduled.variables] == [f"{scheduled.name}/iteration"]


def test_automatic_names_follow_keras():
    assert [SGD().name, SGD().name, RMSprop().name, Nadam(name="n").name] == ["sgd", "sgd_1", "rm_sprop", "n"]


@pytest.mark.parametrize("constraint", [NonNeg(), MaxNorm(1.0)])
@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_constraint_is_applied_after_the_update(name, constraint):
    keras_constraint = keras.constraints.get({"class_name": type(constraint).__name__,
                                              "config": constraint.get_config()})
    ours, theirs = make_pair(name, learning_rate=0.1, weight_decay=0.1)
    weights = initial_weights()
    our_vars, their_vars = our_variables(weights), keras_variables(weights)
    our_vars[0].constraint, their_vars[0].constraint = constraint, keras_constraint
    for grads in fixed_gradients():
        before = our_vars[0].value
        ours.apply_gradients(zip(grads, our_vars))
        theirs.apply_gradients(zip(grads, their_vars))
        for mine, reference in zip(our_vars, their_vars):
            assert_close(mine.value, reference)
        np.testing.assert_allclose(our_vars[0].value, constraint(our_vars[0].value), rtol=1e-6)
    assert not np.array_equal(before, our_vars[0].value)


def test_missing_gradients_are_skipped_with_keras_warning():
    ours, theirs = make_pair("Adam", learning_rate=0.1)
    weights = initial_weights()
    our_vars, their_vars = our_variables(weights), keras_variables(weights)
    for grads in fixed_gradients(3):
        with pytest.warns(UserWarning, match=r"Gradients do not exist for variables \['dense/bias'\]"):
            ours.apply([grads[0], None], our_vars)
        with pytest.warns(UserWarning):
            theirs.apply([grads[0], None], their_vars)
        for mine, reference in zip(our_vars, their_vars):
            assert_close(mine.value, reference)
    np.testing.assert_array_equal(our_vars[1].value, weights[1])
    assert ours.iterations == 3
    with pytest.raises(ValueError, match="No gradients provided for any variable."):
        ours.apply([None, None], our_vars)


def test_learning_rate_can_be_set_mid_training_as_callbacks_do():
    ours, theirs = make_pair("RMSprop", learning_rate=0.1, momentum=0.5)
    weights = initial_weights()
    our_vars, their_vars = our_variables(weights), keras_variables(weights)
    for step, grads in enumerate(fixed_gradients()):
        if step == 2:
            ours.learning_rate = theirs.learning_rate = 0.02
        ours.apply_gradients(zip(grads, our_vars))
        theirs.apply_gradients(zip(grads, their_vars))
        for mine, reference in zip(our_vars, their_vars):
            assert_close(mine.value, reference)
    assert ours.learning_rate == 0.02 and ours.get_config()["learning_rate"] == 0.02
    with pytest.raises(ValueError, match=r"non-negative float or a LearningRateSchedule. Received: learning_rate=-1"):
        ours.learning_rate = -1


def test_schedule_is_evaluated_at_iterations_and_not_settable():
    optimizer = SGD(learning_rate=schedules.PiecewiseConstantDecay([1], [0.5, 0.1]))
    variable = our_variables(initial_weights())[1]
    rates = []
    for _ in range(3):
        rates.append(optimizer.learning_rate)
        optimizer.apply([np.ones(4, "float32")], [variable])
    assert rates == [0.5, 0.5, 0.1] and optimizer.iterations == 3
    np.testing.assert_allclose(variable.value, initial_weights()[1] - 1.1, rtol=1e-6)
    with pytest.raises(TypeError, match="created with a `LearningRateSchedule` object .* hence its learning rate "
                                        "is not settable"):
        optimizer.learning_rate = 0.1


def test_global_clipnorm_turns_non_finite_gradients_into_nan_as_keras_does():
    grads = fixed_gradients(1)
    grads[0][0][0, 0] = np.inf
    _, variables = assert_matches_keras("SGD", grads=grads, learning_rate=0.1, global_clipnorm=1.0)
    assert all(np.isnan(v.value).all() for v in variables)


@pytest.mark.parametrize("name", sorted(ALL_SLOTS))
def test_state_round_trip_resumes_exactly(name):
    first, _ = make_pair(name, learning_rate=0.05, **ALL_SLOTS[name])
    first_vars = our_variables(initial_weights())
    grads = fixed_gradients(6)
    for step_grads in grads[:3]:
        first.apply_gradients(zip(step_grads, first_vars))
    store = {}
    first.save_own_variables(store)
    assert list(store) == [str(i) for i in range(len(first.variables))]
    second = type(first).from_config(first.get_config())
    second_vars = our_variables([v.value for v in first_vars])
    second.build(second_vars)
    second.load_own_variables(store)
    assert second.iterations == 3
    for step_grads in grads[3:]:
        first.apply_gradients(zip(step_grads, first_vars))
        second.apply_gradients(zip(step_grads, second_vars))
    for a, b in zip(first_vars + first.variables, second_vars + second.variables):
        np.testing.assert_array_equal(a.value, b.value)


@pytest.mark.parametrize("name", sorted(ALL_SLOTS))
def test_state_saved_by_keras_loads_and_resumes(name):
    ours, theirs = make_pair(name, learning_rate=0.05, **ALL_SLOTS[name])
    their_vars = keras_variables(initial_weights())
    grads = fixed_gradients(6)
    for step_grads in grads[:3]:
        theirs.apply_gradients(zip(step_grads, their_vars))
    store = {}
    theirs.save_own_variables(store)
    our_vars = our_variables([np.asarray(v) for v in their_vars])
    ours.build(our_vars)
    ours.load_own_variables(store)
    for step_grads in grads[3:]:
        ours.apply_gradients(zip(step_grads, our_vars))
        theirs.apply_gradients(zip(step_grads, their_vars))
    for mine, reference in zip(our_vars + ours.variables, their_vars + theirs.variables):
        assert_close(mine.value, reference)



@pytest.mark.parametrize("learning_rate", [0.05, schedules.ExponentialDecay(0.1, 2, 0.5)])
@pytest.mark.parametrize("name", sorted(ALL_SLOTS))
def test_state_saved_before_the_first_update_resets_a_built_optimizer(name, learning_rate):
    options = {**ALL_SLOTS[name], "learning_rate": learning_rate}
    never_updated, _ = make_pair(name, **options)
    store = {}
    never_updated.save_own_variables(store)
    assert len(store) == len(never_updated.variables) == (2 if learning_rate == 0.05 else 1)
    trained, _ = make_pair(name, **options)
    trained_vars = our_variables(initial_weights())
    for step_grads in fixed_gradients(3):
        trained.apply_gradients(zip(step_grads, trained_vars))
    trained.load_own_variables(store)
    fresh_vars = our_variables([v.value for v in trained_vars])
    for step_grads in fixed_gradients(4):
        never_updated.apply_gradients(zip(step_grads, fresh_vars))
        trained.apply_gradients(zip(step_grads, trained_vars))
    assert trained.iterations == never_updated.iterations == 4
    assert [v.name for v in trained.variables] == [v.name for v in never_updated.variables]
    for a, b in zip(fresh_vars + never_updated.variables, trained_vars + trained.variables):
        np.testing.assert_array_equal(a.value, b.value)


def _compiled_model(name):
    x = Input(shape=(3,))
    model = Model(x, Dense(2)(Dense(4, activation="relu")(x)))
    model.compile(optimizer=get({"class_name": name, "config": {"learning_rate": 0.05, **ALL_SLOTS[name]}}),
                  loss="mse")
    return model


def _fit_both(first, second, epochs=1):
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(24, 3)), rng.normal(size=(24, 2))
    for model in (first, second):
        model.fit(x, y, batch_size=8, epochs=epochs, shuffle=False, verbose=0)
    for a, b in zip(first.get_weights(), second.get_weights()):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(first.optimizer.variables, second.optimizer.variables):
        assert a.name == b.name
        np.testing.assert_array_equal(a.value, b.value)


@pytest.mark.parametrize("name", sorted(ALL_SLOTS))
def test_a_model_saved_before_fit_loads_and_trains_exactly_like_the_original(name, tmp_path):
    model = _compiled_model(name)
    model.save(tmp_path / "never_fitted.nw")
    loaded = load_model(tmp_path / "never_fitted.nw")
    assert type(loaded.optimizer) is type(model.optimizer) and loaded.optimizer.iterations == 0
    _fit_both(model, loaded)


@pytest.mark.parametrize("name", sorted(ALL_SLOTS))
def test_a_model_saved_after_fit_round_trips_the_optimizer_state_exactly(name, tmp_path):
    model = _compiled_model(name)
    model.fit(np.ones((8, 3)), np.zeros((8, 2)), verbose=0)
    model.save(tmp_path / "fitted.nw")
    loaded = load_model(tmp_path / "fitted.nw")
    assert loaded.optimizer.iterations == 1
    for a, b in zip(model.optimizer.variables, loaded.optimizer.variables):
        assert a.value.dtype == b.value.dtype
        np.testing.assert_array_equal(a.value, b.value)
    _fit_both(model, loaded, epochs=2)

def test_load_errors_name_the_mismatch():
    store = {}
    optimizer = Adam()
    optimizer.apply_gradients(zip(fixed_gradients(1)[0], our_variables(initial_weights())))
    optimizer.save_own_variables(store)
    with pytest.raises(ValueError, match=r"optimizer 'adam_1': it has 2 variables whereas the saved optimizer has "
                                         r"6 variables. Build it first"):
        Adam().load_own_variables(store)
    fresh = Adam()
    fresh.build(our_variables([np.zeros((2, 2), "float32"), np.zeros(4, "float32")]))
    with pytest.raises(ValueError, match="Cannot assign a value of shape"):
        fresh.load_own_variables(store)


@pytest.mark.parametrize("name", sorted(ALL_SLOTS))
def test_float64_weights_stay_float64(name):
    ours, _ = make_pair(name, learning_rate=0.05, weight_decay=0.1, clipnorm=2.5, **ALL_SLOTS[name])
    reference, _ = make_pair(name, learning_rate=0.05, weight_decay=0.1, clipnorm=2.5, **ALL_SLOTS[name])
    doubles, singles = our_variables(initial_weights("float64")), our_variables(initial_weights())
    for grads in fixed_gradients(dtype="float64"):
        ours.apply_gradients(zip(grads, doubles))
        reference.apply_gradients(zip(grads, singles))
    assert all(v.value.dtype == np.float64 for v in doubles)
    assert all(v.value.dtype in (np.float64, np.int64) for v in ours.variables)
    assert all(v.value.dtype == np.float32 for v in singles)
    # Loose: the float32 run's rounding is amplified by Adam's division by sqrt(v).
    for double, single in zip(doubles, singles):
        np.testing.assert_allclose(double.value, single.value, rtol=1e-4, atol=1e-5)


def test_apply_after_build_and_empty_gradients():
    optimizer = SGD(learning_rate=0.5)
    variables = our_variables(initial_weights())
    optimizer.apply([])
    assert optimizer.iterations == 0 and not optimizer.built
    optimizer.build(variables)
    optimizer.apply([np.ones((3, 4)), np.ones(4)])
    np.testing.assert_allclose(variables[1].value, initial_weights()[1] - 0.5, rtol=1e-6)
    assert variables[1].value.dtype == np.float32


def test_bad_arguments():
    with pytest.raises(ValueError, match=r"SGD expects `learning_rate` to be a non-negative float or a "
                                         r"LearningRateSchedule. Received: learning_rate=-0.1"):
        SGD(learning_rate=-0.1)
    for bad in ("0.1", math.nan, True, None):
        with pytest.raises(ValueError, match=f"Received: learning_rate={bad!r}"):
            Adam(learning_rate=bad)
    with pytest.raises(ValueError, match=r"Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set. "
                                         r"Received: clipnorm=1.0, clipvalue=None, global_clipnorm=2.0"):
        Adam(clipnorm=1.0, global_clipnorm=2.0)
    with pytest.raises(ValueError, match=r"Argument\(s\) not recognized by Adam: \{'decay': 0.1\}"):
        Adam(decay=0.1)
    refused = [({"gradient_accumulation_steps": 1}, "`gradient_accumulation_steps` must be an integer >= 2"),
               ({"gradient_accumulation_steps": 2.5}, "`gradient_accumulation_steps` must be an integer >= 2"),
               ({"loss_scale_factor": 0.0}, "`loss_scale_factor` must be a positive finite float"),
               ({"use_ema": True, "ema_momentum": 1.5}, r"`ema_momentum` must be in the range \[0, 1\]"),
               ({"use_ema": True, "ema_overwrite_frequency": 0.5}, "`ema_overwrite_frequency` must be an integer >= 1")]
    for kwargs, message in refused:
        key, value = list(kwargs.items())[-1]
        with pytest.raises(ValueError, match=rf"^RMSprop: {message}.*Received: {key}={value}$"):
            RMSprop(**kwargs)


def test_bad_apply_calls():
    optimizer = Adam()
    variables = our_variables(initial_weights())
    with pytest.raises(ValueError, match="the optimizer must already be built .* Call `optimizer.build"):
        optimizer.apply([np.ones((3, 4))])
    with pytest.raises(ValueError, match="Adam received 1 gradients for 2 variables"):
        optimizer.apply([np.ones((3, 4))], variables)
    with pytest.raises(ValueError, match=r"The gradient for variable 'dense/bias' has shape \(3,\) but the variable "
                                         r"has shape \(4,\)"):
        optimizer.apply([np.ones((3, 4)), np.ones(3)], variables)
    stranger = our_variables(initial_weights())[0]
    with pytest.raises(ValueError, match="Unknown variable: <Variable path=dense/kernel.*recreate a new optimizer"):
        optimizer.apply([np.ones((3, 4))], [stranger])


# Keras' averaging, loss-scaling and gradient-accumulation arguments, alone and together.
EXTRAS = [
    {"use_ema": True},
    {"use_ema": True, "ema_momentum": 0.8, "ema_overwrite_frequency": 2},
    {"gradient_accumulation_steps": 3, "weight_decay": 0.1, "clipnorm": 1.0},
    {"gradient_accumulation_steps": 2, "learning_rate": {"class_name": "ExponentialDecay", "config": {
        "initial_learning_rate": 0.1, "decay_steps": 2, "decay_rate": 0.5}}},
    {"gradient_accumulation_steps": 2, "use_ema": True, "ema_overwrite_frequency": 1},
    {"loss_scale_factor": 3.0},
]


ALL_EXTRAS = {"use_ema": True, "ema_overwrite_frequency": 2, "gradient_accumulation_steps": 2, "loss_scale_factor": 4.0}


@pytest.mark.parametrize("name, extras", [("Adam", extras) for extras in EXTRAS]
                         + [(name, ALL_EXTRAS) for name in sorted(ALL_SLOTS)])
def test_averaging_scaling_and_accumulation_match_keras(name, extras):
    ours, _ = assert_matches_keras(name, grads=fixed_gradients(7), **{"learning_rate": 0.05, **extras},
                                   **ALL_SLOTS[name])
    assert ours.get_config()["gradient_accumulation_steps"] == extras.get("gradient_accumulation_steps")


def test_accumulated_steps_count_as_one_update():
    optimizer = SGD(learning_rate=0.5, gradient_accumulation_steps=2)
    [w] = our_variables([np.zeros(1, "float32")])
    optimizer.apply([np.array([1.0], "float32")], [w])
    assert optimizer.iterations == 0 and w.value[0] == 0.0
    optimizer.apply([np.array([3.0], "float32")], [w])
    assert optimizer.iterations == 1 and w.value[0] == -1.0  # half the mean gradient
    assert int(optimizer.variables[0].value) == 2


def _keras_and_our_dense_models(optimizer_config):
    x = keras.Input((3,))
    theirs = keras.Model(x, keras.layers.Dense(2)(keras.layers.Dense(4, activation="tanh")(x)))
    inputs = Input(shape=(3,))
    ours = Model(inputs, Dense(2)(Dense(4, activation="tanh")(inputs)))
    ours.set_weights([np.asarray(w) for w in theirs.weights])
    theirs.compile(optimizer=keras.optimizers.get(optimizer_config), loss="mse")
    ours.compile(optimizer=get(optimizer_config), loss="mse")
    return ours, theirs


@pytest.mark.parametrize("extras", [
    {"use_ema": True, "ema_momentum": 0.5},
    {"use_ema": True, "ema_momentum": 0.7, "ema_overwrite_frequency": 3},
    {"gradient_accumulation_steps": 2},
    {"loss_scale_factor": 64.0},
])
def test_fit_matches_keras(extras):
    """fit scales the loss and, at its end, gives the weights their averages, as Keras' fit does."""
    config = {"class_name": "Adam", "config": {"learning_rate": 0.05, **extras}}
    ours, theirs = _keras_and_our_dense_models(config)
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=(20, 3)).astype("float32"), rng.normal(size=(20, 2)).astype("float32")
    for model in (ours, theirs):
        model.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0)
    assert ours.optimizer.iterations == int(theirs.optimizer.iterations)
    for mine, reference in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(mine, reference, rtol=1e-5, atol=1e-6)
    for mine, reference in zip(ours.optimizer.variables, theirs.optimizer.variables):
        np.testing.assert_allclose(mine.value, np.asarray(reference), rtol=1e-5, atol=1e-6)


def _averages(optimizer):
    return [v.value for v in optimizer.variables if v.name.endswith("_average")]


def test_fit_ends_with_the_averages_and_train_on_batch_does_not():
    ours, _ = _keras_and_our_dense_models({"class_name": "SGD", "config": {"learning_rate": 0.1, "use_ema": True}})
    ours.fit(np.ones((4, 3)), np.zeros((4, 2)), batch_size=2, epochs=1, verbose=0)
    for weight, average in zip(ours.trainable_weights, _averages(ours.optimizer)):
        np.testing.assert_array_equal(weight.value, average)
    ours.train_on_batch(np.ones((4, 3)), np.zeros((4, 2)))
    pairs = zip(ours.trainable_weights, _averages(ours.optimizer))
    assert not any(np.array_equal(weight.value, average) for weight, average in pairs)
    with pytest.raises(ValueError, match="keeps the averages of 4 variables but received 1 variables"):
        ours.optimizer.finalize_variable_values(ours.trainable_weights[:1])
