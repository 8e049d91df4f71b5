"""Compiled graphs with collectives, under torchrun (2 processes): functional
collectives traced into one neuron graph next to generated C++ kernels, and a
tensor-parallel (DTensor Colwise/Rowwise) MLP and attention block whose
compiled forward equals the unsharded eager module."""

import subprocess
import sys

from helpers.processes import worker_env, worker_path


def test_compiled_collectives_and_tensor_parallel_forward_under_torchrun(tmp_path):
    env = worker_env(OMP_NUM_THREADS="1", TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "inductor"))
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node=2",
        str(worker_path("compiled_collectives_and_tp")),
    ]
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=400)
    assert proc.returncode == 0, proc.stdout[-6000:]
    assert proc.stdout.count("compiled tp ok") == 2, proc.stdout[-3000:]
