"""Producing items ahead of their consumer: one background thread, or a pool."""

import threading
import traceback
from concurrent.futures import ThreadPoolExecutor

import pytest

from engine.data.prefetch import map_in_threads, ordered_map, prefetch


def _prefetching_threads():
    return [thread for thread in threading.enumerate() if thread.name == "nodeweave-prefetch"]


def test_prefetch_yields_every_item_in_order_reading_at_most_depth_ahead():
    taken, ahead = [0], []

    def items():
        for index in range(50):
            ahead.append(index - taken[0])  # items made beyond those the consumer took
            yield index

    received = []
    for item in prefetch(items(), depth=3):
        received.append(item)
        taken[0] += 1
    assert received == list(range(50))
    assert max(ahead) <= 3 + 1  # the queue's 3, and one the consumer is taking out
    assert _prefetching_threads() == []


class Unreadable(Exception):
    pass


def test_an_error_making_an_item_is_raised_at_that_item_with_its_type_and_traceback():
    def items():
        yield 1
        raise Unreadable("item 2 is corrupt")

    received = []
    with pytest.raises(Unreadable, match="item 2 is corrupt") as caught:
        for item in prefetch(items(), depth=2):
            received.append(item)
    assert received == [1]
    assert "items" in [frame.name for frame in traceback.extract_tb(caught.value.__traceback__)]
    assert _prefetching_threads() == []


def test_closing_stops_the_thread_without_reading_on():
    made = []

    def endless():
        while True:
            made.append(len(made))
            yield made[-1]

    batches = prefetch(endless(), depth=2)
    assert [next(batches), next(batches)] == [0, 1]
    batches.close()
    assert _prefetching_threads() == []
    assert len(made) <= 2 + 2 + 1  # taken, queued, and the one the thread held when told to stop


def test_ordered_map_keeps_the_order_of_calls_that_finish_out_of_order():
    third_done = threading.Event()

    def square(value):
        if value == 0:
            assert third_done.wait(10), "the calls did not run at once"
        if value == 2:
            third_done.set()
        return value * value

    executor = ThreadPoolExecutor(3)
    assert list(ordered_map(square, range(6), executor, depth=3)) == [0, 1, 4, 9, 16, 25]
    with pytest.raises(RuntimeError, match="after shutdown"):
        executor.submit(square, 1)


def test_ordered_map_raises_a_calls_error_and_shuts_its_pool_down():
    def check(value):
        if value == 2:
            raise Unreadable(f"value {value}")
        return value

    executor = ThreadPoolExecutor(2)
    with pytest.raises(Unreadable, match="value 2"):
        list(ordered_map(check, range(10), executor, depth=4))
    with pytest.raises(RuntimeError, match="after shutdown"):
        executor.submit(check, 1)


@pytest.mark.timeout(60)  # a close that waits for the reader never returns
def test_a_ctrl_c_does_not_wait_for_a_reader_inside_the_source_which_then_reads_no_further():
    inside, release, made = threading.Event(), threading.Event(), []

    def slow():
        yield 0
        inside.set()
        release.wait()  # a read Python cannot interrupt
        made.append(1)
        yield 1
        made.append(2)
        yield 2

    batches = prefetch(slow(), depth=1)
    assert next(batches) == 0 and inside.wait(10)
    with pytest.raises(KeyboardInterrupt):
        try:
            raise KeyboardInterrupt
        finally:
            batches.close()
    (reader,) = _prefetching_threads()
    assert reader.daemon
    release.set()
    reader.join()
    assert made == [1]  # it dropped the item it was making and read nothing after


def test_map_in_threads_runs_calls_at_once_and_keeps_their_order():
    third_done = threading.Event()

    def square(value):
        if value == 0:
            assert third_done.wait(10), "the calls did not run at once"
        if value == 2:
            third_done.set()
        return value * value

    assert list(map_in_threads(square, list(range(7)), threads=3, depth=3)) == [0, 1, 4, 9, 16, 25, 36]
    assert _prefetching_threads() == []


def test_map_in_threads_without_an_end_stops_its_threads_when_closed():
    squares = map_in_threads(lambda value: value * value, None, threads=2, depth=4)
    assert [next(squares) for _ in range(5)] == [0, 1, 4, 9, 16]
    squares.close()
    assert _prefetching_threads() == []
