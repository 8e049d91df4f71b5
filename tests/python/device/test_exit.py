"""Processes exit cleanly after neuron work (torch_neuronx/_exit.py): no abort
("terminate called without an active exception") when a device thread still
releases Python objects as the interpreter finalizes. Each script runs in
several fresh processes, two at a time: before the exit handler, the backward
script aborted in about half of its runs."""

import os
import subprocess
import sys

import pytest
from helpers.processes import worker_path

RUNS = 10


@pytest.mark.parametrize(
    "script, extra",
    [
        ("exit_backward", {}),
        ("exit_backward", {"TORCH_NEURONX_AUTOGRAD_THREAD": "1"}),
        ("exit_unwaited_collective", {}),
    ],
    ids=["backward", "backward-on-autograd-device-thread", "unwaited-collective"],
)
def test_processes_exit_cleanly(script, extra, tmp_path):
    # By default neuron's backward runs on the calling thread
    # (_autograd_thread.py); with the setting, on autograd's device thread,
    # whose race with finalization the exit handler closes.
    env = dict(os.environ, OMP_NUM_THREADS="1", **extra)
    failures = []
    for batch in range(RUNS // 2):
        procs = []
        for i in range(2):
            store = tmp_path / f"store{batch}_{i}"
            procs.append(
                subprocess.Popen(
                    [sys.executable, str(worker_path(script)), str(store)],
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
        for p in procs:
            out, err = p.communicate(timeout=120)
            if p.returncode != 0:
                failures.append((p.returncode, err[-500:]))
    assert not failures, f"{len(failures)} of {RUNS} runs failed at exit: {failures[:2]}"
