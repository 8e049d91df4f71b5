"""The collective-sequence fuzzer (tests/fuzz/collective_worker.py, `make
fuzz` runs 5,000 sequences per world size) in `make test`: 200 sequences on a
long-lived group of 2 ranks and of 3, each call compared bitwise with gloo's;
and what it found, as named regressions (docs/develop.md)."""

import pytest
from collective_runs import run_groups
from helpers.dist_launch import launch_ok


@pytest.mark.parametrize("world", [2, 3])
def test_random_collective_sequences_match_gloo(world, tmp_path):
    stats = run_groups(world, first_seed=7_000_000 + world, count=200, tmp_path=tmp_path, timeout=240)
    assert stats["sequences"] == world * 200 and stats["buffers compared"] > 1000


@pytest.mark.parametrize("world", [2, 3])
def test_finished_calls_release_their_tensors_and_bool_sums_stay_bool(world, tmp_path):
    # Found: a call the worker ran kept its tensors until the next call on
    # the same group; a SUM of bools is compared against gloo by value, since
    # gloo writes the byte 2 into a bool tensor.
    launch_ok("collectives_release_memory", world, tmp_path, expect="released", timeout=120)
