"""Shared helpers for the Python tier: run a snippet in a fresh interpreter
with its own environment (settings are read once per process)."""

import os
import subprocess
import sys
import textwrap

import pytest
import torch

import torch_neuronx


def run_python(code: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Runs code in a new interpreter; returns the completed process (no check)."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("NEURON_", "TORCH_NEURONX_"))}
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full_env, capture_output=True,
                          text=True, timeout=timeout)


def run_ok(code: str, env: dict[str, str] | None = None, timeout: float = 120) -> str:
    """Runs code in a new interpreter, asserts success, returns its stdout."""
    proc = run_python(code, env, timeout)
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc.stdout


@pytest.fixture(autouse=True)
def _clean_state():
    torch_neuronx.clear_op_tracking()
    yield
    torch.neuron.set_device(0)
    torch.neuron.synchronize(0)
