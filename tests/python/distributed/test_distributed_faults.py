"""Faults in the neuron process group, with spawned processes (not torchrun,
whose agent would kill the survivors): a rank that dies mid-run, a
rank that never joins, mismatched shapes. Every surviving rank raises an error
naming the collective, the group and the missing rank, well within the group's
timeout, and /dev/shm is left clean."""

import time

from helpers.dist_launch import launch, launch_ok, shm_entries, shm_left_by
from helpers.processes import worker_path


def test_a_rank_that_dies_before_an_allreduce_is_named_by_the_survivors(tmp_path):
    start = time.monotonic()
    results = launch("faults_rank_dies", 3, tmp_path, timeout=120)
    assert results[1].returncode == 3
    for r in (0, 2):
        assert results[r].returncode == 0, results[r].stderr[-3000:]
        line = next(x for x in results[r].stdout.splitlines() if x.startswith("ERROR"))
        assert "DistBackendError" in line and "allreduce" in line and "rank 1" in line and "exited" in line, line
        assert "neuron process group '" in line  # the group's name
    assert time.monotonic() - start < 60  # dead peers are seen at once, not at the 60 s timeout
    assert not shm_left_by(results)


def test_a_rank_that_never_joins_times_out_with_its_name(tmp_path):
    results = launch("faults_never_joins", 2, tmp_path, timeout=60, ranks=[0])  # rank 1 is never started
    assert results[0].returncode == 0, results[0].stderr[-3000:]
    line = next(x for x in results[0].stdout.splitlines() if x.startswith("ERROR"))
    assert "init" in line and "timed out" in line and "rank 1" in line, line
    assert float(line.rsplit("after", 1)[1].split()[0]) < 3 + 5
    assert not shm_left_by(results)


def test_mismatched_shapes_and_dtypes_raise_on_every_rank(tmp_path):
    results = launch("faults_mismatched_calls", 2, tmp_path, timeout=120)
    for res in results:
        assert res.returncode == 0, res.stderr[-3000:]
        errors = [x for x in res.stdout.splitlines() if x.startswith("ERROR")]
        assert len(errors) == 2 and all("ranks disagree" in e and "allreduce" in e for e in errors), res.stdout
        assert "4 x Float" in errors[0] and "8 x Float" in errors[0]
        assert "Long" in errors[1]
        assert "RECOVERED" in res.stdout


def test_segments_left_by_dead_creators_are_removed_by_the_next_group(tmp_path):
    import subprocess
    import sys

    # A process that created a segment under this project's naming and died
    # without unlinking it (what SIGKILL during init leaves behind).
    orphan = subprocess.run(
        [sys.executable, str(worker_path("faults_orphan_segment"))], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert orphan in shm_entries()
    results = launch("faults_barrier", 2, tmp_path, timeout=120)
    assert all(r.returncode == 0 for r in results), results[0].stderr[-3000:]
    assert orphan not in shm_entries()


def test_a_rank_killed_in_the_middle_of_large_allreduces_is_named(tmp_path):
    results = launch("faults_killed_mid_allreduce", 3, tmp_path, timeout=120)
    assert results[1].returncode == -9
    for r in (0, 2):
        assert results[r].returncode == 0, results[r].stderr[-3000:]
        line = next(x for x in results[r].stdout.splitlines() if x.startswith("ERROR"))
        assert "allreduce" in line and "rank 1" in line and "exited" in line, line
        assert float(line.rsplit("after", 1)[1].split()[0]) < 30, line
    assert not shm_left_by(results)


def test_a_store_left_by_an_earlier_run_is_not_read_as_this_one(tmp_path):
    # A FileStore whose file outlived its run still holds that run's keys,
    # among them the name of its (unlinked) segment: a rank of the next run
    # that read it failed with "cannot open shared memory" and rank 0 timed
    # out waiting for it (seen in CI when three launches shared a store).
    for world in (3, 3, 2):
        launch_ok("faults_store_left_behind", world, tmp_path, "ok", timeout=120, args=["leave"])
        assert (tmp_path / "store").exists()
    launch_ok("faults_store_left_behind", 2, tmp_path, "ok", timeout=120)
