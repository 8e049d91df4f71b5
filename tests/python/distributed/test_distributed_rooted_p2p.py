"""The neuron process group's rooted collectives (reduce, gather, scatter),
all-to-all (even and uneven splits), the coalesced forms and the coalescing
manager, send / recv / batch_isend_irecv, new_group and split_group, in real
processes at world sizes 2 and 4, against references computed locally."""

import pytest
from helpers.dist_launch import assert_all_ok, launch, launch_ok, shm_left_by


@pytest.mark.parametrize("world", [2, 4])
def test_rooted_alltoall_coalesced_p2p_and_subgroups_match_local_references(world, tmp_path):
    results = launch_ok("rooted_p2p_and_subgroups", world, tmp_path, expect="checked")
    assert not shm_left_by(results)


def test_recv_from_a_dead_rank_raises_naming_it(tmp_path):
    results = launch("p2p_dead_peer", 2, tmp_path, timeout=60)
    assert results[1].returncode == 3
    assert results[0].returncode == 0, results[0].stderr[-3000:]
    assert "named the dead peer" in results[0].stdout
    assert not shm_left_by(results)


def test_recv_that_nobody_matches_times_out(tmp_path):
    assert_all_ok(launch("p2p_timeout", 2, tmp_path, timeout=60))
