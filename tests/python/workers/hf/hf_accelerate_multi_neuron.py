"""Accelerate on two processes (MULTI_NEURON) under torchrun or `accelerate
launch` (test_hf_libraries.py): bf16, gather, reduce, prepare and backward."""

import torch
from accelerate import Accelerator
from accelerate.utils import DistributedType

acc = Accelerator(mixed_precision="bf16")
assert acc.distributed_type == DistributedType.MULTI_NEURON, acc.distributed_type
assert acc.device == torch.device("neuron", acc.local_process_index), acc.device
import torch.distributed as dist

assert dist.get_backend() == "neuron", dist.get_backend()
t = torch.full((2,), float(acc.process_index + 1), device=acc.device)
g = acc.gather(t)
assert g.device.type == "neuron" and g.cpu().tolist() == [1.0, 1.0, 2.0, 2.0], g
assert acc.reduce(t, "sum").cpu().tolist() == [3.0, 3.0]
model, opt = acc.prepare(torch.nn.Linear(4, 2), torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1))
with acc.autocast():
    x = torch.randn(3, 4, device=acc.device)
    assert (x @ x.T).dtype == torch.bfloat16
    y = model(x)
acc.backward(y.sum())
# The autograd engine starts its device threads at the first backward; one that
# takes the GIL only after the interpreter began finalizing aborts the process
# (a race in PyTorch, seen at exit right after a first backward). Training
# scripts go on after a backward; this one waits for its peer instead.
acc.wait_for_everyone()
print("accelerate ok", acc.process_index)
