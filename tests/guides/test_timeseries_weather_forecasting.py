"""keras-io example "Timeseries forecasting for weather prediction" (Prabhjot Singh Gogana),
rewritten with ``import nodeweave as keras`` on a synthetic Jena-climate-shaped table: seven
selected features sampled every 10 minutes, a temperature with a daily cycle that the other
features follow with noise.

As in the example: normalize with the training split's mean and std, keep one sample per hour
(``step = 6``), windows of ``past`` hours predict the temperature ``future`` steps after the
window, and an LSTM(32) + Dense(1) trains on MSE with Adam. Changed: the example builds its
windows with ``keras.preprocessing.timeseries_dataset_from_array``, which nodeweave does not
have; ``make_windows`` builds the same (inputs, target) pairs with NumPy. Sizes are smaller
(``past`` 120 instead of 720, ``future`` 12 instead of 72).
"""

import numpy as np

import nodeweave as keras

split_fraction = 0.715
step = 6
past = 120
future = 12
learning_rate = 0.001
batch_size = 32
epochs = 4


def synthetic_jena(num_rows=4000, seed=0):
    """(num_rows, 7) float32: temperature first, then six features driven by it."""
    rng = np.random.default_rng(seed)
    minutes = np.arange(num_rows) * 10
    temperature = 10 + 8 * np.sin(2 * np.pi * minutes / (24 * 60)) + rng.normal(0, 0.5, num_rows)
    others = [a * temperature + b + rng.normal(0, 1, num_rows) for a, b in
              [(-1.5, 1000), (0.8, 5), (-2.0, 70), (0.3, 3), (1.1, 2), (-0.5, 1.3)]]
    return np.stack([temperature] + others, axis=1).astype("float32")


def normalize(data, train_split):
    data_mean = data[:train_split].mean(axis=0)
    data_std = data[:train_split].std(axis=0)
    return (data - data_mean) / data_std


def make_windows(features, targets, sequence_length, sampling_rate):
    """What ``timeseries_dataset_from_array(features, targets, sequence_length, sampling_rate)``
    yields, as two arrays: window i starts at row i, holds every ``sampling_rate``-th row, and
    is paired with ``targets[i]``."""
    span = (sequence_length - 1) * sampling_rate + 1
    starts = np.arange(min(len(features) - span + 1, len(targets)))
    windows = np.stack([features[s: s + span: sampling_rate] for s in starts])
    return windows, targets[starts]


def prepare(data):
    train_split = int(split_fraction * int(data.shape[0]))
    features = normalize(data, train_split)
    train_data, val_data = features[:train_split], features[train_split:]

    start = past + future
    end = start + train_split
    x_train = train_data
    y_train = features[start:end][:, :1]
    sequence_length = int(past / step)
    x_train, y_train = make_windows(x_train, y_train, sequence_length, step)

    x_end = len(val_data) - past - future
    label_start = train_split + past + future
    x_val = val_data[:x_end]
    y_val = features[label_start:][:, :1]
    x_val, y_val = make_windows(x_val, y_val, sequence_length, step)
    return (x_train, y_train), (x_val, y_val)


def build_model(input_shape):
    inputs = keras.layers.Input(shape=input_shape)
    lstm_out = keras.layers.LSTM(32)(inputs)
    outputs = keras.layers.Dense(1)(lstm_out)

    model = keras.Model(inputs=inputs, outputs=outputs)
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=learning_rate), loss="mse")
    return model


def test_windows_pair_every_sixth_row_with_the_temperature_after_the_window():
    data = np.arange(60, dtype="float32").reshape(30, 2)
    windows, targets = make_windows(data, data[:, :1] * 10, sequence_length=3, sampling_rate=2)
    assert windows.shape == (26, 3, 2) and targets.shape == (26, 1)
    np.testing.assert_array_equal(windows[4, :, 0], [8, 12, 16])
    assert targets[4, 0] == 80


def test_the_lstm_forecast_loss_falls_and_it_beats_predicting_the_mean():
    keras.utils.set_random_seed(42)
    (x_train, y_train), (x_val, y_val) = prepare(synthetic_jena())
    assert x_train.shape[1:] == (past // step, 7) and y_train.shape[1:] == (1,)
    model = build_model((x_train.shape[1], x_train.shape[2]))

    es_callback = keras.callbacks.EarlyStopping(monitor="val_loss", min_delta=0, patience=5)
    history = model.fit(x_train, y_train, epochs=epochs, batch_size=batch_size,
                        validation_data=(x_val, y_val), callbacks=[es_callback], verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < losses[0]
    # The normalized temperature has variance about 1: a forecast must do better than its mean.
    assert history.history["val_loss"][-1] < np.var(y_val)

    prediction = model.predict(x_val[:5], verbose=0)
    assert prediction.shape == (5, 1) and np.isfinite(prediction).all()
