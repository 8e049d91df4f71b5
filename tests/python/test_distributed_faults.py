"""Faults in the neuron process group, with spawned processes (decision 9: not
torchrun, whose agent would kill the survivors): a rank that dies mid-run, a
rank that never joins, mismatched shapes. Every surviving rank raises an error
naming the collective, the group and the missing rank, well within the group's
timeout, and /dev/shm is left clean."""

import time

from dist_launch import launch, shm_entries


def test_a_rank_that_dies_before_an_allreduce_is_named_by_the_survivors(tmp_path):
    before = shm_entries()
    code = """
init(timeout_s=60)
t = torch.ones(1000, device="neuron")
dist.all_reduce(t)
if RANK == 1:
    os._exit(3)  # dies between two collectives
start = __import__("time").monotonic()
try:
    dist.all_reduce(t)
except Exception as e:
    print("ERROR", type(e).__name__, e, "after", round(__import__("time").monotonic() - start, 1), "s")
    sys.exit(0)
sys.exit("the allreduce did not fail")
"""
    start = time.monotonic()
    results = launch(code, 3, tmp_path, timeout=120)
    assert results[1].returncode == 3
    for r in (0, 2):
        assert results[r].returncode == 0, results[r].stderr[-3000:]
        line = next(l for l in results[r].stdout.splitlines() if l.startswith("ERROR"))
        assert "DistBackendError" in line and "allreduce" in line and "rank 1" in line and "exited" in line, line
        assert "neuron process group '" in line  # the group's name
    assert time.monotonic() - start < 60  # dead peers are seen at once, not at the 60 s timeout
    assert shm_entries() <= before


def test_a_rank_that_never_joins_times_out_with_its_name(tmp_path):
    before = shm_entries()
    code = """
import time
start = time.monotonic()
try:
    init(timeout_s=3)
except Exception as e:
    print("ERROR", type(e).__name__, e, "after", round(time.monotonic() - start, 1), "s")
    sys.exit(0)
sys.exit("init did not fail")
"""
    results = launch(code, 2, tmp_path, timeout=60, ranks=[0])  # rank 1 is never started
    assert results[0].returncode == 0, results[0].stderr[-3000:]
    line = next(l for l in results[0].stdout.splitlines() if l.startswith("ERROR"))
    assert "init" in line and "timed out" in line and "rank 1" in line, line
    assert float(line.rsplit("after", 1)[1].split()[0]) < 3 + 5
    assert shm_entries() <= before


def test_mismatched_shapes_and_dtypes_raise_on_every_rank(tmp_path):
    code = """
init(timeout_s=30)
n = 4 if RANK == 0 else 8
for label, t in (("shape", torch.ones(n, device="neuron")),
                 ("dtype", torch.ones(4, device="neuron", dtype=torch.float32 if RANK == 0 else torch.int64))):
    try:
        dist.all_reduce(t)
        print("NO ERROR", label)
    except Exception as e:
        print("ERROR", label, e)
t = torch.ones(4, device="neuron")
dist.all_reduce(t)  # the group still works afterwards
assert t[0].item() == WORLD
print("RECOVERED")
"""
    results = launch(code, 2, tmp_path, timeout=120)
    for res in results:
        assert res.returncode == 0, res.stderr[-3000:]
        errors = [l for l in res.stdout.splitlines() if l.startswith("ERROR")]
        assert len(errors) == 2 and all("ranks disagree" in l and "allreduce" in l for l in errors), res.stdout
        assert "4 x Float" in errors[0] and "8 x Float" in errors[0]
        assert "Long" in errors[1]
        assert "RECOVERED" in res.stdout


def test_segments_left_by_dead_creators_are_removed_by_the_next_group(tmp_path):
    import subprocess, sys
    # A process that created a segment under this project's naming and died
    # without unlinking it (what SIGKILL during init leaves behind).
    make = ("import os; n = f'/dev/shm/torch_neuronx_pg_{os.getpid()}_dead_0'; "
            "open(n, 'wb').write(b'x' * 4096); print(os.path.basename(n))")
    orphan = subprocess.run([sys.executable, "-c", make], capture_output=True, text=True, check=True).stdout.strip()
    assert orphan in shm_entries()
    results = launch("init()\ndist.barrier()\nprint('ok')\n", 2, tmp_path, timeout=120)
    assert all(r.returncode == 0 for r in results), results[0].stderr[-3000:]
    assert orphan not in shm_entries()


def test_a_rank_killed_in_the_middle_of_large_allreduces_is_named(tmp_path):
    before = shm_entries()
    code = """
import signal, threading, time
init(timeout_s=60)
t = torch.ones(6 << 20, device="neuron")  # 24 MiB: six chunks per call
dist.all_reduce(t)
if RANK == 1:
    threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGKILL)).start()
start = time.monotonic()
try:
    for _ in range(1000):
        dist.all_reduce(t)
except Exception as e:
    print("ERROR", type(e).__name__, e, "after", round(time.monotonic() - start, 1), "s")
    sys.exit(0)
sys.exit("the allreduces did not fail")
"""
    results = launch(code, 3, tmp_path, timeout=120)
    assert results[1].returncode == -9
    for r in (0, 2):
        assert results[r].returncode == 0, results[r].stderr[-3000:]
        line = next(l for l in results[r].stdout.splitlines() if l.startswith("ERROR"))
        assert "allreduce" in line and "rank 1" in line and "exited" in line, line
        assert float(line.rsplit("after", 1)[1].split()[0]) < 30, line
    assert shm_entries() <= before
