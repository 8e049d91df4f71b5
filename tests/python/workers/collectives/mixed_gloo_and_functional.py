"""The neuron backend beside gloo and torch's functional collectives on neuron
tensors (test_distributed_mixed_and_functional.py). argv[1]: the backend string."""

import sys

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
from helpers.rank import RANK, WORLD, init
from torch.distributed.device_mesh import init_device_mesh

import torch_neuronx._distributed as nd

BACKEND = sys.argv[1]
init(backend=BACKEND)
pg = dist.distributed_c10d._get_default_group()
assert type(pg._get_backend(torch.device("neuron"))).__name__ == "ProcessGroupNeuron"
if BACKEND.startswith("cpu:gloo"):
    assert type(pg._get_backend(torch.device("cpu"))).__name__ == "ProcessGroupGloo"
    before = nd.shm_bytes()
    c = torch.full((1000,), float(RANK))
    dist.all_reduce(c)
    assert torch.equal(c, torch.full((1000,), float(sum(range(WORLD)))))
    assert nd.shm_bytes() == before  # the CPU tensor went to gloo
n = torch.full((1000,), float(RANK), device="neuron")
dist.all_reduce(n)
assert torch.equal(n.cpu(), torch.full((1000,), float(sum(range(WORLD)))))
assert nd.shm_bytes() > 0

mesh = init_device_mesh("neuron", (WORLD,))
mine = torch.arange(4 * WORLD, dtype=torch.float32, device="neuron") + 100 * RANK
everyone = [torch.arange(4 * WORLD, dtype=torch.float32) + 100 * r for r in range(WORLD)]
for group in (mesh, dist.group.WORLD):
    s = funcol.all_reduce(mine, "sum", group)
    assert torch.equal(s.cpu(), sum(everyone)), "all_reduce"
    assert torch.equal(funcol.all_reduce(mine, "max", group).cpu(), everyone[-1]), "max"
    g = funcol.all_gather_tensor(mine, 0, group)
    assert torch.equal(g.cpu(), torch.cat(everyone)), "all_gather_tensor"
    rs = funcol.reduce_scatter_tensor(mine, "sum", 0, group)
    assert torch.equal(rs.cpu(), sum(everyone)[4 * RANK : 4 * RANK + 4]), "reduce_scatter_tensor"
    a2a = funcol.all_to_all_single(mine, None, None, group)
    assert torch.equal(a2a.cpu(), torch.cat([e[4 * RANK : 4 * RANK + 4] for e in everyone])), "all_to_all_single"
    b = funcol.broadcast(mine, 0, group)
    assert torch.equal(b.cpu(), everyone[0]), "broadcast"
    many = funcol.all_reduce_coalesced([mine, mine * 2], "sum", group)
    assert torch.equal(many[1].cpu(), 2 * sum(everyone)), "all_reduce_coalesced"
    assert s.device.type == "neuron" and b.device.type == "neuron"
print("ok")
dist.destroy_process_group()
