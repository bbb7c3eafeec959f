import csv

import numpy as np
import pytest

from engine import Input, Model, load_model
from engine.training.callbacks import (CSVLogger, EarlyStopping, LambdaCallback, LearningRateScheduler, ModelCheckpoint,
                                       ReduceLROnPlateau)
from layers import Dense


def _model():
    x = Input(shape=(2,))
    model = Model(x, Dense(1)(x))
    model.compile(optimizer="sgd", loss="mse")
    return model


X = np.random.default_rng(0).normal(size=(16, 2)).astype("float32")
Y = (X @ np.array([[1.0], [-2.0]], "float32")).astype("float32")


class ScriptedLoss(LambdaCallback):
    """Overwrites val_loss with a scripted sequence, so the monitored values are known."""

    def __init__(self, values):
        super().__init__()
        self.values = values

    def on_epoch_end(self, epoch, logs=None):
        logs["val_loss"] = self.values[epoch]


def test_early_stopping_stops_and_restores_the_best_weights():
    model = _model()
    snapshots = []
    record = LambdaCallback(on_epoch_end=lambda epoch, logs: snapshots.append(model.get_weights()))
    stopper = EarlyStopping(monitor="val_loss", patience=2, restore_best_weights=True)
    history = model.fit(X, Y, epochs=10, verbose=0,
                        callbacks=[ScriptedLoss([5, 3, 4, 4, 1, 0]), record, stopper])
    assert len(history.history["loss"]) == 4  # best at epoch 1, then two epochs without improvement
    assert stopper.stopped_epoch == 3
    for restored, best in zip(model.get_weights(), snapshots[1]):
        np.testing.assert_array_equal(restored, best)


def test_model_checkpoint_writes_only_on_improvement(tmp_path):
    model = _model()
    written = []
    checkpoint = ModelCheckpoint(str(tmp_path / "best-{epoch}.nw"), monitor="val_loss", save_best_only=True)
    model.fit(X, Y, epochs=5, verbose=0, callbacks=[ScriptedLoss([3, 2, 2.5, 1, 4]), checkpoint,
                                                     LambdaCallback(on_epoch_end=lambda e, l: written.append(
                                                         sorted(p.name for p in tmp_path.iterdir())))])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["best-1.nw", "best-2.nw", "best-4.nw"]
    weights_only = ModelCheckpoint(str(tmp_path / "w.npz"), save_weights_only=True, monitor="loss")
    model.fit(X, Y, epochs=1, verbose=0, callbacks=[weights_only])
    assert (tmp_path / "w.npz").exists()
    assert load_model(tmp_path / "best-4.nw").count_params() == 3
    as_keras = ModelCheckpoint(str(tmp_path / "best.keras"), monitor="loss")  # the suffix Keras 3 requires
    model.fit(X, Y, epochs=1, verbose=0, callbacks=[as_keras])
    np.testing.assert_array_equal(load_model(tmp_path / "best.keras").get_weights()[0], model.get_weights()[0])
    with pytest.raises(ValueError, match="writes .nw or .keras files; received filepath='x.h5'"):
        ModelCheckpoint("x.h5")


def test_monitoring_a_missing_key_says_which_keys_exist():
    with pytest.raises(ValueError, match=r"EarlyStopping monitors 'val_loss', which is not in the logs \['loss'\]"):
        _model().fit(X, Y, epochs=1, verbose=0, callbacks=[EarlyStopping()])


def test_learning_rate_scheduler_and_reduce_on_plateau():
    model = _model()
    history = model.fit(X, Y, epochs=3, verbose=0,
                        callbacks=[LearningRateScheduler(lambda epoch, lr: 0.1 / (epoch + 1))])
    assert history.history["learning_rate"] == pytest.approx([0.1, 0.05, 0.1 / 3])
    model = _model()
    plateau = ReduceLROnPlateau(monitor="val_loss", factor=0.5, patience=1, min_lr=0.002)
    history = model.fit(X, Y, epochs=5, verbose=0, callbacks=[ScriptedLoss([1, 1, 1, 1, 1]), plateau])
    assert history.history["learning_rate"] == pytest.approx([0.01, 0.005, 0.0025, 0.002, 0.002])


def test_csv_logger_writes_one_row_per_epoch(tmp_path):
    path = tmp_path / "log.csv"
    _model().fit(X, Y, epochs=3, verbose=0, validation_data=(X, Y), callbacks=[CSVLogger(path)])
    rows = list(csv.DictReader(path.open()))
    assert [row["epoch"] for row in rows] == ["0", "1", "2"]
    assert set(rows[0]) == {"epoch", "loss", "val_loss"}


def test_lambda_callback_hooks_and_unknown_hooks():
    events = []
    callback = LambdaCallback(on_train_begin=lambda logs: events.append("begin"),
                              on_train_batch_end=lambda batch, logs: events.append(batch),
                              on_train_end=lambda logs: events.append("end"))
    _model().fit(X, Y, epochs=1, batch_size=8, verbose=0, callbacks=[callback])
    assert events == ["begin", 0, 1, "end"]
    with pytest.raises(ValueError, match="unknown hooks \\['on_epoch_finish'\\]"):
        LambdaCallback(on_epoch_finish=print)
