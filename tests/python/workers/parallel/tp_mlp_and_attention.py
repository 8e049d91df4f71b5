"""ColwiseParallel / RowwiseParallel on an MLP and an attention block give the
unsharded module's output and gradients (test_distributed_tensor_parallel.py)."""

import torch
import torch.distributed as dist
from helpers.rank import WORLD, init
from helpers.tp_modules import DIM, MLP, Attention, fresh, full
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

init()
mesh = init_device_mesh("neuron", (WORLD,))
plans = {
    MLP: {"up": ColwiseParallel(), "down": RowwiseParallel()},
    Attention: {"q": ColwiseParallel(), "k": ColwiseParallel(), "v": ColwiseParallel(), "o": RowwiseParallel()},
}
x = torch.randn(2, 5, DIM, generator=torch.Generator().manual_seed(1)).to("neuron")
for cls, plan in plans.items():
    ref = fresh(cls)
    ref_out = ref(x)
    ref_out.square().sum().backward()
    tp = parallelize_module(fresh(cls), mesh, plan)
    assert next(tp.parameters()).to_local().device.type == "neuron"
    out = tp(x)
    out.square().sum().backward()
    assert torch.allclose(out.cpu(), ref_out.cpu(), rtol=1e-5, atol=1e-6), (cls.__name__, (out - ref_out).abs().max())
    for (name, p), (_, q) in zip(tp.named_parameters(), ref.named_parameters()):
        assert torch.allclose(full(p.grad).cpu(), q.grad.cpu(), rtol=1e-5, atol=1e-6), (cls.__name__, name)
print("tp ok")
dist.destroy_process_group()
