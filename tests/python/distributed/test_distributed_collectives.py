"""The neuron process group in real processes (world sizes 2 and 4): every
collective x dtype x reduce op against a reference each rank computes locally
from every rank's (deterministic) inputs; bytes counted on the shared-memory
transport; nothing left in /dev/shm."""

import pytest
from helpers.dist_launch import assert_all_ok, launch, launch_ok, shm_left_by
from helpers.processes import worker_path


@pytest.mark.parametrize("world", [2, 4])
def test_every_collective_dtype_and_op_matches_a_local_reference(world, tmp_path):
    results = launch_ok("collectives_every_op", world, tmp_path, expect="checked")
    assert not shm_left_by(results)


def test_barrier_then_collective_never_mismatches_under_load(tmp_path):
    # A barrier has no data step after its call check, so a rank released
    # from it could publish its next call while a slower rank was still
    # reading the barrier's: "ranks disagree" on a correct program (3 of 8
    # runs on a loaded machine before the signatures were double-buffered).
    # Four ranks on two cores, next to a busy process, several launches.
    import subprocess
    import sys

    hog = subprocess.Popen([sys.executable, str(worker_path("busy_loop"))])
    try:
        for launch_no in range(3):
            results = launch("collectives_barrier_rounds", 4, tmp_path, timeout=180, args=[150])
            assert_all_ok(results)
            assert all("rounds 150" in r.stdout for r in results), launch_no
    finally:
        hog.kill()


@pytest.mark.parametrize("world", [2, 3])
def test_async_collectives_waited_in_any_order_complete_with_the_right_values(world, tmp_path):
    # A thread that waits for a queued call runs the queue up to it itself
    # when the worker has not started (help_until); the worker may take any
    # of them meanwhile. Order and results stay the queue's.
    launch_ok("collectives_async_waits", world, tmp_path, expect="async waits ok", timeout=240)


@pytest.mark.parametrize("world", [2, 3])
def test_reading_peers_buffers_in_place_matches_the_slot_form_bitwise(world, tmp_path):
    # Calls past the eager buffer read the peers' device memory in place
    # (DirectCollectives.cpp); the slot form is the reference, bitwise, for
    # every reduce op and dtype; a rank with a staged buffer sends all to the slots.
    launch_ok("collectives_direct", world, tmp_path, expect="direct collectives ok", timeout=240)
