"""A collective whose Future has a Python callback, left running at exit
(test_exit.py). argv[1]: the FileStore path."""

import sys

import torch  # noqa: F401
import torch.distributed as dist

import torch_neuronx  # noqa: F401  (registers the device)

STORE = sys.argv[1]
dist.init_process_group("neuron", store=dist.FileStore(STORE, 1), rank=0, world_size=1)
t = torch.ones(1024, device="neuron")
fut = dist.all_reduce(t, async_op=True).get_future().then(lambda f: f.value()[0].sum())
