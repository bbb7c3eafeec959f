import gc
import threading

from engine import Input, Model, load_model
from engine.gc_pause import collector_paused
from layers import Dense


def test_the_collector_is_paused_inside_and_back_on_after_the_outermost_block():
    assert gc.isenabled()
    with collector_paused():
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_switched_off_by_the_user_stays_off():
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_overlapping_loads_in_threads_turn_the_collector_back_on_once_all_end(tmp_path):
    x = Input((3,))
    Model(x, Dense(2)(x)).save(tmp_path / "m.nw")
    seen, started, release = [], threading.Barrier(2), threading.Event()

    def load_inside_a_pause():
        with collector_paused():
            started.wait()
            release.wait()
            seen.append(gc.isenabled())

    worker = threading.Thread(target=load_inside_a_pause)
    worker.start()
    started.wait()
    load_model(tmp_path / "m.nw")  # begins and ends while the worker's pause lasts
    seen.append(gc.isenabled())
    release.set()
    worker.join()
    assert seen == [False, False] and gc.isenabled()
