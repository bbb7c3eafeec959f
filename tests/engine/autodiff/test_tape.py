"""GradientTape and record_op: Variables as leaves, hand-written steps, nesting, threads, memory."""

import asyncio
import gc
import threading
import tracemalloc

import numpy as np
import pytest

from engine import Variable
from engine.autodiff import GradientTape, Traced, record_op, recording
from tests.engine.autodiff.gradcheck import numeric_gradients


def variable(value, name="w", trainable=True):
    return Variable(np.asarray(value), name=name, path=f"layer/{name}", trainable=trainable)


def test_simple_dense_on_variables_matches_finite_differences():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 3))
    w, b = variable(rng.normal(size=(3, 2)), "kernel"), variable(rng.normal(size=2), "bias")
    weights = rng.normal(size=(4, 2))
    with GradientTape() as tape:
        y = np.matmul(x, w) + b  # what a Keras-style custom layer's call does
    dw, db = tape.gradient(y, [w, b], output_gradients=weights)
    expected = numeric_gradients(lambda kernel, bias: np.matmul(x, kernel) + bias, [w.value, b.value], weights)
    np.testing.assert_allclose(dw, expected[0], rtol=1e-6)
    np.testing.assert_allclose(db, expected[1], rtol=1e-6)
    assert tape.watched_variables() == [w, b]


def test_variable_operators_trace_and_one_leaf_per_tape():
    w = variable(np.array([1.0, 2.0]))
    with GradientTape() as tape:
        y = np.sum(w * w + 3 * w - w / 2 + w @ w + abs(-w) + w[[0, 0]].sum() + w ** 2)
    (dw,) = tape.gradient(y, [w])
    # summed over 2 entries: w^2 + 3w - w/2 + (w.w, broadcast) + |w| + (2 w[0], broadcast) + w^2
    np.testing.assert_allclose(dw, 2 * w.value + 3 - 0.5 + 2 * 2 * w.value + 1 + np.array([4.0, 0.0]) + 2 * w.value)
    assert tape.watched_variables() == [w]


def test_embedding_lookup_on_a_variable_accumulates_repeated_ids():
    table = variable(np.arange(12.0).reshape(4, 3), "embeddings")
    with GradientTape() as tape:
        y = table[np.array([[1, 1], [3, 1]])]
    np.testing.assert_array_equal(tape.gradient(y, table), [[0, 0, 0], [3, 3, 3], [0, 0, 0], [1, 1, 1]])


def test_non_trainable_variable_is_a_constant():
    frozen = variable(np.array([2.0]), trainable=False)
    with GradientTape() as tape:
        x = tape.watch(np.array([3.0]))
        y = x * frozen
    assert tape.gradient(y, [frozen, x])[0] is None
    assert tape.watched_variables() == []


def test_watch_accessed_variables_false_watches_only_what_it_is_given():
    w, v = variable([2.0], "w"), variable([5.0], "v")
    with GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(w)
        y = w * v
    dw, dv = tape.gradient(y, [w, v])
    np.testing.assert_array_equal(dw, [5.0])
    assert dv is None
    assert tape.watched_variables() == [w]


def test_without_a_tape_variables_and_numpy_calls_stay_plain():
    w = variable(np.eye(2, dtype="float32"))
    x = np.ones((1, 2), "float32")
    assert not recording()
    for result in (np.matmul(x, w), x @ w, w + 1, 1 - w, np.concatenate([w, x]), np.tanh(w), w[0], np.sum(w)):
        assert not isinstance(result, Traced)
    assert (np.matmul(x, w)).dtype == np.float32


def _gate_backward(calls):
    def backward(cache, grads):
        calls.append(1)
        a, b, W, V = cache
        u, v = np.tanh(a @ W), b @ V
        g = grads[0]
        du, dv = g * v * (1 - u * u), g * u
        return [du @ W.T, dv @ V.T], {W_var: a.T @ du, V_var: b.T @ dv}
    return backward


W_var, V_var = variable(np.random.default_rng(1).normal(size=(3, 2)), "W"), \
    variable(np.random.default_rng(2).normal(size=(4, 2)), "V")


def _gate(a, b, calls):
    """tanh(a @ W) * (b @ V), with a hand-written backward, as ONE step."""
    av = a.value if isinstance(a, Traced) else a
    bv = b.value if isinstance(b, Traced) else b
    out = np.tanh(av @ W_var.value) * (bv @ V_var.value)
    cache = (av, bv, W_var.value, V_var.value)
    (y,) = record_op(lambda grads: _gate_backward(calls)(cache, grads), [a, b], [out], [W_var, V_var], name="gate")
    return y


