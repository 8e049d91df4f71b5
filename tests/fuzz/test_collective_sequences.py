"""`make fuzz`, second part: FUZZ_SEQUENCES random sequences of collectives
(default 5,000) on one long-lived group of 2 ranks and another of 3, each
call made with gloo (CPU tensors) and with neuron tensors in the same group
and compared bitwise (collective_worker.py). A failure names the seed;
FUZZ_COLLECTIVE_SEEDS (and FUZZ_COLLECTIVE_STEPS) replay it."""

import os

import pytest
from collective_runs import run_groups

SEQUENCES = int(os.environ.get("FUZZ_SEQUENCES", "5000"))


@pytest.mark.timeout(3600)
@pytest.mark.parametrize("world", [2, 3])
def test_random_collective_sequences_match_gloo(world, tmp_path):
    stats = run_groups(world, first_seed=world * 1_000_000, count=SEQUENCES, tmp_path=tmp_path, timeout=3000)
    assert stats["sequences"] == world * SEQUENCES
