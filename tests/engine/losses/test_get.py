import numpy as np
import pytest

from engine.training import losses
from tests.engine.losses.oracle import keras

NAMES = {
    "mse": losses.MeanSquaredError, "mean_squared_error": losses.MeanSquaredError,
    "mae": losses.MeanAbsoluteError, "mean_absolute_error": losses.MeanAbsoluteError,
    "huber": losses.Huber, "binary_crossentropy": losses.BinaryCrossentropy, "bce": losses.BinaryCrossentropy,
    "categorical_crossentropy": losses.CategoricalCrossentropy,
    "sparse_categorical_crossentropy": losses.SparseCategoricalCrossentropy,
    "kl_divergence": losses.KLDivergence, "kld": losses.KLDivergence, "cosine_similarity": losses.CosineSimilarity,
    "hinge": losses.Hinge, "squared_hinge": losses.SquaredHinge, "categorical_hinge": losses.CategoricalHinge,
    "log_cosh": losses.LogCosh, "poisson": losses.Poisson, "dice": losses.Dice, "tversky": losses.Tversky,
    "binary_focal_crossentropy": losses.BinaryFocalCrossentropy,
    "categorical_focal_crossentropy": losses.CategoricalFocalCrossentropy,
    "CategoricalGeneralizedCrossEntropy": losses.CategoricalGeneralizedCrossEntropy,
}
CONFIGURED = [
    losses.MeanSquaredError(reduction="sum", name="squared"),
    losses.MeanAbsoluteError(reduction=None),
    losses.Huber(delta=0.3, reduction="mean_with_sample_weight"),
    losses.CosineSimilarity(axis=0),
    losses.BinaryCrossentropy(from_logits=True, label_smoothing=0.1, axis=1),
    losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.2),
    losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=255, reduction="sum"),
    losses.KLDivergence(reduction="mean"),
    losses.Hinge(reduction="sum"), losses.SquaredHinge(), losses.CategoricalHinge(name="ch"), losses.LogCosh(),
    losses.Poisson(reduction=None),
    losses.BinaryFocalCrossentropy(apply_class_balancing=True, alpha=0.3, gamma=1.0, from_logits=True),
    losses.CategoricalFocalCrossentropy(alpha=0.5, label_smoothing=0.1, axis=1),
    losses.CategoricalGeneralizedCrossEntropy(q=0.3), losses.Dice(axis=(1, 2)),
    losses.Tversky(alpha=0.2, beta=0.8, axis=-1),
]


@pytest.mark.parametrize("name", NAMES)
def test_names_give_the_keras_class_with_keras_names(name):
    loss = losses.get(name)
    assert type(loss) is NAMES[name]
    assert loss.name == getattr(keras.losses, type(loss).__name__)().name


@pytest.mark.parametrize("loss", CONFIGURED, ids=lambda loss: type(loss).__name__)
def test_config_and_serialize_round_trip(loss):
    clone = type(loss).from_config(loss.get_config())
    assert clone.get_config() == loss.get_config()
    assert losses.get(losses.serialize(loss)).get_config() == loss.get_config()


@pytest.mark.parametrize("loss", CONFIGURED, ids=lambda loss: type(loss).__name__)
def test_configs_saved_by_keras_load(loss):
    config = loss.get_config()
    theirs = getattr(keras.losses, type(loss).__name__)(**config)
    keras_config = keras.losses.serialize(theirs)
    ours = losses.get(keras_config)
    assert type(ours) is type(loss)
    assert set(ours.get_config().items()) >= set(keras_config["config"].items())


def test_objects_classes_and_none_pass_through():
    loss = losses.Huber()
    assert losses.get(loss) is loss
    assert type(losses.get(losses.Huber)) is losses.Huber
    assert losses.get(None) is None and losses.serialize(None) is None


def test_unknown_names_are_refused_with_a_fix_and_functions_are_wrapped():
    with pytest.raises(ValueError, match=r"Unknown loss: 'msee' \(known: .*\). Did you mean 'mse'\?"):
        losses.get("msee")
    wrapped = losses.get(lambda y_true, y_pred: np.sum((y_pred - y_true) ** 2, axis=-1))
    assert isinstance(wrapped, losses.LossFunctionWrapper) and wrapped.name == "<lambda>"
    y_true, y_pred = np.zeros((2, 3), "float32"), np.ones((2, 3), "float32")
    assert wrapped(y_true, y_pred) == 3.0
    np.testing.assert_array_equal(wrapped.gradient(y_true, y_pred), np.ones((2, 3), "float32"))
