"""Tensor parallelism on neuron, in real processes: parallelize_module with
ColwiseParallel / RowwiseParallel on an MLP and on an attention block gives the
forward output and the gradients of the unsharded module; TP x FSDP on a 2-D
mesh of 4 processes trains like the unsharded module."""

import pytest

from dist_launch import assert_all_ok, launch
from tp_modules import TP_MODULES

PRELUDE = TP_MODULES


TP = PRELUDE + """
init()
mesh = init_device_mesh("neuron", (WORLD,))
plans = {MLP: {"up": ColwiseParallel(), "down": RowwiseParallel()},
         Attention: {"q": ColwiseParallel(), "k": ColwiseParallel(), "v": ColwiseParallel(), "o": RowwiseParallel()}}
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
"""

TP_FSDP = PRELUDE + """
from torch.distributed.fsdp import fully_shard
init(timeout_s=120)
mesh = init_device_mesh("neuron", (2, 2), mesh_dim_names=("dp", "tp"))
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn, self.mlp = Attention(), MLP()
    def forward(self, x):
        x = x + self.attn(x)
        return x + self.mlp(x)
plan = {"attn.q": ColwiseParallel(), "attn.k": ColwiseParallel(), "attn.v": ColwiseParallel(),
        "attn.o": RowwiseParallel(), "mlp.up": ColwiseParallel(), "mlp.down": RowwiseParallel()}
model = parallelize_module(fresh(Net), mesh["tp"], plan)
fully_shard(model, mesh=mesh["dp"])
ref = fresh(Net)
opt, ref_opt = (torch.optim.AdamW(m.parameters(), lr=1e-2) for m in (model, ref))
dp = mesh["dp"].get_local_rank()
for step in range(5):
    batch = torch.randn(4, 5, DIM, generator=torch.Generator().manual_seed(step)).to("neuron")
    ref_loss = ref(batch).square().mean()
    ref_loss.backward(); ref_opt.step(); ref_opt.zero_grad()
    loss = model(batch[2 * dp:2 * dp + 2]).square().mean()  # each dp rank takes half of the batch
    loss.backward(); opt.step(); opt.zero_grad()
    loss = loss.detach().clone()
    dist.all_reduce(loss, op=dist.ReduceOp.AVG, group=mesh["dp"].get_group())
    assert abs(loss.item() - ref_loss.item()) <= 1e-5 * abs(ref_loss.item()), (step, loss.item(), ref_loss.item())
for (name, p), (_, q) in zip(model.named_parameters(), ref.named_parameters()):
    assert torch.allclose(full(p).cpu(), q.detach().cpu(), rtol=1e-4, atol=1e-5), name
print("tp x fsdp ok")
dist.destroy_process_group()
"""


@pytest.mark.parametrize("world", [2, 4])
def test_colwise_and_rowwise_mlp_and_attention_equal_the_unsharded_module(world, tmp_path):
    results = launch(TP, world, tmp_path)
    assert_all_ok(results)
    assert all("tp ok" in r.stdout for r in results)


def test_tp_by_fsdp_on_a_2d_mesh_of_four_processes_trains_like_one(tmp_path):
    results = launch(TP_FSDP, 4, tmp_path)
    assert_all_ok(results)
    assert all("tp x fsdp ok" in r.stdout for r in results)