def test_record_op_mixed_with_traced_ops_matches_finite_differences_and_runs_backward_once():
    rng = np.random.default_rng(3)
    x1, x2 = rng.normal(size=(5, 3)), rng.normal(size=(5, 4))
    calls = []

    def model(x1, x2, calls=calls):
        y = _gate(np.tanh(x1 * 2), x2 ** 2, calls)  # traced ops before
        return y * 3 + np.sin(y)                     # and after, the output used twice

    with GradientTape() as tape:
        a, b = tape.watch(x1), tape.watch(x2)
        z = model(a, b)
    weights = rng.normal(size=(5, 2))
    grads = tape.gradient(z, [a, b, W_var, V_var], output_gradients=weights)
    assert len(calls) == 1 and len(tape.watched_variables()) == 2

    def plain(x1, x2, w, v):
        y = np.tanh(np.tanh(x1 * 2) @ w) * (x2 ** 2 @ v)
        return y * 3 + np.sin(y)
    expected = numeric_gradients(plain, [x1, x2, W_var.value.copy(), V_var.value.copy()], weights)
    for got, want in zip(grads, expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def test_record_op_with_constant_inputs_still_differentiates_its_variables():
    calls = []
    with GradientTape() as tape:
        y = _gate(np.ones((2, 3)), np.ones((2, 4)), calls)
        loss = np.sum(y)
    dW, dV = tape.gradient(loss, [W_var, V_var])
    assert dW.shape == (3, 2) and dV.shape == (4, 2) and len(calls) == 1


def test_record_op_outputs_without_gradient_get_zeros_and_non_float_outputs_stay_plain():
    seen = []

    def backward(grads):
        seen.append([g.copy() for g in grads])
        return [grads[0] * 2 + grads[1]], {}

    with GradientTape() as tape:
        x = tape.watch(np.array([1.0, 2.0]))
        first, second, index = record_op(backward, [x], [x.value * 2, x.value + 1, np.array([1, 0])], name="two")
        loss = np.sum(first)
    assert isinstance(first, Traced) and isinstance(second, Traced) and not isinstance(index, Traced)
    np.testing.assert_array_equal(tape.gradient(loss, x), [2.0, 2.0])
    np.testing.assert_array_equal(seen[0][1], [0.0, 0.0])


def test_record_op_without_a_tape_returns_the_outputs_unchanged():
    out = np.ones(2)
    assert record_op(lambda g: ([None], {}), [np.ones(2)], [out])[0] is out


def test_record_op_backward_with_the_wrong_number_of_gradients_is_named():
    with GradientTape() as tape:
        x = tape.watch(np.ones(2))
        (y,) = record_op(lambda g: ([g[0], g[0]], {}), [x], [np.ones(2)], name="dense_3")
    with pytest.raises(ValueError, match="backward of dense_3 returned 2 input gradients for its 1 inputs"):
        tape.gradient(y, x)


def test_nested_tapes_each_differentiate_their_own_values():
    w = variable([3.0])
    with GradientTape() as outer:
        x = outer.watch(np.array([2.0]))
        y = x * x
        with GradientTape() as inner:
            z = inner.watch(y.value) * w  # Variables become leaves of the innermost tape
        assert recording()
    np.testing.assert_array_equal(outer.gradient(y, x), [4.0])
    dz = inner.gradient(z, [w])
    np.testing.assert_array_equal(dz[0], [4.0])
    assert outer.watched_variables() == [w] and inner.watched_variables() == [w]  # both tapes record w


def test_values_of_two_tapes_meet_on_the_inner_tape_and_stay_traced_on_the_outer():
    w = variable([3.0])
    with GradientTape() as outer:
        x = outer.watch(np.array([2.0]))
        with GradientTape() as inner:
            y = x * w
    np.testing.assert_array_equal(inner.gradient(y, w), [2.0])  # x is a constant to the inner tape
    np.testing.assert_array_equal(outer.gradient(y, [x, w]), [[3.0], [2.0]])


def test_inner_tape_that_does_not_watch_a_variable_leaves_it_to_the_outer_one():
    w = variable([3.0])
    with GradientTape() as outer, GradientTape(watch_accessed_variables=False):
        y = w * 2
    np.testing.assert_array_equal(outer.gradient(y, w), [2.0])


def test_persistent_tape_answers_twice_and_non_persistent_once():
    with GradientTape(persistent=True) as tape:
        x = tape.watch(np.array([1.0, 2.0]))
        y = x ** 2
        z = np.sum(x * 3)
    np.testing.assert_array_equal(tape.gradient(y, x), [2.0, 4.0])
    np.testing.assert_array_equal(tape.gradient(z, x), [3.0, 3.0])
    with GradientTape() as tape:
        x = tape.watch(np.array([1.0]))
        y = x * 2
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="non-persistent GradientTape can only be used to compute one set of "
                                           "gradients.*persistent=True"):
        tape.gradient(y, x)
    assert not isinstance(y * 2, Traced) and not recording()  # its values are constants now


