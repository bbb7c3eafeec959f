"""Several GradientTapes at once: two in one ``with`` (TF's DCGAN), a tape inside a tape (second derivatives,
WGAN-GP's gradient penalty), and traced values read after their tape's block."""

import numpy as np
import pytest

from engine import Input, Layer, Model, Variable
from engine.autodiff import GradientTape, TracingError
from layers import Dense
from tests.engine.autodiff.gradcheck import numeric_gradients


def variable(value, name="w"):
    return Variable(np.asarray(value, "float64"), name=name, path=f"layer/{name}")


def dense_model(units, inputs, seed):
    x = Input(shape=(inputs,))
    model = Model(x, Dense(units[1])(Dense(units[0], activation="tanh")(x)))
    rng = np.random.default_rng(seed)
    model.set_weights([rng.normal(size=w.shape).astype("float32") for w in model.get_weights()])
    return model


def gan_losses(generator, discriminator, noise, images):
    fake = discriminator(generator(noise))
    real = discriminator(images)
    return np.mean((fake - 1) ** 2), np.mean(real ** 2) + np.mean(fake ** 2)


def test_two_tapes_in_one_with_statement_each_give_their_gradients():
    generator, discriminator = dense_model((4, 3), 2, seed=0), dense_model((5, 1), 3, seed=1)
    noise, images = np.ones((6, 2), "float32") * 0.3, np.linspace(-1, 1, 18, dtype="float32").reshape(6, 3)
    with GradientTape() as gen_tape, GradientTape() as disc_tape:
        gen_loss, disc_loss = gan_losses(generator, discriminator, noise, images)
    disc_grads = disc_tape.gradient(disc_loss, discriminator.trainable_variables)
    gen_grads = gen_tape.gradient(gen_loss, generator.trainable_variables)
    for tape_loss, model, grads in [(0, generator, gen_grads), (1, discriminator, disc_grads)]:
        with GradientTape() as alone:  # the same loss on a tape of its own: the reference
            loss = gan_losses(generator, discriminator, noise, images)[tape_loss]
        expected = alone.gradient(loss, model.trainable_variables)
        assert all(g is not None for g in grads)
        for got, want in zip(grads, expected):
            np.testing.assert_allclose(got, want, rtol=1e-5)


def test_the_outer_tape_differentiates_what_the_inner_one_also_recorded():
    w = variable([0.5, -1.0])
    with GradientTape() as outer, GradientTape() as inner:
        y = np.sum(np.tanh(w * 3.0))
    (inner_dw,) = inner.gradient(y, [w])
    (outer_dw,) = outer.gradient(y, [w])
    np.testing.assert_allclose(inner_dw, 3 * (1 - np.tanh(w.value * 3) ** 2))
    np.testing.assert_allclose(outer_dw, inner_dw)


@pytest.mark.parametrize("x0", [np.array([1.5, -2.0, 0.25])])
def test_second_derivative_of_a_cube_is_six_x(x0):
    with GradientTape() as outer:
        x = outer.watch(x0)
        with GradientTape() as inner:
            xi = inner.watch(x)
            y = xi ** 3
        dy = inner.gradient(y, xi)
    np.testing.assert_allclose(dy.value, 3 * x0 ** 2)
    np.testing.assert_allclose(outer.gradient(dy, x), 6 * x0)


def test_third_derivative_through_three_tapes():
    x0 = np.array([0.7, -0.3])
    with GradientTape() as t1:
        x = t1.watch(x0)
        with GradientTape() as t2:
            x2 = t2.watch(x)
            with GradientTape() as t3:
                x3 = t3.watch(x2)
                y = np.sin(x3)
            d1 = t3.gradient(y, x3)
        d2 = t2.gradient(d1, x2)
    np.testing.assert_allclose(t1.gradient(d2, x), -np.cos(x0))  # sin''' = -cos


class TracedCritic(Layer):
    """A critic whose call is NumPy code on its Variables, so tapes trace through it."""

    def build(self, input_shape):
        rng = np.random.default_rng(3)
        self.kernel = self.add_weight(shape=(input_shape[-1], 4), initializer="zeros")
        self.out = self.add_weight(shape=(4, 1), initializer="zeros")
        self.kernel.assign(rng.normal(size=(input_shape[-1], 4)))
        self.out.assign(rng.normal(size=(4, 1)))

    def call(self, x):
        return np.tanh(x @ self.kernel) @ self.out


def gradient_penalty(critic, points):
    """mean over the batch of ||d critic(x) / dx||^2, with the inner tape's gradient."""
    with GradientTape() as inner:
        x = inner.watch(points)
        score = critic(x)
    grads = inner.gradient(score, x)
    return np.mean(np.sum(grads ** 2, axis=1))


def test_gradient_penalty_differentiated_by_the_weights_matches_finite_differences():
    critic = TracedCritic(dtype="float64")
    points = np.random.default_rng(0).normal(size=(5, 3))
    critic(points)
    with GradientTape() as outer:
        penalty = gradient_penalty(critic, points)
    grads = outer.gradient(penalty, critic.trainable_weights)

    def penalty_of(kernel, out):
        critic.kernel.assign(kernel)
        critic.out.assign(out)
        return gradient_penalty(critic, points)

    weights = [np.array(v.value) for v in critic.trainable_weights]
    expected = numeric_gradients(penalty_of, [w.copy() for w in weights], 1.0)
    for got, want in zip(grads, expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-8)


def test_second_derivative_through_a_hand_written_backward_raises():
    critic = dense_model((4, 1), 3, seed=2)  # Dense layers: their backward runs on plain arrays
    points = np.random.default_rng(0).normal(size=(5, 3)).astype("float32")
    with GradientTape() as outer:
        penalty = gradient_penalty(critic, points)
    with pytest.raises(TracingError, match=r"cannot differentiate it again \(a second derivative\).*custom layer"):
        outer.gradient(penalty, critic.trainable_weights)


def test_a_persistent_tape_through_a_functional_model_answers_twice():
    model = dense_model((4, 2), 3, seed=4)
    with GradientTape(persistent=True) as tape:
        loss = np.mean(model(np.ones((2, 3), "float32")) ** 2)
    first = tape.gradient(loss, model.trainable_variables)
    second = tape.gradient(loss, model.trainable_variables)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


def test_a_traced_value_reads_as_its_value_once_its_block_has_ended():
    with GradientTape() as tape:
        x = tape.watch(np.array([1.0, 2.0], "float32"))
        loss = np.sum(x * x)
        with pytest.raises(TracingError, match="numpy.asarray"):
            np.asarray(loss)
        with pytest.raises(TracingError, match="Python number"):
            float(loss)
    assert np.asarray(loss).shape == () and np.asarray(loss) == 5.0
    assert float(loss) == 5.0 and loss.numpy() == np.float32(5.0) and loss.numpy().dtype == np.float32
    assert str(loss) == "5.0" and f"{loss:.2f}" == "5.00" and bool(loss < 6.0)
    np.testing.assert_array_equal(np.asarray(x * 2), [2.0, 4.0])  # recorded after the block, read as a value
    np.testing.assert_array_equal(tape.gradient(loss, x), [2.0, 4.0])  # and the gradient is still there
