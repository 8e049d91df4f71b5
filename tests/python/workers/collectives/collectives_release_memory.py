"""What the collective-sequence fuzzer found, as named checks
(test_collective_fuzz.py): the tensors of finished calls are freed once the
caller waited (a Work) or synchronized (a Future, a send / recv); a SUM of
bool tensors writes only the bytes 0 and 1."""

import torch
import torch.distributed as dist
from helpers.rank import RANK, WORLD, init

import torch_neuronx  # noqa: F401

init(backend="cpu:gloo,neuron:neuron")
torch.neuron.synchronize()
base = torch.neuron.memory_allocated()


def held() -> int:
    return torch.neuron.memory_allocated() - base


# An async gather waited for: the root's input and outputs are free after
# del, without a later call on the group (they waited in the group's list of
# finished calls for the next one).
t = torch.ones(3, dtype=torch.int64, device="neuron")
outs = [torch.empty(3, dtype=torch.int64, device="neuron") for _ in range(WORLD)] if RANK == 1 else None
work = dist.gather(t, outs, dst=1, async_op=True)
work.wait()
del t, outs, work
assert held() == 0, f"async gather: {held()} bytes still allocated after wait and del"

# all_reduce_coalesced(async_op=True) returns a Future: free after synchronize.
ts = [torch.ones(n, dtype=torch.uint8, device="neuron") for n in (1000, 5, 3)]
fut = dist.all_reduce_coalesced(ts, op=dist.ReduceOp.MIN, async_op=True)
fut.wait()
del ts, fut
torch.neuron.synchronize()
assert held() == 0, f"coalesced future: {held()} bytes still allocated after synchronize"

# A blocking send / recv of an empty tensor: free after synchronize.
if RANK in (0, 1):
    x = torch.zeros(0, device="neuron") if RANK == 1 else torch.empty(0, device="neuron")
    dist.send(x, 0) if RANK == 1 else dist.recv(x, 1)
    del x
    torch.neuron.synchronize()
    assert held() == 0, f"send / recv: {held()} bytes still allocated after synchronize"

# SUM of bools is an OR that writes valid bools (gloo writes 2 where two ranks are True).
flags = torch.tensor([True, True, False, RANK % 2 == 0], device="neuron")
dist.all_reduce(flags)
assert flags.cpu().view(torch.uint8).tolist() == [1, 1, 0, 1], flags.cpu().view(torch.uint8).tolist()
print("released")
dist.destroy_process_group()
