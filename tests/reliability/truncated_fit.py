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


def queue_put_waits_on():
    """The queue whose ``put`` fit's reading thread waits in (on the queue's
    condition, not merely passing through ``put``), or None."""
    frames = sys._current_frames()
    for thread in threading.enumerate():
        frame = frames.get(thread.ident) if thread.name == "nodeweave-prefetch" else None
        while frame is not None:
            if frame.f_code is threading.Condition.wait.__code__:
                caller = frame.f_back
                in_put = caller is not None and caller.f_code is queue.Queue.put.__code__
                return caller.f_locals["self"] if in_put else None
            frame = frame.f_back
    return None


def reader_waits_to_put():
    """Whether fit's reading thread is blocked putting a block in its full queue,
    so no read is in flight. A thread seen waiting in ``put`` may already have
    been woken by the last ``get`` and not yet run (on a busy machine), and would
    go on to read; once the queue is seen full, only a ``get`` (which this
    thread, the consumer, does not make) can free it, so seeing it in ``put``
    after that means it stays there."""
    waiting_on = queue_put_waits_on()
    return waiting_on is not None and waiting_on.full() and queue_put_waits_on() is waiting_on


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
