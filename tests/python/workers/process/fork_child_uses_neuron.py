"""A child forked after (argv[1] == "after-start") or before ("before-start")
the NeuronCore runtime started uses neuron; prints "worked" or its error
(test_fork.py)."""

import os
import sys

import torch

if sys.argv[1] == "after-start":
    torch.ones(1, device="neuron")
    assert torch.neuron.is_initialized()
elif sys.argv[1] == "before-start":
    torch.neuron.device_count()
    assert not torch.neuron.is_initialized()
else:
    sys.exit(f"unknown mode {sys.argv[1]!r}")
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    try:
        torch.ones(2, device="neuron").cpu()
        os.write(w, b"worked")
    except RuntimeError as e:
        os.write(w, str(e).encode()[:300])
    os._exit(0)
os.waitpid(pid, 0)
print(os.read(r, 400).decode())