def test_unconnected_sources_and_constant_targets_give_none_in_the_structure_of_sources():
    w, unused = variable([1.0], "w"), variable([1.0], "unused")
    with GradientTape(persistent=True) as tape:
        x, other = tape.watch(np.array([2.0])), tape.watch(np.array([5.0]))
        y = x * w
        constant = np.ones(1)
    grads = tape.gradient(y, {"w": w, "pair": (x, other), "nested": [unused]})
    np.testing.assert_array_equal(grads["w"], [2.0])
    np.testing.assert_array_equal(grads["pair"][0], [1.0])
    assert grads["pair"][1] is None and grads["nested"] == [None] and isinstance(grads["pair"], tuple)
    assert tape.gradient(constant, [x, w]) == [None, None]
    assert tape.gradient(np.sum(x.value), [x]) == [None]


def test_structured_targets_and_output_gradients():
    with GradientTape() as tape:
        x = tape.watch(np.array([1.0, 2.0]))
        targets = {"a": x * 2, "b": [x ** 2]}
    grad = tape.gradient(targets, x, output_gradients={"a": np.array([1.0, 0.0]), "b": [None]})
    np.testing.assert_array_equal(grad, [2.0 + 2.0, 0.0 + 4.0])


def test_sources_must_be_traced_or_variables():
    with GradientTape() as tape:
        x = np.array([1.0])
        y = tape.watch(x) * 2
    with pytest.raises(TypeError, match="Pass the Traced that tape.watch"):
        tape.gradient(y, [x])


def test_gradients_are_distinct_writeable_arrays():
    with GradientTape() as tape:
        a, b = tape.watch(np.ones(3)), tape.watch(np.ones(3))
        y = a + b
    ga, gb = tape.gradient(y, [a, b])
    assert ga is not gb and ga.flags.writeable and gb.flags.writeable
    ga += 1
    np.testing.assert_array_equal(gb, np.ones(3))


def _train_step(w, b, x):
    with GradientTape() as tape:
        loss = np.mean(np.tanh(x @ w + b) ** 2)
    return tape.gradient(loss, [w, b])


def test_threads_have_their_own_tapes_on_shared_variables():
    rng = np.random.default_rng(4)
    w, b = variable(rng.normal(size=(6, 3)), "w"), variable(rng.normal(size=3), "b")
    inputs = [rng.normal(size=(5, 6)) for _ in range(8)]
    expected = [_train_step(w, b, x) for x in inputs]
    results, barrier = [None] * 8, threading.Barrier(8)

    def work(i):
        barrier.wait()
        for _ in range(50):
            results[i] = _train_step(w, b, inputs[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    with GradientTape() as main_tape:  # recording here must not leak into the threads
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert main_tape.watched_variables() == []
    for got, want in zip(results, expected):
        for g, e in zip(got, want):
            np.testing.assert_array_equal(g, e)


def test_a_thread_does_not_see_another_threads_tape():
    seen = []
    with GradientTape():
        thread = threading.Thread(target=lambda: seen.append(recording()))
        thread.start()
        thread.join()
        assert recording()
    assert seen == [False]


def test_asyncio_tasks_have_their_own_tapes():
    w = variable([2.0])

    async def step(x):
        with GradientTape() as tape:
            y = w * x
            await asyncio.sleep(0)
            y = y * x
            await asyncio.sleep(0)
        return tape.gradient(y, w)

    async def both():
        return await asyncio.gather(step(3.0), step(5.0))

    first, second = asyncio.run(both())
    np.testing.assert_array_equal(first, [9.0])
    np.testing.assert_array_equal(second, [25.0])


def test_memory_stays_flat_over_1000_training_steps():
    rng = np.random.default_rng(5)
    w, b = variable(rng.normal(size=(64, 32)).astype("float32"), "w"), variable(np.zeros(32, "float32"), "b")
    x = rng.normal(size=(32, 64)).astype("float32")

    def step():
        with GradientTape() as tape:
            h = np.maximum(x @ w + b, 0)
            loss = np.mean(np.exp(h - np.max(h, axis=-1, keepdims=True)))
        dw, db = tape.gradient(loss, [w, b])
        w.value, b.value = w.value - 0.01 * dw, b.value - 0.01 * db

    tracemalloc.start()
    try:
        for i in range(1000):
            step()
            if i == 99:
                gc.collect()
                start = tracemalloc.get_traced_memory()[0]
        gc.collect()
        growth = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert growth < 64 * 1024, f"grew by {growth} bytes over 900 steps"


def test_a_released_tape_drops_what_it_recorded():
    with GradientTape() as tape:
        x = tape.watch(np.ones(1000))
        for _ in range(10):
            x = x * 1.5
    tape.gradient(x, x)
    assert tape._ops is None and tape._meta is None
