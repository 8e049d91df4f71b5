"""distribute_tensor and every redistribute on 1-D and 2-D neuron meshes
against the full tensor (test_distributed_dtensor.py)."""

import itertools

import torch
import torch.distributed as dist
from helpers.rank import WORLD, init
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor

init()
shape = (WORLD * 3, 2 * WORLD + 2)
full = torch.arange(shape[0] * shape[1], dtype=torch.float32).reshape(shape) / 7
meshes = [init_device_mesh("neuron", (WORLD,))]
if WORLD == 4:
    meshes.append(init_device_mesh("neuron", (2, 2), mesh_dim_names=("dp", "tp")))
checked = 0
for mesh in meshes:
    choices = [Shard(0), Shard(1), Replicate()]
    for src in itertools.product(choices, repeat=mesh.ndim):
        d = distribute_tensor(full.to("neuron"), mesh, list(src))
        local = d.to_local()
        assert local.device == torch.device("neuron", torch.neuron.current_device()), local.device
        assert torch.equal(d.full_tensor().cpu(), full), (src, "full_tensor")
        for dst in itertools.product(choices, repeat=mesh.ndim):
            r = d.redistribute(mesh, list(dst))
            assert torch.equal(r.full_tensor().cpu(), full), (src, dst)
            assert r.to_local().shape == distribute_tensor(full.to("neuron"), mesh, list(dst)).to_local().shape
            checked += 1
    # Partial: every rank holds a term; reducing gives the sum, sharding it gives slices of the sum.
    coord = mesh.get_coordinate()
    term = full * (1 + sum(coord))
    total = full * sum(1 + sum(c) for c in itertools.product(*[range(s) for s in mesh.shape]))
    p = DTensor.from_local(term.to("neuron"), mesh, [Partial()] * mesh.ndim)
    for dst in ([Replicate()] * mesh.ndim, [Shard(0)] + [Replicate()] * (mesh.ndim - 1), [Shard(1)] * mesh.ndim):
        got = p.redistribute(mesh, dst).full_tensor().cpu()
        assert torch.allclose(got, total, rtol=1e-6), (dst, (got - total).abs().max())
        checked += 1
    avg = DTensor.from_local(term.to("neuron"), mesh, [Partial("avg")] * mesh.ndim).redistribute(
        mesh, [Replicate()] * mesh.ndim
    )
    assert torch.allclose(avg.to_local().cpu(), total / WORLD, rtol=1e-6)
    # DTensor ops run on neuron shards: a sharded matmul equals the local one.
    a = distribute_tensor(full.to("neuron"), mesh, [Shard(0)] + [Replicate()] * (mesh.ndim - 1))
    b = distribute_tensor(full.t().contiguous().to("neuron"), mesh, [Replicate()] * mesh.ndim)
    assert torch.allclose((a @ b).full_tensor().cpu(), full @ full.t(), rtol=1e-5)
    checked += 2
print("checked", checked)
dist.destroy_process_group()
