"""Launches real processes for distributed tests: one Python interpreter per
rank running a worker of tests/python/workers/ (which imports RANK, WORLD and
init() from `helpers.rank`), rendezvous through a FileStore (so a test can
leave a rank out), OMP_NUM_THREADS=1 (ranks outnumber cores), a hard timeout, outputs
collected; and the examples/ scripts under torchrun."""

import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

from helpers.processes import finish, scrubbed_env, start, worker_env

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(
    worker, world: int, tmp_path, timeout: float = 240, ranks=None, args=(), env=None
) -> list[subprocess.CompletedProcess]:
    """Runs `worker` (a name in tests/python/workers/ or a path) with `args` as
    ranks 0..world-1 (or only `ranks`), with the settings in `env` on top of
    the scrubbed environment; returns each rank's result."""
    env = worker_env(
        OMP_NUM_THREADS="1",
        WORLD_SIZE=str(world),
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(free_port()),
        NEURON_TEST_STORE=str(tmp_path / "store"),
        **(env or {}),
    )
    procs = [
        start(worker, args, dict(env, RANK=str(r), LOCAL_RANK=str(r)), slot=i)
        for i, r in enumerate(ranks if ranks is not None else range(world))
    ]
    # Every rank's pipes drained at once: a rank blocked writing to a full
    # pipe would stop its peers in their next collective (a hang).
    results = [None] * len(procs)

    def collect(i, p):
        results[i] = finish(p, timeout)
        results[i].pid = p.pid  # shm_left_by() finds the segments this rank created

    threads = [threading.Thread(target=collect, args=(i, p)) for i, p in enumerate(procs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def assert_all_ok(results) -> None:
    """Every rank exited 0; else names each rank that did not, with its output
    (the first failure is often a rank other than 0, which only times out)."""
    failed = [(r, res) for r, res in enumerate(results) if res.returncode != 0]
    assert not failed, "\n".join(
        f"rank {r} exited {res.returncode}\nstdout:\n{res.stdout[-1000:]}\nstderr:\n{res.stderr[-3000:]}"
        for r, res in failed
    )


def launch_ok(worker, world: int, tmp_path, expect: str, **kwargs) -> list[subprocess.CompletedProcess]:
    """launch(), then every rank exited 0 and printed `expect`."""
    results = launch(worker, world, tmp_path, **kwargs)
    assert_all_ok(results)
    assert all(expect in r.stdout for r in results), [r.stdout[-2000:] for r in results]
    return results


def shm_entries() -> set[str]:
    return {n for n in os.listdir("/dev/shm") if n.startswith("torch_neuronx_")}


def shm_left_by(results) -> set[str]:
    """The project's /dev/shm segments still there whose creator is one of
    these launched ranks (a segment's name holds its creator's pid:
    torch_neuronx_<tag>_<pid>_<time>_<random>); other tests' segments, which a
    parallel run may have at the moment, do not count."""
    pids = {str(r.pid) for r in results}
    return {n for n in shm_entries() if n.rsplit("_", 3)[-3] in pids}


def torchrun(nproc: int, script: str, args: list[str], tmp_path, timeout: float = 600, **env_extra) -> str:
    """Runs examples/<script> on nproc processes; returns rank output (stdout)."""
    env = scrubbed_env(
        OMP_NUM_THREADS="1",
        HF_DEACTIVATE_ASYNC_LOAD="1",
        TOKENIZERS_PARALLELISM="false",
        TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "inductor"),
        **env_extra,
    )
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc_per_node={nproc}",
        str(EXAMPLES / script),
        *args,
    ]
    proc = subprocess.run(cmd, cwd=EXAMPLES.parent, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{script} exited {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    return proc.stdout
