"""Producing batches ahead of the training loop: in one background thread
(``prefetch``), in several (``map_in_threads``) or in a process pool
(``ordered_map``).

All are generators: the consumer (``fit``) takes items in order while the
next ones are made, a bounded number ahead. An exception raised while making an
item is raised by the generator, with its type and traceback, when the
consumer reaches that item.

Closing the generator (``fit`` does, on early stopping, on an exception, on
Ctrl-C) stops the producers: none starts another item. What it waits for:

- Normally, for the calls in flight, so no thread or process outlives it.
  A Ctrl-C during that wait stops waiting, as below.
- On Ctrl-C (a KeyboardInterrupt on its way up, or its ``GeneratorExit``), for
  nothing that runs the source's code. Pool processes are terminated. A thread
  inside a call to the source (a generator's ``next``, ``__getitem__``) cannot
  be stopped in Python: it is a daemon thread, so neither the close nor the
  interpreter's exit waits for it. It holds the source until the call
  returns, then drops the result and ends without another call. Threads
  between calls are waited for (they end at once).
"""

import collections
import itertools
import math
import queue
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent import futures
from concurrent.futures import Executor

_END = object()
# Waits in the consumer's thread wake up this often: a Ctrl-C that the OS hands to another thread only sets
# Python's flag, which the main thread reads when it runs again (a wait without end would never notice it).
_WAKE_SECONDS = 0.1


class _Failure:
    """What a reader thread sends in place of an item when making it raised."""

    def __init__(self, error):
        self.error = error


class _Reader:
    """A daemon thread that advances ``items`` and puts them in a queue of
    ``depth`` places, until the items end or it is stopped. ``reading`` says
    whether it is inside ``next(items)``, the source's code."""

    def __init__(self, items: Iterator, depth: int):
        self._items = items
        self._ready = queue.Queue(depth)
        self._lock = threading.Lock()  # orders `_stopped` against `reading`
        self._stopped = False
        self.reading = False
        self._thread = threading.Thread(target=self._run, name="nodeweave-prefetch", daemon=True)
        self._thread.start()

    def _run(self):
        try:
            while self._begin_read():
                item = next(self._items, _END)
                self.reading = False
                self._ready.put(item)
                if item is _END:
                    return
        except BaseException as error:  # handed to the consumer, which raises it
            self._ready.put(_Failure(error))

    def _begin_read(self):
        with self._lock:
            self.reading = not self._stopped
            return self.reading

    def take(self):
        """The next item, or ``_END``; raises what making the item raised."""
        while True:
            try:
                item = self._ready.get(timeout=_WAKE_SECONDS)
                break
            except queue.Empty:
                pass
        if isinstance(item, _Failure):
            raise item.error
        return item

    def stop(self) -> bool:
        """Tells the thread to start no further read and frees it if it waits to
        put an item; returns whether it is inside a read (a call to the source)."""
        with self._lock:
            self._stopped = True
            reading = self.reading
        # Emptying the queue frees a thread blocked on put(); it then puts at most the item it holds.
        while True:
            try:
                self._ready.get_nowait()
            except queue.Empty:
                return reading

    def join(self):
        while self._thread.is_alive():
            self._thread.join(_WAKE_SECONDS)


def prefetch(items: Iterator, depth: int) -> Iterator:
    """Yields the items of the iterator ``items``, which a background thread
    reads up to ``depth`` items ahead of the consumer.

    ``items`` is advanced in that thread only; the items it had read ahead are
    dropped when the generator is closed early (see the module's docstring for
    what closing waits for).

    Example:
        >>> list(prefetch(iter(range(5)), depth=2))
        [0, 1, 2, 3, 4]
    """
    readers = [_Reader(items, depth)]
    try:
        while (item := readers[0].take()) is not _END:
            yield item
    finally:
        _stop(readers)


