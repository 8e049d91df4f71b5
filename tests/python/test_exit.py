"""Processes exit cleanly after neuron work (torch_neuronx/_exit.py): no abort
("terminate called without an active exception") when a device thread still
releases Python objects as the interpreter finalizes. Each script runs in
several fresh processes, two at a time: before the exit handler, the backward
script aborted in about half of its runs."""

import os
import subprocess
import sys
import textwrap

import pytest

RUNS = 10

BACKWARD = """
import torch, torch_neuronx
x = torch.ones(64, device="neuron", requires_grad=True)
(x * 2).sum().backward()
"""

# A collective whose Future has a Python callback, left running at exit.
UNWAITED_COLLECTIVE = """
import torch, torch.distributed as dist, torch_neuronx
dist.init_process_group("neuron", store=dist.FileStore(STORE, 1), rank=0, world_size=1)
t = torch.ones(1024, device="neuron")
fut = dist.all_reduce(t, async_op=True).get_future().then(lambda f: f.value()[0].sum())
"""


@pytest.mark.parametrize("script", [BACKWARD, UNWAITED_COLLECTIVE], ids=["backward", "unwaited-collective"])
def test_processes_exit_cleanly(script, tmp_path):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    failures = []
    for batch in range(RUNS // 2):
        procs = []
        for i in range(2):
            path = tmp_path / f"run{batch}_{i}.py"
            path.write_text(f"STORE = {str(tmp_path / f'store{batch}_{i}')!r}\n" + textwrap.dedent(script))
            procs.append(subprocess.Popen([sys.executable, str(path)], env=env, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True))
        for p in procs:
            out, err = p.communicate(timeout=120)
            if p.returncode != 0:
                failures.append((p.returncode, err[-500:]))
    assert not failures, f"{len(failures)} of {RUNS} runs failed at exit: {failures[:2]}"
