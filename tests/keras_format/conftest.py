import keras
import pytest


@pytest.fixture(autouse=True)
def keras_seed():
    """Keras draws the initial weights of the models it builds from a fixed seed, so each run compares the same numbers."""
    keras.utils.set_random_seed(1234)
