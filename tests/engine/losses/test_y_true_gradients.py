"""Every loss class differentiates a traced y_true where its function does (soft targets that train, as in
keras-io's knowledge distillation), checked against central finite differences."""

import numpy as np
import pytest

from engine.training import losses
from engine.autodiff import GradientTape
from tests.engine.autodiff.gradcheck import numeric_gradients

RNG = np.random.default_rng(0)
PROBABILITIES = RNG.dirichlet(np.ones(4), size=3)           # rows summing to 1
OTHER_PROBABILITIES = RNG.dirichlet(np.ones(4), size=3)
POSITIVE = RNG.uniform(0.5, 2.0, size=(3, 4))
REAL = RNG.normal(size=(3, 4))
BINARY = RNG.uniform(0.1, 0.9, size=(3, 4))
LABELS = np.array([0.0, 2.0, 1.0])  # class indices, as floats: a tape can watch them, nothing differentiates them

# class, its function, y_true, y_pred, sample weight (None or per sample)
CASES = [
    (losses.MeanSquaredError, losses.mean_squared_error, REAL, REAL[::-1], None),
    (losses.MeanSquaredError, losses.mean_squared_error, REAL, REAL[::-1], np.array([1.0, 0.5, 2.0])),
    (losses.MeanAbsoluteError, losses.mean_absolute_error, REAL, REAL[::-1] + 0.1, None),
    (losses.MeanAbsolutePercentageError, losses.mean_absolute_percentage_error, POSITIVE, POSITIVE[::-1] + 0.1,
     None),
    (losses.MeanSquaredLogarithmicError, losses.mean_squared_logarithmic_error, POSITIVE, POSITIVE[::-1], None),
    (losses.Huber, losses.huber, REAL, REAL[::-1] * 2, None),
    (losses.LogCosh, losses.log_cosh, REAL, REAL[::-1], None),
    (losses.CosineSimilarity, losses.cosine_similarity, REAL, REAL[::-1], None),
    (losses.BinaryCrossentropy, losses.binary_crossentropy, BINARY, BINARY[::-1], None),
    (losses.CategoricalCrossentropy, losses.categorical_crossentropy, PROBABILITIES, OTHER_PROBABILITIES, None),
    (losses.KLDivergence, losses.kl_divergence, PROBABILITIES, OTHER_PROBABILITIES, None),
    (losses.KLDivergence, losses.kl_divergence, PROBABILITIES, OTHER_PROBABILITIES, np.array([2.0, 1.0, 0.0])),
    (losses.Poisson, losses.poisson, POSITIVE, POSITIVE[::-1], None),
    (losses.BinaryFocalCrossentropy, losses.binary_focal_crossentropy, BINARY, BINARY[::-1], None),
    (losses.CategoricalFocalCrossentropy, losses.categorical_focal_crossentropy, PROBABILITIES,
     OTHER_PROBABILITIES, None),
    (losses.CategoricalGeneralizedCrossEntropy,
     lambda t, p: losses.categorical_generalized_cross_entropy(t, p, 0.5), LABELS, OTHER_PROBABILITIES, None),
    (losses.SparseCategoricalCrossentropy, losses.sparse_categorical_crossentropy, LABELS, OTHER_PROBABILITIES,
     None),
    (losses.Hinge, losses.hinge, np.sign(REAL), REAL[::-1], None),
    (losses.SquaredHinge, losses.squared_hinge, np.sign(REAL), REAL[::-1], None),
    (losses.CategoricalHinge, losses.categorical_hinge, PROBABILITIES, OTHER_PROBABILITIES, None),
    (losses.Dice, losses.dice, BINARY, BINARY[::-1], None),
    (losses.Tversky, losses.tversky, BINARY, BINARY[::-1], None),
]


def _target_gradient(loss, y_true, y_pred, sample_weight):
    with GradientTape() as tape:
        true = tape.watch(y_true)
        value = loss(true, y_pred, sample_weight=sample_weight) if sample_weight is not None else loss(true, y_pred)
    return tape.gradient(value, true)


@pytest.mark.parametrize("cls, function, y_true, y_pred, sample_weight", CASES,
                         ids=[f"{c[0].__name__}{'-weighted' if c[4] is not None else ''}" for c in CASES])
def test_loss_classes_differentiate_y_true_where_their_function_does(cls, function, y_true, y_pred, sample_weight):
    loss = cls()
    of_class = _target_gradient(loss, y_true, y_pred, sample_weight)
    of_function = _target_gradient(lambda t, p: np.mean(function(t, p)), y_true, y_pred, None)
    if of_function is None:  # the function reads y_true as labels: neither gives it a gradient
        assert of_class is None
        return
    assert of_class is not None and of_class.shape == y_true.shape
    expected = numeric_gradients(lambda t: loss(t, y_pred, sample_weight=sample_weight), [y_true.copy()], 1.0)[0]
    np.testing.assert_allclose(of_class, expected, rtol=1e-5, atol=1e-7)


def test_both_arguments_traced_get_their_gradients_on_one_tape():
    loss = losses.KLDivergence()
    with GradientTape() as tape:
        teacher, student = tape.watch(PROBABILITIES), tape.watch(OTHER_PROBABILITIES)
        value = loss(teacher, student)
    d_teacher, d_student = tape.gradient(value, [teacher, student])
    np.testing.assert_allclose(d_student, loss.gradient(PROBABILITIES, OTHER_PROBABILITIES))
    expected = numeric_gradients(lambda t: loss(t, OTHER_PROBABILITIES), [PROBABILITIES.copy()], 1.0)[0]
    np.testing.assert_allclose(d_teacher, expected, rtol=1e-5, atol=1e-7)


def test_traced_labels_are_read_as_labels():
    loss = losses.SparseCategoricalCrossentropy()
    with GradientTape() as tape:
        labels, pred = tape.watch(LABELS), tape.watch(OTHER_PROBABILITIES)
        value = loss(labels, pred)
    d_labels, d_pred = tape.gradient(value, [labels, pred])
    assert d_labels is None
    np.testing.assert_allclose(d_pred, loss.gradient(LABELS.astype(int), OTHER_PROBABILITIES))
