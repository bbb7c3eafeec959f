"""PyDataset: Keras 3's base class for datasets of batches written in Python."""

import numpy as np
import pytest

from engine import Input, Model, PyDataset
from layers import Dense


class _Ones(PyDataset):
    def __init__(self, count, **kwargs):
        super().__init__(**kwargs)
        self.count = count

    def __len__(self):
        return self.count

    def __getitem__(self, index):
        return np.full((2, 1), float(index)), np.ones((2, 1))


def test_settings_and_length_are_keras_ones():
    dataset = _Ones(3, workers=4, use_multiprocessing=True, max_queue_size=2)
    assert (dataset.workers, dataset.use_multiprocessing, dataset.max_queue_size) == (4, True, 2)
    assert (_Ones(3).workers, _Ones(3).use_multiprocessing, _Ones(3).max_queue_size) == (1, False, 10)
    assert dataset.num_batches == 3
    assert [x[0, 0] for x, _ in dataset] == [0.0, 1.0, 2.0]


def test_a_dataset_without_getitem_or_length_says_what_to_define():
    with pytest.raises(NotImplementedError, match=r"^PyDataset must define __getitem__\(self, index\)"):
        PyDataset()[0]
    with pytest.raises(NotImplementedError, match=r"^PyDataset must define __len__ \(the number of batches\), or "
                                                  r"the property num_batches"):
        PyDataset().num_batches


def test_a_dataset_without_an_end_is_iterated_without_end():
    class Endless(_Ones):
        num_batches = None

    batches = iter(Endless(0))
    assert [next(batches)[0][0, 0] for _ in range(5)] == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_fit_warns_as_keras_when_a_subclass_skipped_super_init():
    class Forgetful(_Ones):
        def __init__(self):
            self.count = 2

    inputs = Input(shape=(1,))
    model = Model(inputs, Dense(1)(inputs))
    model.compile(optimizer="sgd", loss="mse")
    with pytest.warns(UserWarning, match=r"^Your `PyDataset` class should call `super\(\).__init__\(\*\*kwargs\)`"):
        history = model.fit(Forgetful(), verbose=0)
    assert len(history.history["loss"]) == 1


def test_evaluate_and_predict_read_a_dataset_or_a_generator_batch_by_batch():
    x = Input((1,))
    model = Model(x, Dense(1, kernel_initializer="ones", bias_initializer="zeros")(x))
    model.compile(optimizer="sgd", loss="mse")
    # batches of x = index, y = 1: squared errors (i - 1)^2 over batches 0, 1, 2 average 2/3
    assert model.evaluate(_Ones(3), verbose=0) == pytest.approx(2 / 3)
    assert model.predict(_Ones(3), verbose=0)[:, 0].tolist() == [0, 0, 1, 1, 2, 2]  # the targets are ignored
    generator = (np.full((2, 1), float(i)) for i in range(2))  # inputs only
    assert model.predict(generator, verbose=0)[:, 0].tolist() == [0, 0, 1, 1]
    with pytest.warns(UserWarning, match="`batch_size=8` is ignored"):
        model.predict(_Ones(1), batch_size=8, verbose=0)
    with pytest.raises(ValueError, match="When providing `x` as a PyDataset, `y` should not be passed"):
        model.evaluate(_Ones(1), np.ones((2, 1)), verbose=0)