def map_in_threads(function: Callable, indices: Sequence | None, threads: int, depth: int) -> Iterator:
    """Yields ``function(index)`` for each of ``indices`` (0, 1, 2, ...
    without end for None), in order, made by ``threads`` background threads:
    thread ``k`` makes the items ``k``, ``k + threads``, ..., each up to
    ``ceil(depth / threads)`` ahead of the consumer.

    Example:
        >>> list(map_in_threads(abs, [-1, 2, -3], threads=2, depth=2))
        [1, 2, 3]
    """
    share = max(1, math.ceil(depth / threads))
    readers = [_Reader(map(function, _every(indices, k, threads)), share) for k in range(threads)]
    try:
        for reader in itertools.cycle(readers):
            if (item := reader.take()) is _END:  # the others' next items are past the end too
                return
            yield item
    finally:
        _stop(readers)


def _every(indices, start, step):
    return itertools.count(start, step) if indices is None else indices[start::step]


def _stop(readers):
    """Stops the reader threads; waits for them unless Ctrl-C is on its way up and
    they are inside the source's code (a wait that Ctrl-C interrupts stops there)."""
    interrupted = _interrupted()
    try:
        reading = [reader.stop() for reader in readers]
    except KeyboardInterrupt:  # Ctrl-C while telling them: tell them all still (a reader left waits to put forever)
        for reader in readers:
            reader.stop()
        raise
    for reader, in_source in zip(readers, reading):
        if not (interrupted and in_source):
            reader.join()


def ordered_map(function: Callable, items: Iterable, executor: Executor, depth: int) -> Iterator:
    """Yields ``function(item)`` for each of ``items``, in order, with up to
    ``depth`` calls submitted ahead to ``executor`` (a
    ``concurrent.futures`` pool; fit gives it a ProcessPoolExecutor), which the
    generator shuts down when it ends or is closed: calls not started yet are
    cancelled, and those in flight waited for, except that on Ctrl-C a process
    pool's processes are terminated instead (a thread pool's calls cannot be).

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
                yield _result(pending.popleft())
        while pending:
            yield _result(pending.popleft())
    finally:
        processes, manager = _pool_parts(executor)  # read first: a pool that shuts down forgets them
        try:
            if _interrupted():
                _terminate(processes)
            else:  # the pool cancels the calls not started, and a Ctrl-C while the calls in flight end leaves it sound
                executor.shutdown(wait=False, cancel_futures=True)
                _wait(pending)
        except KeyboardInterrupt:
            _terminate(processes)
            raise
        finally:  # the pool's own threads end at once now (a Thread.join that Ctrl-C broke would not wait)
            executor.shutdown(wait=True, cancel_futures=True)
            if manager is not None:
                manager.join()


def _result(future):
    _wait([future])
    return future.result()


def _wait(calls):
    """Waits for the futures ``calls`` to end, except those cancelled meanwhile
    (a cancelled future never counts as done for ``futures.wait``)."""
    while futures.wait([call for call in calls if not call.cancelled()], _WAKE_SECONDS).not_done:
        pass


def _pool_parts(executor):
    """A process pool's worker processes and its manager thread (Python 3.14 has
    ``ProcessPoolExecutor.terminate_workers``; before, they are only in
    ``_processes`` and ``_executor_manager_thread``); none for a thread pool.

    The futures are cancelled by the pool itself, never here: Python 3.11's
    pool, when a worker is terminated, fails every future it still tracks,
    and a future cancelled from outside makes its manager thread die with
    InvalidStateError, leaving the call queue's feeder thread running."""
    processes = list((getattr(executor, "_processes", None) or {}).values())
    return processes, getattr(executor, "_executor_manager_thread", None)


def _terminate(processes):
    """Terminates a pool's worker ``processes``; the pool then sees them die and ends its own threads."""
    for process in processes:
        process.terminate()


def _interrupted() -> bool:
    """Whether a KeyboardInterrupt is on its way up the stack, raised here or
    as the context of the GeneratorExit that closes a generator it passes."""
    error = sys.exc_info()[1]
    while error is not None:
        if isinstance(error, KeyboardInterrupt):
            return True
        error = error.__context__
    return False
