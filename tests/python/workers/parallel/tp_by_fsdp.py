"""TP x FSDP on a 2 x 2 mesh of four processes trains like the unsharded
module (test_distributed_tensor_parallel.py)."""

import torch
import torch.distributed as dist
from helpers.rank import init
from helpers.tp_modules import DIM, MLP, Attention, fresh, full
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

init(timeout_s=120)
mesh = init_device_mesh("neuron", (2, 2), mesh_dim_names=("dp", "tp"))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn, self.mlp = Attention(), MLP()

    def forward(self, x):
        x = x + self.attn(x)
        return x + self.mlp(x)


plan = {
    "attn.q": ColwiseParallel(),
    "attn.k": ColwiseParallel(),
    "attn.v": ColwiseParallel(),
    "attn.o": RowwiseParallel(),
    "mlp.up": ColwiseParallel(),
    "mlp.down": RowwiseParallel(),
}
model = parallelize_module(fresh(Net), mesh["tp"], plan)
fully_shard(model, mesh=mesh["dp"])
ref = fresh(Net)
opt, ref_opt = (torch.optim.AdamW(m.parameters(), lr=1e-2) for m in (model, ref))
dp = mesh["dp"].get_local_rank()
for step in range(5):
    batch = torch.randn(4, 5, DIM, generator=torch.Generator().manual_seed(step)).to("neuron")
    ref_loss = ref(batch).square().mean()
    ref_loss.backward()
    ref_opt.step()
    ref_opt.zero_grad()
    loss = model(batch[2 * dp : 2 * dp + 2]).square().mean()  # each dp rank takes half of the batch
    loss.backward()
    opt.step()
    opt.zero_grad()
    loss = loss.detach().clone()
    dist.all_reduce(loss, op=dist.ReduceOp.AVG, group=mesh["dp"].get_group())
    assert abs(loss.item() - ref_loss.item()) <= 1e-5 * abs(ref_loss.item()), (step, loss.item(), ref_loss.item())
for (name, p), (_, q) in zip(model.named_parameters(), ref.named_parameters()):
    assert torch.allclose(full(p).cpu(), q.detach().cpu(), rtol=1e-4, atol=1e-5), name
print("tp x fsdp ok")
dist.destroy_process_group()
