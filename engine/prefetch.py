"""Producing batches ahead of the training loop: in one background thread
(``prefetch``) or in a pool of threads or processes (``ordered_map``).

Both are generators: the consumer (``fit``) takes items in order while the
next ones are made, a bounded number ahead. An exception raised while making an
item is raised by the generator, with its type and traceback, when the
consumer reaches that item. Closing the generator (``fit`` does, on early
stopping, on an exception, on Ctrl-C) stops the producers and waits for them, so
no thread or process outlives it.
"""

import collections
import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor

_END = object()


class _Failure:
    """What the producer thread sends in place of an item when making it raised."""

    def __init__(self, error):
        self.error = error


def prefetch(items: Iterator, depth: int) -> Iterator:
    """Yields the items of the iterator ``items``, which a background thread
    reads up to ``depth`` items ahead of the consumer.

    ``items`` is advanced in that thread only; the items it had read ahead are
    dropped when the generator is closed early.

    Example:
        >>> list(prefetch(iter(range(5)), depth=2))
        [0, 1, 2, 3, 4]
    """
    ready = queue.Queue(depth)
    stop = threading.Event()

    def produce():
        try:
            for item in items:
                ready.put(item)
                if stop.is_set():
                    return
            ready.put(_END)
        except BaseException as error:  # handed to the consumer, which raises it
            ready.put(_Failure(error))

    thread = threading.Thread(target=produce, name="nodeweave-prefetch", daemon=True)
    thread.start()
    try:
        while (item := ready.get()) is not _END:
            if isinstance(item, _Failure):
                raise item.error
            yield item
    finally:
        stop.set()
        # Emptying the queue frees a producer blocked on put(); after a put it checks `stop` and returns.
        while True:
            try:
                ready.get_nowait()
            except queue.Empty:
                break
        thread.join()


def ordered_map(function: Callable, items: Iterable, executor: Executor, depth: int) -> Iterator:
    """Yields ``function(item)`` for each of ``items``, in order, with up to
    ``depth`` calls submitted ahead to ``executor`` (a
    ``concurrent.futures`` thread or process pool), which the generator shuts
    down when it ends or is closed (calls not started yet are cancelled).

    Example:
        >>> from concurrent.futures import ThreadPoolExecutor
        >>> list(ordered_map(abs, [-1, 2, -3], ThreadPoolExecutor(2), depth=2))
        [1, 2, 3]
    """
    pending = collections.deque()
    try:
        for item in items:
            pending.append(executor.submit(function, item))
            if len(pending) >= depth:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        executor.shutdown(wait=True, cancel_futures=True)
