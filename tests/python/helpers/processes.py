"""Child interpreters for the Python tier: each runs a worker program from
tests/python/workers/ with its own environment (settings are read once per
process), free of the caller's NEURON_* / TORCH_NEURONX_* settings."""

import os
import subprocess
import sys
from pathlib import Path

from helpers import forkserver

TESTS = Path(__file__).resolve().parents[1]  # tests/python: `helpers` and `workers` import from here
WORKERS = TESTS / "workers"


def scrubbed_env(**extra: str) -> dict[str, str]:
    """This process's environment without NEURON_* / TORCH_NEURONX_* settings, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEURON_", "TORCH_NEURONX_"))}
    env.update(extra)
    return env


def worker_env(**extra: str) -> dict[str, str]:
    """scrubbed_env() for a worker: tests/python first on PYTHONPATH, so that it
    imports `helpers` (and `workers`); then `extra`."""
    path = os.pathsep.join(p for p in (str(TESTS), os.environ.get("PYTHONPATH")) if p)
    return scrubbed_env(**{"PYTHONPATH": path, **extra})


def worker_path(worker) -> Path:
    """A worker by name (tests/python/workers/<area>/<name>.py; names are
    unique across areas) or by path."""
    path = Path(worker)
    if path.suffix == ".py":
        return path
    found = list(WORKERS.glob(f"*/{worker}.py"))
    assert len(found) == 1, f"worker {worker!r}: {found or 'no such file'} under {WORKERS}"
    return found[0]


def start(worker, args=(), env: dict[str, str] | None = None, slot: int = 0, fresh: bool = False):
    """Starts a worker as `python <worker> <args>` with exactly `env`, its
    output piped; returns a subprocess.Popen or, forked from a fork server
    that has imported torch already (helpers/forkserver.py, slot `slot`), the
    same interface. fresh=True: always a new interpreter (for what happens
    while torch imports)."""
    argv = [str(worker_path(worker)), *map(str, args)]
    env = dict(env if env is not None else os.environ)
    if not fresh and (proc := forkserver.spawn(slot, argv, env)) is not None:
        return proc
    return subprocess.Popen(
        [sys.executable, *argv],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc, timeout: float | None) -> subprocess.CompletedProcess:
    """Waits for a started worker (start()), its output drained; after
    `timeout` seconds kills it (its stderr then ends with "[killed after N s]")."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        err += f"\n[killed after {timeout} s]"
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def run_python(
    worker, *args: str, env: dict[str, str] | None = None, timeout: float = 120, fresh: bool = False
) -> subprocess.CompletedProcess:
    """Runs a worker in a new process; returns the completed process (no check)."""
    return finish(start(worker, args, worker_env(**(env or {})), fresh=fresh), timeout)


def run_ok(worker, *args: str, env: dict[str, str] | None = None, timeout: float = 120, fresh: bool = False) -> str:
    """Runs a worker in a new process, asserts success, returns its stdout."""
    proc = run_python(worker, *args, env=env, timeout=timeout, fresh=fresh)
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc.stdout
