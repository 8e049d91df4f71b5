"""Four ranks on two hosts (test_distributed_multihost.py): the group sees two
hosts, and allreduce (hierarchical), the other collectives, send / recv across
hosts and an FSDP2 step give the single-host results.

Started by `torchrun --nnodes=2` in two network namespaces, or with
--host-id-by-rank by `helpers.dist_launch.launch` on one machine: ranks 0, 1
and 2, 3 then claim different hosts through TORCH_NEURONX_HOST_ID."""

import datetime
import os
import sys

import torch
import torch.distributed as dist

import torch_neuronx._distributed as nd

if "--host-id-by-rank" in sys.argv:
    from helpers.rank import RANK, init

    os.environ["TORCH_NEURONX_HOST_ID"] = f"host{RANK // 2}"
    init(timeout_s=60)
    rank, world = dist.get_rank(), dist.get_world_size()
else:
    dist.init_process_group("neuron", timeout=datetime.timedelta(seconds=60))
    rank, world = dist.get_rank(), dist.get_world_size()
    assert torch.neuron.current_device() == int(os.environ["LOCAL_RANK"])
assert nd.host_count() == 2, nd.host_count()
for dtype in (torch.float32, torch.bfloat16, torch.int64):
    for n in (1, 1000, (5 << 20) // 4 + 3):
        t = torch.full((n,), rank + 1, dtype=dtype, device="neuron")
        dist.all_reduce(t)
        assert torch.equal(t.cpu(), torch.full((n,), sum(range(1, world + 1)), dtype=dtype)), (dtype, n)
t = torch.full((8,), float(rank), device="neuron")
dist.all_reduce(t, op=dist.ReduceOp.AVG)
assert torch.allclose(t.cpu(), torch.full((8,), (world - 1) / 2))
t = torch.full((8,), float(rank + 1), device="neuron")
dist.all_reduce(t, op=dist.ReduceOp.MAX)
assert torch.equal(t.cpu(), torch.full((8,), float(world)))
g = torch.empty(4 * world, device="neuron")
dist.all_gather_into_tensor(g, torch.full((4,), float(rank), device="neuron"))
assert torch.equal(g.cpu(), torch.arange(world, dtype=torch.float32).repeat_interleave(4))
rs = torch.empty(2, device="neuron")
dist.reduce_scatter_tensor(rs, torch.arange(2 * world, dtype=torch.float32, device="neuron"))
assert torch.equal(rs.cpu(), world * torch.arange(2 * rank, 2 * rank + 2, dtype=torch.float32))
b = torch.full((3,), float(rank), device="neuron")
dist.broadcast(b, src=world - 1)
assert torch.equal(b.cpu(), torch.full((3,), float(world - 1)))
out = torch.empty(world, device="neuron")
dist.all_to_all_single(out, torch.arange(world, dtype=torch.float32, device="neuron") + 10 * rank)
assert torch.equal(out.cpu(), torch.arange(world, dtype=torch.float32) * 10 + rank)
peer = (rank + 2) % world  # on the other host
got = torch.empty(5, device="neuron")
ops = [dist.P2POp(dist.isend, torch.full((5,), float(rank), device="neuron"), peer), dist.P2POp(dist.irecv, got, peer)]
for w in dist.batch_isend_irecv(ops):
    w.wait()
assert torch.equal(got.cpu(), torch.full((5,), float(peer)))
dist.barrier()

# One FSDP2 step across the hosts equals the step of one process on the whole batch.
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard


def build():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4)).to("neuron")


data = torch.randn(4 * world, 16, generator=torch.Generator().manual_seed(1))
ref = build()
ref(data.to("neuron")).square().mean().backward()
torch.optim.SGD(ref.parameters(), lr=0.1).step()
model = build()
fully_shard(model, mesh=init_device_mesh("neuron", (world,)))
model(data[4 * rank : 4 * rank + 4].to("neuron")).square().mean().backward()
torch.optim.SGD(model.parameters(), lr=0.1).step()
for p, q in zip(model.parameters(), ref.parameters()):
    assert torch.allclose(p.full_tensor().cpu(), q.detach().cpu(), rtol=1e-5, atol=1e-6)
assert nd.tcp_bytes() > 0 and nd.shm_bytes() > 0, (nd.tcp_bytes(), nd.shm_bytes())  # both transports moved data
print("multihost ok", rank)
dist.destroy_process_group()
