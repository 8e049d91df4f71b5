"""After a fork, the child is in a bad fork and the parent is not, and the
parent keeps using neuron (test_fork.py)."""

import os

import torch

torch.ones(1, device="neuron")
pid = os.fork()
if pid == 0:
    os._exit(0 if torch.neuron._is_in_bad_fork() else 1)
_, status = os.waitpid(pid, 0)
print(os.WEXITSTATUS(status), torch.neuron._is_in_bad_fork(), torch.ones(2, device="neuron").sum().item())
