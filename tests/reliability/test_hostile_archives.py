"""Hostile model files load or fail with ModelFormatError, in bounded memory and
time: each family of ``hostile_archives`` runs in a child process whose address
space is capped at 1 GiB (the bombs inflate to 1.5 GiB), under a time limit."""

import json

import pytest

from tests.reliability.capped import run_capped

MEMORY = 2**30


@pytest.mark.parametrize("family, refusals", [
    ("bombs", 9), ("members", 15), ("npy_headers", 100), ("truncations", 50), ("configs", 50),
])
def test_hostile_archives_are_refused_within_a_memory_cap(tmp_path, family, refusals):
    child = run_capped("tests.reliability.hostile_archives", family, tmp_path, memory=MEMORY, timeout=240)
    assert child.returncode == 0, child.stderr[-3000:]
    outcomes = json.loads(child.stdout.strip().splitlines()[-1])
    assert outcomes.get("refused", 0) >= refusals, outcomes
