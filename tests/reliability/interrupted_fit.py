"""A fit that test_interrupts.py interrupts: ``python interrupted_fit.py KIND WHERE``.

KIND is the source: ``generator``, ``pydataset`` (one thread), ``pydataset-threads``
(3) or ``pydataset-processes`` (2). Its first batch comes at once; every later one
blocks without end. Each read that blocks first prints ``reading PID``.

WHERE is where fit is when the test's SIGINT comes: ``waiting`` for the second
batch, in a ``callback`` that blocks after the first batch (the readers are busy
in the source then), or ``stopping``: a callback stops training after the first
batch, so fit waits for the readers to finish their calls. The first batch's end
prints ``batch 0``, and an epoch's end ``epoch end``.

Once fit returns (it should raise KeyboardInterrupt) the script prints
``KeyboardInterrupt`` or ``returned``, the seconds fit took to return after the
SIGINT, and, as JSON, the threads still running (name, daemon) and the
pids of the child processes still running.
"""

import json
import multiprocessing
import os
import signal
import sys
import threading
import time

import numpy as np

from engine import Input, Model, PyDataset
from engine.training.callbacks import Callback
from layers import Dense

BATCH = (np.ones((4, 3), "float32"), np.zeros((4, 1), "float32"))


def say(line):
    """Prints ``line`` in one write, so that lines from several threads or processes do not mix."""
    os.write(1, f"{line}\n".encode())


def sleep_forever():
    while True:  # short sleeps: a SIGINT that another thread of the process received still ends them
        time.sleep(0.05)


def block_forever():
    say(f"reading {os.getpid()}")
    sleep_forever()


def batches():
    yield BATCH
    block_forever()


class Batches(PyDataset):
    def __len__(self):
        return 100

    def __getitem__(self, index):
        if index:
            block_forever()
        return BATCH


class FirstBatch(Callback):
    """Marks the end of the first batch; then stays in the callback (``where="callback"``)
    or stops training (``where="stopping"``)."""

    def __init__(self, where):
        super().__init__()
        self.where = where

    def on_train_batch_end(self, batch, logs=None):
        if batch == 0:
            say("batch 0")
            self.model.stop_training = self.where == "stopping"
            if self.where == "callback":
                sleep_forever()

    def on_epoch_end(self, epoch, logs=None):
        say("epoch end")


def main(kind, where):
    received = []

    def interrupt(signum, frame):  # Python's own handler, noting the time
        received.append(time.monotonic())
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, interrupt)
    source = {"generator": batches, "pydataset": Batches, "pydataset-threads": lambda: Batches(workers=3),
              "pydataset-processes": lambda: Batches(workers=2, use_multiprocessing=True)}[kind]()
    inputs = Input(shape=(3,))
    model = Model(inputs, Dense(1)(inputs))
    model.compile(optimizer="sgd", loss="mse")
    try:
        model.fit(source, epochs=2, shuffle=False, verbose=0, callbacks=[FirstBatch(where)])
        outcome = "returned"
    except KeyboardInterrupt:
        outcome = "KeyboardInterrupt"
    say(f"{outcome} {time.monotonic() - received[0]:.3f}")
    threads = [[thread.name, thread.daemon] for thread in threading.enumerate()
               if thread is not threading.main_thread()]
    say(json.dumps({"threads": threads, "children": [p.pid for p in multiprocessing.active_children()]}))


if __name__ == "__main__":
    main(*sys.argv[1:])
