"""A fit that test_truncated_memmap.py truncates the file of: ``python truncated_fit.py PATH ROWS SHUFFLE``.

``x`` is the float64 memmap of ROWS rows of 4 columns in PATH, read in batches of
256 rows (``shuffle`` if SHUFFLE is "1"). At the end of the first batch, once the
reading thread waits to hand over the blocks it read ahead (so no read is in
flight), the script prints ``batch 0`` and waits for a line on stdin: the test
truncates the file meanwhile. fit's exception ends the script as Python does.
"""

import os
import queue
import sys
import threading
import time

import numpy as np

from engine import Input, Model
from engine.training.callbacks import Callback
from layers import Dense


def reader_waits_to_put():
    """Whether fit's reading thread is blocked putting a block in its full queue: waiting on the
    queue's condition inside ``Queue.put``, not merely passing through ``put`` on its way to the
    next read (truncating then could pull the file from under a read in flight)."""
    frames = sys._current_frames()
    for thread in threading.enumerate():
        frame = frames.get(thread.ident) if thread.name == "nodeweave-prefetch" else None
        while frame is not None:
            if frame.f_code is threading.Condition.wait.__code__:
                return frame.f_back is not None and frame.f_back.f_code is queue.Queue.put.__code__
            frame = frame.f_back
    return False


class TruncatedAfterFirstBatch(Callback):
    def on_train_batch_end(self, batch, logs=None):
        if batch == 0:
            while not reader_waits_to_put():
                time.sleep(0.001)
            os.write(1, b"batch 0\n")
            sys.stdin.readline()


def main(path, rows, shuffle):
    x = np.memmap(path, "float64", "r", shape=(int(rows), 4))
    inputs = Input(shape=(4,))
    model = Model(inputs, Dense(1)(inputs))
    model.compile(optimizer="sgd", loss="mse")
    model.fit(x, np.zeros((len(x), 1)), batch_size=256, shuffle=shuffle == "1", verbose=0,
              callbacks=[TruncatedAfterFirstBatch()])
    os.write(1, b"fit returned\n")


if __name__ == "__main__":
    main(*sys.argv[1:])
