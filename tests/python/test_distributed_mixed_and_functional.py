"""The neuron backend beside gloo (`"cpu:gloo,neuron:neuron"`: CPU tensors go
to gloo, neuron tensors to this project's shared-memory transport), and
torch's functional collectives on neuron tensors, in real processes."""

import pytest

from dist_launch import assert_all_ok, launch

CODE = """
import torch.distributed._functional_collectives as funcol
import torch_neuronx._distributed as nd
from torch.distributed.device_mesh import init_device_mesh
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
    assert torch.equal(rs.cpu(), sum(everyone)[4 * RANK:4 * RANK + 4]), "reduce_scatter_tensor"
    a2a = funcol.all_to_all_single(mine, None, None, group)
    assert torch.equal(a2a.cpu(), torch.cat([e[4 * RANK:4 * RANK + 4] for e in everyone])), "all_to_all_single"
    b = funcol.broadcast(mine, 0, group)
    assert torch.equal(b.cpu(), everyone[0]), "broadcast"
    many = funcol.all_reduce_coalesced([mine, mine * 2], "sum", group)
    assert torch.equal(many[1].cpu(), 2 * sum(everyone)), "all_reduce_coalesced"
    assert s.device.type == "neuron" and b.device.type == "neuron"
print("ok")
dist.destroy_process_group()
"""


@pytest.mark.parametrize("backend,world", [("neuron", 2), ("cpu:gloo,neuron:neuron", 2), ("cpu:gloo,neuron:neuron", 4)])
def test_functional_collectives_and_gloo_beside_neuron(backend, world, tmp_path):
    results = launch(f"BACKEND = {backend!r}\n" + CODE, world, tmp_path)
    assert_all_ok(results)
    assert all("ok" in r.stdout for r in results)
