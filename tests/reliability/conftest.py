import pytest

#: Seconds any one case of the adversarial suite may take; a regression that hangs
#: (a lock never released, a load that never ends) fails instead of stalling CI.
CASE_TIME_LIMIT = 300


def pytest_collection_modifyitems(items):
    for item in items:
        if item.nodeid.startswith("tests/reliability/") and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(CASE_TIME_LIMIT))
