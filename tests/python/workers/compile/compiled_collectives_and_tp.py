"""Under torchrun (test_compile_distributed.py): functional collectives traced
into one neuron graph next to generated C++ kernels, and a tensor-parallel MLP
and attention block whose compiled forward equals the unsharded eager module."""

import os

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
from helpers.tp_modules import DIM, MLP, Attention, fresh
from torch._inductor.utils import run_and_get_code
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

import torch_neuronx

dist.init_process_group("neuron")
rank, world = dist.get_rank(), dist.get_world_size()
assert torch.neuron.current_device() == int(os.environ["LOCAL_RANK"])
mesh = init_device_mesh("neuron", (world,))


def f(x):
    y = funcol.all_reduce(x.sin(), "sum", mesh)
    return funcol.all_gather_tensor(y * 2, 0, mesh).cos() + 1


x = torch.arange(12.0, device="neuron").view(4, 3) + rank
out, code = run_and_get_code(torch.compile(f, backend="neuron", fullgraph=True), x)
assert out.shape == (4 * world, 3) and out.device == x.device
assert torch.allclose(out.cpu(), f(x).cpu(), rtol=1e-5, atol=1e-6), (out - f(x)).abs().max()
source = "\n".join(code)
assert "all_reduce" in source and "all_gather_into_tensor" in source and "cpp_fused" in source, source

plans = {
    MLP: {"up": ColwiseParallel(), "down": RowwiseParallel()},
    Attention: {"q": ColwiseParallel(), "k": ColwiseParallel(), "v": ColwiseParallel(), "o": RowwiseParallel()},
}
x = torch.randn(2, 5, DIM, generator=torch.Generator().manual_seed(1)).to("neuron")
torch_neuronx.reset_dynamo_metrics()
for cls, plan in plans.items():
    with torch.no_grad():
        ref = fresh(cls)(x)
        out = torch.compile(parallelize_module(fresh(cls), mesh, plan), backend="neuron")(x)
    assert out.device == x.device
    assert torch.allclose(out.cpu(), ref.cpu(), rtol=1e-5, atol=1e-5), (cls.__name__, (out - ref).abs().max())
m = torch_neuronx.get_dynamo_metrics()
assert m["graphs_compiled"] >= 2 and m["kernels_generated"] > 0 and m["eager_fallbacks"] == 0, m
print("compiled tp ok", rank, "graph breaks", m["graph_breaks"])
dist.destroy_process_group()
