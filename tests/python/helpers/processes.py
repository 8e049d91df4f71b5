"""Child interpreters for the Python tier: each runs a worker program from
tests/python/workers/ with its own environment (settings are read once per
process), free of the caller's NEURON_* / TORCH_NEURONX_* settings."""

import os
import subprocess
import sys
from pathlib import Path

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


def run_python(
    worker, *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    """Runs a worker in a new interpreter; returns the completed process (no check)."""
    return subprocess.run(
        [sys.executable, str(worker_path(worker)), *args],
        env=worker_env(**(env or {})),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_ok(worker, *args: str, env: dict[str, str] | None = None, timeout: float = 120) -> str:
    """Runs a worker in a new interpreter, asserts success, returns its stdout."""
    proc = run_python(worker, *args, env=env, timeout=timeout)
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc.stdout
